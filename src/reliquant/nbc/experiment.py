"""The synthetic experiment of paper 000, Section 7: distributions, sampling, one grid cell.

* ``P_fix`` (Section 7.1): an NBC joint with class probabilities ``class_probs`` where, for each
  class c and feature i, value ``favoured[c][i]`` gets ``p_favoured`` and the other values of
  ``F_i`` share the rest uniformly.
* ``P_rand``: a uniform random number per (c, f), normalised (drawn once, then fixed).
* ``P_test = (1 - beta) P_fix + beta P_rand``; ``D_test``: ``n_test`` draws from it.
* Section 7.2: ``P_train = (1 - gamma) P_test + gamma P_shift`` with ``P_shift`` drawn like
  ``P_rand``; per ``P_shift``, several training sets of size ``N_train``.
* Section 7.3: per training set, alpha by k-fold CV (eq. 18 NBC), fit, then the seven metrics
  ``u_m, u_H, u_a, u_t, u_e, eps_glob, eps_loc`` on every test instance.
* Section 7.4: accuracy-acceptance curves per metric and training set; their mean and standard
  deviation per (N_train, gamma) cell (Figures 1 and 2) and the area under each curve.

Joint tables have shape ``(K, |F_1|, ..., |F_N|)``. Randomness enters only through
:func:`reliquant.core.seeding.block_rng` keys built here from the config seed, so every cell and
training set can be regenerated alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from reliquant.core.io import frame_to_markdown
from reliquant.core.seeding import block_rng
from reliquant.nbc.acceptance import accuracy_acceptance_curve, area_under_curve
from reliquant.nbc.classifier import cv_alpha, fit_nbc, log_factors, log_joint
from reliquant.nbc.robustness_metrics import eps_glob, eps_loc
from reliquant.nbc.uncertainty import conditional, ensemble_uncertainty, u_entropy, u_max_prob

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "METRICS",
    "auc_table",
    "cell_curves",
    "claims_check",
    "claims_markdown",
    "evaluate_training_set",
    "gamma_key",
    "make_distributions",
    "mix",
    "p_fix",
    "plot_curve_grid",
    "random_joint",
    "run_cell",
    "sample_joint",
    "table_from_frame",
    "table_to_frame",
]

#: metric name -> (ordered by decreasing value?, family, label). Section 7.4: uncertainty
#: metrics by increasing value, robustness metrics by decreasing value.
METRICS: dict[str, tuple[bool, str, str]] = {
    "u_m": (False, "uncertainty", r"$u_m$"),
    "u_H": (False, "uncertainty", r"$u_H$"),
    "u_a": (False, "uncertainty", r"$u_a$"),
    "u_t": (False, "uncertainty", r"$u_t$"),
    "u_e": (False, "uncertainty", r"$u_e$"),
    "eps_glob": (True, "robustness", r"$\varepsilon_{glob}$"),
    "eps_loc": (True, "robustness", r"$\varepsilon_{loc}$"),
}


def gamma_key(gamma: float) -> str:
    """Canonical text of a shift coefficient, used in file names and seed keys (``0.2``)."""
    return f"{float(gamma):g}"


# --------------------------------------------------------------------------- distributions


def p_fix(
    class_probs: Sequence[float],
    n_values: Sequence[int],
    favoured: Sequence[Sequence[int]],
    p_favoured: float,
) -> np.ndarray:
    """``P_fix`` of Section 7.1 as a joint table (K, |F_1|, ..., |F_N|) satisfying eq. 17.

    ``p(f_i | c) = p_favoured`` if ``f_i = favoured[c][i]`` else ``(1 - p_favoured) / (|F_i| - 1)``.
    """
    prior = np.asarray(class_probs, dtype=np.float64)
    k = prior.size
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError(f"class_probs must be >= 0 and sum to 1; got {list(class_probs)}")
    fav = np.asarray(favoured)
    if fav.shape != (k, len(n_values)):
        raise ValueError(
            f"favoured must be a {k} x {len(n_values)} list (one value per class and feature); "
            f"got shape {fav.shape}"
        )
    if not 0 <= p_favoured <= 1:
        raise ValueError(f"p_favoured must lie in [0, 1]; got {p_favoured}")
    table = prior.reshape((k,) + (1,) * len(n_values))
    for i, v in enumerate(n_values):
        if v < 2:
            raise ValueError(f"feature {i} needs at least 2 values; got {v}")
        if np.any(fav[:, i] < 0) or np.any(fav[:, i] >= v):
            raise ValueError(
                f"favoured values of feature {i} must lie in 0..{v - 1}; got {fav[:, i]}"
            )
        cond = np.full((k, v), (1.0 - p_favoured) / (v - 1))
        cond[np.arange(k), fav[:, i]] = p_favoured
        shape = [1] * (len(n_values) + 1)
        shape[0], shape[i + 1] = k, v
        table = table * cond.reshape(shape)
    return table


def random_joint(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """A uniform(0, 1) number per cell, normalised to sum 1 (``P_rand``, ``P_shift``)."""
    u = rng.random(tuple(shape))
    return u / u.sum()


def mix(p: np.ndarray, q: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - weight) p + weight q`` (``P_test`` with beta, ``P_train`` with gamma)."""
    if not 0 <= weight <= 1:
        raise ValueError(f"mixture weight must lie in [0, 1]; got {weight}")
    return (1.0 - weight) * p + weight * q


