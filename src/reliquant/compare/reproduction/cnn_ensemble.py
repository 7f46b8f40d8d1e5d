"""The deep ensemble of paper 004's CNN on the compare subsample (issue 44).

``compare.mnist.ensemble_members`` = ``M`` CNNs of paper 004 (Section 3.1), each trained as
the mlm topic trains its one (:func:`reliquant.mlm.train_cnn` with the ``mlm.train``
settings), from its own seed (Lakshminarayanan et al. 2017: independent random
initialisations and batch orders). Member ``m``'s seed is

    seed_m = block_int_seed(compare.seed, "cnn_ensemble", m),   m = 0..M-1

(:func:`ensemble_member_seeds`), a 63-bit integer of its own stream, refused if it equals
``mlm.seed`` (the member would be the mlm topic's CNN again, not an independent one) or
another member's. ``M = 0`` (the default configuration) trains nothing and adds no column;
``M = 1`` is refused (one network is not an ensemble). The members' softmax on the subsample
(:func:`member_softmax`, :func:`reliquant.mlm.predict_softmax`) stacked ``(M, n, 10)`` gives
the two columns of :data:`ENSEMBLE_COLUMNS` (:func:`ensemble_columns`, through
:mod:`reliquant.compare.ensemble_scores`): ``ensemble_max_probability = max_k pbar_k`` and
``negative_mutual_information = -[H(pbar) - (1/M) sum_m H(p_m)]``. They score the
predictions of the table, those of the mlm topic's CNN (the ensemble is a comparator of its
reliability, as in FD-Shifts, not a second model).

Public API: :data:`ENSEMBLE_COLUMNS`, :data:`ENSEMBLE_MEMBERS_KEY`,
:func:`ensemble_member_seeds`, :func:`member_softmax`, :func:`ensemble_columns`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from reliquant.compare.ensemble_scores import (
    ensemble_max_probability,
    negative_mutual_information,
)
from reliquant.core.seeding import block_int_seed

__all__ = [
    "ENSEMBLE_COLUMNS",
    "ENSEMBLE_MEMBERS_KEY",
    "ensemble_columns",
    "ensemble_member_seeds",
    "member_softmax",
]

#: The columns the deep ensemble adds to the CNN's per-prediction table (family "ensemble").
ENSEMBLE_COLUMNS = ("ensemble_max_probability", "negative_mutual_information")

#: The config key of the number of members.
ENSEMBLE_MEMBERS_KEY = "compare.mnist.ensemble_members"


def ensemble_member_seeds(seed: int, n_members: int, *, mlm_seed: int) -> list[int]:
    """The training seeds of the ``n_members`` members: ``block_int_seed(seed,
    "cnn_ensemble", m)`` for ``m = 0..n_members-1`` (``seed`` = ``compare.seed``). A
    ``ValueError`` naming the keys refuses ``n_members`` = 1 or < 0, a member seed equal to
    ``mlm_seed`` (``mlm.seed``: that member would be the mlm topic's CNN) and two equal
    member seeds."""
    if isinstance(n_members, bool) or not isinstance(n_members, int | np.integer):
        raise ValueError(f"{ENSEMBLE_MEMBERS_KEY} must be an integer; got {n_members!r}")
    if n_members < 0 or n_members == 1:
        raise ValueError(
            f"{ENSEMBLE_MEMBERS_KEY} = {n_members}: 0 (no deep ensemble) or at least 2 members "
            "(one network is not an ensemble)"
        )
    seeds = [block_int_seed(int(seed), "cnn_ensemble", m) for m in range(int(n_members))]
    for m, s in enumerate(seeds):
        if s == mlm_seed:
            raise ValueError(
                f"{ENSEMBLE_MEMBERS_KEY}: member {m}'s seed {s} (from compare.seed = {seed}) "
                f"equals mlm.seed: the member would be the mlm topic's CNN, not an "
                "independently seeded one; change compare.seed or mlm.seed"
            )
    if len(set(seeds)) != len(seeds):
        raise ValueError(
            f"{ENSEMBLE_MEMBERS_KEY}: two members' seeds derived from compare.seed = {seed} "
            "are equal; change compare.seed"
        )
    return seeds


def member_softmax(
    models: Sequence[Any],
    images_uint8: np.ndarray,
    *,
    batch_size: int = 128,
    device: Any = None,
) -> np.ndarray:
    """The members' softmax ``(M, n, 10)`` float64 on uint8 images ``(n, 28, 28)``: member
    ``m``'s :func:`reliquant.mlm.predict_softmax` (channels-last, as the mlm topic's
    inference; ``batch_size`` changes no CPU score) in row ``m``, the images in their order."""
    from reliquant.mlm import predict_softmax

    if len(models) < 2:
        raise ValueError(f"a deep ensemble needs at least two members; got {len(models)}")
    return np.stack(
        [
            np.asarray(
                predict_softmax(model, images_uint8, batch_size, device=device),
                dtype=np.float64,
            )
            for model in models
        ]
    )


def ensemble_columns(member_proba: ArrayLike) -> dict[str, np.ndarray]:
    """:data:`ENSEMBLE_COLUMNS` from the members' stacked probabilities ``(M, n, K)``:
    ``ensemble_max_probability`` and ``negative_mutual_information`` of
    :mod:`reliquant.compare.ensemble_scores` (higher = more reliable)."""
    return {
        "ensemble_max_probability": ensemble_max_probability(member_proba),
        "negative_mutual_information": negative_mutual_information(member_proba),
    }
