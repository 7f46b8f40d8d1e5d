"""Benchmark: the cost of one split of the dynamic-selection protocol on every benchmark table,
from a timed fraction of it, scaled, and checked against the splits a run measured.

    python bench/selection_cost.py [--tables authent ...] [--measured benchmarks/named/compare]
                                   [--out results/docs/compare_selection_cost_timings.md]

or as the named target ``snakemake --cores 1 compare_selection_cost`` (every table of
``compare.selection.datasets``, the split jobs of ``benchmarks/named/compare`` read back),
which writes the generated block ``compare_selection_cost_timings`` of docs/compare.md.

One split of ``compare_selection`` costs about as much as its three grid searches
(``GridSearchCV(cv=5)`` over the config grids of ``compare.logratio_protocol.models``, then a
refit): ``sum_models (5 P_m + 1)`` fits, ``P_m`` the grid's points (DESlib's four methods and
RS-D / RS-I take seconds). Timing them all is what the protocol does; here each model fits
only two points of its grid, the first and the last of scikit-learn's ``ParameterGrid`` order
(the cheapest and the costliest settings of these grids: fewer trees and shallower, more trees
and deeper), once each after an untimed warm-up fit, on the training rows of the first of the 5 folds (split 0, clean
labels, one thread). The split's fit seconds are estimated as
``sum_models (5 P_m + 1.25) * mean(t_first, t_last)`` (a refit on all training rows counted as
1.25 fold fits), its wall seconds as half of that (the rule fits two grid points at once,
``compare.speed.protocol_threads = 2``). With ``--measured`` the wall seconds of the split jobs
a run of ``compare_selection`` left (their ``benchmark:`` files) are read back, and the report
gives measured / estimated for each table that has them: how far the scaling can be trusted.
"""

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import ParameterGrid, StratifiedKFold

from reliquant.compare.reproduction.logratio_protocol import protocol_estimator
from reliquant.compare.reproduction.selection_protocol import selection_split
from reliquant.core.config import load_config
from reliquant.core.datasets import BENCHMARK_CLASS, read_benchmark_csv
from reliquant.core.io import write_text

REPO = Path(__file__).resolve().parents[1]


def fraction_seconds(x: np.ndarray, y: np.ndarray, models: dict, selection: dict) -> dict:
    """Per model: seconds of one fold fit at the grid's first and last point, and the grid's
    point count."""
    train, _, _ = selection_split(y, split=0, train_fraction=selection["train_fraction"],
                                  validation_fraction=selection["validation_fraction"])  # fmt: skip
    xt, yt = x[train], y[train]
    fold = next(StratifiedKFold(5).split(xt, yt))[0]
    out = {}
    for name, settings in models.items():
        grid = ParameterGrid({k: list(v) for k, v in settings["grid"].items()})
        # a warm-up fit, untimed: the model library's imports and first-call set-up
        protocol_estimator(name, random_state=0).set_params(n_estimators=2).fit(xt[fold], yt[fold])
        seconds = []
        for point in (grid[0], grid[len(grid) - 1]):
            est = protocol_estimator(name, random_state=int(settings["random_state"]))
            start = time.perf_counter()
            est.set_params(**point).fit(xt[fold], yt[fold])
            seconds.append(time.perf_counter() - start)
        out[name] = {"points": len(grid), "first_s": seconds[0], "last_s": seconds[1]}
    return out


def split_estimate(fraction: dict) -> float:
    """Estimated fit seconds of one split (module docstring)."""
    return sum(
        (5 * f["points"] + 1.25) * (f["first_s"] + f["last_s"]) / 2 for f in fraction.values()
    )


def measured_wall(folder: Path, table: str) -> tuple[float, int]:
    """Median wall seconds of the split jobs of ``table`` a run left, and their count."""
    files = sorted(folder.glob(f"selection_protocol_{table}_*_*.tsv"))
    seconds = [float(pd.read_csv(f, sep="\t")["s"].iloc[-1]) for f in files]
    return (float(np.median(seconds)), len(seconds)) if seconds else (float("nan"), 0)


def cost_report(tables: list[str], measured: Path | None, selection: dict, models: dict) -> str:
    """The markdown report: per table the estimate, and the measured median where a run left
    split jobs under ``measured``."""
    rows = []
    for table in tables:
        frame = read_benchmark_csv(REPO / f"data/raw/benchmarks/{table}.csv.gz")
        y = frame[BENCHMARK_CLASS].to_numpy()
        x = frame.drop(columns=[BENCHMARK_CLASS]).to_numpy(dtype=np.float64)
        start = time.perf_counter()
        fraction = fraction_seconds(x, y, models, selection)
        timed = time.perf_counter() - start
        wall = split_estimate(fraction) / 2
        got, n = measured_wall(measured, table) if measured else (float("nan"), 0)
        rows.append({"table": table, "rows": len(y), "timed_s": timed, "wall_estimate_s": wall,
                     "measured_s": got, "n_measured": n})  # fmt: skip
        print(f"{table}: timed {timed:.1f} s, one split about {wall:.0f} s", flush=True)
    total = sum(r["wall_estimate_s"] for r in rows)
    lines = [
        f"One split of the dynamic-selection protocol per benchmark table, estimated from a "
        f"timed fraction (bench/selection_cost.py: two grid points per model on one fold, "
        f"scaled; {sum(r['timed_s'] for r in rows):.0f} s of timing in all), on "
        f"{platform.node()} ({platform.machine()}), {time.strftime('%Y-%m-%d')}.",
        "",
        "| data set | rows | one split, estimated (s) | measured, median (s) | splits measured "
        "| measured / estimated |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = r["measured_s"] / r["wall_estimate_s"] if r["n_measured"] else float("nan")
        measured_s = f"{r['measured_s']:.0f}" if r["n_measured"] else "-"
        ratio_s = f"{ratio:.2f}" if r["n_measured"] else "-"
        lines.append(f"| {r['table']} | {r['rows']:,} | {r['wall_estimate_s']:.0f} | {measured_s} "
                     f"| {r['n_measured']} | {ratio_s} |")  # fmt: skip
    lines += [
        "",
        f"Sum of the estimates: {total:.0f} s for one split of each table; the whole protocol "
        f"({len(rows)} tables x 2 settings x {selection['n_splits']} splits) about "
        f"{total * 2 * selection['n_splits'] / 3600:.1f} hours of 2-core job time.",
    ]
    return "\n".join(lines) + "\n"


def _config() -> dict:
    return load_config(REPO / "config.yaml")["compare"]


if __name__ == "__main__" and "snakemake" in globals():
    from reliquant.core.runlog import start_job

    start_job(snakemake.log[0], "compare")  # noqa: F821
    compare = snakemake.config["compare"]  # noqa: F821
    report = cost_report(
        list(compare["selection"]["datasets"]),
        Path("benchmarks/named/compare"),
        compare["selection"],
        compare["logratio_protocol"]["models"],
    )
    write_text(report, snakemake.output.block)  # noqa: F821
elif __name__ == "__main__":
    compare = _config()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=compare["selection"]["datasets"])
    parser.add_argument("--measured", type=Path, default=None)
    parser.add_argument(
        "--out", type=Path, default=REPO / "results/docs/compare_selection_cost_timings.md"
    )
    args = parser.parse_args()
    text = cost_report(
        args.tables, args.measured, compare["selection"], compare["logratio_protocol"]["models"]
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text(text, args.out)
    print(text)
