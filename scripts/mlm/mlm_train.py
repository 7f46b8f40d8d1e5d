"""Train the MLM paper's CNN (rule mlm_train; paper 004, Sections 3.1 and 4.1)."""

from reliquant.mlm.determinism import pin_cpu_kernels

# before anything imports torch: the same CPU kernels on every x86-64 machine (docs/mlm.md)
pin_cpu_kernels()

from reliquant.core.datasets import load_mnist_split  # noqa: E402
from reliquant.core.io import write_frame, write_markdown  # noqa: E402
from reliquant.core.runlog import start_job  # noqa: E402
from reliquant.mlm.cnn import TRAINING_LOG_SCHEMA, save_model, train_cnn, training_markdown  # noqa: E402
from reliquant.mlm.inference import select_device  # noqa: E402

log = start_job(snakemake.log[0], "mlm")
cfg = snakemake.params.train
x, y = load_mnist_split(snakemake.input.train)
xt, yt = load_mnist_split(snakemake.input.test)
n = cfg["n_images"] or len(x)
device = select_device(snakemake.params.device)
log.info("training on %d of %d images, %d epochs, on %s", n, len(x), cfg["epochs"], device)
result = train_cnn(
    x[:n],
    y[:n],
    epochs=cfg["epochs"],
    lr=cfg["lr"],
    batch_size=cfg["batch_size"],
    momentum=cfg["momentum"],
    seed=snakemake.params.seed,
    test_images=xt,
    test_labels=yt,
    threads=snakemake.threads,
    device=device,
    lr_name="mlm.train.lr",
)
log.info(
    "training took %.1f s (%s s per epoch)",
    sum(result.seconds),
    [round(s, 1) for s in result.seconds],
)
save_model(result.model, snakemake.output.model)
write_frame(result.log, snakemake.output.log, TRAINING_LOG_SCHEMA)
write_markdown(
    training_markdown(result.log, n, cfg["epochs"], snakemake.params.paper_accuracy),
    snakemake.output.md,
    snakemake.output.html,
)
