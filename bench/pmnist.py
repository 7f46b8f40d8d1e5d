"""Perturbed MNIST speed and memory: all 1,200,000 corrupted images, batch vs per-image loops.

Part 1 generates the 12 x 10 blocks of the first ``pmnist.bench.n_images`` MNIST test images
(default all 10,000) with the ``paper`` preset in ``pmnist.bench.workers`` processes (one task
per corruption, as the workflow's jobs), writes each corruption's partition (zstd parquet,
one row group per level) to a temporary folder, and reports wall time, images per second and
the peak resident memory of the largest process and of all of them together (target: < 120 s
on 2 cores, < 4 GB).

Part 2 compares, on a subset at level ``pmnist.bench.loop_level``, the batch implementation
with two per-image loops over the same images and fields: (a) the same library called with
one image at a time (the way the authors' generator worked, one image per call), and (b) the
slow, per-pixel reference of ``tests/test_corruptions.py`` (target: batch >= 50 x faster).

Settings: the ``pmnist`` config section (seed, chunk size, schedule and the ``bench`` knobs).
Standalone: ``python bench/pmnist.py [--out results/bench/pmnist.md] [--configfile overlay ...]``
reads ``config.yaml`` merged with the overlays; under Snakemake (rule bench_pmnist) it reads
the workflow's config and uses the rule's threads as workers.
"""

import argparse
import importlib.util
import os
import resource
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from reliquant.core.config import config_section
from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_text
from reliquant.pmnist import partitions as P
from reliquant.pmnist.fields import draw_fields
from reliquant.pmnist.registry import CORRUPTIONS, N_LEVELS, level_params

REPO = Path(__file__).resolve().parents[1]
TEST_PARQUET = REPO / "results" / "data" / "mnist_test.parquet"


def _maxrss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0


def _one_corruption(
    args: tuple[str, str, Path, int, Mapping[str, Any], int, int],
) -> tuple[str, float, float, float, int]:
    """Generate and write one corruption's partition; returns timings and this process's peak RSS."""
    name, out_dir, test_parquet, n_images, params, seed, chunk = args
    images, labels = load_mnist_split(test_parquet)
    images, labels = images[:n_images], labels[:n_images]
    idx = np.arange(len(images))
    t0 = time.perf_counter()
    gen = 0.0

    def blocks():
        nonlocal gen
        for level in range(1, N_LEVELS + 1):
            t = time.perf_counter()
            out = P.generate_block(images, idx, name, level, params, seed, chunk)
            gen += time.perf_counter() - t
            yield P.level_table(out, labels, idx, name, level)

    path = Path(out_dir) / f"{name}.parquet"
    P.write_partition(path, blocks())
    total = time.perf_counter() - t0
    return name, gen, total - gen, _maxrss_mb(), path.stat().st_size


def bench_full(cfg: Mapping[str, Any], workers: int, test_parquet: Path) -> tuple[list[str], dict]:
    """Every corruption of the paper schedule on ``bench.n_images`` images, one task each.

    ``cfg`` is the ``pmnist`` config section (seed, chunk size and schedule as in the workflow).
    """
    n_images = cfg["bench"]["n_images"]
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with ProcessPoolExecutor(max_workers=workers) as pool:
            jobs = [
                (
                    n,
                    tmp,
                    test_parquet,
                    n_images,
                    cfg["corruptions"][n],
                    cfg["seed"],
                    cfg["chunk_size"],
                )
                for n in CORRUPTIONS
            ]
            results = list(pool.map(_one_corruption, jobs))
        wall = time.perf_counter() - t0
    n_total = n_images * N_LEVELS * len(CORRUPTIONS)
    peak = max(r[3] for r in results)
    children = _maxrss_mb(resource.RUSAGE_CHILDREN)
    lines.append("| corruption | generate s | write s | partition MB | peak RSS MB |")
    lines.append("|---|---:|---:|---:|---:|")
    for name, gen, write, rss, size in results:
        lines.append(f"| {name} | {gen:.2f} | {write:.2f} | {size / 1e6:.1f} | {rss:.0f} |")
    summary = {
        "images": n_total,
        "wall_s": wall,
        "img_per_s": n_total / wall,
        "peak_rss_one_mb": peak,
        "peak_rss_sum_bound_mb": peak * workers + _maxrss_mb(),
        "children_maxrss_mb": children,
        "cpu_s": sum(r[1] + r[2] for r in results),
    }
    return lines, summary


