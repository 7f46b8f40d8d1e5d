"""glibc's default heap thresholds against :func:`reliquant.core.allocator.retain_freed_memory`.

Trains the CNN for one epoch on the first ``--images`` MNIST training images (the workflow's
settings: batch 64, one thread, pinned CPU kernels) and scores the test images, in fresh
processes, alternately with glibc's defaults and with the thresholds fixed, ``--repeats``
times each. Prints the seconds and page faults of each, the ratio of the medians, and
whether the trained weights and the softmax scores are bit-identical (they must be: the same
kernels run on the same values).

Standalone (after a workflow run, or with the paths of any MNIST parquet files)::

    python bench/allocator.py [--train results/data/mnist_train.parquet]
        [--test results/data/mnist_test.parquet] [--images 12000] [--repeats 2]
        [--out results/bench/allocator.md]
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TRIAL = """
import hashlib, json, resource, sys, time
from reliquant.mlm.determinism import pin_cpu_kernels
pin_cpu_kernels()
from reliquant.core.allocator import retain_freed_memory
mode, train, test, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if mode == "retain":
    assert retain_freed_memory()
import torch
from reliquant.core.datasets import load_mnist_split
from reliquant.mlm.cnn import train_cnn
from reliquant.mlm.inference import predict_softmax
x, y = load_mnist_split(train)
xt, _ = load_mnist_split(test)
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
f0, t0 = faults(), time.perf_counter()
model = train_cnn(x[:n], y[:n], epochs=1, seed=2024, threads=1, progress=False).model
f1, t1 = faults(), time.perf_counter()
torch.set_num_threads(1)
scores = predict_softmax(model, xt, 128, channels_last=True)
f2, t2 = faults(), time.perf_counter()
weights = hashlib.sha256(b"".join(v.numpy().tobytes() for v in model.state_dict().values()))
print(json.dumps({
    "train_s": t1 - t0, "train_faults": f1 - f0, "infer_s": t2 - t1, "infer_faults": f2 - f1,
    "weights": weights.hexdigest(), "scores": hashlib.sha256(scores.tobytes()).hexdigest(),
}))
"""


def trial(mode: str, train: Path, test: Path, images: int) -> dict:
    """One fresh process: train one epoch and score the test set; its timings and digests."""
    out = subprocess.run(
        [sys.executable, "-c", TRIAL, mode, str(train), str(test), str(images)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def identical(runs: dict[str, list[dict]]) -> dict[str, bool]:
    """Whether the trained weights and the scores have one digest across every run."""
    return {
        key: len({r[key] for mode in runs for r in runs[mode]}) == 1
        for key in ("weights", "scores")
    }


def report(runs: dict[str, list[dict]], images: int, n_test: str) -> str:
    """Markdown: medians per mode, the ratio, and whether the results are bit-identical."""
    lines = [
        "| step | glibc defaults s | retained s | ratio | page faults (defaults) "
        "| page faults (retained) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for step, what in (("train", f"training, 1 epoch, {images:,} images"), ("infer", n_test)):
        d = statistics.median(r[f"{step}_s"] for r in runs["default"])
        r_ = statistics.median(r[f"{step}_s"] for r in runs["retain"])
        fd = statistics.median(r[f"{step}_faults"] for r in runs["default"])
        fr = statistics.median(r[f"{step}_faults"] for r in runs["retain"])
        lines.append(f"| {what} | {d:.2f} | {r_:.2f} | {d / r_:.2f}x | {fd:,.0f} | {fr:,.0f} |")
    same = identical(runs)
    lines.append("")
    lines.append(
        f"Trained weights bit-identical across all runs: {'yes' if same['weights'] else 'NO'}; "
        f"softmax scores bit-identical: {'yes' if same['scores'] else 'NO'}."
    )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=Path, default=REPO / "results/data/mnist_train.parquet")
    parser.add_argument("--test", type=Path, default=REPO / "results/data/mnist_test.parquet")
    parser.add_argument("--images", type=int, default=12000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"default": [], "retain": []}
    for i in range(args.repeats):
        for mode in ("default", "retain"):
            runs[mode].append(trial(mode, args.train, args.test, args.images))
            print(f"[bench/allocator] repeat {i + 1}, {mode}: {runs[mode][-1]}", flush=True)
    text = report(runs, args.images, "inference, the test images, batch 128")
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0 if all(identical(runs).values()) else 1


if __name__ == "__main__":
    sys.exit(main())
