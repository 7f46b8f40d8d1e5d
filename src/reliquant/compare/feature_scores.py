"""Feature-space reliability scores fitted on training data: trust score, Mahalanobis distance,
k-th nearest-neighbour distance.

Each score is fitted on the training features (and labels) and then scores new predictions
from their features; all are oriented **higher = more reliable** (a distance is negated). The
features are whatever space the distances should live in: the raw (standardised) columns of
a tabular model, or a network's penultimate layer. Distances are Euclidean in that space, so
scale tabular columns first (e.g. ``StandardScaler``); the Mahalanobis distance alone is
unchanged by any invertible linear map of the features.

================ ===================================================== ======================
fitted by        score                                                 source
================ ===================================================== ======================
fit_trust_score  ``d(x, H_other) / d(x, H_pred)``: distance to the     Jiang, Kim, Guan,
                 nearest filtered training set of another class over   Gupta, "To trust or
                 distance to the predicted class's (a ratio; above 1   not to trust a
                 favours the prediction)                               classifier", NeurIPS
                                                                       2018, Algorithms 1-2
fit_mahalanobis  ``-(x - mu_c)^T S^+ (x - mu_c)``, ``c`` the predicted Lee, Lee, Lee, Shin,
                 class (or the closest), class means ``mu_c`` and one  NeurIPS 2018, eqs.
                 shared (tied) covariance ``S``                        (1)-(2)
fit_knn_distance ``-|| z - z_(k) ||``, ``z_(k)`` the k-th nearest      Sun, Ming, Zhu, Li,
                 training vector, ``z = x / ||x||`` (optionally)       ICML 2022, Section 3
================ ===================================================== ======================

**Trust score.** Per class ``c``, the training points labelled ``c``; the density filter
(Algorithm 1, the alpha-high-density set) computes each point's k-NN radius ``r_k(x)``, the
distance to its ``k``-th nearest point of the same class *counting the point itself* (the
paper's ``r_k``; the authors' ``KDTree.query(X, k)``, google/TrustScore), and keeps the points
with ``r_k <= `` the ``(1 - alpha)`` quantile of the class's radii (numpy's linear percentile,
as the authors' code: about an ``alpha`` share dropped, equal radii kept or dropped
together; ``alpha = 0`` keeps all, the authors' default). Algorithm 2: ``d(x, H_c)`` is the
distance from ``x`` to the nearest kept point of class ``c`` and

    trust(x) = min_{c != pred} d(x, H_c) / (d(x, H_pred) + min_dist),

``min_dist = 1e-12`` the authors' guard against a zero denominator. (The authors' released
``get_score`` takes the *second*-nearest point of each set, ``query(X, k=2)``; we follow the
paper's distance to the set, which differs from theirs on every point.)

**Mahalanobis** (Lee et al., eq. (1)): ``mu_c`` the mean of class ``c``'s training features and
``S = (1 / N) sum_c sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T``, the tied maximum-likelihood
covariance; ``S^+`` its pseudo-inverse (eigenvalues below ``d eps`` times the largest are
dropped, as ``scipy.linalg.pinvh`` and scikit-learn's ``EmpiricalCovariance`` do, so constant
features such as MNIST's border pixels do not break it). Lee et al.'s score (eq. (2)) is
``max_c -(x - mu_c)^T S^+ (x - mu_c)``, minus the squared distance to the *closest* class
(``predicted=None``); with ``predicted`` it is the distance to the predicted class. Minus the
squared distance ranks as minus the distance.

**k-NN distance** (Sun et al.): ``z = x / ||x||_2`` (``normalize=True``, the paper's choice
for a network's embeddings; a zero vector is refused), then minus the Euclidean distance to
the ``k``-th nearest normalised training vector (Sun et al. use ``k = 50`` on CIFAR-10, the
default here). Scoring the training points themselves counts each point as its own nearest
neighbour.

Labels are any sortable values (scikit-learn's ``classes_`` are ``np.unique(y_train)``);
``predicted`` must hold labels seen in training. Distances are scikit-learn's
``NearestNeighbors`` (exact search; its brute-force mode, chosen in high dimension, computes
distances to about ``1e-8`` relative). Inputs are checked at the boundary: ``ValueError``
naming the argument for a wrong shape, NaN or inf, a feature count that differs from
training's, an unseen predicted label, ``alpha`` outside ``[0, 1)``, ``k < 1`` or ``k``
above the points available.

Public API: :class:`TrustScore`, :func:`fit_trust_score`, :class:`MahalanobisScore`,
:func:`fit_mahalanobis`, :class:`KNNDistance`, :func:`fit_knn_distance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from reliquant.core.arguments import check_int, check_real
from reliquant.core.progress import progress_bar

if TYPE_CHECKING:
    from sklearn.neighbors import NearestNeighbors

__all__ = [
    "KNNDistance",
    "MahalanobisScore",
    "TrustScore",
    "fit_knn_distance",
    "fit_mahalanobis",
    "fit_trust_score",
]

#: Rows scored per nearest-neighbour query (bounds the distance matrix in memory).
_CHUNK = 2048


def _neighbors(k: int) -> NearestNeighbors:
    """An exact k-nearest-neighbour index (scikit-learn's, imported here: the package loads no
    sklearn)."""
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=k)


def _check_features(x: ArrayLike, name: str, n_features: int | None = None) -> np.ndarray:
    """``x`` as float64 ``(n, d)``: 2-D, real, ``n >= 1``, ``d >= 1``, finite, and ``d`` equal
    to ``n_features`` when given."""
    a = np.asarray(x)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D, shape (n, n_features); got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real-valued; got dtype {a.dtype}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} is empty: need at least one row and one feature; got {a.shape}")
    if n_features is not None and a.shape[1] != n_features:
        raise ValueError(
            f"{name} has {a.shape[1]} features (columns); the score was fitted on {n_features}"
        )
    a = a.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(a).all(axis=1))
    if bad.size:
        raise ValueError(f"{name} has NaN or inf in {bad.size} row(s), first row {bad[0]}")
    return a


def _check_labels(y: ArrayLike, n: int, name: str = "y_train") -> tuple[np.ndarray, np.ndarray]:
    """``(classes, index)``: the sorted distinct labels and each row's position among them."""
    a = np.asarray(y)
    if a.ndim != 1 or a.size != n:
        raise ValueError(
            f"{name} must be 1-D with one label per row of X_train ({n}); got shape {a.shape}"
        )
    if a.dtype.kind == "f" and np.isnan(a).any():
        first = np.flatnonzero(np.isnan(a))[0]
        raise ValueError(f"{name} has NaN labels, first at position {first}")
    try:
        classes, index = np.unique(a, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"{name} must hold sortable labels of one kind: {err}") from None
    return classes, index