def _load_reference():
    path = REPO / "tests" / "test_corruptions.py"
    spec = importlib.util.spec_from_file_location("_pmnist_reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_loops(cfg: Mapping[str, Any], test_parquet: Path) -> list[str]:
    """Batch vs per-image library calls vs the per-pixel test reference at one level."""
    bench, seed = cfg["bench"], cfg["seed"]
    level, n_batch, n_loop, n_ref = (
        bench["loop_level"],
        bench["n_batch"],
        bench["n_loop"],
        bench["n_reference"],
    )
    images, _ = load_mnist_split(test_parquet)
    ref = _load_reference()
    lines = [
        f"Level {level}; batch on {n_batch} images; per-image library loop on {n_loop}; "
        f"per-pixel reference on {n_ref}. Times per image in microseconds.",
        "",
        "| corruption | batch us/img | per-image loop us/img | per-pixel reference us/img "
        "| loop / batch | reference / batch |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    ratios_loop, ratios_ref = [], []
    for name in CORRUPTIONS:
        sched = cfg["corruptions"][name]
        p = level_params(name, sched, level)
        idx = np.arange(n_batch)
        imgs = images[:n_batch]
        t = time.perf_counter()
        P.generate_block(imgs, idx, name, level, sched, seed, chunk_size=n_batch)
        batch = (time.perf_counter() - t) / n_batch
        t = time.perf_counter()
        for i in range(n_loop):
            P.generate_block(imgs[i : i + 1], idx[i : i + 1], name, level, sched, seed)
        loop = (time.perf_counter() - t) / n_loop
        t = time.perf_counter()
        for i in range(n_ref):
            fields = draw_fields(name, seed, level, idx[i : i + 1])
            y = ref.reference(name, ref.ref_float(imgs[i]), p, {k: v[0] for k, v in fields.items()})
            ref.ref_uint8(y)
        refpx = (time.perf_counter() - t) / n_ref
        ratios_loop.append(loop / batch)
        ratios_ref.append(refpx / batch)
        lines.append(
            f"| {name} | {batch * 1e6:.1f} | {loop * 1e6:.1f} | {refpx * 1e6:.0f} "
            f"| {loop / batch:.1f} | {refpx / batch:.0f} |"
        )
    gm = lambda r: float(np.exp(np.mean(np.log(r))))  # noqa: E731
    lines.append(
        f"| **geometric mean** | | | | **{gm(ratios_loop):.1f}** | **{gm(ratios_ref):.0f}** |"
    )
    return lines


def main(
    cfg: Mapping[str, Any], out: str | None, workers: int, test_parquet: Path = TEST_PARQUET
) -> str:
    """Run both parts with the ``pmnist`` config section ``cfg``; write ``out`` if given."""
    t0 = time.perf_counter()
    full_lines, s = bench_full(cfg, workers, Path(test_parquet))
    loop_lines = bench_loops(cfg, Path(test_parquet))
    text = "\n".join(
        [
            "# Perturbed MNIST benchmark",
            "",
            "Command: `python bench/pmnist.py` (or `snakemake --cores 2 results/bench/pmnist.md`). "
            f"Machine: {os.cpu_count()} CPUs visible, {workers} worker processes.",
            "",
            "## All corrupted images (12 corruptions x 10 levels), generated and written",
            "",
            f"- images: {s['images']:,} in **{s['wall_s']:.1f} s** wall "
            f"(**{s['img_per_s']:,.0f} images/s**; target >= 10,000/s, < 120 s)",
            f"- CPU time in the workers: {s['cpu_s']:.1f} s",
            f"- peak RSS of one worker: **{s['peak_rss_one_mb']:.0f} MB**; bound on all "
            f"processes together ({workers} workers + parent): {s['peak_rss_sum_bound_mb']:.0f} MB "
            "(target < 4,000 MB)",
            "",
            *full_lines,
            "",
            "## Batch vs per-image loops",
            "",
            *loop_lines,
            "",
            f"Total benchmark time {time.perf_counter() - t0:.0f} s.",
            "",
        ]
    )
    if out:
        write_text(text, out)
    return text


if __name__ == "__main__":
    if "snakemake" in globals():  # rule bench_pmnist: settings from the workflow's config
        from reliquant.core.runlog import setup_logging

        setup_logging(snakemake.log[0], "pmnist")  # noqa: F821
        smk = snakemake  # noqa: F821
        main(smk.config["pmnist"], smk.output[0], smk.threads, smk.input.test)
    else:  # standalone: config.yaml merged with --configfile overlays, as Snakemake does
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--out", help="markdown report path (default: print only)")
        parser.add_argument(
            "--configfile", nargs="*", default=[], help="config overlays, e.g. tests/smoke.yaml"
        )
        args = parser.parse_args()
        cfg = config_section("pmnist", REPO / "config.yaml", args.configfile)
        sys.stdout.write(main(cfg, args.out, cfg["bench"]["workers"]))
