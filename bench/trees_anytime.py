"""Benchmark of the anytime tree-robustness method (issue 16), ratios measured side by side.

(a) Scale: RandomForest and XGBoost, 100 trees of depth 6 (XGBoost: 10 rounds x 10
    classes) on 784-pixel MNIST, 20 test images, covariance 0.001 I and 0.01 I, 2 s per
    sample: half-width distribution at 95 %, fraction certified, seconds.
(b) Coverage: >= 200 cases with exact R known (the exact engine, tol 0), certification
    limited so the method must sample; share of 95 % intervals holding R. Plus scale cases
    against a long run of the compiled sampler, itself checked against model.predict.
(c) Throughput: kernel draws/s (sampling + evaluation: ``count_agree`` after the plan is
    built and compiled, Python call overhead included) vs model.predict alone on perturbed
    inputs drawn beforehand (the issue's "model.predict on the same perturbed inputs"), and
    vs numpy sampling + model.predict (what plain Monte Carlo costs per draw); the kernel's
    labels checked equal to model.predict on the same inputs; the papers' Monte Carlo
    baseline (10^6 plain draws, Table 2 model) numpy vs compiled.
(d) Small and medium models: Table 2 (MNIST 5x5, RF 5 x depth 3, cov 0.001 I) stays
    certified to 1e-9; a 20-tree depth-5 forest on 8x8 digits (/16), variance 1e-3 and 1e-2:
    seconds per image and time vs plain Monte Carlo at equal interval width.
(e) Peak memory of the process (ru_maxrss).
(f) Variance-reduction headroom at scale: antithetic pairs and the best additive control
    variate, measured with model.predict (what sampling smarter, not faster, could give).

Settings: ``DEFAULTS`` below, overridden by ``trees.bench.anytime`` in config.yaml when that
key exists. Run: ``python bench/trees_anytime.py [--out FILE]``, or as part of
``bench/trees.py`` (rule ``bench_trees``), which calls :func:`run`.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from reliquant.core.benchmarks import best_time, peak_rss_mb
from reliquant.core.datasets import load_mnist
from reliquant.trees.anytime import robustness, warm_up
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.engine import exact_robustness
from reliquant.trees.kernel import (
    BLOCK,
    bins_of,
    chunk_seeds,
    count_agree,
    labels_of_bins,
    profile_draws,
)
from reliquant.trees.monte_carlo import (
    clopper_pearson,
    compiled_monte_carlo,
    monte_carlo_robustness,
)
from reliquant.trees.noise import Gaussian
from reliquant.trees.plan import build_plan
from reliquant.trees.readers import extract_ensemble

DEFAULTS = {
    "seed": 20261123,
    "train_size": 10_000,  # MNIST training images for the 784-pixel models
    "n_scale": 20,
    "budget": 2.0,
    "target_half_width": 2.5e-4,
    "coverage_cases": 290,
    "coverage_draws": 20_000,
    "reference_cases": 4,
    "reference_draws": 1_000_000,
    "throughput_draws": 50_000,
    "n_digits": 20,
    "n_table2": 10,
    "n_headroom": 5,  # images per scale setting for (f)
    "headroom_draws": 20_000,
}


def settings() -> dict:
    """DEFAULTS, overridden by ``trees.bench.anytime`` of config.yaml when present."""
    out = dict(DEFAULTS)
    try:
        from reliquant.core.config import config_section

        out.update(config_section("trees", "config.yaml").get("bench", {}).get("anytime", {}))
    except (KeyError, FileNotFoundError):
        pass
    return out


def scale_models(data, cfg) -> dict:
    import xgboost as xgb
    from sklearn.ensemble import RandomForestClassifier

    xtr, ytr, _, _ = data
    n = cfg["train_size"]
    X = xtr[:n].reshape(n, -1) / 255.0
    models = {
        "RandomForest 100 x depth 6": RandomForestClassifier(
            100, max_depth=6, random_state=cfg["seed"] % 2**32, n_jobs=2),
        "XGBoost 10 rounds x 10 classes, depth 6": xgb.XGBClassifier(
            n_estimators=10, max_depth=6, random_state=cfg["seed"] % 2**32, n_jobs=2),
    }  # fmt: skip
    for name, m in models.items():
        t0 = time.perf_counter()
        m.fit(X, ytr[:n])
        print(f"fit {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    return models


def q(values, p) -> float:
    return float(np.quantile(np.asarray(values, dtype=float), p))


def bench_scale(models, data, cfg, lines, headline) -> None:
    Xte = data[2][: cfg["n_scale"]].reshape(cfg["n_scale"], -1) / 255.0
    tw = cfg["target_half_width"]
    lines += ["## (a) Scale: 784-pixel MNIST, 100 trees of depth 6", "",
              f"Budget {cfg['budget']} s per sample, stop at half-width {tw:g}, 95 %.", "",
              "Draws needed: what a fixed-size normal interval (the least any method with "
              "independent Bernoulli draws needs) takes for the target at the estimated R, "
              "(1.96 / target)^2 R (1 - R), divided by the draws the method made.", "",
              "| model | cov | half-width min / median / max | <= target | certified "
              "| R median | s median / max | draws median | draws needed / made: median / max |",
              "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    n_ok = n_all = 0
    medians = []
    for name, m in models.items():
        ens = extract_ensemble(m)
        robustness(ens, Xte[0], Gaussian(0.001), time_budget=0.5)  # compile / load kernel
        for var in (0.001, 0.01):
            rs = [robustness(ens, x, Gaussian(var), time_budget=cfg["budget"], half_width=tw,
                             seed=i) for i, x in enumerate(Xte)]  # fmt: skip
            hw = [r.half_width for r in rs]
            need = [(1.96 / tw) ** 2 * r.estimate * (1 - r.estimate) / max(r.n_draws, 1)
                    for r in rs]  # fmt: skip
            n_ok, n_all = n_ok + sum(h <= tw for h in hw), n_all + len(hw)
            medians.append(f"{name} {var}: {statistics.median(hw):.1e}")
            for i, r in enumerate(rs):
                print(f"[a] {name} {var} #{i}: R {r.estimate:.5f} [{r.ci_low:.5f}, "
                      f"{r.ci_high:.5f}] {r.n_draws} draws {r.seconds:.2f} s {r.stop}", flush=True)  # fmt: skip
            lines.append(
                f"| {name} | {var} I | {min(hw):.1e} / {statistics.median(hw):.1e} / "
                f"{max(hw):.1e} | {sum(h <= tw for h in hw)}/{len(hw)} | "
                f"{sum(r.exact for r in rs)}/{len(rs)} | "
                f"{statistics.median(r.estimate for r in rs):.3f} | "
                f"{statistics.median(r.seconds for r in rs):.2f} / {max(r.seconds for r in rs):.2f} | "
                f"{int(statistics.median(r.n_draws for r in rs)):,} | "
                f"{statistics.median(need):.1f} / {max(need):.1f} |"
            )
    lines.append("")
    headline.append(
        (
            f"Trees, anytime `robustness()`: 784-pixel MNIST, RandomForest and XGBoost with 100 "
            f"trees of depth 6, {len(Xte)} images, cov 0.001 I and 0.01 I, "
            f"{cfg['budget']:g} s each",
            f"95 % half-width <= {tw:g} for {n_ok} of {n_all}; median half-width "
            + "; ".join(
                m.replace(" 100 x depth 6", "").replace(" 10 rounds x 10 classes, depth 6", "")
                for m in medians
            ),
            f"<= {tw:g} within {cfg['budget']:g} s for every sample",
        )
    )


def coverage_cases(cfg, data):
    """(ensemble, x, variance) triples on models where the exact engine converges."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from reliquant.trees.reproduction.data import mnist_features

    X, y = make_classification(800, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=cfg["seed"] % 2**32)  # fmt: skip
    cases = []
    for s in range(7):  # about 40 of the 290 cases certify at once; >= 200 must sample
        ens = extract_ensemble(RandomForestClassifier(8, max_depth=4, random_state=s).fit(X, y))
        cases += [(ens, x, (0.1, 0.5, 1.5)[j % 3]) for j, x in enumerate(X[100 + 30 * s :][:30])]
    xtr, ytr, xte, _ = data
    Xtr, Xte = mnist_features(xtr[:10_000], 5, "area"), mnist_features(xte[:40], 5, "area")
    ens = extract_ensemble(
        RandomForestClassifier(5, max_depth=3, random_state=0).fit(Xtr, ytr[:10_000])
    )
    cases += [(ens, x, (0.001, 0.01, 0.05)[j % 3]) for j, x in enumerate(Xte)]
    X2, y2 = make_classification(800, 3, n_informative=3, n_redundant=0, random_state=1)
    import xgboost as xgb

    ens2 = extract_ensemble(xgb.XGBClassifier(n_estimators=10, max_depth=3).fit(X2, y2))
    cases += [(ens2, x, (0.2, 1.0)[j % 2]) for j, x in enumerate(X2[:40])]
    return cases[: cfg["coverage_cases"]]


