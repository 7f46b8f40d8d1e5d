"""Certified thresholds on every compare data set, clean and under shift (issue 43, item 3).

A certificate (:func:`reliquant.compare.certify_threshold`) promises ``P(error | kept) <=
risk`` with probability ``>= 1 - delta`` for predictions exchangeable with its calibration
set. Which score keeps that promise when the test data shift? Per data set and split:

1. **calibrate** every score on the split's clean **validation** part, at each target risk
   of the data set (``compare.certified``: targets the data set can reach, ``delta``, the
   method);
2. **measure** on the split's clean **test** part and on its **shifted** test part (every
   shifted case of the split pooled): coverage (share kept), realised selective risk
   (errors among the kept), and ``violated`` = something was kept and the realised risk
   exceeds the target. A threshold that keeps nothing never violates (and covers 0).

Over the splits (:func:`certified_summary`), per data set, condition, score and target: the
share of splits certified, the mean coverage, and the violation rate with its
Clopper-Pearson interval. The realised risk of a finite test part is itself noisy, so even
a valid certificate's clean violation rate may exceed ``delta``; the clean rate is the
baseline the shifted rate is read against.

**The claim** (:func:`certified_claims`): per data set with a shifted condition and per
target, the data set's first paper score (``compare.comparisons.<d>.paper[0]``) against the
comparator fixed in config (``compare.certified``, before the data are seen): ``d_s =
violated_comparator(s) - violated_paper(s)`` on the shifted test part of split ``s``, its
mean and t-interval over splits (:func:`reliquant.compare.paired_t`), Holm over the table;
``robustness`` (the paper score keeps its guarantee better), ``uncertainty`` or
``undecided``; a target where neither score certifies on any split is ``nothing
certified``. Coverage stands beside it: a score that keeps nothing never violates.

**The answer** (:func:`certified_answers`), per data set and target: the score of most
clean coverage, and under shift the score of most shifted coverage among those that keep
their promise (violation interval reaching down to ``delta``).

Public API: :data:`CERTIFIED_SCHEMA`, :data:`CERTIFIED_SUMMARY_SCHEMA`,
:data:`CERTIFIED_CLAIMS_SCHEMA`, :func:`check_certified`, :func:`certified_settings`,
:func:`certified_table`, :func:`certified_summary`, :func:`certified_claims`,
:func:`certified_answers`, :func:`certified_markdown`, :func:`certified_readme`,
:func:`certified_blocks`, :func:`lowest_certifiable_risk`,
:func:`certified_figure`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import ArrayLike

from reliquant.compare import (
    binomial_upper_bound,
    certify_rows,
    clopper_pearson_interval,
    paired_t,
)
from reliquant.compare.reproduction.contrasts import holm_verdicts
from reliquant.compare.reproduction.tables import (
    CONDITIONS,
    DATASET_TITLES,
    family_of,
    score_columns,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CERTIFIED_CLAIMS_SCHEMA",
    "CERTIFIED_SCHEMA",
    "CERTIFIED_SUMMARY_SCHEMA",
    "certified_answers",
    "certified_blocks",
    "certified_claims",
    "certified_figure",
    "certified_markdown",
    "certified_readme",
    "certified_settings",
    "certified_summary",
    "certified_table",
    "check_certified",
    "lowest_certifiable_risk",
]

_S, _F, _I, _B = pa.string(), pa.float64(), pa.int64(), pa.bool_()
#: One row per data set, split, score, target and condition (module docstring, steps 1-2).
CERTIFIED_SCHEMA = pa.schema([
    ("dataset", _S), ("split", pa.int32()), ("score", _S), ("family", _S), ("role", _S),
    ("target_risk", _F), ("n_calibration", _I), ("certified", _B), ("threshold", _F),
    ("calibration_coverage", _F), ("bound", _F), ("condition", _S), ("n_test", _I),
    ("n_kept", _I), ("coverage", _F), ("realised_risk", _F), ("violated", _B),
])  # fmt: skip
#: Over splits, per data set, condition, score and target (:func:`certified_summary`).
CERTIFIED_SUMMARY_SCHEMA = pa.schema([
    ("dataset", _S), ("condition", _S), ("score", _S), ("family", _S), ("role", _S),
    ("target_risk", _F), ("delta", _F), ("n_splits", _I), ("n_calibration", _I),
    ("certified_share", _F), ("mean_coverage", _F), ("violations", _I), ("violation_rate", _F), ("ci_low", _F),
    ("ci_high", _F), ("keeps", _B),
])  # fmt: skip
#: The paper score against the comparator under shift (:func:`certified_claims`).
CERTIFIED_CLAIMS_SCHEMA = pa.schema([
    ("dataset", _S), ("target_risk", _F), ("paper_score", _S), ("comparator", _S),
    ("n_splits", _I), ("paper_violation_rate", _F), ("comparator_violation_rate", _F),
    ("paper_coverage", _F), ("comparator_coverage", _F), ("paper_clean_coverage", _F),
    ("comparator_clean_coverage", _F), ("diff_mean", _F), ("ci_low", _F), ("ci_high", _F),
    ("p_value", _F), ("p_holm", _F), ("verdict", _S),
])  # fmt: skip


# ----------------------------------------------------------------------------- settings
def check_certified(
    settings: Mapping[str, Any], datasets: Sequence[str], comparisons: Mapping[str, Any]
) -> None:
    """Refuse ``compare.certified`` settings that do not fit the run: an entry of
    ``datasets`` naming no data set of the run, or a comparator (default or per data set)
    that is not one of the data set's declared uncertainty scores
    (``compare.comparisons.<d>.uncertainty``). ``ValueError`` naming the key."""
    extra = sorted(set(settings.get("datasets") or {}) - set(datasets))
    if extra:
        raise ValueError(
            f"compare.certified.datasets names {extra}, not data sets of this run "
            f"({', '.join(datasets)})"
        )
    for d in datasets:
        comparator = certified_settings(settings, d)["comparator"]
        declared = list(comparisons[d]["uncertainty"])
        if comparator not in declared:
            where = (f"compare.certified.datasets.{d}.comparator"
                     if "comparator" in (settings.get("datasets") or {}).get(d, {})
                     else "compare.certified.comparator")  # fmt: skip
            raise ValueError(
                f"{where} is {comparator!r}, not one of {d}'s declared uncertainty scores "
                f"{declared} (compare.comparisons.{d}.uncertainty); set "
                f"compare.certified.datasets.{d}.comparator"
            )


def certified_settings(settings: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """The targets and comparator of ``dataset``: its entry of ``datasets`` over the
    defaults (``targets``, ``comparator``)."""
    own = dict((settings.get("datasets") or {}).get(dataset) or {})
    return {"targets": [float(t) for t in own.get("targets", settings["targets"])],
            "comparator": str(own.get("comparator", settings["comparator"]))}  # fmt: skip


def _role(score: str, paper: str, comparator: str) -> str:
    return "paper" if score == paper else "comparator" if score == comparator else "other"


# ----------------------------------------------------------------------------- per split
def _split_parts(frame: pd.DataFrame, scores: Sequence[str]) -> dict[int, dict[str, Any]]:
    """Per split: the clean validation part's scores ``(S, n)`` and correctness, and each
    condition's test part the same way (absent conditions left out)."""
    out = {}
    for split, g in frame.groupby("split", sort=True):
        parts = {}
        for name, mask in (("calibration", (g["condition"] == "clean") & (g["part"] == "validation")),
                           *((c, (g["condition"] == c) & (g["part"] == "test")) for c in CONDITIONS)):  # fmt: skip
            rows = g[mask]
            if len(rows):
                parts[name] = (rows[list(scores)].to_numpy(np.float64).T,
                               rows["correct"].to_numpy(dtype=bool))  # fmt: skip
        if "calibration" not in parts:
            raise ValueError(f"{frame['dataset'].iloc[0]}, split {split}: no clean validation "
                             "predictions to calibrate on")  # fmt: skip
        out[int(split)] = parts
    return out


