"""Speed and memory of the MLM CNN: training time and inference throughput on the CPU.

Targets (issue 6, in ``mlm.bench``): ``mlm.train.epochs`` (10) training epochs on the 60,000
MNIST training images in under 4 minutes on 2 cores; inference at >= 10,000 images/s on 2 cores
with peak memory under 4 GB, reading and scoring in chunks (``mlm.infer``). Training is timed
over ``mlm.bench.epochs`` epochs and extrapolated linearly (each epoch does the same work),
which the report says. The process runs as the workflow's jobs do: CPU kernels pinned
(:func:`reliquant.mlm.determinism.pin_cpu_kernels`, before torch is imported) and glibc keeping
freed memory (:func:`reliquant.core.allocator.retain_freed_memory`); a short warm-up training
per thread count (``WARMUP_IMAGES`` images) compiles the numba kernels and runs their first-use
checks before the timed epochs.

Run standalone (settings from config.yaml merged with the overlays)::

    python bench/mlm.py [--configfile OVERLAY ...] [--train results/data/mnist_train.parquet] \\
        [--out results/bench/mlm.md]

or through Snakemake: ``snakemake --cores 2 bench_mlm`` (settings from the workflow's config).
"""

from reliquant.core.allocator import retain_freed_memory
from reliquant.mlm.determinism import pin_cpu_kernels

pin_cpu_kernels()  # before torch is imported: the kernels the workflow's jobs run
retain_freed_memory()  # as reliquant.core.runlog.start_job does in every job

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from reliquant.core.benchmarks import best_time, headline_markdown, peak_rss_mb  # noqa: E402
from reliquant.core.config import config_section  # noqa: E402
from reliquant.core.datasets import load_mnist_split  # noqa: E402
from reliquant.core.io import frame_to_markdown, write_text  # noqa: E402
from reliquant.mlm.cnn import build_cnn, train_cnn  # noqa: E402
from reliquant.mlm.inference import predict_softmax, score_image_file  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: Images of the untimed warm-up training before each timed one (10 batches of 64).
WARMUP_IMAGES = 640


def time_inference(model, images, batch_size, channels_last, repeats=2) -> float:
    """Best-of-``repeats`` images per second of predict_softmax on an in-memory array."""
    predict_softmax(model, images[:batch_size], batch_size, channels_last=channels_last)  # warm-up
    best, _ = best_time(
        lambda: predict_softmax(model, images, batch_size, channels_last=channels_last), repeats
    )
    return len(images) / best


def time_chunked_file(model, path, chunk_rows, batch_size) -> tuple[float, int]:
    """Images per second of :func:`score_image_file` on ``path`` (what one mlm_infer job runs)."""
    t0 = time.perf_counter()
    n = len(score_image_file(model, path, chunk_rows=chunk_rows, batch_size=batch_size))
    return n / (time.perf_counter() - t0), n


def _row(measure: str, value: float, target: float, higher_is_better: bool) -> dict:
    """One line of the report: ``ratio`` > 1 means the target is met."""
    ratio = value / target if higher_is_better else target / value
    return {
        "measure": measure,
        "value": value,
        "target": target,
        "ratio (target/value, >1 = met)": ratio,
    }


