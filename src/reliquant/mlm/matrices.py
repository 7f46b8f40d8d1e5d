"""The Misclassification Likelihood Matrix (paper 004, Sections 3.3-3.4 and 4.2-4.5).

Pipeline, all on softmax outputs ``s in R^10`` (points of the probability simplex):

a. centroids (eq. 3): ``mu_c = mean of s over training images correctly classified as c``;
   then K-Means (scikit-learn, ``n_init=1``) started at ``mu_0..mu_9`` on those same softmax
   outputs refines them to ``mu_hat_c``; Table 1 is ``||mu_hat_c - mu_c||``;
b. distance (eq. 4): ``d(s, mu_hat_c) = ||s - mu_hat_c||_2``;
c. nearest distances (eqs. 5, 7): ``D[y, c] = min over x with true class y of d(f(x), mu_hat_c)``
   for ``c != y``; the diagonal is empty (NaN);
d. likelihood (eqs. 6, 8): ``L[y, c] = (1/D[y, c]) / sum_{c' != y} 1/D[y, c']``; the diagonal
   stays empty, every row sums to 1 over its off-diagonal entries;
e. across perturbation levels (eqs. 9-10): ``mean_p L^(p)`` and the population standard
   deviation ``sqrt(1/P sum_p (L^(p) - mean)^2)``.

Zero distances. ``1/D`` is infinite when an example's softmax coincides with another class's
centroid. We take the limit of eq. 6 as those distances go to zero together: the zero entries
share the row's mass equally and every other entry of the row gets 0 (a zero distance is
treated as certain confusion). No inf or NaN leaves :func:`likelihood_matrix`; a NaN or
negative off-diagonal distance raises ``ValueError``.

Since ``D`` is a minimum, the matrix of any union of example sets is the elementwise minimum of
the matrices of its parts (:func:`combine_min`); the workflow computes ``D`` once per
(corruption, level) cell and derives the whole-set, per-level and per-corruption matrices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
from sklearn.cluster import KMeans

N_CLASSES = 10
#: Softmax columns p0..p9 of the softmax tables.
P_COLUMNS = [f"p{c}" for c in range(N_CLASSES)]
#: Distance-to-centroid columns d0..d9.
D_COLUMNS = [f"d{c}" for c in range(N_CLASSES)]

#: One row per scored image: MNIST index (test_index for perturbed partitions), true label,
#: corruption ("none" for the unperturbed train/test splits), level (0 = clean), softmax, argmax.
SOFTMAX_SCHEMA = pa.schema(
    [
        pa.field("index", pa.int32(), nullable=False),
        pa.field("label", pa.uint8(), nullable=False),
        pa.field("corruption", pa.string(), nullable=False),
        pa.field("level", pa.uint8(), nullable=False),
        *[pa.field(c, pa.float32(), nullable=False) for c in P_COLUMNS],
        pa.field("prediction", pa.uint8(), nullable=False),
    ]
)

#: Long format of every distance/likelihood matrix (see :func:`matrices_long`).
MATRICES_SCHEMA = pa.schema(
    [
        pa.field("scope", pa.string(), nullable=False),
        pa.field("corruption", pa.string()),
        pa.field("level", pa.uint8()),
        pa.field("true", pa.uint8(), nullable=False),
        pa.field("predicted", pa.uint8(), nullable=False),
        pa.field("distance", pa.float64()),
        pa.field("likelihood", pa.float64(), nullable=False),
    ]
)


def _check_softmax(softmax: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
    s = np.asarray(softmax)
    if s.ndim != 2 or s.shape[1] != N_CLASSES:
        raise ValueError(f"softmax must have shape (n, {N_CLASSES}); got {s.shape}")
    if labels is not None:
        y = np.asarray(labels)
        if y.shape != (len(s),):
            raise ValueError(f"labels must have shape ({len(s)},); got {y.shape}")
        if len(y) and (y.min() < 0 or y.max() >= N_CLASSES):
            raise ValueError(f"labels must lie in 0..{N_CLASSES - 1}; got {y.min()}..{y.max()}")
    return s


def class_centroids(softmax: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Initial centroids ``mu_c`` (eq. 3): mean softmax of the examples correctly classified as c.

    "Correctly classified" means ``argmax(s) == label``. Returns float64 ``(10, 10)``, row c =
    ``mu_c``. Raises ``ValueError`` if some class has no correctly classified example.
    """
    s = _check_softmax(softmax, labels).astype(np.float64)
    y = np.asarray(labels).astype(np.int64)
    correct = s.argmax(1) == y
    out = np.empty((N_CLASSES, N_CLASSES))
    for c in range(N_CLASSES):
        members = s[correct & (y == c)]
        if len(members) == 0:
            raise ValueError(f"class {c} has no correctly classified example; no centroid (eq. 3)")
        out[c] = members.mean(0)
    return out


