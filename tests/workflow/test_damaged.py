"""A damaged intermediate is rebuilt by the next run, not an error forever (issue 22).

When the Snakefile is parsed, workflow/rules/common.smk deletes every parquet file under
results/ that no reader would accept (reliquant.core.io.remove_damaged_parquet_files), so
Snakemake plans the job that writes it again; an intact output stays and plans nothing.
"""

from __future__ import annotations

import pandas as pd
import pytest
from workflow_helpers import copy_repo, planned_jobs, snakemake

from reliquant.core.io import write_frame

#: data_iris has no inputs: its output alone decides whether it is planned.
TARGET = "results/data/iris.parquet"


@pytest.mark.workflow
def test_a_truncated_output_is_removed_at_parse_time_and_planned_again(tmp_path):
    work = copy_repo(tmp_path / "work")
    output = work / TARGET
    write_frame(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), output)
    intact = snakemake(work, "-n", TARGET)
    assert planned_jobs(intact.stdout + intact.stderr) == {}
    assert output.exists() and "removed" not in intact.stderr

    output.write_bytes(output.read_bytes()[:-20])  # a truncated write (power loss, full disk)
    damaged = snakemake(work, "-n", TARGET)
    assert planned_jobs(damaged.stdout + damaged.stderr) == {"data_iris": 1}
    assert f"removed {TARGET}" in damaged.stderr and "no PAR1" in damaged.stderr
    assert not output.exists()