def main(cfg: dict, train_path: str, out_path: str, threads: int) -> None:
    """Run the benchmark on the ``mlm`` config section ``cfg`` (knobs in ``cfg["bench"]``)."""
    bench, infer = cfg["bench"], cfg["infer"]
    epochs, n_epochs = bench["epochs"], cfg["train"]["epochs"]
    load0 = os.getloadavg()[0]
    torch.set_num_threads(threads)

    x, y = load_mnist_split(train_path)
    rows = []
    headline = []

    # --- training: the configured settings on all training images, 1 and `threads` threads --
    settings = {
        "lr": cfg["train"]["lr"],
        "batch_size": cfg["train"]["batch_size"],
        "momentum": cfg["train"]["momentum"],
        "seed": cfg["seed"],
        "progress": False,
    }
    for t in sorted({1, threads}) if epochs > 0 else []:
        # compiles the kernels and runs their first-use checks (per thread count): not timed
        train_cnn(x[:WARMUP_IMAGES], y[:WARMUP_IMAGES], epochs=1, threads=t, **settings)
        res = train_cnn(x, y, epochs=epochs, threads=t, **settings)
        per_epoch = float(np.mean(res.seconds))
        total = per_epoch * n_epochs
        rows.append(
            _row(
                f"training s, {n_epochs} epochs x {len(x)} images, {t} thread(s) "
                f"({epochs} epoch(s) timed, x{n_epochs}/{epochs})",
                total,
                bench["target_train_s"],
                higher_is_better=False,
            )
        )
        print(f"training, {t} thread(s): {per_epoch:.1f} s/epoch -> {total:.0f} s for {n_epochs}")
        headline.append(
            (
                f"MLM: {n_epochs} epochs of training, {t} thread(s) ({epochs} timed)",
                f"{total:.0f} s",
                f"< {bench['target_train_s']:g} s",
            )
        )
    torch.set_num_threads(threads)

    # --- inference: threads, layouts and batch sizes side by side ----------------------
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg["seed"])
        model = build_cnn().eval()
    sample = x[: bench["sample_images"]]
    first, *others = bench["batch_sizes"]
    speeds = {}
    variants = [(t, True, first) for t in sorted({1, threads})]
    variants += [(1, False, first)] + [(1, True, bs) for bs in others]
    for t, cl, bs in variants:
        torch.set_num_threads(t)
        ips = time_inference(model, sample, bs, cl)
        speeds[(t, cl, bs)] = ips
        print(f"inference threads={t} channels_last={cl} batch={bs}: {ips:,.0f} img/s")
        rows.append(
            _row(
                f"inference img/s, in memory, {t} thread(s), channels_last={cl}, batch {bs}",
                ips,
                bench["target_images_per_s"],
                higher_is_better=True,
            )
        )
    torch.set_num_threads(1)
    chunk, batch = infer["chunk_rows"], infer["batch_size"]
    ips_file, n_file = time_chunked_file(model, train_path, chunk, batch)
    print(f"inference from parquet in {chunk:,}-row chunks: {ips_file:,.0f} img/s over {n_file}")
    rows.append(
        _row(
            f"inference img/s, parquet read + decode + score, {chunk:,}-row chunks, "
            f"batch {batch}, 1 thread (one mlm_infer job; Snakemake runs one per core)",
            ips_file,
            bench["target_images_per_s"],
            higher_is_better=True,
        )
    )
    best = max(speeds.values())
    headline.append(
        (
            "MLM: inference in memory, best threads / layout / batch",
            f"{best:,.0f} img/s",
            f">= {bench['target_images_per_s']:,.0f} img/s",
        )
    )
    headline.append(
        (
            "MLM: one `mlm_infer` job incl. parquet reading, 1 thread",
            f"{ips_file:,.0f} img/s",
            f">= {bench['target_images_per_s']:,.0f} img/s",
        )
    )
    n_perturbed = bench["perturbed_images"]
    est = n_perturbed / ips_file
    peak = peak_rss_mb()
    rows.append(
        _row(
            "peak RSS of this process (MB; torch + data"
            + (f" + training on {len(x):,} images)" if epochs > 0 else ")"),
            peak,
            bench["target_memory_mb"],
            higher_is_better=False,
        )
    )
    print(f"{n_perturbed:,} images at that rate: {est:.0f} s; peak RSS {peak:.0f} MB")
    headline.append(
        (
            "MLM: peak memory of the benchmark process",
            f"{peak:,.0f} MB",
            f"< {bench['target_memory_mb']:,.0f} MB",
        )
    )
    ratio = speeds[(1, True, first)] / speeds[(1, False, first)]
    table = pd.DataFrame(rows)
    text = (
        "# MLM benchmark (bench/mlm.py)\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}; "
        f"threads compared: 1 and {threads}; load average at start {load0:.1f}, "
        f"at end {os.getloadavg()[0]:.1f} (other jobs on the machine slow multi-threaded runs).\n\n"
        + frame_to_markdown(table, floatfmt=".4g")
        + f"\nchannels_last / default layout (1 thread, batch {first}): {ratio:.2f}x. "
        f"Whole perturbed set ({n_perturbed:,} images) at the chunked rate of one job: {est:.0f} s "
        f"(about half with one job per core on {threads} cores).\n"
        + (
            f"Training time: {epochs} epoch(s) measured, multiplied by {n_epochs}/{epochs}, "
            f"after an untimed warm-up training on {WARMUP_IMAGES} images; CPU kernels "
            "pinned as in the workflow's jobs.\n"
            if epochs > 0
            else ""
        )
        + "\n"
        + headline_markdown(headline)
    )
    write_text(text, out_path)
    print(text)


if "snakemake" in globals():  # run by `rule bench_mlm` through Snakemake's script directive
    import contextlib

    smk = snakemake  # noqa: F821
    with open(smk.log[0], "w") as log_file, contextlib.redirect_stdout(log_file):
        main(smk.config["mlm"], smk.input.train, smk.output[0], smk.threads)
elif __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", nargs="*", default=[], help="overlays merged over config.yaml")
    ap.add_argument("--train", default="results/data/mnist_train.parquet")
    ap.add_argument("--out", default="results/bench/mlm.md")
    args = ap.parse_args()
    section = config_section("mlm", REPO / "config.yaml", args.configfile)
    main(section, args.train, args.out, section["bench"]["threads"])