def certified_table(
    tables: Sequence[pd.DataFrame],
    settings: Mapping[str, Any],
    comparisons: Mapping[str, Any],
) -> pd.DataFrame:
    """Steps 1-2 of the module docstring on every per-prediction table (grid scores already
    at their chosen scale, :func:`reliquant.compare.reproduction.evaluation.pick_noise`).
    ``settings``: ``compare.certified`` (``delta``, ``method``, ``targets``, ``comparator``,
    ``datasets``). The splits whose validation parts have one size are certified together
    (:func:`reliquant.compare.certify_rows`, the same numbers as one call per split).
    Columns: :data:`CERTIFIED_SCHEMA`."""
    delta, method = float(settings["delta"]), str(settings["method"])
    rows: list[dict[str, Any]] = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        own = certified_settings(settings, dataset)
        paper = comparisons[dataset]["paper"][0]
        scores = score_columns(frame)
        parts = _split_parts(frame, scores)
        by_size: dict[int, list[int]] = {}
        for split, p in parts.items():
            by_size.setdefault(p["calibration"][1].size, []).append(split)
        for j, score in enumerate(scores):
            base = {"dataset": dataset, "score": score, "family": family_of(score),
                    "role": _role(score, paper, own["comparator"])}  # fmt: skip
            for target in own["targets"]:
                chunk: list[dict[str, Any]] = []
                for size, splits in by_size.items():
                    cal_s = np.stack([parts[s]["calibration"][0][j] for s in splits])
                    cal_c = np.stack([parts[s]["calibration"][1] for s in splits])
                    certs = certify_rows(cal_s, cal_c, risk=target, delta=delta, method=method)
                    for split, cert in zip(splits, certs.itertuples(index=False), strict=True):
                        head = {**base, "split": split, "target_risk": target,
                                "n_calibration": size, "certified": bool(cert.certified),
                                "threshold": cert.threshold, "calibration_coverage": cert.coverage,
                                "bound": cert.bound}  # fmt: skip
                        for condition in CONDITIONS:
                            if condition not in parts[split]:
                                continue
                            test_s, test_c = parts[split][condition]
                            kept = (test_s[j] >= cert.threshold) & bool(cert.certified)
                            n_kept = int(kept.sum())
                            realised = float((~test_c[kept]).mean()) if n_kept else math.nan
                            chunk.append({**head, "condition": condition, "n_test": int(kept.size),
                                         "n_kept": n_kept, "coverage": n_kept / kept.size,
                                         "realised_risk": realised,
                                         "violated": bool(n_kept and realised > target)})  # fmt: skip
                rows.extend(sorted(chunk, key=lambda r: r["split"]))  # stable: conditions stay
    return pd.DataFrame(rows, columns=CERTIFIED_SCHEMA.names)