def _plain(value: object) -> object:
    """A numpy scalar as the Python value it holds (for messages: ``7``, not ``np.int64(7)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _class_index(classes: np.ndarray, predicted: ArrayLike, n: int) -> np.ndarray:
    """Each predicted label's position in ``classes``; an unseen label is a ``ValueError``."""
    p = np.asarray(predicted)
    if p.ndim != 1 or p.size != n:
        raise ValueError(
            f"predicted must be 1-D with one label per row of X ({n}); got shape {p.shape}"
        )
    try:
        idx = np.searchsorted(classes, p)
        found = (idx < classes.size) & (classes[np.minimum(idx, classes.size - 1)] == p)
    except TypeError:
        found = np.zeros(n, dtype=bool)
    if not found.all():
        first = np.flatnonzero(~found)[0]
        raise ValueError(
            f"predicted holds label(s) not seen in training, first {_plain(p[first])!r} at row "
            f"{first}; "
            f"training labels: {classes.tolist()[:10]}"
        )
    return idx


def _nearest_distance(
    index: NearestNeighbors, x: np.ndarray, k: int, *, desc: str, progress: bool | None
) -> np.ndarray:
    """Distance from each row of ``x`` to its ``k``-th nearest point of ``index``, chunked."""
    out = np.empty(x.shape[0])
    for start in progress_bar(
        range(0, x.shape[0], _CHUNK), desc=desc, unit="chunk", progress=progress
    ):
        stop = start + _CHUNK
        out[start:stop] = index.kneighbors(x[start:stop], n_neighbors=k)[0][:, -1]
    return out


