"""The MLM doc block's per-class comparison (issue 32): L's most likely confusion beside the
class each digit is actually misclassified as most often, against numpy's argmax of both
matrices, as a reader of docs/mlm.md compares them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliquant.mlm.likelihood import misclassification_likelihood
from reliquant.mlm.reproduction.accuracy import confusion_frame, confusion_matrix
from reliquant.mlm.reproduction.highlights import likelihood_vs_confusion, matrix_block


def test_most_likely_confusion_beside_the_most_frequent_one():
    rng = np.random.default_rng(3)
    k, n = 10, 3000
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 2.5 * np.eye(k)[labels]
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    mlm = misclassification_likelihood(softmax, labels, refine=False)
    L = mlm.likelihood
    t, p = np.indices(L.shape)
    off = t != p
    matrices = pd.DataFrame({"scope": "clean", "true": t[off], "predicted": p[off],
                             "likelihood": L[off]})  # fmt: skip
    counts = confusion_matrix(labels, softmax.argmax(axis=1))
    got = likelihood_vs_confusion(matrices, confusion_frame(counts))
    by_l = np.where(np.eye(k, dtype=bool), -np.inf, L).argmax(axis=1)
    by_count = np.where(np.eye(k, dtype=bool), -1, counts).argmax(axis=1)
    np.testing.assert_array_equal(got["by_likelihood"], by_l)
    np.testing.assert_array_equal(got["most_confused"], by_count)
    np.testing.assert_array_equal(got["agree"], by_l == by_count)
    assert not got["agree"].all()  # L is not a confusion frequency: here they differ
    block = matrix_block(matrices.assign(scope="clean"), pd.DataFrame(columns=["index"]),
                         confusion=confusion_frame(counts))  # fmt: skip
    assert f"they agree in {int((by_l == by_count).sum())} of 10 classes" in block
    assert "L is not a confusion-frequency estimate" in block