# ----------------------------------------------------------------------------- over splits
def certified_summary(table: pd.DataFrame, *, delta: float, confidence: float) -> pd.DataFrame:
    """Per data set, condition, score and target over splits: ``n_calibration`` (the
    smallest calibration part of the splits), ``certified_share``,
    ``mean_coverage`` (0 where nothing is kept), ``violations`` and ``violation_rate`` with
    its Clopper-Pearson interval at ``confidence`` over the splits, and ``keeps``: the
    interval reaches down to ``delta`` (``ci_low <= delta``). Columns:
    :data:`CERTIFIED_SUMMARY_SCHEMA`."""
    keys = ["dataset", "condition", "score", "family", "role", "target_risk"]
    g = table.groupby(keys, sort=False)
    out = g.agg(n_splits=("split", "size"), n_calibration=("n_calibration", "min"),
                certified_share=("certified", "mean"),
                mean_coverage=("coverage", "mean"), violations=("violated", "sum")).reset_index()  # fmt: skip
    out["violations"] = out["violations"].astype(np.int64)
    out["n_calibration"] = out["n_calibration"].astype(np.int64)
    out["violation_rate"] = out["violations"] / out["n_splits"]
    lo, hi = clopper_pearson_interval(out["violations"], out["n_splits"], confidence)
    out["ci_low"], out["ci_high"] = lo, hi
    out["keeps"] = out["ci_low"] <= delta
    out["delta"] = float(delta)
    return out[CERTIFIED_SUMMARY_SCHEMA.names]