@dataclass
class KMeansResult:
    """Refined centroids ``mu_hat`` (10, 10), the cluster of each input row, iterations run."""

    centroids: np.ndarray
    assignments: np.ndarray
    n_iter: int


def refine_centroids(
    points: np.ndarray,
    init: np.ndarray,
    seed: int = 0,
    max_iter: int = 300,
    tol: float = 1e-4,
) -> KMeansResult:
    """K-Means (Lloyd, scikit-learn) started at ``init`` with ``n_init=1`` (Section 3.3 a).

    ``points`` are the softmax outputs of the correctly classified training images; ``init`` the
    class means of :func:`class_centroids`. Cluster k starts at ``init[k]``, so cluster k stays
    the cluster of class k. ``max_iter`` and ``tol`` are scikit-learn's (defaults 300, 1e-4,
    ``tol`` relative to the mean per-feature variance). ``seed`` only matters for ties.
    """
    pts = _check_softmax(points).astype(np.float64)
    init = np.asarray(init, dtype=np.float64)
    if init.shape != (N_CLASSES, N_CLASSES):
        raise ValueError(f"init must have shape ({N_CLASSES}, {N_CLASSES}); got {init.shape}")
    km = KMeans(
        n_clusters=N_CLASSES,
        init=init,
        n_init=1,
        max_iter=max_iter,
        tol=tol,
        algorithm="lloyd",
        random_state=seed % 2**32,  # scikit-learn takes a 32-bit seed
    )
    km.fit(pts)
    return KMeansResult(
        centroids=km.cluster_centers_.copy(),
        assignments=km.labels_.astype(np.int64),
        n_iter=int(km.n_iter_),
    )


def centroid_shift(initial: np.ndarray, refined: np.ndarray) -> np.ndarray:
    """Table 1: ``||mu_hat_c - mu_c||_2`` for each class c (float64, length 10)."""
    a, b = np.asarray(initial, dtype=np.float64), np.asarray(refined, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"centroid arrays differ in shape: {a.shape} vs {b.shape}")
    return np.sqrt(((b - a) ** 2).sum(1))