def bench_coverage(models, data, cfg, lines, headline) -> None:
    hits = n = skipped = 0
    widths = []
    for i, (ens, x, var) in enumerate(coverage_cases(cfg, data)):
        ex = exact_robustness(ens, IndependentNormal(x, np.sqrt(var)), x, tol=0.0).robustness
        frac = (0.0, 0.01, 0.05)[i % 3]  # the engine gets at most this share of the budget
        r = robustness(ens, x, Gaussian(var), time_budget=0.5, certify_fraction=frac, seed=i,
                       max_draws=cfg["coverage_draws"])  # fmt: skip
        if r.exact:
            skipped += 1
            continue
        n += 1
        hits += r.ci_low <= ex <= r.ci_high
        widths.append(r.upper - r.lower)
    lines += ["## (b) Coverage", "",
              f"{n} cases that had to sample ({skipped} more were certified exactly at once; "
              f"certified width median {statistics.median(widths):.2f}), "
              f"{cfg['coverage_draws']:,} draws at most: the 95 % interval holds the exact R in "
              f"**{hits}/{n} = {hits / n:.1%}** (target >= 94 %).", ""]  # fmt: skip
    headline.append(
        (
            f"Trees, anytime: coverage of the 95 % interval ({n} cases with exact R that had "
            "to sample)",
            f"{hits}/{n} = {hits / n:.1%}",
            ">= 94 % of >= 200 cases",
        )
    )
    Xte = data[2][: cfg["reference_cases"]].reshape(-1, 784) / 255.0
    lines += ["Scale cases (cov 0.01 I) against a long run of the compiled sampler (plain "
              "draws; its 99.9 % Clopper-Pearson interval), itself checked against "
              "model.predict (10^5 numpy draws):", "",
              "| model | image | anytime 95 % interval | reference (draws) | intervals meet | "
              "predict check |", "|---|---|---|---|---|---|"]  # fmt: skip
    for name, m in models.items():
        ens = extract_ensemble(m)
        for i, x in enumerate(Xte):
            noise = IndependentNormal(x, np.sqrt(0.01))
            r = robustness(ens, x, Gaussian(0.01), time_budget=cfg["budget"], seed=7 + i)
            ref = compiled_monte_carlo(ens, noise, x, cfg["reference_draws"], 1000 + i, 0.999)
            chk = monte_carlo_robustness(m.predict, noise, x, 100_000, np.random.default_rng(i))
            sd = np.sqrt(max(ref.estimate * (1 - ref.estimate), 1e-6) / 100_000)
            lines.append(
                f"| {name} | {i} | [{r.ci_low:.4f}, {r.ci_high:.4f}] | {ref.estimate:.5f} "
                f"({ref.n_draws:,}) | {r.ci_low <= ref.ci_high and ref.ci_low <= r.ci_high} | "
                f"{chk.estimate:.4f} ({abs(chk.estimate - ref.estimate) / sd:.1f} sd) |"
            )
    lines.append("")


