"""Every parquet table of two finished workflow runs, compared: which are equal, and by how much
the others differ (the largest absolute difference per numeric column, the count of changed
values, and for the CNN's softmax partitions the count of changed predicted classes).

Used for the GPU run of docs/gpu.md: the default configuration run twice in fresh copies on one
GPU machine, once with CUDA and once with ``CUDA_VISIBLE_DEVICES=`` (the CPU alone), then::

    python bench/compare_runs.py RUN_A RUN_B OUT

A table is equal when its content digest (``reliquant.digest`` in the parquet footer, written by
``reliquant.core.io``) is the same in both runs, or else when pyarrow finds the tables equal.
Writes ``OUT/tables.json`` (one entry per table of RUN_A) and ``OUT/rules_{a,b}.csv`` (the
per-rule job times of each run, :func:`reliquant.core.runtimes.rule_table`), and prints a
summary.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from reliquant.core.io import DIGEST_KEY
from reliquant.core.runtimes import job_table, rule_table, run_summary


def stored_digest(path: Path) -> bytes | None:
    """The content digest record in a parquet footer, or None."""
    return (pq.read_metadata(path).metadata or {}).get(DIGEST_KEY.encode())


def column_difference(a: pa.ChunkedArray, b: pa.ChunkedArray) -> dict:
    """How two equally long columns differ: ``n_diff`` always, ``max_abs`` when numeric."""
    x = np.asarray(a.to_numpy(zero_copy_only=False))
    y = np.asarray(b.to_numpy(zero_copy_only=False))
    if x.dtype.kind in "fiu" and y.dtype.kind in "fiu":
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        same = (xf == yf) | (np.isnan(xf) & np.isnan(yf))
        return {"n_diff": int((~same).sum()), "max_abs": float(np.nanmax(np.abs(xf - yf)))}
    return {"n_diff": int(sum(u != v for u, v in zip(x, y, strict=True)))}


def compare_table(path_a: Path, path_b: Path) -> dict:
    """One table of both runs: ``status`` equal or differs, and the differing columns."""
    if not path_b.exists():
        return {"status": "missing in the second run"}
    digest = stored_digest(path_a)
    if digest is not None and digest == stored_digest(path_b):
        return {"status": "equal"}
    a, b = pq.read_table(path_a), pq.read_table(path_b)
    if a.equals(b):
        return {"status": "equal"}
    entry: dict = {"status": "differs", "rows": a.num_rows, "columns": {}}
    if a.num_rows != b.num_rows or a.schema.names != b.schema.names:
        entry["shape"] = (
            f"{a.num_rows} vs {b.num_rows} rows; columns {a.schema.names} vs {b.schema.names}"
        )
        return entry
    for name in a.schema.names:
        if not a.column(name).equals(b.column(name)):
            entry["columns"][name] = column_difference(a.column(name), b.column(name))
    return entry


def compare_runs(run_a: Path, run_b: Path) -> dict[str, dict]:
    """Every ``results/**/*.parquet`` of ``run_a`` against the same path in ``run_b``."""
    return {
        str(p.relative_to(run_a)): compare_table(p, run_b / p.relative_to(run_a))
        for p in sorted((run_a / "results").rglob("*.parquet"))
    }


def main() -> None:
    """Command line: compare two runs, write the JSON and per-rule CSVs, print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tables = compare_runs(args.run_a, args.run_b)
    (args.out / "tables.json").write_text(json.dumps(tables, indent=1))
    differ = {k: v for k, v in tables.items() if v["status"] != "equal"}
    print(f"{len(tables)} tables, {len(tables) - len(differ)} equal, {len(differ)} differ")
    for name, entry in differ.items():
        changed = entry.get("columns", {}).get("prediction", {}).get("n_diff")
        extra = f", {changed} of {entry['rows']} predicted classes changed" if changed else ""
        print(f"  {name}: {entry['status']}{extra}")
    for label, root in (("a", args.run_a), ("b", args.run_b)):
        jobs = job_table(root)
        rule_table(jobs).to_csv(args.out / f"rules_{label}.csv", index=False)
        print(label, run_summary(jobs))


if __name__ == "__main__":
    main()
