"""The MLM CNN on a GPU beside the same machine's CPU: training time, inference throughput and
how far GPU results are from the pinned CPU results.

The workflow trains and scores on CUDA when the machine has it (``mlm.device: null``); this
benchmark says what that buys and what it changes. On one machine, in one run:

- training with the configured settings (``mlm.train``) on the 60,000 MNIST training images:
  all epochs on the GPU, ``mlm.bench.epochs`` epoch(s) on the CPU with every core
  (extrapolated), the test accuracy after each, and whether two GPU runs give the same weights;
- inference throughput in memory on the GPU and the CPU, and from a parquet partition in
  chunks (what one ``mlm_infer`` job runs);
- agreement of GPU and pinned-CPU softmax outputs of the same weights on the 10,000 test
  images: identical predicted classes and the largest difference of a probability.

Run on a machine with CUDA (it refuses to run without)::

    python bench/mlm_device.py [--device cuda] [--out results/bench/mlm_device.md]
"""

from reliquant.mlm.determinism import pin_cpu_kernels

pin_cpu_kernels()

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from reliquant.core.benchmarks import best_time, headline_markdown  # noqa: E402
from reliquant.core.config import config_section  # noqa: E402
from reliquant.core.datasets import load_mnist, mnist_table  # noqa: E402
from reliquant.core.io import frame_to_markdown, write_table, write_text  # noqa: E402
from reliquant.mlm.cnn import normalise_images, train_cnn  # noqa: E402
from reliquant.mlm.inference import predict_softmax, score_image_file  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def train_timed(x, y, xt, yt, cfg: dict, epochs: int, device: str, threads: int | None):
    """:func:`train_cnn` with the configured settings; returns the result and its wall time."""
    train = cfg["train"]
    t0 = time.perf_counter()
    res = train_cnn(
        x,
        y,
        epochs=epochs,
        lr=train["lr"],
        batch_size=train["batch_size"],
        momentum=train["momentum"],
        seed=cfg["seed"],
        test_images=xt,
        test_labels=yt,
        threads=threads,
        progress=False,
        device=device,
    )
    return res, time.perf_counter() - t0


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    """True when every parameter and buffer of ``a`` and ``b`` is bit-identical."""
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def images_per_s(model, images, batch_size: int, device: str, channels_last: bool) -> float:
    """Best of 3 images per second of :func:`predict_softmax` on an in-memory array."""
    predict_softmax(model, images[:batch_size], batch_size, device, channels_last)  # warm-up
    best, _ = best_time(
        lambda: predict_softmax(model, images, batch_size, device, channels_last), 3
    )
    return len(images) / best


