"""Benchmark of the tree-robustness engine (issue 4), ratios measured side by side.

(a) Table 2 setting of papers 001/002: MNIST resized to 5 x 5 (area interpolation, [0, 1]),
    random forest with 5 trees of depth 3 on the 60,000 training images, the first 10 test
    images, covariance 0.001 I. Our exact engine (tol 1e-9) vs Monte Carlo with 10^6 draws
    and vs the papers' grid (all boxes and 99 % boxes).
(b) Scale: random forest and XGBoost with 100 trees of depth 6 on 28 x 28 MNIST (784
    features), covariance 0.001 I and 0.01 I: seconds per sample, certified gap reached
    within a time limit (target gap <= 1e-6 within 2 s), and peak memory (tracemalloc).
(c) The anytime method ``reliquant.trees.robustness`` (issue 16): half-width at 2 s per
    sample at that scale, coverage, kernel throughput vs model.predict, small and medium
    models vs plain Monte Carlo, memory: the sections of ``bench/trees_anytime.py``, run
    here with the ``trees.bench.anytime`` settings and printed in the same report.
(d) The MNIST resize of the experiments (``trees.reproduction.data.resize_images``, summed
    in one fixed order) vs the chunked BLAS einsum it replaced, on all 70,000 images, side
    by side in one process (best of 3, alternating); ``--resize-only`` runs this alone.

Settings (seed, sample counts, draws, time limit) come from the ``trees.bench`` config key:
run standalone, ``python bench/trees.py --out results/bench/trees.md [--configfile OVERLAY ...]``
reads config.yaml merged with the overlays; via Snakemake (``snakemake --cores 1
results/bench/trees.md``) it reads the workflow's config.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from reliquant.core.benchmarks import headline_markdown, peak_rss_mb, traced_memory_peak
from reliquant.core.config import config_section
from reliquant.core.datasets import load_mnist
from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.boxes import grid_robustness
from reliquant.trees.engine import exact_robustness
from reliquant.trees.monte_carlo import monte_carlo_robustness
from reliquant.trees.readers import extract_ensemble


def resize(images: np.ndarray, size: int) -> np.ndarray:
    """Flattened area-resized images on [0, 1] (the experiments' own: trees.reproduction.data)."""
    if size == images.shape[1]:
        return images.reshape(len(images), -1).astype(np.float64) / 255.0
    from reliquant.trees.reproduction.data import mnist_features

    return mnist_features(images, size, "area")


def bench_table2(data, args, lines: list[str], headline: list) -> None:
    from sklearn.ensemble import RandomForestClassifier

    xtr, ytr, xte, _ = data
    Xtr, Xte = resize(xtr, 5), resize(xte[: args.n_table2], 5)
    model = RandomForestClassifier(
        n_estimators=5,
        max_depth=3,
        random_state=block_int_seed(args.seed, "bench_rf5") % 2**32,
        n_jobs=1,
    ).fit(Xtr, ytr)
    ens = extract_ensemble(model)
    rows = []
    for i, mu in enumerate(Xte):
        noise = IndependentNormal.from_variance(mu, 0.001)
        eng = exact_robustness(ens, noise, mu, tol=1e-9)
        mc = monte_carlo_robustness(
            ens, noise, mu, args.mc_draws, block_rng(args.seed, "bench_mc", i)
        )
        p99 = grid_robustness(ens, noise, mu, prune=0.99)
        full = grid_robustness(ens, noise, mu) if i < args.n_grid else None
        rows.append((i, eng, mc, p99, full))
        print(
            f"[a] sample {i}: engine R in [{eng.lower:.12f}, {eng.upper:.12f}] "
            f"{eng.seconds:.3f}s {eng.n_boxes} boxes | MC {mc.estimate:.5f} {mc.seconds:.2f}s | "
            f"99% grid {p99.n_boxes} boxes {p99.seconds:.2f}s"
            + (f" | all boxes {full.n_boxes} {full.seconds:.2f}s" if full else ""),
            flush=True,
        )
    lines += [
        "## (a) Table 2 setting: MNIST 5x5, random forest 5 trees depth 3, cov 0.001 I",
        "",
        f"Grid of all boxes (eq. 3): {ens.n_grid_boxes():,} boxes for every sample.",
        "",
        "| sample | R engine (gap) | engine s | engine boxes | MC R (95% CI) | MC s | MC/engine "
        "| 99% boxes | 99% s | all-boxes s | grid/engine | abs(engine-grid) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios_mc, ratios_grid, diffs = [], [], []
    for i, eng, mc, p99, full in rows:
        ratios_mc.append(mc.seconds / eng.seconds)
        grid_s, grid_ratio, diff = "-", "-", "-"
        if full is not None:
            ratios_grid.append(full.seconds / eng.seconds)
            diffs.append(abs(eng.robustness - full.robustness))
            grid_s, grid_ratio, diff = (
                f"{full.seconds:.2f}",
                f"{ratios_grid[-1]:.0f}x",
                f"{diffs[-1]:.1e}",
            )
        lines.append(
            f"| {i + 1} | {eng.robustness:.9f} ({eng.gap:.1e}) | {eng.seconds:.3f} | {eng.n_boxes} | "
            f"{mc.estimate:.5f} ({mc.ci_low:.5f}-{mc.ci_high:.5f}) | {mc.seconds:.2f} | "
            f"{ratios_mc[-1]:.0f}x | {p99.n_boxes:,} | {p99.seconds:.2f} | {grid_s} | {grid_ratio} | {diff} |"
        )
    in_ci = sum(mc.ci_low <= eng.robustness <= mc.ci_high for _, eng, mc, _, _ in rows)
    lines += [
        "",
        f"Median speed-up over Monte Carlo ({args.mc_draws:,} draws): "
        f"**{statistics.median(ratios_mc):.0f}x** (min {min(ratios_mc):.0f}x); engine inside the "
        f"MC 95% CI for {in_ci}/{len(rows)} samples.",
    ]
    if ratios_grid:
        lines.append(
            f"Median speed-up over the all-boxes grid: **{statistics.median(ratios_grid):.0f}x**; "
            f"max |engine - grid| = {max(diffs):.1e}."
        )
    lines.append("")
    headline.append(
        (
            f"Trees: exact engine vs Monte Carlo {args.mc_draws:,} draws, Table 2 setting "
            f"({len(rows)} images)",
            f"median {statistics.median(ratios_mc):.0f}x (min {min(ratios_mc):.0f}x), gap <= "
            f"{max(eng.gap for _, eng, _, _, _ in rows):.1e}, inside the MC 95 % CI for "
            f"{in_ci} of {len(rows)}",
            ">= 20x, exact to 1e-9",
        )
    )


def bench_scale(data, args, lines: list[str]) -> None:
    import xgboost as xgb
    from sklearn.ensemble import RandomForestClassifier

    xtr, ytr, xte, _ = data
    n = args.train_size
    Xtr, Xte = resize(xtr[:n], 28), resize(xte[: args.n_scale], 28)
    seed = block_int_seed(args.seed, "bench_scale") % 2**32
    models = {
        "RandomForest 100x depth 6": RandomForestClassifier(
            n_estimators=100, max_depth=6, random_state=seed, n_jobs=args.jobs
        ),
        f"XGBoost {args.xgb_rounds} rounds x 10 classes, depth 6": xgb.XGBClassifier(
            n_estimators=args.xgb_rounds, max_depth=6, random_state=seed, n_jobs=args.jobs
        ),
    }
    lines += [
        "## (b) Scale: 28x28 MNIST (784 features), depth-6 ensembles",
        "",
        f"Trained on the first {n:,} training images; first {args.n_scale} test images; "
        f"engine tol 1e-6 with a time limit of {args.time_limit:g} s per sample (the bounds "
        "stay certified when the limit stops the search, only the gap is wider). Beside it, "
        f"Monte Carlo with {args.scale_mc_draws:,} draws per sample (95% Clopper-Pearson) "
        "shows where R lies, and the engine's search dimension: features that cut the root "
        "box on a reachable path, and trees with more than one reachable leaf.",
        "",
        "| model | trees | cov | median s | converged (gap <= 1e-6) | median gap "
        "| median boxes | peak traced MB | MC R per sample | active features | live trees |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, model in models.items():
        t0 = time.perf_counter()
        model.fit(Xtr, ytr[:n])
        ens = extract_ensemble(model)
        print(f"[b] {name}: {ens.n_trees} trees, fit {time.perf_counter() - t0:.1f}s", flush=True)
        for var in (0.001, 0.01):
            secs, gaps, boxes, conv, mcs, act, live = [], [], [], 0, [], [], []
            with traced_memory_peak() as traced:
                for mu in Xte:
                    noise = IndependentNormal.from_variance(mu, var)
                    r = exact_robustness(ens, noise, mu, tol=1e-6, time_limit=args.time_limit)
                    secs.append(r.seconds)
                    gaps.append(r.gap)
                    boxes.append(r.n_boxes)
                    act.append(r.n_active_features)
                    live.append(r.n_live_trees)
                    conv += r.converged
                    print(
                        f"[b] {name} cov {var}: R in [{r.lower:.6f}, {r.upper:.6f}] "
                        f"{r.seconds:.2f}s {r.n_boxes} boxes, {r.n_active_features} active "
                        f"features, {r.n_live_trees} live trees",
                        flush=True,
                    )
            peak = traced.mb
            for i, mu in enumerate(Xte):
                noise = IndependentNormal.from_variance(mu, var)
                rng = block_rng(args.seed, "bench_scale_mc", name, str(var), i)
                mcs.append(monte_carlo_robustness(ens, noise, mu, args.scale_mc_draws, rng))
            lines.append(
                f"| {name} | {ens.n_trees} | {var} I | {statistics.median(secs):.2f} | "
                f"{conv}/{len(secs)} | {statistics.median(gaps):.1e} | "
                f"{int(statistics.median(boxes))} | {peak:.0f} | "
                + ", ".join(f"{m.estimate:.3f}" for m in mcs)
                + f" | {int(statistics.median(act))} | {int(statistics.median(live))} |"
            )
    lines.append("")


def einsum_resize(images: np.ndarray, size: int, method: str) -> np.ndarray:
    """The resize before the fixed order: the same weights, each chunk of
    ``RESIZE_CHUNK`` images one ``np.einsum(..., optimize=True)`` (a BLAS product whose
    last bits depend on the CPU's OpenBLAS kernel). For timing only."""
    from reliquant.trees.reproduction.data import RESIZE_CHUNK, adaptive_weights, area_weights

    weights = area_weights if method == "area" else adaptive_weights
    w_h, w_w = weights(images.shape[1], size), weights(images.shape[2], size)
    out = np.empty((len(images), size, size))
    for lo in range(0, len(images), RESIZE_CHUNK):
        part = np.divide(images[lo : lo + RESIZE_CHUNK], 255.0, dtype=np.float64)
        out[lo : lo + RESIZE_CHUNK] = np.einsum("ih,nhw,jw->nij", w_h, part, w_w, optimize=True)
    return np.clip(out, 0.0, 1.0, out=out)


def bench_resize(data, lines: list[str], repeats: int = 3) -> None:
    """(d): seconds to resize every MNIST image (train and test) to each size of the
    experiments, fixed-order resize vs the chunked einsum, best of ``repeats`` runs
    alternating between the two; the largest difference between their values."""
    from reliquant.trees.reproduction.data import resize_images

    images = np.concatenate([data[0], data[2]])
    lines += [
        "## (d) MNIST resize: fixed summation order vs BLAS einsum",
        "",
        f"All {len(images):,} MNIST images (train and test), best of {repeats}, alternating; "
        "fixed order: `trees.reproduction.data.resize_images` (each pixel summed along the rows, "
        "then down the columns, numpy element-wise operations, the same bytes on every machine); "
        "einsum: the previous chunked `np.einsum(..., optimize=True)` (OpenBLAS, bytes depend on "
        "the CPU's kernel).",
        "",
        "| size | method | fixed order s | einsum s | einsum / fixed | max abs difference |",
        "|---|---|---|---|---|---|",
    ]
    for size in (3, 5, 8, 10):
        for method in ("area", "adaptive"):
            best = {"fixed": np.inf, "einsum": np.inf}
            for _ in range(repeats):
                for name, fn in (("fixed", resize_images), ("einsum", einsum_resize)):
                    t0 = time.perf_counter()
                    result = fn(images, size, method)
                    best[name] = min(best[name], time.perf_counter() - t0)
                    if name == "fixed":
                        fixed = result
                    else:
                        diff = float(np.abs(fixed - result).max())
            print(f"[d] {size}x{size} {method}: {best}", flush=True)
            lines.append(
                f"| {size}x{size} | {method} | {best['fixed']:.3f} | {best['einsum']:.3f} "
                f"| {best['einsum'] / best['fixed']:.2f}x | {diff:.1e} |"
            )
    lines.append("")


def bench_anytime(data, overrides: dict, root: Path, headline: list) -> list[str]:
    """(c): the anytime sections of ``bench/trees_anytime.py`` (its ``DEFAULTS`` under the
    ``trees.bench.anytime`` settings), headings one level down. The module is found under
    ``root/bench`` (Snakemake runs a copy of this script from elsewhere)."""
    sys.path.insert(0, str((root / "bench").resolve()))
    import trees_anytime

    cfg = {**trees_anytime.DEFAULTS, **overrides}
    body = trees_anytime.run(cfg, data, headline)
    return ["## (c) Anytime robustness (issue 16)", ""] + [
        "#" + line if line.startswith("## ") else line for line in body[1:]
    ]


def main(argv: list[str] | None = None, bench: dict | None = None) -> int:
    """Run the benchmark with the ``trees.bench`` settings ``bench`` (standalone: from
    config.yaml and the ``--configfile`` overlays) and write the markdown to ``--out``."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--out", required=True, help="markdown file to write")
    p.add_argument("--root", default=".", help="repository root (for results/data)")
    p.add_argument(
        "--configfile", nargs="*", default=[], help="config overlays merged over config.yaml"
    )
    p.add_argument("--jobs", type=int, default=2, help="threads of the model fits in (b)")
    p.add_argument("--skip-scale", action="store_true")
    p.add_argument("--skip-anytime", action="store_true", help="leave out the sections of (c)")
    p.add_argument("--resize-only", action="store_true", help="run only the resize section (d)")
    args = p.parse_args(argv)
    if bench is None:
        root = Path(args.root)
        bench = config_section("trees", root / "config.yaml", args.configfile)["bench"]
    # the settings as the attributes the benchmark functions read (args.seed, args.n_grid, ...)
    args = argparse.Namespace(**vars(args), **bench)
    data = load_mnist(Path(args.root))
    lines = [
        "# Tree-robustness engine benchmark",
        "",
        f"Command: `python bench/trees.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
        "",
    ]
    headline: list = []
    if not args.resize_only:
        bench_table2(data, args, lines, headline)
        if not args.skip_scale:
            bench_scale(data, args, lines)
        if not args.skip_anytime:
            lines += bench_anytime(
                data, getattr(args, "anytime", None) or {}, Path(args.root), headline
            )
    bench_resize(data, lines)
    rss = peak_rss_mb()
    lines.append(f"Peak resident memory of the whole benchmark process: {rss:.0f} MB.")
    lines += ["", headline_markdown(headline)]
    text = "\n".join(lines) + "\n"
    from reliquant.core.io import write_text

    write_text(text, args.out)
    print(text)
    return 0


if __name__ == "__main__":
    if "snakemake" in globals():  # rule bench_trees (script directive)
        from reliquant.core.runlog import start_job

        start_job(snakemake.log[0], "trees")  # noqa: F821
        main(
            ["--out", snakemake.output[0], "--jobs", str(snakemake.threads)],  # noqa: F821
            snakemake.config["trees"]["bench"],  # noqa: F821
        )
    else:
        raise SystemExit(main())
