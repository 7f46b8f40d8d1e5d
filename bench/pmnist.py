"""Perturbed MNIST speed and memory: all 1,200,000 corrupted images; batch vs OpenCV per image.

Part 1 generates the 12 x 10 blocks of the first ``pmnist.bench.n_images`` MNIST test images
(default all 10,000) with the ``paper`` preset in ``pmnist.bench.workers`` processes (one task
per corruption, as the workflow's jobs), writes each corruption's partition (zstd parquet,
one row group per level) to a temporary folder, and reports wall time, images per second and
the peak resident memory of the largest process and of all of them together (target: < 120 s
on 2 cores, < 4 GB).

Part 2 times, side by side on the same ``pmnist.bench.n_batch`` test images at level
``pmnist.bench.loop_level``, our batch generation
(:func:`reliquant.pmnist.reproduction.partitions.generate_block`) against a per-image reference
written the way a user of OpenCV writes the authors' generator
(:func:`reliquant.pmnist.reproduction.opencv_reference.opencv_reference`: ``cv2.blur`` /
``cv2.GaussianBlur`` / ``cv2.filter2D`` / ``cv2.resize`` / ``cv2.erode`` and numpy, one image
per call, each image's random fields
drawn by a numpy Generator positioned at that image's stream). Both must give the same
images (bytes equal except a truncation-edge pixel off by one, checked every run); it prints
the time ratio per corruption and their geometric mean (target: >= 5 x on every corruption).
Times are CPU seconds of this process (both sides run on one thread: OpenCV is set to one
thread), the fastest of ``pmnist.bench.repeats`` runs, so load from other processes on a
shared machine does not enter. The compiled kernels are compiled (or loaded from numba's
cache) before timing. Needs ``opencv-python-headless`` (``pip install -e '.[bench]'``); without
it part 2 says so and is skipped.

Settings: the ``pmnist`` config section (seed, chunk size, schedule and the ``bench`` knobs).
Standalone: ``python bench/pmnist.py [--out results/bench/pmnist.md] [--configfile overlay ...]``
reads ``config.yaml`` merged with the overlays; under Snakemake (rule bench_pmnist) it reads
the workflow's config and uses the rule's threads as workers.
"""

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from reliquant.core.benchmarks import headline_markdown, peak_rss_mb
from reliquant.core.config import config_section
from reliquant.core.datasets import load_mnist
from reliquant.core.io import write_text
from reliquant.pmnist.registry import CORRUPTIONS, N_LEVELS
from reliquant.pmnist.reproduction import partitions as P
from reliquant.pmnist.reproduction.opencv_reference import (
    off_by_truncation,
    opencv_reference,
    to_uint8,
)

REPO = Path(__file__).resolve().parents[1]
TEST_PARQUET = REPO / "results" / "data" / "mnist_test.parquet"


def load_test(test_parquet: Path) -> tuple[np.ndarray, np.ndarray]:
    """MNIST test images and labels: the workflow's ``mnist_test.parquet`` in the folder of
    ``test_parquet``, or (standalone, before the workflow made it) the raw IDX files of
    data/raw/mnist (:func:`reliquant.core.datasets.load_mnist`)."""
    if Path(test_parquet).name != "mnist_test.parquet":
        raise ValueError(f"expected the workflow's mnist_test.parquet, got {test_parquet}")
    return load_mnist(REPO, ["test"], parquet_dir=Path(test_parquet).parent)


def _one_corruption(
    args: tuple[str, str, Path, int, Mapping[str, Any], int, int],
) -> tuple[str, float, float, float, int]:
    """Generate and write one corruption's partition; returns timings and this process's peak RSS."""
    name, out_dir, test_parquet, n_images, params, seed, chunk = args
    images, labels = load_test(test_parquet)
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
    return name, gen, total - gen, peak_rss_mb(), path.stat().st_size


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
    children = peak_rss_mb(children=True)
    lines.append("| corruption | generate s | write s | partition MB | peak RSS MB |")
    lines.append("|---|---:|---:|---:|---:|")
    for name, gen, write, rss, size in results:
        lines.append(f"| {name} | {gen:.2f} | {write:.2f} | {size / 1e6:.1f} | {rss:.0f} |")
    summary = {
        "images": n_total,
        "wall_s": wall,
        "img_per_s": n_total / wall,
        "peak_rss_one_mb": peak,
        "peak_rss_sum_bound_mb": peak * workers + peak_rss_mb(),
        "children_maxrss_mb": children,
        "cpu_s": sum(r[1] + r[2] for r in results),
    }
    return lines, summary


