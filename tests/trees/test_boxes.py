"""The papers' grid method against brute force and the 99 % bound; its compiled enumeration
(reliquant.trees.grid_kernel) against the numpy implementation it replaced, bit for bit."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import load_iris, make_classification
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal
from reliquant.trees.boxes import grid_counts, grid_intervals, grid_robustness
from reliquant.trees.grid_kernel import chunk_scores, grid_tables, labelled_masses
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.structure import LGBM_ZERO, Tree, TreeEnsemble, label_from_scores


def brute_force(ens, noise, mu):
    """Independent re-implementation: all boxes via itertools, label = model at a point
    strictly inside (the lower-edge + tiny), mass from scipy-free products."""
    y = ens.predict(mu[None])[0]
    th = ens.thresholds()
    edges = [np.concatenate([[-np.inf], t, [np.inf]]) for t in th]
    total = 0.0
    for idx in itertools.product(*[range(len(e) - 1) for e in edges]):
        lo = np.array([edges[i][j] for i, j in enumerate(idx)])
        hi = np.array([edges[i][j + 1] for i, j in enumerate(idx)])
        pt = np.where(np.isfinite(hi), hi, np.where(np.isfinite(lo), lo + 1.0, 0.0))
        if ens.predict(pt[None])[0] == y:  # hi is inside the box (lo < x <= hi)
            total += float(noise.box_mass(lo[None], hi[None])[0])
    return total


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.mark.slow
def test_grid_equals_brute_force_decision_tree(iris):
    X, y = iris
    ens = extract_ensemble(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y))
    for mu in X[::37]:
        noise = IndependentNormal.from_variance(mu, 0.1)
        g = grid_robustness(ens, noise, mu)
        assert g.robustness == pytest.approx(brute_force(ens, noise, mu), abs=1e-12)
        assert g.n_boxes == ens.n_grid_boxes()


def test_grid_counts_are_the_kept_intervals(iris):
    """grid_counts counts grid_intervals' kept intervals per feature (all, 99 %, wide and
    narrow noise, a fixed feature), and a brute-force count of the boxes meeting the
    bounding box."""
    X, y = iris
    ens = extract_ensemble(
        RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    )
    for mu in X[::29]:
        for noise in (
            IndependentNormal.from_variance(mu, 0.1),
            IndependentNormal.from_variance(mu, 4.0),
            IndependentNormal(mu, np.array([0.3, 0.0, 0.05, 1.0])),
        ):
            for prune in (None, 0.99, 0.5):
                ivs = grid_intervals(ens, noise, mu, prune)
                counts = grid_counts(ens, noise, mu, prune)
                assert counts == [len(lo) for lo, _, _ in ivs]
                if prune is not None:
                    blo, bhi = noise.bounding_box(prune, "ellipsoid")
                    for i, t in enumerate(ens.thresholds()):
                        e = [-np.inf, *t.tolist(), np.inf]
                        n = sum(e[j] < bhi[i] and e[j + 1] > blo[i] for j in range(len(e) - 1))
                        assert counts[i] == n


def test_grid_equals_brute_force_small_forest_and_xgb(iris):
    X, y = iris
    models = [
        RandomForestClassifier(3, max_depth=2, random_state=1).fit(X, y),
        xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y),
    ]
    for model in models:
        ens = extract_ensemble(model)
        for mu in X[[5, 70, 140]]:
            noise = IndependentNormal.from_variance(mu, 0.2)
            g = grid_robustness(ens, noise, mu)
            assert g.robustness == pytest.approx(brute_force(ens, noise, mu), abs=1e-12)


def test_pruned_grid_within_one_point(iris):
    X, y = iris
    ens = extract_ensemble(RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, y))
    for mu in X[::15]:
        noise = IndependentNormal.from_variance(mu, 0.1)
        full = grid_robustness(ens, noise, mu)
        p = grid_robustness(ens, noise, mu, prune=0.99)
        assert p.n_boxes <= full.n_boxes
        # kept boxes contribute their full mass: pruned <= full <= pruned + 1 %
        assert p.robustness <= full.robustness + 1e-15
        assert full.robustness - p.robustness <= 0.01


def test_max_boxes_guard(iris):
    X, y = iris
    ens = extract_ensemble(RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, y))
    with pytest.raises(ValueError, match="max_boxes"):
        grid_robustness(ens, IndependentNormal(X[0], 0.1), X[0], max_boxes=10)


# --------------------------------------------------------------------------------------
# the compiled enumeration, bit for bit
# --------------------------------------------------------------------------------------
def numpy_grid(ens, noise, mu, prune=None, chunk=262_144):
    """The numpy implementation the kernel replaced (independent noise), kept as the
    reference: ``(robustness, n_boxes, n_boxes_label)``."""
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    y = int(ens.predict_index(mu)[0])
    ivs = grid_intervals(ens, noise, mu, prune)
    counts = [len(lo) for lo, _, _ in ivs]
    n_boxes = math.prod(counts)
    cols = np.array([i for i, c in enumerate(counts) if c > 1], dtype=np.int64)
    const_cols = np.array([i for i, c in enumerate(counts) if c == 1], dtype=np.int64)
    base_point = np.array([ivs[i][2][0] for i in range(len(ivs))])
    pm = [
        noise.interval_mass(np.array([i]), ivs[i][0][:, None], ivs[i][1][:, None])[:, 0]
        for i in range(len(ivs))
    ]
    const = float(np.prod([pm[i][0] for i in const_cols])) if len(const_cols) else 1.0
    radix = np.array([counts[i] for i in cols], dtype=np.int64)
    total, n_label = 0.0, 0
    for start in range(0, n_boxes, chunk):
        k = np.arange(start, min(n_boxes, start + chunk), dtype=np.int64)
        idx = np.empty((len(k), len(cols)), dtype=np.int64)
        rem = k.copy()
        for j in range(len(cols) - 1, -1, -1):
            idx[:, j] = rem % radix[j]
            rem //= radix[j]
        pts = np.tile(base_point, (len(k), 1))
        for j, i in enumerate(cols):
            pts[:, i] = ivs[i][2][idx[:, j]]
        same = ens.predict_index(pts) == y
        n_label += int(same.sum())
        if not same.any():
            continue
        sel = idx[same]
        m = np.full(len(sel), const)
        for j, i in enumerate(cols):
            m *= pm[i][sel[:, j]]
        total += float(m.sum())
    return total, n_boxes, n_label


def product_grid(ens, noise, mu, prune=None, chunk=262_144):
    """Brute force by itertools.product (last feature fastest, the grid's box order): each
    box's label by ``predict_index`` of its centre, one row at a time, and its mass as the
    product of its features' interval masses (one-interval features first), summed per
    chunk of ``chunk`` boxes. ``(robustness, n_boxes, n_boxes_label)``."""
    mu = np.asarray(mu, dtype=np.float64)
    y = int(ens.predict_index(mu)[0])
    ivs = grid_intervals(ens, noise, mu, prune)
    pm = [noise.interval_mass(np.array([i]), lo[:, None], hi[:, None])[:, 0] for i, (lo, hi, _)
          in enumerate(ivs)]  # fmt: skip
    one = [i for i, (lo, _, _) in enumerate(ivs) if len(lo) == 1]
    many = [i for i, (lo, _, _) in enumerate(ivs) if len(lo) > 1]
    const = float(np.prod([pm[i][0] for i in one])) if one else 1.0
    masses, n_boxes, n_label, total = [], 0, 0, 0.0
    for idx in itertools.product(*[range(len(ivs[i][0])) for i in many]):
        pt = np.array([c[0] for _, _, c in ivs])
        m = const
        for i, j in zip(many, idx, strict=True):
            pt[i] = ivs[i][2][j]
            m *= pm[i][j]
        if int(ens.predict_index(pt[None])[0]) == y:
            masses.append(m)
            n_label += 1
        n_boxes += 1
        if n_boxes % chunk == 0 and masses:
            total += float(np.array(masses).sum())
            masses = []
    if masses:
        total += float(np.array(masses).sum())
    return total, n_boxes, n_label


def random_tree(rng, d, depth, n_out, thresholds):
    """A random binary tree of at most ``depth`` levels on ``d`` features, splits drawn from
    ``thresholds`` (shared, so that trees cut at the same places), leaf rows from a coarse
    set of values (many exact ties)."""
    feat, thr, left, right, value = [], [], [], [], []

    def grow(level):
        node = len(feat)
        for lst, v in ((feat, -1), (thr, np.nan), (left, -1), (right, -1)):
            lst.append(v)
        value.append(rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, -0.5], size=n_out))
        if level < depth and rng.random() < 0.8:
            feat[node] = int(rng.integers(d))
            thr[node] = float(rng.choice(thresholds))
            left[node] = grow(level + 1)
            right[node] = grow(level + 1)
        return node

    grow(0)
    return Tree(np.array(feat, dtype=np.int32), np.array(thr), np.array(left, dtype=np.int32),
                np.array(right, dtype=np.int32), np.array(value))  # fmt: skip


KINDS = [  # (aggregation, link, binary)
    ("mean_proba", "argmax", False),
    ("margin", "argmax", False),
    ("margin", "softmax32", False),
    ("margin", "sigmoid32", True),
    ("margin64", "ge0", True),
    ("margin64", "argmax", False),
    ("margin64", "sigmoid64", True),
    ("margin64", "softmax64", False),
]


def random_ensemble(rng, rule, aggregation, link, binary):
    d = int(rng.integers(2, 5))
    n_classes = 2 if binary else int(rng.integers(2, 5))
    # raw thresholds near float32 rounding points and LightGBM's zero threshold
    thresholds = np.concatenate([
        np.round(rng.normal(size=6), 2), [0.1, 1e-36, -1e-36, 0.0, float(np.float32(0.3))]
    ])  # fmt: skip
    n_trees = int(rng.integers(1, 5))
    if aggregation == "mean_proba":
        trees = tuple(random_tree(rng, d, 3, n_classes, thresholds) for _ in range(n_trees))
        tree_class = np.full(n_trees, -1)
        base = np.zeros(n_classes)
    else:
        trees = tuple(random_tree(rng, d, 3, 1, thresholds) for _ in range(n_trees))
        tree_class = (np.ones(n_trees, dtype=np.int64) if binary
                      else rng.integers(n_classes, size=n_trees))  # fmt: skip
        base = rng.choice([0.0, 0.5, -0.25], size=n_classes)
    ens = TreeEnsemble(trees, d, n_classes, rule, aggregation, np.arange(n_classes), tree_class,
                       base, link=link)  # fmt: skip
    return ens, thresholds


def random_case(rng, ens, thresholds):
    """A sample on, near or between thresholds; some features without noise (point masses)."""
    mu = rng.choice(thresholds, size=ens.n_features) + rng.choice(
        [0.0, 0.0, 1e-9, -1e-9, 0.01], size=ens.n_features
    )
    sigma = rng.choice([0.0, 0.05, 0.3, 1.0], size=ens.n_features)
    return mu, IndependentNormal(mu, sigma)


@pytest.mark.parametrize("rule", ["le32", "lt32", "le64", "le64z"])
@pytest.mark.parametrize("kind", KINDS, ids=["-".join(k[:2]) for k in KINDS])
def test_kernel_equals_numpy_and_brute_force_on_random_ensembles(rule, kind):
    rng = np.random.default_rng([7, len(rule), KINDS.index(kind)])
    checked = 0
    for _ in range(12):
        ens, thresholds = random_ensemble(rng, rule, *kind)
        for _ in range(2):
            mu, noise = random_case(rng, ens, thresholds)
            for prune in (None, 0.5, 0.99):
                chunk = int(rng.choice([1, 3, 7, 64, 262_144]))
                g = grid_robustness(ens, noise, mu, prune=prune, chunk=chunk)
                ref = numpy_grid(ens, noise, mu, prune, chunk)
                assert (g.robustness, g.n_boxes, g.n_boxes_label) == ref
                if prune is None and g.n_boxes <= 100:
                    assert product_grid(ens, noise, mu, prune, chunk) == ref
                checked += 1
    assert checked == 72


def adversarial_coordinates(rng, ens, k=4):
    """Per feature, ``k`` coordinates where the libraries' rules differ: the raw thresholds,
    their float32 roundings, the float64 neighbours of both, LightGBM's zero band, +-0."""
    out = []
    for f in range(ens.n_features):
        raw = np.concatenate([t.threshold[t.feature == f] for t in ens.trees] + [[0.3]])
        t32 = raw.astype(np.float32).astype(np.float64)
        cand = np.concatenate([
            raw, t32, np.nextafter(raw, np.inf), np.nextafter(raw, -np.inf),
            np.nextafter(t32, np.inf), np.nextafter(t32, -np.inf),
            [LGBM_ZERO, -LGBM_ZERO, 2e-35, 0.0, -0.0],
        ])  # fmt: skip
        out.append(rng.choice(cand, size=k, replace=False))
    return out


def test_kernel_scores_and_labels_equal_predict_box_by_box():
    """Per box, the kernel's scores equal ``TreeEnsemble.scores`` at the box's point (float32
    and float64), also at points on, next to, or at float32 of a threshold, and the masses
    it keeps are those of the boxes ``predict_index`` gives the label, in box order."""
    rng = np.random.default_rng(3)
    for rule in ("le32", "lt32", "le64", "le64z"):
        for kind in KINDS * 2:
            ens, thresholds = random_ensemble(rng, rule, *kind)
            centres = adversarial_coordinates(rng, ens)
            counts = [len(c) for c in centres]
            cols = np.arange(ens.n_features)
            pm = [rng.random(c) for c in counts]
            g = grid_tables(ens, centres, pm, cols, 0.5)
            n = math.prod(counts)
            pts = np.array([[c[j] for c, j in zip(centres, idx, strict=True)]
                            for idx in itertools.product(*[range(c) for c in counts])])  # fmt: skip
            scores = chunk_scores(g, 0, n)
            ref = ens.scores(pts)
            assert scores.dtype == ref.dtype
            np.testing.assert_array_equal(scores, ref)
            labels = label_from_scores(scores, ens.link, ens.link_scale)
            np.testing.assert_array_equal(labels, ens.predict_index(pts))
            if g.link < 0:
                continue
            mass = []
            for idx in itertools.product(*[range(c) for c in counts]):
                m = 0.5  # the kernel's order: const first, then the cols left to right
                for i in cols:
                    m *= pm[i][idx[i]]
                mass.append(m)
            mass = np.array(mass)
            for y in range(ens.n_classes):
                buf = np.empty(n)
                k = labelled_masses(g, 0, n, y, buf)
                np.testing.assert_array_equal(buf[:k], mass[labels == y])


def test_kernel_ties_and_nan_scores():
    """Exact ties (first class wins, also after the division by the number of trees) decide
    as predict_index does; a NaN leaf value (the only way to a NaN score) is refused when the
    ensemble is built (reliquant.trees.tree_checks), naming the tree and the leaf."""
    stump = Tree(np.array([0, -1, -1], dtype=np.int32), np.array([0.5, np.nan, np.nan]),
                 np.array([1, -1, -1], dtype=np.int32), np.array([2, -1, -1], dtype=np.int32),
                 np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))  # fmt: skip

    def other(v: float) -> Tree:
        return Tree(np.array([1, -1, -1], dtype=np.int32), np.array([0.0, np.nan, np.nan]),
                    np.array([1, -1, -1], dtype=np.int32), np.array([2, -1, -1], dtype=np.int32),
                    np.array([[0.0, 0.0, 0.0], [0.0, 1.0, v], [1.0 / 3, 0.1, 0.2]]))  # fmt: skip

    with pytest.raises(ValueError, match=r"tree 1, node 1: its leaf values are not all finite"):
        TreeEnsemble((stump, other(np.nan), stump), 2, 3, "le32", "mean_proba", np.arange(3),
                     np.full(3, -1), np.zeros(3))  # fmt: skip
    ens = TreeEnsemble((stump, other(1.0), stump), 2, 3, "le32", "mean_proba", np.arange(3),
                       np.full(3, -1), np.zeros(3))  # fmt: skip
    for mu in ([0.0, 1.0], [1.0, 1.0], [0.0, -1.0], [1.0, -1.0], [0.5, 0.0]):
        mu = np.array(mu)
        noise = IndependentNormal(mu, 1.0)
        for chunk in (1, 2, 262_144):
            g = grid_robustness(ens, noise, mu, chunk=chunk)
            assert (g.robustness, g.n_boxes, g.n_boxes_label) == numpy_grid(
                ens, noise, mu, chunk=chunk
            )
            assert (g.robustness, g.n_boxes, g.n_boxes_label) == product_grid(
                ens, noise, mu, chunk=chunk
            )


