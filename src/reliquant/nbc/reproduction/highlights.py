"""The NBC numbers the README and ``docs/nbc.md`` quote, generated from the run's tables.

Each function returns the markdown of one generated block (:mod:`reliquant.core.docs`):
``nbc_cells`` (per cell: best metric of each family, paired difference, verdict),
``nbc_statements`` (the paper's Section 7.6 statements measured on our AUC table) and
``readme_nbc`` (the README's bullets). Inputs: the per-cell claims check
(``results/nbc/claims.parquet``, :func:`reliquant.nbc.reproduction.paper.claims_check`) and the AUC
summary (``results/nbc/auc.parquet``, :func:`reliquant.nbc.reproduction.curves.auc_table`).
"""

from __future__ import annotations

import pandas as pd

from reliquant.nbc.reproduction.experiment import METRICS, gamma_key

__all__ = [
    "ROBUSTNESS",
    "UNCERTAINTY",
    "cells_table",
    "highlight_blocks",
    "readme_bullets",
    "statements_table",
]

ROBUSTNESS = [m for m in METRICS if METRICS[m][1] == "robustness"]
UNCERTAINTY = [m for m in METRICS if METRICS[m][1] == "uncertainty"]
_VERDICT_PHRASE = {"better": "better", "tie": "tied", "worse": "significantly worse"}


def _cell(n: int, g: float) -> str:
    return f"({int(n)}, {gamma_key(g)})"


def _auc(auc: pd.DataFrame, n: int, g: float, metric: str, column: str = "auc_mean") -> float:
    row = auc[(auc["n_train"] == n) & (auc["gamma"] == g) & (auc["metric"] == metric)]
    return float(row[column].iloc[0])


def cells_table(claims: pd.DataFrame, auc: pd.DataFrame) -> str:
    """One row per (N_train, gamma) cell: the best uncertainty and robustness AUC (mean over
    training sets), their paired difference +- standard error, the verdict and u_e's AUC."""
    lines = [
        "| N_train | gamma | best uncertainty AUC | best robustness AUC | paired diff ± se "
        "| verdict | u_e AUC |",
        "|---:|---:|---|---|---|---|---:|",
    ]
    for r in claims.itertuples(index=False):
        lines.append(
            f"| {r.n_train} | {gamma_key(r.gamma)} | {r.auc_uncertainty:.4f} ({r.best_uncertainty}) "
            f"| {r.auc_robustness:.4f} ({r.best_robustness}) "
            f"| {r.diff_mean:+.4f} ± {r.diff_se:.4f} | {r.verdict} "
            f"| {_auc(auc, r.n_train, r.gamma, 'u_e'):.3f} |"
        )
    return "\n".join(lines) + "\n"


def _gaps(claims: pd.DataFrame, **where) -> list[float]:
    sub = claims
    for key, value in where.items():
        sub = sub[sub[key] == value]
    order = "gamma" if "n_train" in where else "n_train"
    sub = sub.sort_values(order, ascending=order == "gamma")
    return [float(v) for v in sub["diff_mean"]]


def _arrow(values: list[float]) -> str:
    return " -> ".join(f"{v:.3f}" for v in values)


def _increasing(values: list[float]) -> bool:
    return all(b > a for a, b in zip(values, values[1:], strict=False))


def _cells_less_spread(auc: pd.DataFrame) -> int:
    """Cells where both robustness metrics' AUC std is below every uncertainty metric's."""
    n_less = 0
    for _, sub in auc.groupby(["n_train", "gamma"]):
        std = sub.set_index("metric")["auc_std"]
        n_less += bool(std[ROBUSTNESS].max() < std[UNCERTAINTY].min())
    return n_less


def _partly(ok: list, ns: list, n_small: int) -> bool | str:
    """True if the gap grows with the shift at every N_train; else which N_train it does at
    (the statement is about small N_train, so it does not hold unless the smallest is one)."""
    if len(ok) == len(ns):
        return True
    if n_small not in ok:
        return False
    return "holds at N_train = " + ", ".join(str(n) for n in ok) + " only"


def _verdict(ok: bool | str) -> str:
    return ok if isinstance(ok, str) else ("holds" if ok else "does not hold")


