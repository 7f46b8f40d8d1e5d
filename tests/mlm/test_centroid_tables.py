"""reliquant.mlm.reproduction.centroid_tables: the workflow's centroid tables, Table 1 and the
misclustered images (rule mlm_centroids; Sections 4.2-4.3, Figures 3-4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.core.io import read_frame, write_frame
from reliquant.core.seeding import block_int_seed
from reliquant.mlm import centroids as cen
from reliquant.mlm.reproduction import centroid_tables as ct
from reliquant.mlm.softmax import N_CLASSES as K


def test_choose_examples():
    assert ct.choose_examples(np.array([5, 8688, 3, 22561]), [8688, 22561]) == [8688, 22561]
    assert ct.choose_examples(np.array([5, 3, 22561]), [8688, 22561]) == [22561, 3]
    assert ct.choose_examples(np.array([7]), [8688, 22561]) == [7]
    assert ct.choose_examples(np.array([], int), [1, 2]) == []


def _train_frame(rng: np.random.Generator) -> pd.DataFrame:
    """A softmax table of 'training images': tight clusters near the corners of the simplex,
    except class 5, whose images hesitate between 5 and 6; every 7th image mislabelled; three
    correct class-6 images hesitate the same way, so they lie nearer the class-5 mean."""
    labels = np.repeat(np.arange(K), 40)
    s = np.full((len(labels), K), 0.01)
    s[np.arange(len(labels)), labels] = 0.91
    s[labels == 5, 5], s[labels == 5, 6] = 0.5, 0.45
    stray = np.flatnonzero(labels == 6)[1:4]
    s[stray, 5], s[stray, 6] = 0.48, 0.5  # argmax 6: correctly classified
    s += rng.uniform(0, 0.002, s.shape)
    s /= s.sum(1, keepdims=True)
    y = labels.copy()
    y[::7] = (y[::7] + 1) % K
    frame = pd.DataFrame(s.astype(np.float32), columns=[f"p{c}" for c in range(K)])
    frame.insert(0, "index", np.arange(len(y), dtype=np.int32) + 1000)
    frame.insert(1, "label", y.astype(np.uint8))
    return frame


def test_centroid_tables_match_the_steps_done_by_hand(tmp_path):
    rng = np.random.default_rng(14)
    train = _train_frame(rng)
    kmeans = {"max_iter": 300, "tol": 1e-4}
    paper_shift = [1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3
    out = ct.centroid_tables(train, kmeans, seed=3, paper_shift=paper_shift)

    s = train[[f"p{c}" for c in range(K)]].to_numpy(np.float64)
    y = train["label"].to_numpy(np.int64)
    correct = s.argmax(1) == y
    initial = cen.class_centroids(s, y)
    km = cen.refine_centroids(s[correct], initial, seed=block_int_seed(3, "mlm", "kmeans"))
    np.testing.assert_array_equal(ct.centroid_array(out.centroids, "mean"), initial)
    np.testing.assert_array_equal(ct.centroid_array(out.centroids, "kmeans"), km.centroids)
    np.testing.assert_array_equal(out.table1["distance"], cen.centroid_shift(initial, km.centroids))
    np.testing.assert_array_equal(out.table1["paper_distance"], paper_shift)
    assert out.table1["n_correct"].sum() == correct.sum() == out.n_correct
    # misclustered rows: correct images whose cluster is not their class, by brute force
    rows = np.flatnonzero(correct)
    wrong = [i for k, i in enumerate(rows) if km.assignments[k] != y[i]]
    assert out.misclustered["index"].tolist() == train["index"].iloc[wrong].tolist()
    assert out.table1["n_misclustered"].sum() == len(wrong) == 3
    assert out.table1.loc[6, "n_misclustered"] == 3 and set(out.misclustered["cluster"]) == {5}
    np.testing.assert_allclose(
        out.misclustered[[f"d{c}" for c in range(K)]].to_numpy(),
        cen.distances_to_centroids(s[wrong], km.centroids),
    )
    assert f"softmax of the {out.n_correct} correctly classified" in out.table1_markdown
    for table, schema in [
        (out.centroids, ct.CENTROIDS_SCHEMA),
        (out.table1, ct.TABLE1_SCHEMA),
        (out.misclustered, ct.MISCLUSTERED_SCHEMA),
    ]:
        write_frame(table, tmp_path / "t.parquet", schema)
        assert len(read_frame(tmp_path / "t.parquet")) == len(table)
    with pytest.raises(ValueError, match="kind 'median'"):
        ct.centroid_array(out.centroids, "median")
