"""The compare topic and the nbc topic judge paper 000's claim on the same training sets and
must agree: compare's NBC verdict per cell equals the nbc claims check's."""

import numpy as np
import pandas as pd
import pytest

from reliquant.compare.reproduction.evaluation import family_contrast, pooled_case, split_auarc
from reliquant.compare.reproduction.tables import assign_parts
from reliquant.compare.reproduction.tabular import nbc_case, nbc_cell_predictions
from reliquant.nbc.reproduction.curves import auc_table, cell_curves
from reliquant.nbc.reproduction.distributions import make_distributions
from reliquant.nbc.reproduction.experiment import run_cell
from reliquant.nbc.reproduction.paper import claims_check

DESIGN = {
    "class_probs": [0.4, 0.35, 0.25],
    "n_values": [2, 3, 3, 4],
    "favoured": [[0, 0, 0, 0], [1, 1, 1, 1], [0, 2, 2, 3]],
    "p_favoured": 0.85,
    "beta": 0.3,
    "n_shift": 3,
    "n_test": 300,
}
FIT = {"n_train_sets": 4, "alphas": [0.1, 1.0, 10.0], "cv_folds": 3, "n_bootstrap": 3,
       "eps_loc_tol": 1e-12}  # fmt: skip
PAPER = {"z": 2.0, "hard_n_train_below": 100, "hard_gamma_above": 0.0}
VERDICT = {"better": "robustness", "worse": "uncertainty", "tie": "undecided"}
METRIC = {"eps_glob": "eps_glob", "eps_loc": "eps_loc", **{
    u: f"negative_{u}" for u in ("u_m", "u_H", "u_a", "u_t", "u_e")}}  # fmt: skip


@pytest.fixture(scope="module")
def cells():
    dists = make_distributions(DESIGN, seed=11)
    return {(n, g): run_cell(dists, n, g, FIT, seed=3) for n, g in [(10, 0.0), (25, 0.4),
                                                                     (200, 0.0)]}  # fmt: skip


@pytest.mark.parametrize("z", [2.0, 0.5, 0.0, 1e9])
def test_compare_nbc_verdict_equals_the_nbc_claims_check(cells, z):
    """Every training set of every cell, the same areas, the same picks, the same verdict."""
    paper = {**PAPER, "z": z}
    per_set = auc_table(pd.concat([cell_curves(c) for c in cells.values()]))[0]
    nbc = claims_check(per_set, paper)
    frame = assign_parts(nbc_cell_predictions(cells), validation_fraction=0.5, seed=1)
    split = split_auarc([frame])
    ours = family_contrast(split, z=z).set_index("case")
    # one row per cell, and the two clean cells pooled (a single shifted cell: no pool)
    assert len(ours) == len(cells) + 1 and pooled_case("clean") in ours.index, ours.index
    for r in nbc.itertuples(index=False):
        row = ours.loc[nbc_case(r.n_train, r.gamma)]
        assert row["n_splits"] == DESIGN["n_shift"] * FIT["n_train_sets"]
        assert row["verdict"] == VERDICT[r.verdict]
        assert row["best_rq"] == METRIC[r.best_robustness]
        assert row["best_uq"] == METRIC[r.best_uncertainty]
        assert row["diff_mean"] == pytest.approx(r.diff_mean, abs=1e-15)
        assert row["diff_se"] == pytest.approx(r.diff_se, abs=1e-15)
    # the areas themselves: the nbc topic's AUC of every set and metric, bit for bit
    mine = split[split["part"] == "all"].set_index(["case", "split", "score"])["auarc"]
    for r in per_set.itertuples(index=False):
        assert mine[(nbc_case(r.n_train, r.gamma), r.train_set, METRIC[r.metric])] == r.auc


def test_verdicts_are_not_all_alike(cells):
    """The z values above exercise more than one verdict (else the agreement is vacuous)."""
    frame = assign_parts(nbc_cell_predictions(cells), validation_fraction=0.5, seed=1)
    split = split_auarc([frame])
    verdicts = {v for z in (0.0, 1e9) for v in family_contrast(split, z=z)["verdict"]}
    assert len(verdicts) >= 2, verdicts


def test_one_training_set_can_disagree_with_all_of_them(cells):
    """Why every set is needed: judged on one training set (what the topic did before) the
    mean difference is that set's and generally not the cell's."""
    frame = nbc_cell_predictions(cells)
    split = split_auarc([assign_parts(frame, validation_fraction=0.5, seed=1)])
    one = split_auarc([assign_parts(frame[frame["split"] == 0], validation_fraction=0.5, seed=1)])
    all_sets = family_contrast(split, z=2.0)["diff_mean"].to_numpy()
    first = family_contrast(one, z=2.0)["diff_mean"].to_numpy()
    assert not np.allclose(all_sets, first)


def test_the_fields_comparators_do_not_enter_paper_000s_rule(cells):
    """Paper 000's rule picks among scores of the predicted distribution (RULE_FAMILIES):
    a perfect trust score or maximum logit added to the table changes neither its pick nor
    its verdict (those meet the paper score in the family table)."""
    from reliquant.compare.reproduction.contrasts import RULE_FAMILIES

    assert RULE_FAMILIES == ("probability", "ensemble")
    frame = assign_parts(nbc_cell_predictions(cells), validation_fraction=0.5, seed=1)
    base = family_contrast(split_auarc([frame]), z=2.0)
    oracle = frame["correct"].astype(float).to_numpy()
    extra = frame.assign(trust_score=oracle, max_logit=oracle + 1.0)
    with_field = family_contrast(split_auarc([extra]), z=2.0)
    pd.testing.assert_frame_equal(base, with_field)