def main(cfg: dict, out_path: str, device: str) -> None:
    """Run the comparison on the ``mlm`` config section ``cfg``; write the report."""
    if not torch.cuda.is_available():
        raise SystemExit("bench/mlm_device.py needs a CUDA device; torch.cuda sees none")
    cores = os.cpu_count() or 1
    gpu = torch.cuda.get_device_name(torch.device(device))
    x, y, xt, yt = load_mnist(REPO, ("train", "test"))
    n_epochs, cpu_epochs = cfg["train"]["epochs"], max(1, cfg["bench"]["epochs"])
    rows: list[dict] = []

    gpu_res, gpu_s = train_timed(x, y, xt, yt, cfg, n_epochs, device, None)
    short = min(2, n_epochs)
    again, _ = train_timed(x, y, None, None, cfg, short, device, None)
    first2, _ = train_timed(x, y, None, None, cfg, short, device, None)
    reproducible = same_weights(again.model, first2.model)
    cpu_res, cpu_s = train_timed(x, y, xt, yt, cfg, cpu_epochs, "cpu", cores)
    cpu_total = cpu_s * n_epochs / cpu_epochs
    gpu_acc = gpu_res.log["test_accuracy"].to_numpy()
    cpu_acc = cpu_res.log["test_accuracy"].to_numpy()
    rows += [
        {"measure": f"training, {n_epochs} epochs, GPU", "value": f"{gpu_s:.1f} s"},
        {
            "measure": f"training, {n_epochs} epochs, CPU {cores} threads "
            f"({cpu_epochs} timed, x{n_epochs}/{cpu_epochs})",
            "value": f"{cpu_total:.1f} s",
        },
        {"measure": "training speed-up, GPU over CPU", "value": f"{cpu_total / gpu_s:.1f}x"},
        {
            "measure": f"test accuracy after {cpu_epochs} epoch(s): GPU / CPU",
            "value": f"{gpu_acc[cpu_epochs - 1]:.4f} / {cpu_acc[-1]:.4f}",
        },
        {"measure": f"test accuracy after {n_epochs} epochs, GPU", "value": f"{gpu_acc[-1]:.4f}"},
        {
            "measure": f"two GPU trainings ({short} epochs) bit-identical",
            "value": str(reproducible),
        },
    ]
    print(frame_to_markdown(pd.DataFrame(rows)))

    model = gpu_res.model
    batch = cfg["infer"]["batch_size"]
    speeds = {}
    for where, threads, bs in [
        (device, None, batch),
        (device, None, 4096),
        ("cpu", 1, batch),
        ("cpu", cores, batch),
    ]:
        if threads is not None:
            torch.set_num_threads(threads)
        ips = images_per_s(model, x, bs, where, channels_last=True)
        label = "GPU" if threads is None else f"CPU {threads} thread(s)"
        speeds[(label, bs)] = ips
        rows.append(
            {"measure": f"inference in memory, {label}, batch {bs}", "value": f"{ips:,.0f} img/s"}
        )
    torch.set_num_threads(1)
    p_cpu = predict_softmax(model, xt, batch, "cpu", True)
    p_lib = predict_softmax(model, xt, batch, device, True)
    gpu_model = model.to(device)
    with torch.inference_mode():
        torch.backends.cudnn.allow_tf32 = True  # PyTorch's default for convolutions
        inputs = normalise_images(xt).to(device)
        p_tf32 = torch.exp(gpu_model(inputs)).float().cpu().numpy()
    for what, p_gpu in [
        ("predict_softmax (TF32 off)", p_lib),
        ("the model's forward with PyTorch's default TF32 convolutions", p_tf32),
    ]:
        agree = int((p_cpu.argmax(1) == p_gpu.argmax(1)).sum())
        rows.append(
            {
                "measure": f"GPU vs pinned CPU softmax, same weights, 10,000 test images: {what}",
                "value": f"{agree:,} equal classes; max abs diff "
                f"{np.abs(p_cpu - p_gpu).max():.2e}; "
                f"bit-identical rows {int((p_cpu == p_gpu).all(1).sum()):,}",
            }
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mnist_train.parquet"
        write_table(mnist_table(x, y), path)
        chunk = cfg["infer"]["chunk_rows"]
        for bs in (batch, 4096):
            t0 = time.perf_counter()
            n = len(score_image_file(model, path, chunk, bs, device=device))
            ips = n / (time.perf_counter() - t0)
            speeds[("file", bs)] = ips
            rows.append(
                {
                    "measure": f"one mlm_infer job on the GPU: parquet read + score, "
                    f"{chunk:,}-row chunks, batch {bs}",
                    "value": f"{ips:,.0f} img/s",
                }
            )
    n_perturbed = cfg["bench"]["perturbed_images"]
    best_file = max(speeds[("file", batch)], speeds[("file", 4096)])
    table = frame_to_markdown(pd.DataFrame(rows))
    text = (
        "# MLM on a GPU (bench/mlm_device.py)\n\n"
        f"Machine: {gpu}, {cores} CPU cores ({platform.machine()}), torch {torch.__version__}, "
        f"CUDA {torch.version.cuda}. Training uses the configured settings "
        f"(batch {cfg['train']['batch_size']}, lr {cfg['train']['lr']}, seed {cfg['seed']}) "
        "and deterministic algorithms.\n\n"
        + table
        + f"\nThe {n_perturbed:,} perturbed images at the best chunked GPU rate: "
        f"{n_perturbed / best_file:.0f} s.\n\n"
        + headline_markdown(
            [
                (f"MLM on {gpu}: {n_epochs} epochs of training", f"{gpu_s:.0f} s", "-"),
                (
                    f"MLM on {gpu}: inference in memory, batch 4096",
                    f"{speeds[('GPU', 4096)]:,.0f} img/s",
                    "-",
                ),
            ]
        )
    )
    write_text(text, out_path)
    print(text)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", nargs="*", default=[], help="overlays merged over config.yaml")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default="results/bench/mlm_device.md")
    args = ap.parse_args()
    main(config_section("mlm", REPO / "config.yaml", args.configfile), args.out, args.device)