def statements_table(claims: pd.DataFrame, auc: pd.DataFrame) -> str:
    """The paper's Section 7.6 / 8 statements, each with the numbers of our AUC table that
    test it and a verdict computed from them ("gap" = best robustness minus best uncertainty
    AUC, the paired difference of :func:`reliquant.nbc.reproduction.paper.claims_check`)."""
    ns = sorted(claims["n_train"].unique(), reverse=True)
    gs = sorted(claims["gamma"].unique())
    n_small, n_large, g0, g_max = ns[-1], ns[0], gs[0], gs[-1]
    rows = []
    gap_n = _gaps(claims, gamma=g0)
    rows.append(
        (
            "uncertainty metrics get worse as N_train shrinks, robustness stays high",
            f"at gamma = {gamma_key(g0)} the gap goes {_arrow(gap_n)} for N_train "
            + " -> ".join(str(n) for n in ns),
            _increasing(gap_n),
        )
    )
    per_n = {n: _gaps(claims, n_train=n) for n in ns}
    rows.append(
        (
            "more shift hurts uncertainty more, especially for small N_train",
            "; ".join(f"N_train = {n}: gap {_arrow(per_n[n])}" for n in ns)
            + f" (gamma {' -> '.join(gamma_key(g) for g in gs)})",
            _partly([n for n in ns if _increasing(per_n[n])], ns, n_small),
        )
    )
    worst = claims.loc[claims["auc_robustness"].idxmin()]
    others = claims.drop(index=worst.name)["auc_robustness"].min()
    rows.append(
        (
            f"robustness drops considerably only in the extreme cell {_cell(n_small, g_max)}",
            f"lowest robustness AUC {worst.auc_robustness:.3f} at "
            f"{_cell(worst.n_train, worst.gamma)}, otherwise >= {others:.3f}",
            bool(worst.n_train == n_small and worst.gamma == g_max),
        )
    )
    easy = claims[(claims["n_train"] == n_large) & (claims["gamma"] == g0)].iloc[0]
    rows.append(
        (
            "competitive with no shift and enough data",
            f"{_cell(n_large, g0)}: {easy.verdict} ({easy.diff_mean:+.4f}, "
            f"{easy.diff_mean / easy.diff_se:.1f} se)",
            easy.verdict != "worse",
        )
    )
    loc0, glob0 = (_auc(auc, n_small, g0, m) for m in ("eps_loc", "eps_glob"))
    locx, globx = (_auc(auc, n_small, g_max, m) for m in ("eps_loc", "eps_glob"))
    rows.append(
        (
            "eps_loc slightly better for small data without shift, eps_glob better under both",
            f"{_cell(n_small, g0)}: eps_loc {loc0:.4f} vs eps_glob {glob0:.4f}; "
            f"{_cell(n_small, g_max)}: eps_glob {globx:.4f} vs eps_loc {locx:.4f}",
            loc0 > glob0 and globx > locx,
        )
    )
    n_less = _cells_less_spread(auc)
    n_cells = len(claims)
    rows.append(
        (
            "robustness curves vary less across training sets (Figure 2)",
            f"both robustness metrics have a smaller AUC std than every uncertainty metric in "
            f"{n_less} of {n_cells} cells",
            n_less == n_cells,
        )
    )
    lines = ["| paper statement (Section 7.6 / 8) | our run | verdict |", "|---|---|---|"]
    lines += [f"| {s} | {e} | {_verdict(ok)} |" for s, e, ok in rows]
    return "\n".join(lines) + "\n"


def readme_bullets(claims: pd.DataFrame, auc: pd.DataFrame) -> str:
    """The README's summary of the claims check: hard cells where robustness wins, by how
    much at most, the exceptions, the easy cell and the spread across training sets."""
    hard, easy = claims[claims["hard"]], claims[~claims["hard"]]
    better = hard[hard["verdict"] == "better"]
    best = better.loc[better["diff_mean"].idxmax()] if len(better) else None
    exceptions = hard[hard["verdict"] != "better"]
    worse = claims[claims["verdict"] == "worse"]
    first = (
        f"- *Robustness beats uncertainty when data are few or shifted*: the best robustness "
        f"metric (eps_loc or eps_glob) has a significantly higher AUC (paired difference beyond "
        f"2 standard errors) in **{len(better)} of {len(hard)}** cells with few or shifted data"
    )
    if best is not None:
        first += (
            f", by up to {best.diff_mean:.3f} (N = {best.n_train}, gamma = {gamma_key(best.gamma)}:"
            f" {best.auc_robustness:.3f} vs {best.auc_uncertainty:.3f})"
        )
    first += "."
    if len(exceptions):
        first += " Not in " + "; ".join(
            f"N = {r.n_train}, gamma = {gamma_key(r.gamma)} ({r.verdict}, "
            f"{r.diff_mean:+.4f} ± {r.diff_se:.4f})"
            for r in exceptions.itertuples(index=False)
        )
        first += "."
    lines = [first]
    for r in easy.itertuples(index=False):
        lines.append(
            f"- *No worse otherwise*: in the easy cell (N = {r.n_train}, gamma = "
            f"{gamma_key(r.gamma)}) robustness is {_VERDICT_PHRASE[r.verdict]} ({r.auc_robustness:.4f} vs "
            f"{r.auc_uncertainty:.4f}). Cells where robustness is significantly worse: "
            f"{len(worse)} of {len(claims)}."
        )
    n_less = _cells_less_spread(auc)
    worst = auc.groupby("metric")["auc_mean"].mean().idxmin()
    lines.append(
        f"- Robustness metrics also vary less across training sets (smaller AUC standard "
        f"deviation than every uncertainty metric) in {n_less} of {len(claims)} cells; the "
        f"lowest mean AUC over the cells is {worst}'s."
    )
    return "\n".join(lines) + "\n"


def highlight_blocks(claims: pd.DataFrame, auc: pd.DataFrame) -> dict[str, str]:
    """Every generated NBC block, by name."""
    return {
        "nbc_cells": cells_table(claims, auc),
        "nbc_statements": statements_table(claims, auc),
        "readme_nbc": readme_bullets(claims, auc),
    }
