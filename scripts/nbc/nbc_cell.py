"""Rule nbc_cell: one (N_train, gamma) cell of paper 000, Section 7.5 -> metrics per instance."""

import pyarrow as pa

from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import progress_enabled, setup_logging
from reliquant.nbc.experiment import METRICS, gamma_key, run_cell, table_from_frame

log = setup_logging(snakemake.log[0], "nbc")
n_train = int(snakemake.wildcards.nbc_n)
gamma = float(snakemake.wildcards.nbc_g)
if gamma_key(gamma) != snakemake.wildcards.nbc_g:
    raise ValueError(
        f"gamma in the file name must be written {gamma_key(gamma)!r}; got {snakemake.wildcards.nbc_g!r}"
    )

frame = read_frame(snakemake.input.dists)
test = read_frame(snakemake.input.test).sort_values("index")
xcols = sorted((c for c in test.columns if c.startswith("x")), key=lambda c: int(c[1:]))
dists = {
    "test": table_from_frame(frame, "test")[0],
    "shift": table_from_frame(frame, "shift"),
    "X_test": test[xcols].to_numpy().astype("int64"),
    "y_test": test["label"].to_numpy().astype("int64"),
}
out = run_cell(
    dists, n_train, gamma, snakemake.params.fit, snakemake.params.seed, progress=progress_enabled()
)
schema = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("shift", pa.int16()),
        ("rep", pa.int16()),
        ("train_set", pa.int32()),
        ("alpha", pa.float64()),
        ("test_index", pa.int32()),
        ("y_true", pa.int16()),
        ("y_pred", pa.int16()),
        ("correct", pa.bool_()),
    ]
    + [(m, pa.float64()) for m in METRICS]
)
write_frame(out, snakemake.output[0], schema)
acc = out.groupby("train_set")["correct"].mean()
log.info(
    "n_train=%d gamma=%s: %d training sets, accuracy mean %.4f (std %.4f), alphas %s",
    n_train,
    gamma_key(gamma),
    acc.size,
    acc.mean(),
    acc.std(),
    out.groupby("train_set")["alpha"].first().value_counts().sort_index().to_dict(),
)
