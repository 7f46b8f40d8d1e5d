"""reliquant.mlm.reproduction.paper: paper 004's numbers beside ours and its claims, thresholds
from config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliquant.core.config import config_section
from reliquant.core.io import write_frame
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA, PaperTables
from reliquant.mlm.reproduction.accuracy import accuracy_comparisons
from reliquant.mlm.reproduction.paper import (
    _short,
    mlm_claims,
    mlm_comparisons,
    paper_moved_classes,
    paper_tables,
)

REPO = Path(__file__).resolve().parents[2]
PAPER = {
    "train_accuracy": 0.98,
    "test_accuracy": 0.97,
    "accuracies_swapped": False,
    "level1_mean_accuracy": 0.8,
    "level10_mean_accuracy": 0.4,
    "perturbed_max_accuracy": 0.9,
    "perturbed_min_accuracy": 0.3,
    "brightness_level1_accuracy": 0.85,
    "brightness_level10_accuracy": 0.5,
    "centroid_shift": [1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3,
    "moved_class_shift": 1e-8,
    "few_moved_classes_max": 3,
    "linear_min_r2": 0.95,
}
LOG = pd.DataFrame({"epoch": [1, 2], "train_accuracy": [0.9, 0.981], "test_accuracy": [0.9, 0.975]})


def _accuracy() -> pd.DataFrame:
    rows = [("clean", 0, 100, 0.99)]
    for name, base in (("brightness", 0.9), ("fog", 0.7)):
        rows += [(name, lvl, 100, base - 0.05 * lvl) for lvl in range(1, 11)]
    return pd.DataFrame(rows, columns=["corruption", "level", "n", "accuracy"])


def _table1(distances) -> pd.DataFrame:
    return pd.DataFrame(
        {"class": range(10), "distance": distances, "paper_distance": PAPER["centroid_shift"]}
    )


def test_accuracy_comparisons_level_means_and_brightness():
    rows = accuracy_comparisons(_accuracy(), LOG, PAPER, "clean")
    out = pd.DataFrame(rows).set_index("quantity")
    assert out.loc["CNN train accuracy (last epoch)", "ours"] == 0.981
    assert out.loc["mean accuracy at level 1", "ours"] == pytest.approx((0.85 + 0.65) / 2)
    assert out.loc["mean accuracy at level 10", "ours"] == pytest.approx((0.4 + 0.2) / 2)
    assert out.loc["minimum over corruption x level", "ours"] == pytest.approx(0.2)
    assert out.loc["maximum over corruption x level", "ours"] == pytest.approx(0.85)
    assert out.loc["brightness, level 10", "paper_value"] == 0.5
    assert out.loc["clean partition accuracy", "ours"] == pytest.approx(0.99)
    assert np.isnan(out.loc["clean partition accuracy", "paper_value"])
    # the summary keeps only the numbers the paper states, then Table 1
    table1 = _table1([1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3)
    kept = mlm_comparisons(rows, table1)
    assert len(kept) == 8 + 10 and all(not np.isnan(r.paper_value) for r in kept)
    assert kept[-1].quantity == "Table 1: centroid shift, class 9"


def test_swapped_accuracies_compare_test_with_the_printed_train_number():
    rows = accuracy_comparisons(_accuracy(), LOG, {**PAPER, "accuracies_swapped": True}, "clean")
    out = pd.DataFrame(rows).set_index("quantity")
    assert out.loc["CNN test accuracy", "paper_value"] == PAPER["train_accuracy"]
    assert out.loc["CNN train accuracy (last epoch)", "paper_value"] == PAPER["test_accuracy"]
    assert "swapped" in out.loc["CNN test accuracy", "note"]
    plain = pd.DataFrame(accuracy_comparisons(_accuracy(), LOG, PAPER, "clean"))
    assert plain.set_index("quantity").loc["CNN test accuracy", "paper_value"] == 0.97
    assert set(plain["note"]) == {""}


def test_missing_paper_number_is_named():
    paper = {k: v for k, v in PAPER.items() if k != "test_accuracy"}
    with pytest.raises(KeyError, match="mlm.paper.test_accuracy"):
        accuracy_comparisons(_accuracy(), LOG, paper, "clean")


def test_mlm_claims_linearity_and_moved_classes():
    levels = np.arange(1, 11)
    per_level = pd.DataFrame({"corruption": "a", "level": levels, "accuracy": 0.98 - 0.05 * levels})
    shift = _table1([1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3)
    paper = {**PAPER, "centroid_shift": [1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3}
    linear, regimes, which = mlm_claims(per_level, shift, paper)
    assert linear.holds and "R^2 = 1.000" in linear.evidence
    assert regimes.holds and which.holds
    assert regimes.evidence == "moved by more than 1e-8: 2 classes [5, 6]"
    assert regimes.rule == "holds if 1 to 3 of 10 class means move by more than 1e-8"
    assert which.claim == "the classes whose means move are [5, 6]"
    curved = per_level.assign(accuracy=0.98 - 0.9 * (levels / 10) ** 6)
    assert not mlm_claims(curved, shift, paper)[0].holds
    moved_58 = [1e-14] * 5 + [1e-4] + [1e-14] * 2 + [1e-4] + [1e-14]
    assert not mlm_claims(per_level, shift, {**paper, "centroid_shift": moved_58})[2].holds


@pytest.mark.parametrize("n_moved", [0, 4, 6, 9])
def test_few_moved_classes_fails_with_none_or_many(n_moved):
    """The default run once moved 6 of 10 class means and the smoke run 9: neither is "a few"."""
    levels = np.arange(1, 11)
    per_level = pd.DataFrame({"level": levels, "accuracy": 0.98 - 0.05 * levels})
    shift = _table1([1e-4] * n_moved + [1e-14] * (10 - n_moved))
    assert not mlm_claims(per_level, shift, PAPER)[1].holds
    assert mlm_claims(per_level, _table1([1e-4] * 3 + [1e-14] * 7), PAPER)[1].holds


def test_claims_fail_under_the_config_thresholds():
    """Thresholds of config.yaml decide: a line whose R^2 lies just below linear_min_r2 is not
    "roughly linear", and a class mean moved by twice moved_class_shift counts as moved, so
    a run that moves class 0 too disagrees with the paper's Table 1."""
    paper = config_section("mlm", REPO / "config.yaml")["paper"]
    min_r2, cut = paper["linear_min_r2"], paper["moved_class_shift"]
    assert paper_moved_classes(paper) == [5, 6, 8]
    levels = np.arange(1, 11, dtype=float)
    wiggle = np.where(levels % 2 == 0, 1.0, -1.0)
    line = 0.98 - 0.05 * levels
    # R^2 of line + a * wiggle as a function of a, solved for a target just below min_r2
    x = levels - levels.mean()
    w = wiggle - x * (x @ wiggle) / (x @ x)  # part of the wiggle no line explains
    ss_line = np.sum((0.05 * x) ** 2)
    for target, holds in [(min_r2 - 0.01, False), (min_r2 + 0.01, True)]:
        a = np.sqrt(ss_line * (1 - target) / target / (w @ w))
        per_level = pd.DataFrame({"level": levels, "accuracy": line + a * wiggle})
        distances = np.array(paper["centroid_shift"])
        assert mlm_claims(per_level, _table1(distances), paper)[0].holds is holds
    moved_too = np.array(paper["centroid_shift"])
    moved_too[0] = 2 * cut
    linear, regimes, which = mlm_claims(per_level, _table1(moved_too), paper)
    # four moved classes: more than "a few" (few_moved_classes_max = 3), and not the paper's
    assert not regimes.holds and not which.holds and which.evidence == "ours: [0, 5, 6, 8]"
    moved_too[0] = cut / 2  # below the cut: in place
    assert mlm_claims(per_level, _table1(moved_too), paper)[2].holds


def test_paper_tables_fit_the_one_schema(tmp_path):
    table1 = _table1([1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3)
    tables = paper_tables(_accuracy(), LOG, table1, PAPER, "clean")
    assert isinstance(tables, PaperTables) and tables.summary == ""
    comparisons, claims, notes = tables.comparison, tables.claims, tables.notes
    assert list(comparisons.columns) == COMPARISON_SCHEMA.names
    assert (comparisons["paper"] == "004").all() and len(comparisons) == 18
    np.testing.assert_allclose(
        comparisons["difference"], comparisons["ours"] - comparisons["paper_value"]
    )
    assert len(claims) == 3 and notes.strip() == ""
    write_frame(comparisons, tmp_path / "c.parquet", COMPARISON_SCHEMA)
    write_frame(claims, tmp_path / "k.parquet", CLAIM_SCHEMA)


def test_threshold_text():
    assert _short(1e-8) == "1e-8" and _short(2.5e-10) == "2.5e-10" and _short(0.001) == "0.001"