@dataclass(frozen=True, eq=False)
class TrustScore:
    """A fitted trust score (:func:`fit_trust_score`): per class, the training points kept by
    the density filter, and one nearest-neighbour index per class."""

    classes_: np.ndarray
    kept_: tuple[np.ndarray, ...]
    alpha: float
    k: int
    min_dist: float
    indexes_: tuple[NearestNeighbors, ...] = field(repr=False)

    def class_distances(self, X: ArrayLike, *, progress: bool | None = None) -> np.ndarray:
        """``d(x, H_c)``, the distance from each row of ``X`` to the nearest kept training
        point of every class, ``(n, K)`` (columns in the order of ``classes_``)."""
        x = _check_features(X, "X", self.kept_[0].shape[1])
        return np.column_stack(
            [
                _nearest_distance(index, x, 1, desc=f"trust score, class {c}", progress=progress)
                for c, index in zip(self.classes_, self.indexes_, strict=True)
            ]
        )

    def score(
        self, X: ArrayLike, predicted: ArrayLike, *, progress: bool | None = None
    ) -> np.ndarray:
        """``min_{c != pred} d(x, H_c) / (d(x, H_pred) + min_dist)`` per row of ``X``,
        ``(n,)``, ``predicted`` the model's predicted labels (module docstring); higher = more
        reliable, 1 = as close to another class as to the predicted one."""
        d = self.class_distances(X, progress=progress)
        pred = _class_index(self.classes_, predicted, d.shape[0])
        rows = np.arange(d.shape[0])
        to_pred = d[rows, pred]
        d[rows, pred] = np.inf
        return d.min(axis=1) / (to_pred + self.min_dist)


def fit_trust_score(
    X_train: ArrayLike,
    y_train: ArrayLike,
    *,
    alpha: float = 0.0,
    k: int = 10,
    min_dist: float = 1e-12,
    progress: bool | None = None,
) -> TrustScore:
    """Fit the trust score of Jiang et al. (NeurIPS 2018) on training features and labels.

    Per class, the density filter (Algorithm 1) drops the training points whose k-NN radius
    (the distance to the ``k``-th nearest point of the class, the point itself included)
    exceeds the ``(1 - alpha)`` quantile of the class's radii; ``alpha`` in ``[0, 1)``
    (0, the default, keeps every point), ``k >= 1`` (default 10, the authors' default; used
    only when ``alpha > 0``, and then at most the smallest class's count). ``min_dist > 0``
    guards the ratio's denominator. Needs at least two classes. Returns a
    :class:`TrustScore`; score new predictions with ``.score(X, predicted)``.
    """
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0, high_open=True)
    k = check_int(k, "k", minimum=1)
    min_dist = check_real(min_dist, "min_dist", low=0.0, low_open=True)
    x = _check_features(X_train, "X_train")
    classes, y = _check_labels(y_train, x.shape[0])
    if classes.size < 2:
        raise ValueError(
            f"y_train must hold at least two classes for a trust score; got {classes.tolist()}"
        )
    counts = np.bincount(y, minlength=classes.size)
    if alpha > 0 and k > counts.min():
        small = int(np.argmin(counts))
        raise ValueError(
            f"k must be at most the smallest class's training count for the density filter; "
            f"got k = {k}, class {_plain(classes[small])!r} has {counts[small]} point(s)"
        )
    kept, indexes = [], []
    for c in progress_bar(range(classes.size), desc="trust score: fit", progress=progress):
        points = x[y == c]
        if alpha > 0:
            radii = _neighbors(k).fit(points).kneighbors(points)[0][:, -1]
            points = points[radii <= np.percentile(radii, 100.0 * (1.0 - alpha))]
        kept.append(points)
        indexes.append(_neighbors(1).fit(points))
    return TrustScore(classes, tuple(kept), alpha, k, min_dist, tuple(indexes))


@dataclass(frozen=True, eq=False)
class MahalanobisScore:
    """Fitted class-conditional Gaussians with a tied covariance (:func:`fit_mahalanobis`):
    ``means_`` ``(K, d)``, ``covariance_`` ``(d, d)``, and ``whitener_`` ``(d, r)`` with
    ``whitener_ @ whitener_.T`` the pseudo-inverse of the covariance (rank ``r``)."""

    classes_: np.ndarray
    means_: np.ndarray
    covariance_: np.ndarray
    whitener_: np.ndarray = field(repr=False)

    def squared_distances(self, X: ArrayLike) -> np.ndarray:
        """``(x - mu_c)^T S^+ (x - mu_c)`` for every row of ``X`` and every class, ``(n, K)``
        (columns in the order of ``classes_``)."""
        x = _check_features(X, "X", self.means_.shape[1])
        z = x @ self.whitener_
        centres = self.means_ @ self.whitener_
        return np.column_stack([np.square(z - mu).sum(axis=1) for mu in centres])

    def score(self, X: ArrayLike, predicted: ArrayLike | None = None) -> np.ndarray:
        """Minus the squared Mahalanobis distance, ``(n,)``, higher = more reliable: to the
        class in ``predicted`` (labels as in training), or with ``predicted=None`` to the
        closest class (Lee et al.'s ``M(x)``, eq. (2))."""
        d2 = self.squared_distances(X)
        if predicted is None:
            return -d2.min(axis=1)
        pred = _class_index(self.classes_, predicted, d2.shape[0])
        return -d2[np.arange(d2.shape[0]), pred]