def distances_to_centroids(softmax: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """``d(s_i, mu_c) = ||s_i - mu_c||_2`` (eq. 4) for every row i and centroid c: float64 (n, 10).

    Computed from differences (not the ``|a|^2 + |b|^2 - 2ab`` expansion), so a softmax equal
    to a centroid gives exactly 0.
    """
    s = _check_softmax(softmax).astype(np.float64)
    mu = np.asarray(centroids, dtype=np.float64)
    if mu.shape != (N_CLASSES, N_CLASSES):
        raise ValueError(f"centroids must have shape ({N_CLASSES}, {N_CLASSES}); got {mu.shape}")
    out = np.empty((len(s), N_CLASSES))
    for c in range(N_CLASSES):
        diff = s - mu[c]
        out[:, c] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return out


def min_distance_matrix(
    softmax: np.ndarray, labels: np.ndarray, centroids: np.ndarray, chunk: int = 65536
) -> np.ndarray:
    """Nearest distances ``D[y, c] = min_{x in X_y} d(f(x), mu_c)``, ``c != y`` (eqs. 5, 7).

    Returns float64 (10, 10) with a NaN diagonal. A class with no example in ``labels`` has an
    all-``+inf`` row (the identity of ``min``), so that :func:`combine_min` over parts is exact;
    :func:`likelihood_matrix` refuses such rows. Works through ``chunk`` rows at a time.
    """
    s = _check_softmax(softmax, labels)
    y = np.asarray(labels).astype(np.int64)
    out = np.full((N_CLASSES, N_CLASSES), np.inf)
    for start in range(0, len(s), chunk):
        d = distances_to_centroids(s[start : start + chunk], centroids)
        yy = y[start : start + chunk]
        for cls in np.unique(yy):
            out[cls] = np.minimum(out[cls], d[yy == cls].min(0))
    np.fill_diagonal(out, np.nan)
    return out


def combine_min(matrices: list[np.ndarray] | np.ndarray) -> np.ndarray:
    """``D`` of a union of example sets: elementwise minimum of the parts' ``D`` (NaN diagonal)."""
    stack = np.asarray(matrices, dtype=np.float64)
    if stack.ndim != 3 or stack.shape[1:] != (N_CLASSES, N_CLASSES) or len(stack) == 0:
        raise ValueError(f"need a non-empty stack of (10, 10) matrices; got shape {stack.shape}")
    off = ~np.eye(N_CLASSES, dtype=bool)
    out = np.full((N_CLASSES, N_CLASSES), np.nan)
    out[off] = stack[:, off].min(0)
    return out


def likelihood_matrix(distances: np.ndarray) -> np.ndarray:
    """Misclassification Likelihood Matrix (eqs. 6, 8): row-normalised reciprocal distances.

    ``L[y, c] = (1/D[y, c]) / sum_{c' != y} 1/D[y, c']`` for ``c != y``; the diagonal is NaN
    (empty). Zero distances: the zero entries of a row share its mass equally, the others get
    0 (limit of eq. 6). Raises ``ValueError`` for NaN, negative or infinite off-diagonal
    distances (an infinite row means the class had no example).
    """
    d = np.asarray(distances, dtype=np.float64)
    if d.shape != (N_CLASSES, N_CLASSES):
        raise ValueError(f"distances must have shape ({N_CLASSES}, {N_CLASSES}); got {d.shape}")
    off = ~np.eye(N_CLASSES, dtype=bool)
    vals = d[off].reshape(N_CLASSES, N_CLASSES - 1)
    if np.isnan(vals).any() or (vals < 0).any() or np.isinf(vals).any():
        bad = sorted({int(r) for r in np.argwhere(~np.isfinite(vals) | (vals < 0))[:, 0]})
        raise ValueError(
            f"off-diagonal distances must be finite and >= 0; rows {bad} are not "
            "(an infinite row means no example of that class)"
        )
    zero = vals == 0
    with np.errstate(divide="ignore"):
        w = np.where(zero.any(1, keepdims=True), zero.astype(np.float64), 1.0 / vals)
    w /= w.sum(1, keepdims=True)
    out = np.full((N_CLASSES, N_CLASSES), np.nan)
    out[off] = w.reshape(-1)
    return out


def level_mean_std(matrices: list[np.ndarray] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (eq. 9) and population standard deviation (eq. 10, divisor P) over levels.

    ``matrices`` is a stack ``(P, 10, 10)`` of ``L^(p)``; the diagonal stays NaN.
    """
    stack = np.asarray(matrices, dtype=np.float64)
    if stack.ndim != 3 or stack.shape[1:] != (N_CLASSES, N_CLASSES) or len(stack) == 0:
        raise ValueError(f"need a non-empty stack of (10, 10) matrices; got shape {stack.shape}")
    off = ~np.eye(N_CLASSES, dtype=bool)
    mean = np.full((N_CLASSES, N_CLASSES), np.nan)
    std = np.full((N_CLASSES, N_CLASSES), np.nan)
    mean[off] = stack[:, off].mean(0)
    std[off] = np.sqrt(((stack[:, off] - mean[off]) ** 2).mean(0))
    return mean, std


def misclustered(labels: np.ndarray, assignments: np.ndarray) -> np.ndarray:
    """Positions of the points whose K-Means cluster differs from their class (Section 4.3)."""
    y, a = np.asarray(labels).astype(np.int64), np.asarray(assignments).astype(np.int64)
    if y.shape != a.shape:
        raise ValueError(f"labels and assignments differ in shape: {y.shape} vs {a.shape}")
    return np.flatnonzero(y != a)


def confusion_matrix(labels: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """Counts ``C[y, c]`` of true class y predicted as c (Figure 1), int64 (10, 10)."""
    y, p = np.asarray(labels).astype(np.int64), np.asarray(predictions).astype(np.int64)
    if y.shape != p.shape:
        raise ValueError(f"labels and predictions differ in shape: {y.shape} vs {p.shape}")
    return np.bincount(y * N_CLASSES + p, minlength=N_CLASSES * N_CLASSES).reshape(
        N_CLASSES, N_CLASSES
    )


def accuracy_by_group(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Accuracy ``mean(prediction == label)`` and count per group of ``keys`` (Figures 5, 7).

    ``frame`` needs ``label`` and ``prediction`` columns and the ``keys``; the result has the
    keys, ``n`` and ``accuracy``, sorted by the keys.
    """
    missing = [k for k in ["label", "prediction", *keys] if k not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks columns {missing}; has {list(frame.columns)}")
    hit = (frame["label"].to_numpy() == frame["prediction"].to_numpy()).astype(np.float64)
    g = pd.DataFrame({k: frame[k].to_numpy() for k in keys}).assign(hit=hit)
    out = g.groupby(keys, sort=True).agg(n=("hit", "size"), accuracy=("hit", "mean")).reset_index()
    return out


#: Schema of :func:`accuracy_paper_comparison` tables.
COMPARISON_SCHEMA = pa.schema(
    [("quantity", pa.string()), ("ours", pa.float64()), ("paper", pa.float64())]
)


def accuracy_paper_comparison(
    accuracy: pd.DataFrame,
    train_accuracy: float,
    test_accuracy: float,
    paper: Mapping[str, float],
    clean_partition: str,
) -> pd.DataFrame:
    """Our accuracies beside the numbers of paper 004 (Sections 4.1 and 4.4).

    ``accuracy`` is :func:`accuracy_by_group` over ``corruption, level``; ``paper`` is the
    config's ``mlm.paper_reference``. Returns columns ``quantity, ours, paper`` (NaN where the
    paper states nothing); level means average the corruptions at the lowest and highest level.
    """
    nan = float("nan")
    pert = accuracy[accuracy["corruption"] != clean_partition]
    clean = accuracy.loc[accuracy["corruption"] == clean_partition, "accuracy"]
    by_level = pert.groupby("level")["accuracy"].mean()
    levels = sorted(pert["level"].unique())
    lo, hi = levels[0], levels[-1]
    bright = pert[pert["corruption"] == "brightness"].set_index("level")["accuracy"]
    rows = [
        ("CNN train accuracy (last epoch)", train_accuracy, paper["train_accuracy"]),
        ("CNN test accuracy", test_accuracy, paper["test_accuracy"]),
        ("clean partition accuracy", clean.iloc[0] if len(clean) else nan, nan),
        (f"mean accuracy at level {lo}", by_level[lo], paper["level1_mean_accuracy"]),
        (f"mean accuracy at level {hi}", by_level[hi], paper["level10_mean_accuracy"]),
        (
            "maximum over corruption x level",
            pert["accuracy"].max(),
            paper["perturbed_max_accuracy"],
        ),
        (
            "minimum over corruption x level",
            pert["accuracy"].min(),
            paper["perturbed_min_accuracy"],
        ),
        (f"brightness, level {lo}", bright.get(lo, nan), paper["brightness_level1_accuracy"]),
        (f"brightness, level {hi}", bright.get(hi, nan), paper["brightness_level10_accuracy"]),
    ]
    frame = pd.DataFrame(rows, columns=["quantity", "ours", "paper"])
    return frame.astype({"ours": np.float64, "paper": np.float64})


def matrix_to_long(matrix: np.ndarray, value: str) -> pd.DataFrame:
    """A (10, 10) matrix as rows ``true, predicted, <value>`` (diagonal dropped)."""
    m = np.asarray(matrix, dtype=np.float64)
    t, p = np.nonzero(~np.eye(N_CLASSES, dtype=bool))
    return pd.DataFrame(
        {"true": t.astype(np.uint8), "predicted": p.astype(np.uint8), value: m[t, p]}
    )


def softmax_frame(
    index: np.ndarray,
    labels: np.ndarray,
    corruption: np.ndarray | str,
    level: np.ndarray | int,
    softmax: np.ndarray,
) -> pd.DataFrame:
    """Rows of :data:`SOFTMAX_SCHEMA`; ``prediction = argmax(softmax)`` (ties: lowest class)."""
    s = _check_softmax(softmax, labels).astype(np.float32, copy=False)
    n = len(s)
    frame = pd.DataFrame(
        {
            "index": np.asarray(index, dtype=np.int32),
            "label": np.asarray(labels, dtype=np.uint8),
            "corruption": np.broadcast_to(np.asarray(corruption, dtype=object), (n,)),
            "level": np.broadcast_to(np.asarray(level, dtype=np.uint8), (n,)),
        }
    )
    for c in range(N_CLASSES):
        frame[P_COLUMNS[c]] = s[:, c]
    frame["prediction"] = s.argmax(1).astype(np.uint8)
    return frame


def cell_distance_matrices(
    softmax: np.ndarray,
    labels: np.ndarray,
    corruption: np.ndarray,
    level: np.ndarray,
    centroids: np.ndarray,
) -> dict[tuple[str, int], np.ndarray]:
    """``D`` (eq. 5/7) for every (corruption, level) cell present, keyed by ``(name, level)``."""
    s = _check_softmax(softmax, labels)
    corruption, level = np.asarray(corruption), np.asarray(level).astype(np.int64)
    if corruption.shape != (len(s),) or level.shape != (len(s),):
        raise ValueError("corruption and level must have one entry per softmax row")
    out: dict[tuple[str, int], np.ndarray] = {}
    keys = pd.DataFrame({"c": corruption, "l": level})
    for (name, lev), rows in keys.groupby(["c", "l"], sort=True).indices.items():
        out[(str(name), int(lev))] = min_distance_matrix(
            s[rows], np.asarray(labels)[rows], centroids
        )
    return out


def matrices_long(
    cells: dict[tuple[str, int], np.ndarray],
    clean: str = "clean",
    overall_includes_clean: bool = False,
) -> pd.DataFrame:
    """Every MLM of Sections 3.3-3.4 from per-cell ``D`` matrices, in long format.

    Scopes (``D`` of a union = elementwise min of the cells' ``D``, :func:`combine_min`):

    - ``overall``: all corrupted cells (Figure 2; plus the clean cells if
      ``overall_includes_clean``);
    - ``clean``: the cells of corruption ``clean`` (the unperturbed test set);
    - ``level``: for each level p >= 1, all corruptions at that level (eqs. 7-8, ``L^(p)``);
    - ``corruption``: for each corruption, all its levels;
    - ``mean`` / ``std``: eqs. 9-10 across the per-level ``L^(p)`` (``distance`` is null).

    Columns follow :data:`MATRICES_SCHEMA`; ``corruption``/``level`` are null where the scope
    spans several. Raises ``ValueError`` if a scope lacks a class (through
    :func:`likelihood_matrix`).
    """
    if not cells:
        raise ValueError("no (corruption, level) cells given")
    corrupted = {k: v for k, v in cells.items() if k[0] != clean}
    clean_cells = {k: v for k, v in cells.items() if k[0] == clean}
    if not corrupted:
        raise ValueError(f"no corrupted cells: every cell is the clean partition {clean!r}")
    parts: list[pd.DataFrame] = []

    def add(scope: str, corr: str | None, lev: int | None, d: np.ndarray | None, lk: np.ndarray):
        frame = matrix_to_long(lk, "likelihood")
        frame["distance"] = np.nan if d is None else matrix_to_long(d, "distance")["distance"]
        frame.insert(0, "scope", scope)
        frame.insert(1, "corruption", corr)
        frame.insert(2, "level", pd.array([lev] * len(frame), dtype="UInt8"))
        parts.append(frame)

    overall = list(corrupted.values()) + (
        list(clean_cells.values()) if overall_includes_clean else []
    )
    d = combine_min(overall)
    add("overall", None, None, d, likelihood_matrix(d))
    if clean_cells:
        d = combine_min(list(clean_cells.values()))
        add("clean", clean, None, d, likelihood_matrix(d))
    levels = sorted({lev for _, lev in corrupted})
    per_level = []
    for lev in levels:
        d = combine_min([v for (c, lv), v in corrupted.items() if lv == lev])
        lk = likelihood_matrix(d)
        per_level.append(lk)
        add("level", None, lev, d, lk)
    for name in sorted({c for c, _ in corrupted}):
        d = combine_min([v for (c, _), v in corrupted.items() if c == name])
        add("corruption", name, None, d, likelihood_matrix(d))
    mean, std = level_mean_std(per_level)
    add("mean", None, None, None, mean)
    add("std", None, None, None, std)
    out = pd.concat(parts, ignore_index=True)
    return out[[f.name for f in MATRICES_SCHEMA]]


def long_to_matrix(frame: pd.DataFrame, value: str = "likelihood") -> np.ndarray:
    """Inverse of :func:`matrix_to_long` for one scope: (10, 10) with a NaN diagonal."""
    out = np.full((N_CLASSES, N_CLASSES), np.nan)
    out[frame["true"].to_numpy(int), frame["predicted"].to_numpy(int)] = frame[value].to_numpy(
        float
    )
    return out


def choose_examples(available: np.ndarray, preferred: list[int], k: int | None = None) -> list[int]:
    """Figures 3-4: the ``preferred`` indices that are ``available`` (misclustered), in order,
    topped up with the lowest other available indices until there are ``k`` (default
    ``len(preferred)``)."""
    avail = sorted({int(a) for a in np.asarray(available).ravel()})
    k = len(preferred) if k is None else k
    chosen = [int(p) for p in preferred if int(p) in set(avail)][:k]
    chosen += [a for a in avail if a not in chosen][: k - len(chosen)]
    return chosen
