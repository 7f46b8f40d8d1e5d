"""Paper 000 beside our run: its claims, decided from the per-cell AUC check."""

from __future__ import annotations

import pandas as pd

from reliquant.core.paper import Claim


def _cell(row) -> str:
    return f"N={int(row.n_train)}, γ={row.gamma:g}"


def nbc_claims(cells: pd.DataFrame) -> list[Claim]:
    """Paper 000's two claims from the per-cell check (``results/nbc/claims.parquet``).

    Robustness metrics are *better* than uncertainty metrics where training data are few or
    shifted (every hard cell ``better``) and *no worse* otherwise (no easy cell ``worse``).
    """
    hard, easy = cells[cells["hard"]], cells[~cells["hard"]]
    not_better = [_cell(r) for r in hard.itertuples() if r.verdict != "better"]
    worse_easy = [_cell(r) for r in easy.itertuples() if r.verdict == "worse"]
    return [
        Claim(
            "000",
            "robustness metrics flag unreliable predictions better than uncertainty metrics "
            "when training data are few or shifted",
            len(hard) > 0 and not not_better,
            f"best robustness AUC significantly higher in {len(hard) - len(not_better)} of "
            f"{len(hard)} such cells" + (f"; not in {', '.join(not_better)}" if not_better else ""),
        ),
        Claim(
            "000",
            "and no worse otherwise",
            not worse_easy,
            f"{len(easy) - len(worse_easy)} of {len(easy)} remaining cells not worse",
        ),
    ]