def sample_joint(
    rng: np.random.Generator, joint: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. draws (class, features) from a joint table: ``X`` (n, N) and ``y`` (n,)."""
    flat = joint.reshape(-1)
    cells = rng.choice(flat.size, size=n, p=flat / flat.sum())
    idx = np.unravel_index(cells, joint.shape)
    return np.stack(idx[1:], axis=1).astype(np.int64), idx[0].astype(np.int64)


def make_distributions(design: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """All fixed distributions and ``D_test`` of Sections 7.1-7.2 from the config ``design``.

    Returns ``{"fix", "rand", "test": tables, "shift": (S, K, ...) array, "X_test", "y_test"}``.
    Keys: ``block_rng(seed, "p_rand")``, ``(seed, "p_shift", s)``, ``(seed, "d_test")``.
    """
    fix = p_fix(design["class_probs"], design["n_values"], design["favoured"], design["p_favoured"])
    rand = random_joint(block_rng(seed, "p_rand"), fix.shape)
    test = mix(fix, rand, design["beta"])
    shift = np.stack(
        [random_joint(block_rng(seed, "p_shift", s), fix.shape) for s in range(design["n_shift"])]
    )
    X_test, y_test = sample_joint(block_rng(seed, "d_test"), test, design["n_test"])
    return {
        "fix": fix,
        "rand": rand,
        "test": test,
        "shift": shift,
        "X_test": X_test,
        "y_test": y_test,
    }


def table_to_frame(tables: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Long frame of joint tables: ``distribution, member, cls, x0..x{N-1}, prob``.

    Every value has shape (S, K, |F_1|, ..., |F_N|): members 0..S-1 of that distribution.
    """
    parts = []
    for name, stack in tables.items():
        for m, t in enumerate(np.asarray(stack)):
            idx = np.indices(t.shape).reshape(t.ndim, -1)
            d = {"distribution": name, "member": m, "cls": idx[0]}
            d.update({f"x{i}": idx[i + 1] for i in range(t.ndim - 1)})
            d["prob"] = t.reshape(-1)
            parts.append(pd.DataFrame(d))
    return pd.concat(parts, ignore_index=True)


def table_from_frame(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Inverse of :func:`table_to_frame` for one distribution: (members, K, |F_1|, ...)."""
    sub = frame[frame["distribution"] == name]
    if sub.empty:
        raise ValueError(
            f"distribution {name!r} not found; have {sorted(frame['distribution'].unique())}"
        )
    xcols = sorted((c for c in frame.columns if c.startswith("x")), key=lambda c: int(c[1:]))
    dims = ["member", "cls", *xcols]
    shape = tuple(int(sub[c].max()) + 1 for c in dims)
    out = np.full(shape, np.nan)
    out[tuple(sub[c].to_numpy() for c in dims)] = sub["prob"].to_numpy()
    if np.isnan(out).any():
        raise ValueError(f"distribution {name!r} is missing cells")
    return out


# --------------------------------------------------------------------------- one training set


def evaluate_training_set(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    n_classes: int,
    n_values: Sequence[int],
    alphas: Sequence[float],
    cv_folds: int,
    n_bootstrap: int,
    rng: np.random.Generator,
    tol: float = 1e-12,
) -> dict[str, Any]:
    """Section 7.3 for one training set: CV alpha, fit, predict, the seven metrics.

    The bootstrap ensemble (M = ``n_bootstrap`` resamples of the training set, with
    replacement, same size) is fitted with the alpha chosen for the main model. Metrics are
    computed once per distinct feature vector of the test set and broadcast back, so instances
    with identical features get bit-identical metric values (they tie on every metric).
    Returns ``alpha``, ``cv_accuracy``, ``y_pred``, ``correct`` and one array per metric.
    """
    alpha, cv_acc = cv_alpha(X_train, y_train, n_classes, n_values, alphas, cv_folds, rng)
    model = fit_nbc(X_train, y_train, n_classes, n_values, alpha)
    uniq, inverse = np.unique(np.asarray(X_test), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    lf = log_factors(model, uniq)
    lj = lf.sum(axis=2)
    c_hat = np.argmax(lj, axis=1)
    cond = conditional(lj)
    n = len(y_train)
    ens = np.stack(
        [
            conditional(
                log_joint(fit_nbc(X_train[b], y_train[b], n_classes, n_values, alpha), uniq)
            )
            for b in (rng.integers(0, n, size=n) for _ in range(n_bootstrap))
        ]
    )
    metrics = {
        "u_m": u_max_prob(cond),
        "u_H": u_entropy(cond),
        **ensemble_uncertainty(ens),
        "eps_glob": eps_glob(lj, c_hat),
        "eps_loc": eps_loc(lf, c_hat, tol=tol),
    }
    y_pred = c_hat[inverse]
    out: dict[str, Any] = {
        "alpha": alpha,
        "cv_accuracy": float(cv_acc.max()),
        "y_pred": y_pred,
        "correct": y_pred == np.asarray(y_test),
    }
    out.update({name: metrics[name][inverse] for name in METRICS})
    return out


def run_cell(
    dists: Mapping[str, Any],
    n_train: int,
    gamma: float,
    fit: Mapping[str, Any],
    seed: int,
    progress: bool = False,
) -> pd.DataFrame:
    """One (N_train, gamma) cell of Section 7.5: every P_shift x ``fit['n_train_sets']`` sets.

    ``dists`` as from :func:`make_distributions` (``test``, ``shift``, ``X_test``, ``y_test``).
    Training set ``(s, r)`` is drawn with ``block_rng(seed, "train", n_train, gamma_key(gamma),
    s, r)``, which also drives its CV folds and bootstrap. Returns one row per (training set,
    test instance) with the prediction, correctness and the seven metrics.
    """
    from tqdm.auto import tqdm

    test, shifts = dists["test"], dists["shift"]
    X_test, y_test = dists["X_test"], dists["y_test"]
    n_classes, n_values = test.shape[0], test.shape[1:]
    frames = []
    jobs = [(s, r) for s in range(shifts.shape[0]) for r in range(fit["n_train_sets"])]
    for s, r in tqdm(jobs, disable=not progress, desc=f"n={n_train} g={gamma_key(gamma)}"):
        rng = block_rng(seed, "train", int(n_train), gamma_key(gamma), s, r)
        X_tr, y_tr = sample_joint(rng, mix(test, shifts[s], gamma), int(n_train))
        res = evaluate_training_set(
            X_tr, y_tr, X_test, y_test, n_classes, n_values, fit["alphas"], fit["cv_folds"],
            fit["n_bootstrap"], rng, tol=fit["eps_loc_tol"],
        )  # fmt: skip
        frame = pd.DataFrame(
            {
                "n_train": int(n_train),
                "gamma": float(gamma),
                "shift": s,
                "rep": r,
                "train_set": s * fit["n_train_sets"] + r,
                "alpha": res["alpha"],
                "test_index": np.arange(len(y_test)),
                "y_true": y_test,
                "y_pred": res["y_pred"],
                "correct": res["correct"],
                **{m: res[m] for m in METRICS},
            }
        )
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- curves and areas


def cell_curves(metrics: pd.DataFrame) -> pd.DataFrame:
    """Accuracy-acceptance curve of every metric per training set (Section 7.4), wide format.

    One row per (training set, N = 1..n_test) with ``rate = N / n_test`` and one accuracy
    column per metric (ties averaged, :func:`reliquant.nbc.acceptance.accuracy_acceptance_curve`).
    """
    frames = []
    for ts, g in metrics.groupby("train_set", sort=True):
        g = g.sort_values("test_index")
        cols: dict[str, Any] = {}
        for name, (desc, _, _) in METRICS.items():
            rate, acc = accuracy_acceptance_curve(g[name].to_numpy(), g["correct"].to_numpy(), desc)
            cols[name] = acc
        frames.append(
            pd.DataFrame(
                {
                    "n_train": g["n_train"].iloc[0],
                    "gamma": g["gamma"].iloc[0],
                    "train_set": ts,
                    "n_accepted": np.arange(1, rate.size + 1),
                    "rate": rate,
                    **cols,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def auc_table(curves: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Area under every curve: per training set (long) and mean/std per cell and metric.

    Returns ``(per_set, summary)``; summary columns: ``n_train, gamma, metric, family,
    auc_mean, auc_std, n_sets``. ``auc_std`` is the sample standard deviation (ddof = 1).
    """
    names = list(METRICS)
    per_set = (
        curves.groupby(["n_train", "gamma", "train_set"], sort=True)[names]
        .agg(lambda a: float(area_under_curve(a.to_numpy())))
        .reset_index()
        .melt(id_vars=["n_train", "gamma", "train_set"], var_name="metric", value_name="auc")
    )
    summary = (
        per_set.groupby(["n_train", "gamma", "metric"], sort=False)["auc"]
        .agg(auc_mean="mean", auc_std="std", n_sets="count")
        .reset_index()
    )
    summary["family"] = summary["metric"].map(lambda m: METRICS[m][1])
    summary["metric"] = pd.Categorical(summary["metric"], categories=names, ordered=True)
    summary = summary.sort_values(["n_train", "gamma", "metric"], ascending=[False, True, True])
    summary["metric"] = summary["metric"].astype(str)
    cols = ["n_train", "gamma", "metric", "family", "auc_mean", "auc_std", "n_sets"]
    return per_set, summary[cols].reset_index(drop=True)


def claims_check(per_set: pd.DataFrame, z: float = 2.0) -> pd.DataFrame:
    """Paper 000's claim, cell by cell, from the areas under the curves (Sections 1, 7.6, 8).

    In each cell take the robustness metric and the uncertainty metric with the highest mean
    AUC; ``diff`` is their paired AUC difference per training set. The verdict is ``better``
    if ``mean(diff) > z * se``, ``worse`` if ``mean(diff) < -z * se``, else ``tie``
    (``se = std(diff) / sqrt(n_sets)``). A cell is ``hard`` when it has fewer training data than
    the largest N_train or a positive gamma. The claim "robustness beats uncertainty when data
    are few or shifted and is no worse otherwise" predicts ``better`` in hard cells and not
    ``worse`` in the easy cell.
    """
    rows = []
    n_max = per_set["n_train"].max()
    for (n, g), sub in per_set.groupby(["n_train", "gamma"], sort=True):
        wide = sub.pivot(index="train_set", columns="metric", values="auc")
        means = wide.mean()
        rob = means[[m for m in METRICS if METRICS[m][1] == "robustness"]].idxmax()
        unc = means[[m for m in METRICS if METRICS[m][1] == "uncertainty"]].idxmax()
        diff = wide[rob] - wide[unc]
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
        d = float(diff.mean())
        verdict = "better" if d > z * se else ("worse" if d < -z * se else "tie")
        hard = bool(n < n_max or g > 0)
        expected_ok = verdict == "better" if hard else verdict != "worse"
        rows.append(
            {
                "n_train": int(n),
                "gamma": float(g),
                "hard": hard,
                "best_robustness": rob,
                "auc_robustness": float(means[rob]),
                "best_uncertainty": unc,
                "auc_uncertainty": float(means[unc]),
                "diff_mean": d,
                "diff_se": se,
                "verdict": verdict,
                "claim_holds": expected_ok,
            }
        )
    out = pd.DataFrame(rows)
    return out.sort_values(["n_train", "gamma"], ascending=[False, True]).reset_index(drop=True)


def claims_markdown(summary: pd.DataFrame, claims: pd.DataFrame, z: float) -> str:
    """Markdown report: AUC mean +- std per cell and metric, the per-cell claims check, verdict."""
    wide = summary.assign(
        cell=summary["auc_mean"].map("{:.4f}".format)
        + " ± "
        + summary["auc_std"].map("{:.4f}".format)
    )
    wide = wide.pivot_table(
        index=["n_train", "gamma"], columns="metric", values="cell", aggfunc="first"
    )
    wide = (
        wide[[m for m in METRICS if m in wide.columns]]
        .sort_index(ascending=[False, True])
        .reset_index()
    )
    wide["gamma"] = wide["gamma"].map(gamma_key)
    cl = claims.copy()
    cl["gamma"] = cl["gamma"].map(gamma_key)
    hard, easy = claims[claims["hard"]], claims[~claims["hard"]]
    n_hard_better = int((hard["verdict"] == "better").sum())
    n_easy_ok = int((easy["verdict"] != "worse").sum())
    n_worse = int((claims["verdict"] == "worse").sum())
    lines = [
        "# NBC robustness quantification: area under the accuracy-acceptance curves",
        "",
        "Paper 000 (Detavernier & De Bock), Section 7. Area under each curve (mean of the",
        "accuracy over r = 1/n, ..., 1), mean ± sample standard deviation over the training sets",
        "of each (N_train, gamma) cell. Higher is better.",
        "",
        frame_to_markdown(wide),
        "## Claims check",
        "",
        "Per cell, the best robustness metric against the best uncertainty metric (by mean AUC);",
        f"`diff` is their paired AUC difference, `better`/`worse` beyond {z:g} standard errors,",
        "`tie` otherwise. A cell is *hard* with N_train below the largest or gamma > 0.",
        "",
        frame_to_markdown(cl),
        "## Verdict",
        "",
        f"- Robustness beats uncertainty when data are few or shifted: better in {n_hard_better} of "
        f"{len(hard)} hard cells -> claim {'holds' if n_hard_better == len(hard) else 'holds only partly' if n_hard_better else 'does not hold'}.",
        f"- No worse otherwise: not worse in {n_easy_ok} of {len(easy)} easy cells -> claim "
        f"{'holds' if n_easy_ok == len(easy) else 'does not hold'}.",
        f"- Cells where robustness is significantly worse: {n_worse} of {len(claims)}.",
        "",
    ]
    return "\n".join(lines)


def plot_curve_grid(curves: pd.DataFrame, stat: str, title: str | None = None) -> Figure:
    """Figures 1 and 2 of paper 000: 3 x 3 grid (rows N_train decreasing, columns gamma).

    ``stat`` is ``"mean"`` or ``"std"`` (sample std, ddof = 1) of the accuracy over the training
    sets of each cell at each acceptance rate; one line per metric.
    """
    import matplotlib.pyplot as plt

    from reliquant.core.plotting import PALETTE, apply_style

    if stat not in ("mean", "std"):
        raise ValueError(f"stat must be 'mean' or 'std'; got {stat!r}")
    apply_style()
    names = list(METRICS)
    agg = curves.groupby(["n_train", "gamma", "rate"], sort=True)[names].agg(stat).reset_index()
    ns = sorted(agg["n_train"].unique(), reverse=True)
    gs = sorted(agg["gamma"].unique())
    fig, axes = plt.subplots(
        len(ns),
        len(gs),
        figsize=(3.2 * len(gs), 2.6 * len(ns)),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    styles = {"uncertainty": "-", "robustness": "--"}
    for i, n in enumerate(ns):
        for j, g in enumerate(gs):
            ax = axes[i][j]
            sub = agg[(agg["n_train"] == n) & (agg["gamma"] == g)]
            for k, name in enumerate(names):
                _, fam, label = METRICS[name]
                ax.plot(sub["rate"], sub[name], styles[fam], color=PALETTE[k], lw=1.2, label=label)
            ax.set_title(rf"$N_{{train}}$ = {n}, $\gamma$ = {gamma_key(g)}")
            if i == len(ns) - 1:
                ax.set_xlabel("acceptance rate r")
            if j == 0:
                ax.set_ylabel("mean accuracy" if stat == "mean" else "std of accuracy")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(names), bbox_to_anchor=(0.5, 0.0))
    return fig
