"""Benchmark: the cost of one split of the dynamic-selection protocol on every benchmark table,
from a timed fraction of it, scaled, and checked against the splits a run measured.

    python bench/selection_cost.py [--tables authent ...] [--measured benchmarks/named/compare]
                                   [--out results/docs/compare_selection_cost_timings.md]

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

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from sklearn.model_selection import ParameterGrid, StratifiedKFold

from reliquant.compare.reproduction.logratio_protocol import protocol_estimator
from reliquant.compare.reproduction.selection_protocol import selection_split
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


def main() -> None:
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    selection = config["compare"]["selection"]
    models = config["compare"]["logratio_protocol"]["models"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=selection["datasets"])
    parser.add_argument("--measured", type=Path, default=None)
    parser.add_argument(
        "--out", type=Path, default=REPO / "results/docs/compare_selection_cost_timings.md"
    )
    args = parser.parse_args()
    rows = []
    for table in args.tables:
        frame = read_benchmark_csv(REPO / f"data/raw/benchmarks/{table}.csv.gz")
        y = frame[BENCHMARK_CLASS].to_numpy()
        x = frame.drop(columns=[BENCHMARK_CLASS]).to_numpy(dtype=np.float64)
        start = time.perf_counter()
        fraction = fraction_seconds(x, y, models, selection)
        timed = time.perf_counter() - start
        wall = split_estimate(fraction) / 2
        got, n = measured_wall(args.measured, table) if args.measured else (float("nan"), 0)
        rows.append({"table": table, "rows": len(y), "timed_s": timed, "wall_estimate_s": wall,
                     "measured_s": got, "n_measured": n})  # fmt: skip
        print(f"{table}: timed {timed:.1f} s, one split about {wall:.0f} s", flush=True)
    table = pd.DataFrame(rows)
    total = table["wall_estimate_s"].sum()
    lines = [
        f"One split of the dynamic-selection protocol per benchmark table, estimated from a "
        f"timed fraction (bench/selection_cost.py: two grid points per model on one fold, "
        f"scaled; {table['timed_s'].sum():.0f} s of timing in all), on {platform.node()} "
        f"({platform.machine()}), {time.strftime('%Y-%m-%d')}.",
        "",
        "| data set | rows | one split, estimated (s) | measured, median (s) | splits measured "
        "| measured / estimated |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = r["measured_s"] / r["wall_estimate_s"] if r["n_measured"] else float("nan")
        measured = f"{r['measured_s']:.0f}" if r["n_measured"] else "-"
        ratio_s = f"{ratio:.2f}" if r["n_measured"] else "-"
        lines.append(f"| {r['table']} | {r['rows']:,} | {r['wall_estimate_s']:.0f} | {measured} "
                     f"| {r['n_measured']} | {ratio_s} |")  # fmt: skip
    lines += [
        "",
        f"Sum of the estimates: {total:.0f} s for one split of each table; the whole protocol "
        f"({len(rows)} tables x 2 settings x {selection['n_splits']} splits) about "
        f"{total * 2 * selection['n_splits'] / 3600:.1f} hours of 2-core job time.",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text("\n".join(lines) + "\n", args.out)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