LIBRARY_MODELS = [  # n_classes -> an unfitted classifier
    lambda k: DecisionTreeClassifier(max_depth=4, random_state=0),
    lambda k: RandomForestClassifier(4, max_depth=3, random_state=0),
    lambda k: xgb.XGBClassifier(n_estimators=3, max_depth=2, random_state=0),
    lambda k: xgb.XGBClassifier(
        n_estimators=3, max_depth=2, objective="multi:softmax", num_class=k
    ),  # fmt: skip
    lambda k: GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0),
    lambda k: HistGradientBoostingClassifier(max_iter=3, max_depth=2, random_state=0),
    lambda k: __import__("lightgbm").LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1),
]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("make", LIBRARY_MODELS,
                         ids=["dt", "rf", "xgb", "xgb-softmax", "gb", "hgb", "lgbm"])  # fmt: skip
def test_kernel_equals_numpy_on_fitted_models(make, n_classes):
    X, y = make_classification(300, 3, n_informative=3, n_redundant=0, n_classes=n_classes,
                               random_state=n_classes)  # fmt: skip
    ens = extract_ensemble(make(n_classes).fit(X, y))
    for mu in X[:4]:
        for prune in (None, 0.9, 0.99):
            noise = IndependentNormal.from_variance(mu, 0.3)
            g = grid_robustness(ens, noise, mu, prune=prune, chunk=50)
            assert (g.robustness, g.n_boxes, g.n_boxes_label) == numpy_grid(
                ens, noise, mu, prune, chunk=50
            )


def test_correlated_noise_keeps_the_numpy_path(iris):
    """Noise that does not factorise goes box by box through ``box_mass_with_error`` (numpy);
    with a diagonal covariance it agrees with the compiled independent path."""
    X, y = iris
    ens = extract_ensemble(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y))
    mu = X[60]
    ind = grid_robustness(ens, IndependentNormal(mu, 0.3), mu, chunk=5)
    cor = grid_robustness(ens, CorrelatedNormal(mu, np.diag(np.full(4, 0.09))), mu, chunk=5)
    assert (cor.n_boxes, cor.n_boxes_label) == (ind.n_boxes, ind.n_boxes_label)
    assert cor.robustness == pytest.approx(ind.robustness, abs=1e-4)
    assert cor.mass_error > 0 and ind.mass_error == 0
