"""The claim per data set, its rule and the report blocks built from the contrast table."""

from __future__ import annotations

import pandas as pd

from reliquant.compare.reproduction.evaluation import CONTRAST_SCHEMA
from reliquant.compare.reproduction.highlights import headline_table, highlight_blocks
from reliquant.compare.reproduction.paper import PAPER_KEY, paper_tables
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA


def _contrast() -> pd.DataFrame:
    rows = []
    for dataset, (lo, hi, v) in {
        "pima_xgb": (0.01, 0.03, "robustness"),
        "table_nbc": (-0.03, -0.01, "uncertainty"),
        "cnn_mnist": (-0.01, 0.01, "undecided"),
    }.items():
        for condition in ("clean", "shifted"):
            rows.append({"dataset": dataset, "condition": condition, "n": 100, "accuracy": 0.8,
                         "best_rq": "eps_loc", "auarc_rq": 0.9, "best_uq": "margin",
                         "auarc_uq": 0.88, "diff": (lo + hi) / 2, "diff_ci_low": lo,
                         "diff_ci_high": hi, "verdict": v})  # fmt: skip
    return pd.DataFrame(rows, columns=CONTRAST_SCHEMA.names)


def test_one_claim_per_data_set_from_the_verdict() -> None:
    tables = paper_tables(_contrast(), {"confidence": 0.95, "n_boot": 500}, {"min_difference": 0.0})
    assert list(tables.claims.columns) == CLAIM_SCHEMA.names
    assert list(tables.comparison.columns) == COMPARISON_SCHEMA.names and tables.comparison.empty
    assert (tables.claims["paper"] == PAPER_KEY).all()
    assert tables.claims["holds"].tolist() == [True, False, False]
    assert "95% paired percentile bootstrap interval (500 resamples)" in tables.claims["rule"][0]
    assert "uncertainty better" in tables.claims["evidence"][1]


def test_headline_counts_the_data_sets_where_the_claim_holds() -> None:
    text = headline_table(_contrast())
    assert "on 1 of 3 data sets" in text
    assert text.count("\n| ") == 3  # three data sets after the header and separator
    blocks = highlight_blocks(
        pd.DataFrame(columns=["dataset", "case"]), _contrast(), pd.DataFrame(columns=["note"])
    )
    assert set(blocks) == {"readme_compare", "compare_cases", "compare_hybrid"}
