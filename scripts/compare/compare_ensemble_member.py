"""Rule compare_ensemble_member: train member m of the CNN's deep ensemble, as the mlm topic
trains its CNN (mlm.train settings) from the member's own seed
(reliquant.compare.reproduction.cnn_ensemble)."""

from reliquant.mlm import pin_cpu_kernels

# before anything imports torch: the same CPU kernels on every x86-64 machine (docs/mlm.md)
pin_cpu_kernels()

from reliquant.core.datasets import load_mnist_split  # noqa: E402
from reliquant.core.io.atomic import log_written  # noqa: E402
from reliquant.core.runlog import start_job  # noqa: E402
from reliquant.mlm import train_cnn  # noqa: E402
from reliquant.mlm.cnn import save_model  # noqa: E402
from reliquant.mlm.inference import select_device  # noqa: E402

log = start_job(snakemake.log[0], "compare")
cfg, p = snakemake.params.train, snakemake.params
x, y = load_mnist_split(snakemake.input.train)
xt, yt = load_mnist_split(snakemake.input.test)
n = cfg["n_images"] or len(x)
device = select_device(p.device)
log.info(
    "member %s: seed %d, %d images, %d epochs, on %s", p.member, p.seed, n, cfg["epochs"], device
)
result = train_cnn(
    x[:n],
    y[:n],
    epochs=cfg["epochs"],
    lr=cfg["lr"],
    batch_size=cfg["batch_size"],
    momentum=cfg["momentum"],
    seed=p.seed,
    test_images=xt,
    test_labels=yt,
    threads=snakemake.threads,
    device=device,
    lr_name="mlm.train.lr",
)
log.info(
    "training took %.1f s; test accuracy per epoch %s",
    sum(result.seconds),
    result.log["test_accuracy"].round(4).tolist(),
)
save_model(result.model, snakemake.output.model)
log_written(snakemake.output.model)
