"""The CNN's deep ensemble (compare.mnist.ensemble_members): member seeds, the members'
softmax and the two ensemble columns against a direct numpy computation, the CNN table with
and without members, and the workflow's plan in tests/workflow/test_workflow.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliquant.compare import SCORE_COMPARATOR_FAMILY
from reliquant.compare.reproduction.cnn_ensemble import (
    ENSEMBLE_COLUMNS,
    ensemble_columns,
    ensemble_member_seeds,
    member_softmax,
)
from reliquant.compare.reproduction.mnist import cnn_predictions
from reliquant.core.config import load_config
from reliquant.core.seeding import block_int_seed

REPO = Path(__file__).resolve().parents[2]


def test_member_seeds_are_derived_from_compare_seed_and_distinct() -> None:
    seeds = ensemble_member_seeds(11, 5, mlm_seed=2024)
    assert seeds == [block_int_seed(11, "cnn_ensemble", m) for m in range(5)]
    assert len(set(seeds)) == 5 and 2024 not in seeds
    # a member is the same whatever the ensemble's size: members 0..2 of 5 are those of 3
    assert ensemble_member_seeds(11, 3, mlm_seed=2024) == seeds[:3]
    assert ensemble_member_seeds(11, 0, mlm_seed=2024) == []


def test_a_member_seed_equal_to_the_mlm_seed_is_refused() -> None:
    clash = block_int_seed(11, "cnn_ensemble", 2)
    with pytest.raises(ValueError, match=r"compare.mnist.ensemble_members: member 2's seed .*"
                       r"equals mlm.seed"):  # fmt: skip
        ensemble_member_seeds(11, 3, mlm_seed=clash)
    ensemble_member_seeds(11, 2, mlm_seed=clash)  # member 2 is not asked for


@pytest.mark.parametrize("bad", [1, -1, 2.0, True])
def test_one_member_or_a_non_count_is_refused(bad) -> None:
    with pytest.raises(ValueError, match=r"compare.mnist.ensemble_members"):
        ensemble_member_seeds(0, bad, mlm_seed=2024)


def test_default_config_has_no_members_and_the_full_preset_five() -> None:
    base = load_config(REPO / "config.yaml", [])
    full = load_config(REPO / "config.yaml", [REPO / "workflow" / "presets" / "compare_full.yaml"])
    assert base["compare"]["mnist"]["ensemble_members"] == 0
    assert full["compare"]["mnist"]["ensemble_members"] == 5
    seeds = ensemble_member_seeds(full["compare"]["seed"], 5, mlm_seed=full["mlm"]["seed"])
    assert full["mlm"]["seed"] not in seeds


def _members(n: int):
    import torch

    from reliquant.mlm import build_cnn

    out = []
    for m in range(n):  # randomly initialised CNNs, no training
        torch.manual_seed(100 + m)
        out.append(build_cnn().eval())
    return out


def _entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats over the last axis, 0 ln 0 = 0."""
    logs = np.log(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=-1)


def test_ensemble_columns_equal_a_numpy_computation_from_the_members_softmax() -> None:
    import torch

    from reliquant.mlm.cnn import normalise_images

    images = np.random.default_rng(0).integers(0, 256, (7, 28, 28), dtype=np.uint8)
    models = _members(3)
    stack = member_softmax(models, images, device="cpu")
    assert stack.shape == (3, 7, 10)
    with torch.no_grad():  # each member's own forward (log-softmax), NCHW, one batch
        direct = np.stack(
            [torch.exp(m.to("cpu")(normalise_images(images))).double().numpy() for m in models]
        )
    np.testing.assert_allclose(stack, direct, atol=1e-6)
    # the random members disagree: their mutual information is not 0
    assert not np.allclose(stack[0], stack[1], atol=1e-3)
    cols = ensemble_columns(direct)
    assert tuple(cols) == ENSEMBLE_COLUMNS
    mean = direct.mean(axis=0)
    np.testing.assert_allclose(cols["ensemble_max_probability"], mean.max(axis=1), rtol=1e-12)
    mi = _entropy(mean) - _entropy(direct).mean(axis=0)
    assert (mi > 0).all()
    np.testing.assert_allclose(cols["negative_mutual_information"], -mi, rtol=1e-9, atol=1e-15)
    # both are scores of the "ensemble" family of the comparator verdicts
    assert {SCORE_COMPARATOR_FAMILY[c] for c in ENSEMBLE_COLUMNS} == {"ensemble"}


def test_member_softmax_needs_two_members() -> None:
    images = np.zeros((2, 28, 28), dtype=np.uint8)
    with pytest.raises(ValueError, match="at least two members"):
        member_softmax(_members(1), images)


def _cnn_table(**kwargs):
    rng = np.random.default_rng(1)
    n = 12
    meta = pd.DataFrame({
        "case": ["clean"] * 6 + ["level 1"] * 6,
        "corruption": ["clean"] * 6 + ["fog"] * 6,
        "test_index": np.r_[np.arange(6), np.arange(6)].astype(np.int32),
        "label": rng.integers(0, 10, n).astype(np.uint8),
        "level": np.r_[np.zeros(6), np.ones(6)].astype(np.uint8),
    })  # fmt: skip
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    p = rng.dirichlet(np.ones(10) * 0.3, n)
    softmax = pd.DataFrame(p, columns=[f"p{c}" for c in range(10)])
    softmax["prediction"] = p.argmax(axis=1)
    weights = rng.normal(size=(784, 10))
    train = rng.dirichlet(np.ones(10), 200)
    return cnn_predictions(
        meta, images, softmax, train, train.argmax(axis=1),
        lambda x: (x.reshape(len(x), -1) @ weights).argmax(axis=1),
        exp={"variances": [0.1], "n_draws": 20}, seed=3, n_splits=2, **kwargs,
    )  # fmt: skip


def test_the_cnn_table_without_members_is_unchanged_and_with_them_gains_two_columns() -> None:
    plain = _cnn_table()
    none = _cnn_table(ensemble=None)
    pd.testing.assert_frame_equal(plain, none, check_exact=True)
    assert not set(ENSEMBLE_COLUMNS) & set(plain.columns)
    stack = np.random.default_rng(2).dirichlet(np.ones(10), (4, 12))
    with_members = _cnn_table(ensemble=ensemble_columns(stack))
    assert list(with_members.columns) == [*plain.columns, *ENSEMBLE_COLUMNS]
    pd.testing.assert_frame_equal(with_members[plain.columns], plain, check_exact=True)
    np.testing.assert_array_equal(
        with_members["ensemble_max_probability"], stack.mean(axis=0).max(axis=1)
    )
