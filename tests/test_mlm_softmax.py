"""reliquant.mlm.softmax: the softmax table every mlm module shares."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reliquant.mlm import softmax as sm
from reliquant.mlm.softmax import N_CLASSES as K


def random_softmax(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.dirichlet(np.full(K, 0.3), size=n).astype(np.float32)


def test_softmax_frame_columns_and_prediction():
    rng = np.random.default_rng(13)
    s = random_softmax(rng, 20)
    frame = sm.softmax_frame(np.arange(20), np.arange(20) % K, "fog", 3, s)
    assert list(frame.columns) == [f.name for f in sm.SOFTMAX_SCHEMA]
    np.testing.assert_array_equal(frame["prediction"], s.argmax(1))
    assert (frame["corruption"] == "fog").all() and (frame["level"] == 3).all()
    pa.Table.from_pandas(frame, schema=sm.SOFTMAX_SCHEMA, preserve_index=False)


def test_check_softmax_names_the_problem():
    with pytest.raises(ValueError, match=r"shape \(n, 10\)"):
        sm.check_softmax(np.zeros((3, 9)))
    with pytest.raises(ValueError, match="labels must have shape"):
        sm.check_softmax(np.zeros((3, K)), np.zeros(2, int))
    assert sm.check_softmax(np.zeros((0, K))).shape == (0, K)