def certified_claims(table: pd.DataFrame, *, confidence: float) -> pd.DataFrame:
    """The paper score against the comparator on the shifted test parts, per data set and
    target (module docstring); Holm over the table's rows. Columns:
    :data:`CERTIFIED_CLAIMS_SCHEMA`."""
    out = []
    for (dataset, target), g in table.groupby(["dataset", "target_risk"], sort=False):
        paper = g.loc[g["role"] == "paper", "score"].unique()
        comp = g.loc[g["role"] == "comparator", "score"].unique()
        shifted = g[g["condition"] == "shifted"]
        if shifted.empty or not paper.size or not comp.size:
            continue

        def by_split(frame: pd.DataFrame, score: str, column: str) -> pd.Series:
            return frame[frame["score"] == score].set_index("split")[column].sort_index()

        vp = by_split(shifted, paper[0], "violated").astype(float)
        vc = by_split(shifted, comp[0], "violated").astype(float)
        clean = g[g["condition"] == "clean"]
        row = {"dataset": dataset, "target_risk": float(target), "paper_score": paper[0],
               "comparator": comp[0], "n_splits": int(vp.size),
               "paper_violation_rate": float(vp.mean()),
               "comparator_violation_rate": float(vc.mean()),
               "paper_coverage": float(by_split(shifted, paper[0], "coverage").mean()),
               "comparator_coverage": float(by_split(shifted, comp[0], "coverage").mean()),
               "paper_clean_coverage": float(by_split(clean, paper[0], "coverage").mean()),
               "comparator_clean_coverage": float(by_split(clean, comp[0], "coverage").mean()),
               **paired_t((vc - vp).to_numpy(), confidence), "verdict": ""}  # fmt: skip
        either = shifted[shifted["score"].isin([paper[0], comp[0]])]["certified"].any()
        if not either:
            row["p_value"], row["verdict"] = math.nan, "nothing certified"
        out.append(row)
    frame = pd.DataFrame(out, columns=[*CERTIFIED_CLAIMS_SCHEMA.names])
    holm_verdicts(frame, confidence=confidence)
    return frame[CERTIFIED_CLAIMS_SCHEMA.names]


def certified_answers(summary: pd.DataFrame) -> pd.DataFrame:
    """Per data set and target: ``n_calibration`` (the smallest calibration part),
    ``clean_best`` (most clean coverage) and ``shifted_best``
    (most shifted coverage among the scores that keep their promise under shift; empty when
    none covers anything), with their coverages."""
    out = []
    for (dataset, target), g in summary.groupby(["dataset", "target_risk"], sort=False):
        clean = g[g["condition"] == "clean"].sort_values("mean_coverage", ascending=False)
        shifted = g[(g["condition"] == "shifted") & g["keeps"] & (g["mean_coverage"] > 0)]
        shifted = shifted.sort_values("mean_coverage", ascending=False)
        row = {"dataset": dataset, "target_risk": float(target),
               "n_calibration": int(g["n_calibration"].min()),
               "clean_best": clean["score"].iloc[0] if len(clean) else "",
               "clean_coverage": float(clean["mean_coverage"].iloc[0]) if len(clean) else math.nan,
               "shifted_best": shifted["score"].iloc[0] if len(shifted) else "",
               "shifted_coverage": float(shifted["mean_coverage"].iloc[0]) if len(shifted) else math.nan}  # fmt: skip
        out.append(row)
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------- reports
def _title(dataset: str) -> str:
    return DATASET_TITLES.get(dataset, dataset)