def bench_opencv(
    cfg: Mapping[str, Any], test_parquet: Path
) -> tuple[list[str], tuple[str, str, str]]:
    """Our batch generation vs the OpenCV per-image reference, same images, same level: the
    report's lines and its headline row."""
    label = "Perturbed MNIST: batch vs an OpenCV per-image reference (same images and bytes)"
    try:
        import cv2
    except ImportError:
        return [
            "Skipped: OpenCV is not installed (`pip install -c requirements.lock -e '.[bench]'` "
            "installs opencv-python-headless)."
        ], (label, "not run: OpenCV is not installed", ">= 5x on every corruption")
    bench, seed = cfg["bench"], cfg["seed"]
    level, n, repeats = bench["loop_level"], bench["n_batch"], bench["repeats"]
    images = load_test(test_parquet)[0][:n]
    idx = np.arange(len(images))
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    lines = [
        f"Level {level}, the same {len(images)} test images on both sides, CPU time of this "
        f"process per image (fastest of {repeats} runs; OpenCV {cv2.__version__} on one thread).",
        "",
        "| corruption | batch us/img | OpenCV per-image us/img | OpenCV / batch "
        "| bytes differing (all off-by-one at a truncation edge) |",
        "|---|---:|---:|---:|---:|",
    ]
    ratios = []
    try:
        for name in CORRUPTIONS:
            sched = cfg["corruptions"][name]
            ref = opencv_reference(name, sched, level, seed)
            P.generate_block(images[:2], idx[:2], name, level, sched, seed)  # compile / load
            batch = per_image = math.inf
            for _ in range(repeats):
                t = time.process_time()
                ours = P.generate_block(images, idx, name, level, sched, seed, cfg["chunk_size"])
                batch = min(batch, time.process_time() - t)
                t = time.process_time()
                theirs = np.stack([to_uint8(ref(u, i)) for i, u in enumerate(images)])
                per_image = min(per_image, time.process_time() - t)
            floats = np.stack([ref(u, i) for i, u in enumerate(images)])
            differ, unexplained = off_by_truncation(ours, floats)
            if unexplained or not np.array_equal(theirs, to_uint8(floats)):
                raise AssertionError(
                    f"{name}: the OpenCV reference and our batch code disagree on "
                    f"{unexplained} pixels beyond truncation ties"
                )
            ratios.append(per_image / batch)
            lines.append(
                f"| {name} | {batch / n * 1e6:.2f} | {per_image / n * 1e6:.2f} "
                f"| {per_image / batch:.1f} | {differ} of {ours.size:,} |"
            )
    finally:
        cv2.setNumThreads(threads)
    gm = float(np.exp(np.mean(np.log(ratios))))
    lines.append(f"| **geometric mean** | | | **{gm:.1f}** | |")
    lines.append("")
    lines.append(
        f"Slowest: {CORRUPTIONS[int(np.argmin(ratios))]} at {min(ratios):.1f} x "
        f"(target >= 5 x on every corruption: **{'met' if min(ratios) >= 5 else 'not met'}**)."
    )
    slowest = CORRUPTIONS[int(np.argmin(ratios))]
    measured = (
        f"{gm:.1f}x geometric mean over {len(ratios)} corruptions, level {level}, {n:,} images; "
        f"slowest {slowest} {min(ratios):.1f}x"
    )
    return lines, (label, measured, ">= 5x on every corruption")


def main(
    cfg: Mapping[str, Any], out: str | None, workers: int, test_parquet: Path = TEST_PARQUET
) -> str:
    """Run both parts with the ``pmnist`` config section ``cfg``; write ``out`` if given."""
    t0 = time.perf_counter()
    full_lines, s = bench_full(cfg, workers, Path(test_parquet))
    opencv_lines, opencv_row = bench_opencv(cfg, Path(test_parquet))
    headline = [
        (
            f"Perturbed MNIST: {s['images']:,} corrupted images generated and written",
            f"{s['wall_s']:.1f} s ({s['img_per_s']:,.0f} img/s), peak "
            f"{s['peak_rss_one_mb']:.0f} MB per worker",
            "< 120 s, < 4 GB",
        ),
        opencv_row,
    ]
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
            "## Batch vs the OpenCV per-image reference",
            "",
            *opencv_lines,
            "",
            f"Total benchmark time {time.perf_counter() - t0:.0f} s.",
            "",
            headline_markdown(headline),
        ]
    )
    if out:
        write_text(text, out)
    return text


if __name__ == "__main__":
    if "snakemake" in globals():  # rule bench_pmnist: settings from the workflow's config
        from reliquant.core.runlog import start_job

        start_job(snakemake.log[0], "pmnist")  # noqa: F821
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
