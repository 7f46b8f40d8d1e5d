"""Speed and memory of the MLM CNN: training time and inference throughput on the CPU.

Targets (issue 6): 10 training epochs on the 60,000 MNIST training images in under 4 minutes
on 2 cores; inference at >= 10,000 images/s on 2 cores with peak memory under 4 GB, reading
and scoring in chunks. Training is timed over ``--epochs`` epochs (default 1) and extrapolated
linearly to 10 (each epoch does the same work), which the report says.

Run standalone::

    python bench/mlm.py --train results/data/mnist_train.parquet --threads 2 \\
        --out results/bench/mlm.md

or through Snakemake: ``snakemake --cores 2 bench_mlm``.
"""

import argparse
import os
import platform
import resource
import time

import numpy as np
import pandas as pd
import torch

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import frame_to_markdown, write_text
from reliquant.mlm.cnn import build_cnn, train_cnn
from reliquant.mlm.inference import predict_softmax, score_image_file

TRAIN_TARGET_S = 240.0  # 10 epochs under 4 minutes
INFER_TARGET = 10_000.0  # images per second
MEMORY_TARGET_MB = 4096.0


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def time_inference(model, images, batch_size, channels_last, repeats=2) -> float:
    """Best-of-``repeats`` images per second of predict_softmax on an in-memory array."""
    predict_softmax(model, images[:batch_size], batch_size, channels_last=channels_last)  # warm-up
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        predict_softmax(model, images, batch_size, channels_last=channels_last)
        best = min(best, time.perf_counter() - t0)
    return len(images) / best


def time_chunked_file(model, path, chunk_rows, batch_size) -> tuple[float, int]:
    """Images per second of :func:`score_image_file` on ``path`` (what one mlm_infer job runs)."""
    t0 = time.perf_counter()
    n = len(score_image_file(model, path, chunk_rows=chunk_rows, batch_size=batch_size))
    return n / (time.perf_counter() - t0), n


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Speed and memory of the MLM CNN (bench/mlm.py).")
    ap.add_argument("--train", default="results/data/mnist_train.parquet")
    ap.add_argument(
        "--threads", type=int, default=2, help="threads for inference (training: 1 and this)"
    )
    ap.add_argument(
        "--epochs", type=int, default=1, help="epochs timed (extrapolated to 10); 0 skips training"
    )
    ap.add_argument("--out", default="results/bench/mlm.md")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    torch.set_num_threads(args.threads)

    x, y = load_mnist_split(args.train)
    rows = []

    # --- training: the paper's settings on all 60,000 images, 1 and 2 threads -------------
    for threads in sorted({1, args.threads}) if args.epochs > 0 else []:
        res = train_cnn(x, y, epochs=args.epochs, seed=0, threads=threads, progress=False)
        per_epoch = float(np.mean(res.seconds))
        ten = per_epoch * 10
        rows.append(
            {
                "measure": f"training s, 10 epochs x {len(x)} images, {threads} thread(s) "
                f"({args.epochs} epoch(s) timed, x10/{args.epochs})",
                "value": ten,
                "target": TRAIN_TARGET_S,
                "ratio (target/value, >1 = met)": TRAIN_TARGET_S / ten,
            }
        )
        print(
            f"training, {threads} thread(s): {per_epoch:.1f} s/epoch -> {ten:.0f} s for 10 epochs"
        )
    torch.set_num_threads(args.threads)

    # --- inference: threads, layouts and batch sizes side by side ----------------------
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = build_cnn().eval()
    sample = x[:20_000]
    speeds = {}
    variants = [(t, True, 512) for t in sorted({1, args.threads})]
    variants += [(1, False, 512), (1, True, 2048)]
    for threads, cl, bs in variants:
        torch.set_num_threads(threads)
        ips = time_inference(model, sample, bs, cl)
        speeds[(threads, cl, bs)] = ips
        print(f"inference threads={threads} channels_last={cl} batch={bs}: {ips:,.0f} img/s")
        rows.append(
            {
                "measure": f"inference img/s, in memory, {threads} thread(s), "
                f"channels_last={cl}, batch {bs}",
                "value": ips,
                "target": INFER_TARGET,
                "ratio (target/value, >1 = met)": ips / INFER_TARGET,
            }
        )
    torch.set_num_threads(1)
    ips_file, n_file = time_chunked_file(model, args.train, 20_000, 512)
    print(
        f"inference from parquet in 20,000-row chunks: {ips_file:,.0f} img/s over {n_file} images"
    )
    rows.append(
        {
            "measure": "inference img/s, parquet read + decode + score, 20,000-row chunks, "
            "batch 512, 1 thread (one mlm_infer job; Snakemake runs one per core)",
            "value": ips_file,
            "target": INFER_TARGET,
            "ratio (target/value, >1 = met)": ips_file / INFER_TARGET,
        }
    )
    est = 1_210_000 / ips_file
    peak = peak_rss_mb()
    rows.append(
        {
            "measure": "peak RSS of this process (MB; torch + data"
            + (" + training on 60,000 images)" if args.epochs > 0 else ")"),
            "value": peak,
            "target": MEMORY_TARGET_MB,
            "ratio (target/value, >1 = met)": MEMORY_TARGET_MB / peak,
        }
    )
    print(f"1,210,000 images at that rate: {est:.0f} s; peak RSS {peak:.0f} MB")
    ratio = speeds[(1, True, 512)] / speeds[(1, False, 512)]
    table = pd.DataFrame(rows)
    text = (
        "# MLM benchmark (bench/mlm.py)\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}; "
        f"threads compared: 1 and {args.threads}; load average at start {load0:.1f}, "
        f"at end {os.getloadavg()[0]:.1f} (other jobs on the machine slow multi-threaded runs).\n\n"
        + frame_to_markdown(table, floatfmt=".4g")
        + f"\nchannels_last / default layout (1 thread, batch 512): {ratio:.2f}x. "
        f"Whole perturbed set (1,210,000 images) at the chunked rate of one job: {est:.0f} s "
        f"(about half with one job per core on {args.threads} cores).\n"
        + (
            f"Training time: {args.epochs} epoch(s) measured, multiplied by 10/{args.epochs}.\n"
            if args.epochs > 0
            else ""
        )
    )
    write_text(text, args.out)
    print(text)


if "snakemake" in globals():  # run by `rule bench_mlm` through Snakemake's script directive
    import contextlib

    smk = snakemake  # noqa: F821
    with open(smk.log[0], "w") as log_file, contextlib.redirect_stdout(log_file):
        main(
            [
                "--train",
                smk.input.train,
                "--threads",
                str(smk.threads),
                "--out",
                smk.output[0],
            ]
        )
elif __name__ == "__main__":
    main()