def _pct(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{100 * x:.0f} %"


def lowest_certifiable_risk(n: ArrayLike, delta: float) -> np.ndarray:
    """The smallest selective risk any certificate on ``n`` calibration predictions can
    promise at ``delta``: the one-sided Clopper-Pearson bound of a threshold that keeps all
    ``n`` with no error, tested once, ``1 - delta ** (1 / n)``. Every method's bound is at
    least this (SGR and Learn-then-Test split ``delta`` over several tests and keep fewer),
    so a target below it is out of reach of the data set, not of a score."""
    n = np.asarray(n, dtype=np.int64)
    return binomial_upper_bound(np.zeros_like(n), n, delta)


def certified_markdown(summary: pd.DataFrame, claims: pd.DataFrame, *, delta: float) -> str:
    """The answer per data set and target (with the calibration size and the lowest risk it
    can certify, :func:`lowest_certifiable_risk`), then the claim table: the paper score and
    its comparator under shift (violation rates, coverages, the paired difference over
    splits and the verdict)."""
    answers = certified_answers(summary)
    lines = [f"Certified at delta = {delta:g} on each split's clean validation part; coverage "
             "and violations measured on its clean and shifted test parts, mean over splits. "
             "A target below the lowest certifiable risk of the calibration size is out of "
             "reach of every score.",
             "", "| data set | calibration rows (lowest certifiable risk) | target | most clean "
             "coverage | under shift, most coverage kept in promise |", "|---|---|---|---|---|"]  # fmt: skip
    for a in answers.itertuples(index=False):
        clean = f"{a.clean_best} ({_pct(a.clean_coverage)})" if a.clean_coverage > 0 else "none"
        shift = f"{a.shifted_best} ({_pct(a.shifted_coverage)})" if a.shifted_best else "none"
        floor = float(lowest_certifiable_risk(a.n_calibration, delta))
        lines.append(f"| {_title(a.dataset)} | {a.n_calibration} ({100 * floor:.1f} %) "
                     f"| {_pct(a.target_risk)} | {clean} | {shift} |")  # fmt: skip
    lines += ["", "| data set | target | paper score | comparator | violations under shift "
              "(paper / comparator) | coverage under shift | clean coverage | comparator - "
              "paper [interval] | verdict |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in claims.itertuples(index=False):
        diff = ("-" if not np.isfinite(c.ci_low) or c.verdict == "nothing certified" else
                f"{c.diff_mean:+.2f} [{c.ci_low:+.2f}, {c.ci_high:+.2f}]")  # fmt: skip
        lines.append(
            f"| {_title(c.dataset)} | {_pct(c.target_risk)} | {c.paper_score} | {c.comparator} "
            f"| {_pct(c.paper_violation_rate)} / {_pct(c.comparator_violation_rate)} "
            f"| {_pct(c.paper_coverage)} / {_pct(c.comparator_coverage)} "
            f"| {_pct(c.paper_clean_coverage)} / {_pct(c.comparator_clean_coverage)} "
            f"| {diff} | {c.verdict} |"
        )
    return "\n".join(lines) + "\n"


def certified_readme(summary: pd.DataFrame, claims: pd.DataFrame, *, delta: float) -> str:
    """The README's paragraph: how the claim table's verdicts fall (paper score against
    its comparator, keeping the guarantee under shift), and which data sets are too small
    to certify anything below a target (:func:`lowest_certifiable_risk`)."""
    counts = claims["verdict"].value_counts()
    n_rows, n_data = len(claims), claims["dataset"].nunique()
    sizes = summary.groupby("dataset", sort=False)["n_calibration"].min()
    targets = summary.groupby("dataset", sort=False)["target_risk"].min()
    floors = lowest_certifiable_risk(sizes.to_numpy(), delta)
    small = [f"{_title(d)} ({n} rows: {100 * f:.0f} %)"
             for d, n, f, t in zip(sizes.index, sizes, floors, targets, strict=True) if f > t]  # fmt: skip
    text = (f"Certified at delta = {delta:g} on the clean validation parts, the paper's "
            "robustness score keeps its guarantee under shift better than its comparator on "
            f"{counts.get('robustness', 0)} of {n_rows} (data set, target) rows of "
            f"{n_data} data sets, worse on {counts.get('uncertainty', 0)}, undecided "
            f"on {counts.get('undecided', 0)}, and neither certifies anything on "
            f"{counts.get('nothing certified', 0)}")  # fmt: skip
    if small:
        text += "; calibration parts too small to certify the lowest target at all: " + ", ".join(
            small
        )
    return text + " ([docs/compare.md](docs/compare.md#certified-thresholds-under-shift)).\n"


def certified_blocks(summary: pd.DataFrame, claims: pd.DataFrame) -> dict[str, str]:
    """The generated blocks (:mod:`reliquant.core.docs`) ``compare_certified`` of
    docs/compare.md (:func:`certified_markdown`) and ``readme_certified`` of the README
    (:func:`certified_readme`), at the summary's ``delta``."""
    delta = float(summary["delta"].iloc[0]) if len(summary) else math.nan
    return {"compare_certified": certified_markdown(summary, claims, delta=delta),
            "readme_certified": certified_readme(summary, claims, delta=delta)}  # fmt: skip


def certified_figure(summary: pd.DataFrame, *, delta: float) -> Figure:
    """A row per data set: the mean clean coverage against the target risk (left), the
    violation rate under shift against the target with ``delta`` dashed (right); the paper
    score thick solid, its comparator thick dashed, every other score thin."""
    import matplotlib.pyplot as plt

    from reliquant.compare.reproduction.figures import score_colours
    from reliquant.core.plotting import apply_style

    apply_style()
    datasets = list(dict.fromkeys(summary["dataset"]))
    if not datasets:
        raise ValueError("summary is empty: nothing to draw")
    colours = score_colours()
    fig, axes = plt.subplots(len(datasets), 2, figsize=(8, 2.0 * len(datasets) + 0.6),
                             squeeze=False)  # fmt: skip
    for row, dataset in zip(axes, datasets, strict=True):
        sub = summary[summary["dataset"] == dataset]
        for ax, condition, column in ((row[0], "clean", "mean_coverage"),
                                      (row[1], "shifted", "violation_rate")):  # fmt: skip
            part = sub[sub["condition"] == condition]
            for score, s in part.groupby("score", sort=False):
                s = s.sort_values("target_risk")
                role = s["role"].iloc[0]
                ax.plot(s["target_risk"], s[column], marker="o", markersize=3,
                        color=colours.get(score, "grey"), linestyle="--" if role == "comparator" else "-",
                        linewidth=2.2 if role != "other" else 0.9,
                        alpha=1.0 if role != "other" else 0.6, label=score)  # fmt: skip
            if part.empty:
                ax.text(0.5, 0.5, f"no {condition} test part", ha="center", va="center",
                        transform=ax.transAxes)  # fmt: skip
            ax.set_ylim(-0.02, 1.02)
        row[1].axhline(delta, color="black", linestyle=":", linewidth=1)
        row[0].set_ylabel(f"{_title(dataset)}\ncoverage", fontsize=7)
        row[1].set_ylabel("violation rate", fontsize=7)
        row[0].legend(fontsize=5, loc="upper left", ncol=2)
    axes[0, 0].set_title("clean test: coverage at the certified threshold")
    axes[0, 1].set_title(f"shifted test: violation rate (dotted: delta = {delta:g})")
    for ax in axes[-1]:
        ax.set_xlabel("target selective risk")
    fig.tight_layout()
    return fig
