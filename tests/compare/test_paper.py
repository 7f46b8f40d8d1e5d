"""The claim per data set, its rule and the report blocks built from the headline table."""

from __future__ import annotations

import pandas as pd

from reliquant.compare.reproduction.evaluation import HEADLINE_SCHEMA
from reliquant.compare.reproduction.highlights import headline_markdown, highlight_blocks
from reliquant.compare.reproduction.paper import PAPER_KEY, paper_tables
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA


def _headline() -> pd.DataFrame:
    rows = []
    for dataset, (lo, hi, v) in {
        "pima_xgb": (0.01, 0.03, "robustness"),
        "table_nbc": (-0.03, -0.01, "uncertainty"),
        "cnn_mnist": (-0.01, 0.01, "undecided"),
        "nbc_synthetic": (0.0, 0.0, "identical ranking"),
    }.items():
        for condition in ("clean", "shifted"):
            rows.append({"dataset": dataset, "condition": condition, "case": condition,
                         "accuracy": 0.8, "paper_score": "eps_loc", "comparator": "margin",
                         "comparator_validation_auarc": 0.9, "n_splits": 15, "auarc_a": 0.9,
                         "auarc_b": 0.88, "diff_mean": (lo + hi) / 2, "diff_se": 0.005,
                         "ci_low": lo, "ci_high": hi, "p_value": 0.01, "p_holm": 0.02,
                         "verdict": v})  # fmt: skip
    return pd.DataFrame(rows, columns=HEADLINE_SCHEMA.names)


def test_one_claim_per_data_set_from_the_verdict() -> None:
    tables = paper_tables(_headline(), {"confidence": 0.95})
    assert list(tables.claims.columns) == CLAIM_SCHEMA.names
    assert list(tables.comparison.columns) == COMPARISON_SCHEMA.names and tables.comparison.empty
    assert (tables.claims["paper"] == PAPER_KEY).all()
    assert tables.claims["holds"].tolist() == [True, False, False, False]
    assert "Holm-adjusted p < 0.05" in tables.claims["rule"][0]
    assert "uncertainty better" in tables.claims["evidence"][1]
    assert "identical ranking" in tables.claims["evidence"][3]


def test_headline_counts_the_data_sets_where_the_claim_holds() -> None:
    text = headline_markdown(_headline())
    assert "on 1 of 4 data sets and worse on 1" in text
    assert text.count("\n| ") == 8  # 4 data sets x 2 conditions after the header
    empty = pd.DataFrame(columns=["dataset", "case", "part", "split", "n", "accuracy", "score",
                                  "auarc", "tied"])  # fmt: skip
    blocks = highlight_blocks(empty, _headline(), pd.DataFrame(columns=["dataset"]),
                              pd.DataFrame(columns=["dataset"]), pd.DataFrame(columns=["note"]),
                              pd.DataFrame(columns=["dataset"]))  # fmt: skip
    assert set(blocks) == {"readme_compare", "compare_declared", "compare_rule", "compare_cases",
                           "compare_hybrid", "compare_noise"}  # fmt: skip