def _one_core_ns(plan, n: int) -> tuple[float, float]:
    """(ns per draw for the bins alone, ns per draw for the whole kernel), one thread: where
    a draw's time goes (independent noise, plain draws)."""
    profile_draws(plan, 1, BLOCK, bins_only=True)  # compile before timing
    t_bins = best_time(lambda: profile_draws(plan, 2, n, bins_only=True))[0]
    profile_draws(plan, 1, BLOCK)
    t_all = best_time(lambda: profile_draws(plan, 2, n))[0]
    return t_bins / n * 1e9, t_all / n * 1e9


def bench_throughput(models, data, cfg, extra, lines, headline) -> None:
    n = cfg["throughput_draws"]
    lines += ["## (c) Throughput (best of 3, same process, 2 threads for the kernel)", "",
              f"{n:,} draws per call. Kernel: `count_agree` on a built, compiled plan (Python "
              "call included). predict: `model.predict` alone on perturbed inputs drawn "
              "beforehand; sample + predict: numpy draws of the noise then `model.predict` "
              "(plain Monte Carlo per draw). Labels: the compiled evaluator on the same inputs "
              "equals `model.predict`. One core: nanoseconds per draw of the kernel on one "
              "thread, and of its first step alone (the bins of the in-play features).", "",
              "| model | cov | kernel draws/s | predict draws/s | **kernel / predict** | "
              "sample + predict draws/s | kernel / (sample + predict) | labels equal | in-play "
              "features | one core: bins / kernel ns per draw |",
              "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    x_img = data[2][:1].reshape(-1) / 255.0
    ratios: dict[str, list[float]] = {}
    for name, (m, x) in {**{k: (v, x_img) for k, v in models.items()}, **extra}.items():
        ens = extract_ensemble(m)
        for var in (0.001, 0.01):
            noise = IndependentNormal(x, np.sqrt(var))
            y = int(ens.predict_index(x)[0])
            plan = build_plan(ens, noise, y)
            chunks = -(-n // 4096)
            count_agree(plan, chunk_seeds(0, 0, 2), 4096, 8192)
            tk = best_time(lambda: count_agree(plan, chunk_seeds(1, 0, chunks), 4096, n))[0]  # noqa: B023
            rng = np.random.default_rng(0)
            Z = noise.sample(n, rng)
            tp = best_time(lambda: m.predict(noise.sample(n, rng)))[0]  # noqa: B023
            tpi = best_time(lambda: m.predict(Z))[0]  # noqa: B023
            same = np.array_equal(ens.classes[labels_of_bins(plan, bins_of(plan, Z))], m.predict(Z))
            print(f"[c] {name} {var}: kernel {n / tk:,.0f}/s predict {n / tpi:,.0f}/s "
                  f"sample+predict {n / tp:,.0f}/s", flush=True)  # fmt: skip
            ratios.setdefault(name, []).append(tpi / tk)
            ns_bins, ns_all = _one_core_ns(plan, n)
            lines.append(f"| {name} | {var} I | {n / tk:,.0f} | {n / tpi:,.0f} | **{tpi / tk:.1f}x** "
                         f"| {n / tp:,.0f} | {tp / tk:.1f}x | {same} | {plan.n_in_play} | "
                         f"{ns_bins:,.0f} / {ns_all:,.0f} |")  # fmt: skip
    lines.append("")
    headline.append(
        (
            "Trees: compiled kernel draws/s vs `model.predict` on the same pre-drawn perturbed "
            "inputs, same model",
            "; ".join(f"{k} {min(v):.1f}-{max(v):.1f}x" for k, v in ratios.items()),
            ">= 20x",
        )
    )


def table2_model(data):
    from sklearn.ensemble import RandomForestClassifier

    from reliquant.trees.reproduction.data import mnist_features

    xtr, ytr, xte, _ = data
    Xtr = mnist_features(xtr, 5, "area")
    return RandomForestClassifier(5, max_depth=3, random_state=0).fit(Xtr, ytr), mnist_features(
        xte, 5, "area"
    )


def bench_small(data, cfg, lines, t2, headline) -> None:
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    model, Xte = t2
    ens = extract_ensemble(model)
    lines += ["## (d) Small and medium models", ""]
    rows = []
    for x in Xte[: cfg["n_table2"]]:
        noise = IndependentNormal(x, np.sqrt(0.001))
        e = exact_robustness(ens, noise, x, tol=1e-9)
        r = robustness(ens, x, Gaussian(0.001), time_budget=cfg["budget"])
        rng0 = np.random.default_rng(0)
        t_mc = best_time(
            lambda e=ens, z=noise, m=x, g=rng0: monte_carlo_robustness(e, z, m, 10**6, g), 1
        )[0]
        t_cmc = best_time(lambda e=ens, z=noise, m=x: compiled_monte_carlo(e, z, m, 10**6, 0), 1)[0]
        rows.append(
            (
                r.exact,
                abs(r.estimate - e.robustness),
                r.upper - r.lower,
                e.seconds,
                r.seconds,
                t_mc,
                t_cmc,
            )
        )
    lines.append(
        f"Table 2 model ({len(rows)} images, cov 0.001 I): certified exactly in "
        f"{sum(r[0] for r in rows)}/{len(rows)}; max |anytime - engine| = "
        f"{max(r[1] for r in rows):.1e}, max gap {max(r[2] for r in rows):.1e}; median s: engine "
        f"{statistics.median(r[3] for r in rows):.4f}, robustness() {statistics.median(r[4] for r in rows):.4f}, "
        f"Monte Carlo 10^6 numpy {statistics.median(r[5] for r in rows):.2f}, compiled "
        f"{statistics.median(r[6] for r in rows):.2f} (compiled / numpy speed-up "
        f"{statistics.median(r[5] / r[6] for r in rows):.1f}x).")  # fmt: skip
    lines.append("")
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    xtr, xte, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0)
    forest = RandomForestClassifier(20, max_depth=5, random_state=0).fit(xtr, ytr)
    fens = extract_ensemble(forest)
    lines += ["8x8 digits (/16), RandomForest 20 x depth 5, first test images; plain Monte "
              "Carlo time at equal half-width = draws its 95 % Clopper-Pearson interval needs "
              "for the same half-width at R = the anytime estimate, divided by the numpy "
              "draws/s (sample + model.predict) measured on the image. Certified images "
              "(half-width <= 1e-9) and nearly certified ones (half-width < 1e-6: the "
              "certified bounds did almost all the work) are counted apart: plain Monte Carlo "
              "cannot get there. The ratios are over the sampled answers (half-width >= 1e-6).",
              "", "| variance | images | max s | certified | nearly certified | half-width median "
              "/ max | plain MC / anytime time, sampled answers: min / median | sampled answers "
              "slower than plain MC |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    parts = []
    for var in (0.001, 0.01):
        out = []
        for i, x in enumerate(xte[: cfg["n_digits"]]):
            noise = IndependentNormal(x, np.sqrt(var))
            r = robustness(fens, x, Gaussian(var), time_budget=cfg["budget"],
                           half_width=cfg["target_half_width"], seed=i)  # fmt: skip
            rng = np.random.default_rng(i)
            rate = 20_000 / best_time(lambda: forest.predict(noise.sample(20_000, rng)), 1)[0]  # noqa: B023
            ratio = np.nan
            if r.half_width > 1e-9:
                ratio = cp_draws(r.estimate, r.half_width) / rate / r.seconds
            out.append((r.seconds, r.half_width <= 1e-9, r.half_width, ratio))
            print(
                f"[d] digits {var} #{i}: R {r.estimate:.6f} hw {r.half_width:.1e} "
                f"{r.seconds:.2f} s, plain MC / anytime {ratio:.2f}",
                flush=True,
            )
        ratios = [o[3] for o in out if o[2] >= 1e-6]
        n_near = sum(1e-9 < o[2] < 1e-6 for o in out)
        n_slow = sum(r < 1 for r in ratios)
        lines.append(
            f"| {var} | {len(out)} | {max(o[0] for o in out):.2f} | {sum(o[1] for o in out)}/{len(out)} "
            f"| {n_near}/{len(out)} | {statistics.median(o[2] for o in out):.1e} / "
            f"{max(o[2] for o in out):.1e} | "
            + (f"{min(ratios):.1f}x / {np.median(ratios):.1f}x" if ratios else "-")
            + f" | {n_slow} of {len(ratios)} |")  # fmt: skip
        parts.append(
            f"var {var:g}: {sum(o[1] for o in out)}/{len(out)} exact, {n_near} more within 1e-6, "
            f"max {max(o[0] for o in out):.2f} s"
            + (
                f"; sampled answers: median {np.median(ratios):.1f}x faster than plain MC at "
                f"equal width, {n_slow} of {len(ratios)} slower"
                if ratios
                else ""
            )
        )
    lines.append("")
    headline.append(
        (
            f"Trees, anytime on 8x8 digits, RF 20 x depth 5, {cfg['n_digits']} images",
            "; ".join(parts),
            f"every image within {cfg['budget']:g} s, never slower than plain MC",
        )
    )


def _additive_cv_ratio(ens, m, x, y, sd, n, rng) -> float:
    """Variance of the indicator over that of its residual after the best additive control
    variate (one coefficient per feature bin, least squares on the first half of ``n``
    draws, scored on the second half): the most any control variate of the form
    sum_a h_a(bin_a), whose mean is exactly computable, could remove."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import lsqr

    X = x + rng.normal(0.0, sd, (n, x.size))
    Y = (m.predict(X) == y).astype(float)
    th = ens.thresholds()
    feats = [f for f, t in enumerate(th) if len(t)]
    off = np.cumsum([0] + [len(th[f]) + 1 for f in feats])
    cols = np.stack([off[j] + np.searchsorted(th[f], X[:, f], side="left")
                     for j, f in enumerate(feats)], axis=1)  # fmt: skip
    A = csr_matrix((np.ones(cols.size), cols.ravel(), np.arange(0, cols.size + 1, len(feats))),
                   shape=(n, off[-1]))  # fmt: skip
    h = n // 2
    coef = lsqr(A[:h], Y[:h] - Y[:h].mean(), damp=1.0)[0]
    resid = Y[h:] - Y[:h].mean() - A[h:] @ coef
    return float(Y[h:].var() / max(resid.var(), 1e-300))


def bench_headroom(models, data, cfg, lines, headline) -> None:
    """How much plain draws could be saved: antithetic pairs (x + e, x - e) and the best
    additive control variate, measured with ``model.predict`` on numpy draws."""
    k, n = cfg["n_headroom"], cfg["headroom_draws"]
    Xte = data[2][:k].reshape(k, -1) / 255.0
    lines += ["## (f) Variance-reduction headroom at scale", "",
              f"First {k} test images, {n:,} numpy draws each, labels from `model.predict` (R "
              "within 1e-3 of 0 or 1 skipped: nothing to reduce). Antithetic: variance of a "
              "plain draw over that of an antithetic pair's mean, per draw. Additive control "
              "variate: the most that any control variate sum_a h_a(bin of pixel a) (exact "
              "mean computable) removes, fitted on half the draws and scored on the other half. "
              "A factor f lets the same draws give a half-width sqrt(f) times smaller.", "",
              "| model | cov | images | antithetic factor min / median / max | additive "
              "control variate factor min / median / max |", "|---|---|---|---|---|"]  # fmt: skip
    best = 0.0
    for name, m in models.items():
        ens = extract_ensemble(m)
        for var in (0.001, 0.01):
            sd = np.sqrt(var)
            anti, cv = [], []
            for i, x in enumerate(Xte):
                rng = np.random.default_rng(cfg["seed"] + i)
                y = m.predict(x[None])[0]
                e = rng.normal(0.0, sd, (n, x.size))
                a = (m.predict(x + e) == y).astype(float)
                b = (m.predict(x - e) == y).astype(float)
                p = (a.mean() + b.mean()) / 2
                if p * (1 - p) < 1e-3 * (1 - 1e-3):
                    continue
                anti.append(p * (1 - p) / 2 / max(((a + b) / 2).var(), 1e-300))
                cv.append(_additive_cv_ratio(ens, m, x, y, sd, 2 * n, rng))
            if not anti:
                continue
            best = max(best, max(anti), max(cv))
            print(f"[f] {name} {var}: antithetic {anti} additive {cv}", flush=True)
            lines.append(f"| {name} | {var} I | {len(anti)} | {min(anti):.2f} / "
                         f"{statistics.median(anti):.2f} / {max(anti):.2f} | {min(cv):.2f} / "
                         f"{statistics.median(cv):.2f} / {max(cv):.2f} |")  # fmt: skip
    lines.append("")
    headline.append(
        (
            "Trees, anytime at scale: variance-reduction headroom (antithetic pairs, best "
            "additive control variate), draws-equivalent factor",
            f"at most {best:.1f}x on any image",
            "(context for the half-width target: draws needed / made in (a))",
        )
    )


def cp_draws(p: float, half_width: float, confidence: float = 0.95) -> float:
    """Smallest n whose Clopper-Pearson interval at k = round(p n) has this half-width."""

    def hw(n: float) -> float:
        lo, hi = clopper_pearson(round(p * n), n, confidence)
        return (hi - lo) / 2

    lo, hi = 1.0, 2.0
    while hw(hi) > half_width:
        lo, hi = hi, hi * 2
    while hi - lo > max(1.0, 1e-3 * lo):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hw(mid) > half_width else (lo, mid)
    return hi


def run(cfg: dict, data=None, headline: list | None = None) -> list[str]:
    """Every section with the settings ``cfg`` (``DEFAULTS`` keys); the markdown lines.
    ``data``: (train images, train labels, test images, test labels), loaded if None;
    ``headline``: a list that receives the (benchmark, measured, target) rows."""
    headline = [] if headline is None else headline
    t0 = time.perf_counter()
    print(f"kernel compiled / loaded in {warm_up():.1f} s", flush=True)
    data = load_mnist() if data is None else data
    lines = ["# Anytime tree robustness: benchmark (issue 16)", "",
             f"Settings: {cfg}", ""]  # fmt: skip
    models = scale_models(data, cfg)
    t2 = table2_model(data)
    base_rss = peak_rss_mb()
    bench_scale(models, data, cfg, lines, headline)
    scale_rss = peak_rss_mb()
    bench_coverage(models, data, cfg, lines, headline)
    extra = {"Table 2 RF 5 x depth 3 (5x5)": (t2[0], t2[1][0])}
    bench_throughput(models, data, cfg, extra, lines, headline)
    bench_small(data, cfg, lines, t2, headline)
    bench_headroom(models, data, cfg, lines, headline)
    peak = peak_rss_mb()
    lines += ["## (e) Memory", "",
              f"Peak resident memory of the process: {base_rss:,.0f} MiB after loading MNIST "
              f"and training; {scale_rss:,.0f} MiB after the scale runs of (a) (the method "
              f"itself; target < 2 GB); {peak:,.0f} MiB at the end, set by the numpy baselines "
              f"of (b)/(c) ({cfg['throughput_draws']:,} x 784 float64 inputs).", "",
              f"Anytime sections: {time.perf_counter() - t0:.0f} s.", ""]  # fmt: skip
    headline.append(("Trees, anytime: memory of the 80 scale runs",
                     f"{scale_rss - base_rss:+,.0f} MiB over the {base_rss:,.0f} MiB the process "
                     "held after loading MNIST and training the models", "< 2 GB"))  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    text = "\n".join(run(settings())) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
