"""The Misclassification Likelihood Matrix of paper 004 for any classifier, in one call.

:func:`misclassification_likelihood` takes a classifier's softmax outputs ``s(x) in R^K`` (eq. 1,
an ``(n, K)`` array, any ``K >= 2``) and the true labels ``0..K-1`` and runs Sections 3.3 a-d:

a. class means (eq. 3): ``mu_c = 1/|C_c| sum_{x in C_c} s(x)``, ``C_c`` the examples of class c
   correctly classified (``argmax s(x) = c``), from a reference set (e.g. the training set)
   when given, else from the same arrays; refined by K-Means (Lloyd, scikit-learn,
   ``n_init=1``) started at ``mu_0..mu_{K-1}`` on the softmax of ``C_0 u ... u C_{K-1}``,
   giving ``mu_hat_c`` (Section 3.3 a; Table 1 is ``||mu_hat_c - mu_c||_2``);
b. distance (eq. 4): ``d(s, mu_hat_c) = ||s - mu_hat_c||_2``;
c. nearest distances (eqs. 5, 7): ``D[y, c] = min_{x : label(x) = y} d(s(x), mu_hat_c)`` for
   ``c != y``; the diagonal is empty (NaN);
d. likelihood (eqs. 6, 8): ``L[y, c] = (1/D[y, c]) / sum_{c' != y} 1/D[y, c']`` for ``c != y``;
   the diagonal is empty, each row sums to 1.

Eqs. 7-8 are eqs. 5-6 on the examples of one perturbation level ``p``; call this function once
per level (with the clean training set as reference) and pass the ``L^(p)`` to
:func:`reliquant.mlm.matrices.level_mean_std` for eqs. 9-10. The steps are the functions of
:mod:`reliquant.mlm.centroids` and :mod:`reliquant.mlm.matrices`, so for ``K = 10`` the result
equals the MNIST workflow's bit for bit.

The inputs are checked once, here at the entry point (:func:`~reliquant.mlm.softmax.check_softmax`,
:func:`~reliquant.mlm.softmax.check_labels`); the steps are called with ``check=False``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from reliquant.mlm.centroids import (
    centroid_shift,
    class_centroids,
    refine_centroids,
)
from reliquant.mlm.matrices import likelihood_matrix, min_distance_matrix
from reliquant.mlm.softmax import check_labels, check_softmax

__all__ = ["MLMResult", "misclassification_likelihood"]


@dataclass(frozen=True)
class MLMResult:
    """What :func:`misclassification_likelihood` computes for ``K`` classes.

    Attributes
    ----------
    centroids
        ``(K, K)`` float64, row c = ``mu_hat_c``: the class means refined by K-Means
        (Section 3.3 a), or the class means ``mu_c`` themselves when ``refine=False``.
    class_means
        ``(K, K)`` float64, row c = ``mu_c`` (eq. 3).
    centroid_shift
        ``(K,)`` float64, ``||mu_hat_c - mu_c||_2`` (the paper's Table 1); zeros when not refined.
    distances
        ``D``, ``(K, K)`` float64, rows = true class, columns = centroid (cluster) class
        (eqs. 5, 7); NaN diagonal.
    likelihood
        ``L``, ``(K, K)`` float64 (eqs. 6, 8); NaN diagonal, rows sum to 1.
    classes
        ``0..K-1`` (int64), the row/column order of every matrix.
    n_correct
        ``(K,)`` int64, ``|C_c|``: correctly classified reference examples per class (eq. 3).
    n_misclustered
        ``(K,)`` int64, of those, how many K-Means put in another class's cluster
        (Section 4.3); zeros when not refined.
    n_iter
        K-Means iterations run (0 when not refined).
    """

    centroids: np.ndarray
    class_means: np.ndarray
    centroid_shift: np.ndarray
    distances: np.ndarray
    likelihood: np.ndarray
    classes: np.ndarray
    n_correct: np.ndarray
    n_misclustered: np.ndarray
    n_iter: int

    @property
    def n_classes(self) -> int:
        """``K``."""
        return len(self.classes)

    def to_frame(self) -> pd.DataFrame:
        """``D`` and ``L`` as a long table, one row per off-diagonal pair, row-major.

        Columns: ``true`` (true class y), ``predicted`` (the class c whose centroid
        ``mu_hat_c`` the examples of y come near, i.e. the class they are likely mistaken
        for), ``distance`` (``D[y, c]``), ``likelihood`` (``L[y, c]``); ``K (K - 1)`` rows.
        """
        k = self.n_classes
        t, p = np.nonzero(~np.eye(k, dtype=bool))
        return pd.DataFrame(
            {
                "true": self.classes[t],
                "predicted": self.classes[p],
                "distance": self.distances[t, p],
                "likelihood": self.likelihood[t, p],
            }
        )


def misclassification_likelihood(
    softmax: np.ndarray,
    labels: np.ndarray,
    *,
    refine: bool = True,
    seed: int = 0,
    reference_softmax: np.ndarray | None = None,
    reference_labels: np.ndarray | None = None,
    max_iter: int = 300,
    tol: float = 1e-4,
    sum_tol: float | None = 1e-3,
    chunk: int = 65536,
) -> MLMResult:
    """Centroids, ``D`` and ``L`` of paper 004 (Sections 3.3 a-d, eqs. 3-8) for ``K`` classes.

    Parameters
    ----------
    softmax, labels
        The examples whose misclassification likelihood is wanted: ``(n, K)`` softmax outputs
        (eq. 1; any ``K >= 2``, taken from the second dimension) and ``(n,)`` true labels in
        ``0..K-1``. Every class needs at least one example (row y of ``D`` is a minimum over
        the examples of class y, eq. 5).
    refine
        Refine the class means ``mu_c`` (eq. 3) by K-Means started at them (Section 3.3 a):
        ``mu_hat_c``. ``False`` uses ``mu_c`` as the centroids.
    seed
        K-Means ``random_state`` (only matters for ties; taken modulo ``2**32``).
    reference_softmax, reference_labels
        Where the centroids come from (both or neither), e.g. the training set as in the
        paper; ``K`` must match. Default: ``softmax`` and ``labels`` themselves.
    max_iter, tol
        scikit-learn's K-Means ``max_iter`` and ``tol`` (``tol`` relative to the mean
        per-feature variance).
    sum_tol
        Softmax rows must be ``>= 0`` and sum to 1 within ``sum_tol`` (``|sum_c s_c - 1| <=
        sum_tol``), in both sets; ``ValueError`` otherwise (e.g. logits passed by mistake).
        The default ``1e-3`` admits float32 softmax outputs of thousands of classes; ``None``
        skips the check (for scores that are not probabilities). Anything else must be a
        finite number ``>= 0`` (NaN or ``-1`` is refused, naming ``sum_tol``).
    chunk
        Rows per block when computing distances (memory only; the result does not depend
        on it).

    Returns
    -------
    MLMResult
        ``centroids`` (``mu_hat``), ``class_means`` (``mu``), ``centroid_shift``,
        ``distances`` (``D``: ``D[y, c] = min_{x : label(x) = y} ||s(x) - mu_hat_c||_2``,
        ``c != y``, eqs. 4-5/7), ``likelihood`` (``L[y, c] = (1/D[y, c]) / sum_{c' != y}
        1/D[y, c']``, eqs. 6/8; a zero distance takes its row's mass, see
        :func:`reliquant.mlm.matrices.likelihood_matrix`), ``classes`` and ``to_frame()``.

    Raises
    ------
    ValueError
        Naming the problem: softmax not ``(n, K)`` with ``K >= 2``; NaN or inf; rows not on the
        simplex (``sum_tol``); labels not integers in ``0..K-1`` or not one per row; only one
        of ``reference_softmax``/``reference_labels``; reference with another ``K``; a class
        with no correctly classified reference example (no ``mu_c``, eq. 3); a class with no
        example in ``labels`` (no row of ``D``).

    Example
    -------
    ::

        res = misclassification_likelihood(
            test_probs, test_labels, reference_softmax=train_probs, reference_labels=train_labels
        )
        res.likelihood[3]  # what class-3 examples are likely to be mistaken for
        res.to_frame().sort_values("likelihood", ascending=False).head()
    """
    # The one check of the inputs on this path: every step below trusts them (check=False).
    s = check_softmax(softmax, labels, sum_tol=sum_tol)
    k = s.shape[1]
    y = np.asarray(labels).astype(np.int64)  # checked with the softmax
    missing = np.flatnonzero(np.bincount(y, minlength=k) == 0)
    if len(missing):
        which = (
            f"class {missing[0]} has" if len(missing) == 1 else f"classes {missing.tolist()} have"
        )
        raise ValueError(
            f"{which} no example in labels; each row y of D (eq. 5) is a minimum over the "
            "examples of class y"
        )
    if (reference_softmax is None) != (reference_labels is None):
        given = "reference_softmax" if reference_labels is None else "reference_labels"
        raise ValueError(
            f"{given} given without its partner: pass both reference_softmax and "
            "reference_labels, or neither"
        )
    if reference_softmax is None:
        ref_s, ref_y, where = s, y, "softmax/labels"
    else:
        ref_s = check_softmax(reference_softmax, sum_tol=sum_tol, name="reference_softmax")
        if ref_s.shape[1] != k:
            raise ValueError(
                f"reference_softmax has K = {ref_s.shape[1]} classes (columns) but softmax "
                f"has K = {k}; they must be the same classifier's outputs"
            )
        ref_y = check_labels(reference_labels, len(ref_s), k, name="reference_labels")
        where = "reference_softmax/reference_labels"

    try:
        means = class_centroids(ref_s, ref_y, check=False)
    except ValueError as err:
        raise ValueError(f"centroids from {where}: {err}") from None
    correct = ref_s.argmax(1) == ref_y
    n_correct = np.bincount(ref_y[correct], minlength=k).astype(np.int64)
    if refine:
        km = refine_centroids(
            ref_s[correct], means, seed=seed, max_iter=max_iter, tol=tol, check=False
        )
        centroids, n_iter = km.centroids, km.n_iter
        yc = ref_y[correct]
        n_mis = np.bincount(yc[km.assignments != yc], minlength=k).astype(np.int64)
    else:
        centroids, n_iter = means.copy(), 0
        n_mis = np.zeros(k, dtype=np.int64)
    distances = min_distance_matrix(s, y, centroids, chunk=chunk, check=False)
    return MLMResult(
        centroids=centroids,
        class_means=means,
        centroid_shift=centroid_shift(means, centroids),
        distances=distances,
        likelihood=likelihood_matrix(distances),
        classes=np.arange(k, dtype=np.int64),
        n_correct=n_correct,
        n_misclustered=n_mis,
        n_iter=n_iter,
    )