def fit_mahalanobis(X_train: ArrayLike, y_train: ArrayLike) -> MahalanobisScore:
    """Fit Lee et al.'s (NeurIPS 2018, eq. (1)) class means and tied covariance,

        mu_c = mean of class c's rows,   S = (1 / N) sum_i (x_i - mu_{y_i})(x_i - mu_{y_i})^T,

    on training features ``X_train`` ``(N, d)`` and labels ``y_train``, and the
    pseudo-inverse's whitening map (eigenvalues below ``d eps`` times the largest dropped).
    Returns a :class:`MahalanobisScore`; score with ``.score(X, predicted)``.
    """
    x = _check_features(X_train, "X_train")
    classes, y = _check_labels(y_train, x.shape[0])
    counts = np.bincount(y, minlength=classes.size).astype(np.float64)
    means = np.zeros((classes.size, x.shape[1]))
    np.add.at(means, y, x)
    means /= counts[:, None]
    centred = x - means[y]
    cov = centred.T @ centred / x.shape[0]
    w, v = np.linalg.eigh(cov)
    keep = w > max(w.max(), 0.0) * x.shape[1] * np.finfo(np.float64).eps
    whitener = v[:, keep] / np.sqrt(w[keep])
    return MahalanobisScore(classes, means, cov, whitener)


@dataclass(frozen=True, eq=False)
class KNNDistance:
    """A fitted k-th nearest-neighbour distance (:func:`fit_knn_distance`): the (normalised)
    training vectors ``train_`` and their nearest-neighbour index."""

    k: int
    normalize: bool
    train_: np.ndarray = field(repr=False)
    index_: NearestNeighbors = field(repr=False)

    def score(self, X: ArrayLike, *, progress: bool | None = None) -> np.ndarray:
        """``-||z - z_(k)||_2`` per row of ``X``, ``(n,)``: minus the distance to the ``k``-th
        nearest training vector (both normalised when ``normalize``); higher = more reliable."""
        z = _prepare(_check_features(X, "X", self.train_.shape[1]), self.normalize, "X")
        return -_nearest_distance(self.index_, z, self.k, desc="k-NN distance", progress=progress)


def _prepare(x: np.ndarray, normalize: bool, name: str) -> np.ndarray:
    """``x / ||x||_2`` row-wise when ``normalize`` (a zero row is a ``ValueError``)."""
    if not normalize:
        return x
    norm = np.linalg.norm(x, axis=1)
    bad = np.flatnonzero(norm == 0)
    if bad.size:
        raise ValueError(
            f"{name} has {bad.size} all-zero row(s), first row {bad[0]}: it has no direction "
            f"to normalise (pass normalize=False)"
        )
    return x / norm[:, None]


def fit_knn_distance(X_train: ArrayLike, *, k: int = 50, normalize: bool = True) -> KNNDistance:
    """Fit the k-th nearest-neighbour distance of Sun et al. (ICML 2022) on training features
    ``X_train`` ``(N, d)`` (labels are not used): ``k`` in ``1..N`` (default 50, the paper's
    CIFAR-10 value), ``normalize`` (default ``True``, the paper's) puts every vector on the
    unit sphere first. Returns a :class:`KNNDistance`; score with ``.score(X)``."""
    if not isinstance(normalize, bool | np.bool_):
        raise TypeError(f"normalize must be True or False; got {normalize!r}")
    x = _check_features(X_train, "X_train")
    k = check_int(k, "k", minimum=1)
    if k > x.shape[0]:
        raise ValueError(
            f"k must be at most the number of training rows ({x.shape[0]}); got k = {k}"
        )
    z = _prepare(x, bool(normalize), "X_train")
    return KNNDistance(k, bool(normalize), z, _neighbors(k).fit(z))
