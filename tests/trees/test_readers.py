"""The readers (reliquant.trees.readers): the entry point, and LightGBM and scikit-learn
gradient boosting read into a TreeEnsemble.

The entry point: every library goes to its reader, unsupported models are refused naming
what is supported, model files load into models that read the same.

For each model kind, binary and 3-class: ``predict`` equals the library's and the raw scores
equal its raw output bit for bit, at and next to every split threshold; the compiled
kernel's evaluator (fast and exact path) agrees; the exact engine agrees with the grid and
with Monte Carlo on the model's own ``predict``; ``robustness`` takes the model directly;
near-ties follow the library's link; unsupported models are refused with a clear error.
"""

from __future__ import annotations

import re

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from reliquant.trees import kernel
from reliquant.trees.anytime import robustness, warm_up
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.boxes import grid_robustness
from reliquant.trees.engine import exact_robustness
from reliquant.trees.monte_carlo import monte_carlo_robustness
from reliquant.trees.noise import Gaussian
from reliquant.trees.plan import build_plan
from reliquant.trees.readers import (
    READERS,
    SUPPORTED,
    extract_ensemble,
    load_model,
    sklearn_boosting,
    sklearn_trees,
)
from reliquant.trees.readers.checks import probe_inputs, verify_scores
from reliquant.trees.readers.xgboost_models import parse_base_score
from reliquant.trees.structure import LGBM_ZERO, effective_boundary

SCALES = np.array([1e-3, 1.0, 1e3, 0.1])


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    X = X * SCALES
    X[::4, 1] = 0.0  # exact zeros: LightGBM then cuts at +-1e-35
    return X, y


KINDS = {
    "lgbm": lambda n, depth: lgb.LGBMClassifier(
        n_estimators=n, max_depth=depth, num_leaves=2**depth, min_child_samples=5,
        verbose=-1, random_state=0, n_jobs=1,
    ),
    "hgb": lambda n, depth: HistGradientBoostingClassifier(
        max_iter=n, max_depth=depth, early_stopping=False, random_state=0
    ),
    "gb": lambda n, depth: GradientBoostingClassifier(
        n_estimators=n, max_depth=depth, random_state=0
    ),
}  # fmt: skip
CASES = [(kind, classes) for kind in KINDS for classes in ("binary", "3-class")]
IDS = [f"{kind}-{classes}" for kind, classes in CASES]


def _fit(kind, classes, data, n=12, depth=3):
    X, y = data
    labels = np.array(["no", "yes"])[(y == 1).astype(int)] if classes == "binary" else 10 * y + 10
    return KINDS[kind](n, depth).fit(X, labels)


def _their_raw(model, Z):
    if isinstance(model, lgb.LGBMClassifier):
        raw = model.predict(Z, raw_score=True)
    else:
        raw = model.decision_function(Z)
    return np.asarray(raw).reshape(len(Z), -1)


def _our_raw(ens, Z):
    s = ens.scores(Z)
    return s[:, 1:] if ens.n_classes == 2 else s


def _node_boxes(tree, d):
    """Per node, the box ``lo < x <= hi`` (effective boundaries) of the inputs reaching it."""
    lo = np.full((tree.n_nodes, d), -np.inf)
    hi = np.full((tree.n_nodes, d), np.inf)
    stack = [0]
    while stack:
        n = stack.pop()
        if tree.left[n] < 0:
            continue
        f, b, left, right = tree.feature[n], tree.boundary[n], tree.left[n], tree.right[n]
        lo[[left, right]] = lo[n]
        hi[[left, right]] = hi[n]
        hi[left, f] = min(hi[n, f], b)
        lo[right, f] = max(lo[n, f], b)
        stack += [int(left), int(right)]
    return lo, hi


def _threshold_inputs(ens, X, rng):
    """For every split: its threshold, the float64 (and float32) neighbours, the effective
    boundary and the float64 above it, in a random training row moved (on the other
    features) into the split node's box, so that the split is reached in its tree."""
    rows = []
    for tree in ens.trees:
        lo, hi = _node_boxes(tree, ens.n_features)
        for node in np.nonzero(tree.left >= 0)[0]:
            f = int(tree.feature[node])
            t, b = float(tree.threshold[node]), float(tree.boundary[node])
            vals = [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), b]
            vals.append(np.nextafter(b, np.inf))
            if ens.rule == "le32":
                t32 = np.float32(t)
                down, up = np.float32(-np.inf), np.float32(np.inf)
                vals += [float(v) for v in (t32, np.nextafter(t32, down), np.nextafter(t32, up))]
            for v in vals:
                r = X[rng.integers(len(X))].copy()
                r = np.where(r <= lo[node], np.nextafter(lo[node], np.inf), r)
                r = np.where(r > hi[node], hi[node], r)
                r[f] = v
                rows.append(r)
    for f in range(ens.n_features):  # LightGBM reads |x| <= 1e-35 as 0
        for v in (0.0, -0.0, 1e-36, -1e-36, LGBM_ZERO, -LGBM_ZERO, 2 * LGBM_ZERO, -2 * LGBM_ZERO):
            r = X[rng.integers(len(X))].copy()
            r[f] = v
            rows.append(r)
    return np.array(rows)


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel():
    """Compile the kernel first; one OpenMP thread for LightGBM and scikit-learn's
    predict (tiny inputs: their spinning threads only slow a loaded machine down)."""
    warm_up()
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.mark.parametrize(("kind", "classes"), CASES, ids=IDS)
def test_predict_and_raw_scores_equal_the_library_at_every_threshold(kind, classes, data):
    X, _ = data
    model = _fit(kind, classes, data)
    ens = extract_ensemble(model)
    rng = np.random.default_rng(0)
    noise = X[rng.integers(len(X), size=2000)] + rng.normal(size=(2000, 4)) * SCALES
    Z = np.vstack([noise, _threshold_inputs(ens, X, rng)])
    theirs = model.predict(Z)
    np.testing.assert_array_equal(ens.predict(Z), theirs)
    np.testing.assert_array_equal(_our_raw(ens, Z), _their_raw(model, Z))  # bit for bit
    if kind == "hgb":
        np.testing.assert_array_equal(_our_raw(ens, Z), model._raw_predict(Z))
    # the effective boundaries (x <= b goes left) route every input as the library's rule
    leaves = ens.leaf_indices(Z)
    for k, tree in enumerate(ens.trees):
        node = np.zeros(len(Z), dtype=np.int64)
        for _ in range(tree.n_nodes):
            inner = tree.left[node] >= 0
            f = np.maximum(tree.feature[node], 0)
            go_left = Z[np.arange(len(Z)), f] <= tree.boundary[node]
            node = np.where(inner, np.where(go_left, tree.left[node], tree.right[node]), node)
        np.testing.assert_array_equal(node, leaves[:, k])
    # the kernel's evaluator: fast path, and every draw replayed exactly (eps = inf)
    plan = build_plan(ens, IndependentNormal(X[0], SCALES), 0)
    bins = kernel.bins_of(plan, Z)
    for p in (plan, plan._replace(eps=np.inf)):
        np.testing.assert_array_equal(ens.classes[kernel.labels_of_bins(p, bins)], theirs)


@pytest.mark.parametrize("classes", ["binary", "3-class"])
def test_lightgbm_booster_reads_the_same_and_dump_is_exact(classes, data):
    X, _ = data
    model = _fit("lgbm", classes, data)
    booster = model.booster_
    ens = extract_ensemble(booster)
    rng = np.random.default_rng(1)
    Z = np.vstack([X + rng.normal(size=X.shape) * SCALES, _threshold_inputs(ens, X, rng)])
    proba = booster.predict(Z)
    label = (proba > 1.0 - proba).astype(int) if classes == "binary" else np.argmax(proba, 1)
    np.testing.assert_array_equal(ens.predict(Z), label)
    np.testing.assert_array_equal(_our_raw(ens, Z), _their_raw(model, Z))
    # the JSON dump's thresholds and leaf values are model_to_string's, bit for bit
    text = booster.model_to_string()
    for key, attr in (("threshold", "threshold"), ("leaf_value", "value")):
        lines = re.findall(rf"^{key}=(.*)$", text, re.M)
        dumped = sorted(float(v) for line in lines for v in line.split())
        ours = [
            getattr(t, attr)[t.left >= 0 if key == "threshold" else t.left < 0] for t in ens.trees
        ]
        assert sorted(np.concatenate(ours).ravel().tolist()) == dumped  # fmt: skip


def test_lightgbm_reads_tiny_inputs_as_zero():
    """LightGBM's predict keeps only |x| > 1e-35f of a dense row: thresholds in [-1e-35,
    1e-35) move to the effective boundaries of rule le64z (edited models)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 1))
    model = lgb.LGBMClassifier(
        n_estimators=1, num_leaves=2, min_child_samples=5, verbose=-1, n_jobs=1
    )
    text = _unsized(model.fit(X, X[:, 0] > 0.1).booster_.model_to_string())
    z = LGBM_ZERO
    probe = np.array(
        [-2 * z, np.nextafter(-z, -1), -z, np.nextafter(-z, 0), -1e-36, -0.0, 0.0, 1e-36,
         np.nextafter(z, 0), z, np.nextafter(z, 1), 2 * z]
    )[:, None]  # fmt: skip
    thresholds = [0.0, -z, np.nextafter(-z, 0), -1e-36, 1e-36, z, np.nextafter(z, 0), -2 * z, 2 * z]
    for t in thresholds:
        booster = lgb.Booster(model_str=re.sub(r"threshold=\S+", f"threshold={float(t)!r}", text))
        ens = extract_ensemble(booster)
        assert ens.trees[0].threshold[0] == t
        theirs = booster.predict(probe, raw_score=True)
        np.testing.assert_array_equal(ens.scores(probe)[:, 1], theirs)
        left = theirs == theirs[0]
        np.testing.assert_array_equal(left, probe[:, 0] <= ens.trees[0].boundary[0])
    # at t = 0, x = 1e-36 > t still goes left (read as 0)
    assert effective_boundary(np.array([0.0]), "le64z")[0] == z


def test_le64z_boundary_is_exact_by_brute_force():
    z = LGBM_ZERO
    special = [0.0, -0.0, z, -z, 1e-36, -1e-36, 2 * z, -2 * z, 1.0, -1.0, 1e-300, -1e-300]
    pts = sorted({v for s in special for v in (s, np.nextafter(s, -1), np.nextafter(s, 1))})
    for t in pts:
        b = effective_boundary(np.array([t]), "le64z")[0]
        for x in pts:
            read = 0.0 if abs(x) <= z else x
            assert (read <= t) == (x <= b), (t, x, b)
    t = np.array([0.5, -3.0])
    np.testing.assert_array_equal(effective_boundary(t, "le64"), t)


def _edit_leaves(text: str, values_per_tree) -> str:
    lines = iter(values_per_tree)

    def sub(match):
        n = len(match.group(1).split())
        return "leaf_value=" + " ".join([repr(float(next(lines)))] * n)

    return _unsized(re.sub(r"^leaf_value=(.*)$", sub, text, flags=re.M))


def _unsized(text: str) -> str:
    """A LightGBM model string without ``tree_sizes`` (edited trees change their sizes)."""
    return re.sub(r"^tree_sizes=.*\n", "", text, flags=re.M)


def _kernel_labels(ens, Z):
    plan = build_plan(ens, IndependentNormal(np.zeros(ens.n_features), 1.0), 0)
    return ens.classes[kernel.labels_of_bins(plan, kernel.bins_of(plan, Z))]


@pytest.mark.parametrize("sigmoid", [1.0, 2.5])
def test_lightgbm_binary_near_tie_follows_float64_sigmoid(sigmoid):
    """Raw scores of 1e-16 are positive, yet p = 1/(1 + exp(-raw)) rounds to 0.5: label 0."""
    X = np.linspace(-1, 1, 100)[:, None]
    model = lgb.LGBMClassifier(
        n_estimators=1, num_leaves=2, min_child_samples=5, verbose=-1, n_jobs=1
    )
    text = model.fit(X, X[:, 0] > 0).booster_.model_to_string()
    text = text.replace("sigmoid:1", f"sigmoid:{sigmoid!r}")
    Z = np.array([[-1.0], [1.0]])
    disagree = 0
    for raw in (5e-17, 1e-16, 1.5e-16, 1.7e-16, 2e-16, 3e-16, 1e-15, 0.0, -1e-16):
        booster = lgb.Booster(model_str=_edit_leaves(text, [raw]))
        ens = extract_ensemble(booster)
        assert ens.link_scale == sigmoid
        p = booster.predict(Z)
        theirs = (p > 1.0 - p).astype(int)
        np.testing.assert_array_equal(ens.predict(Z), theirs)
        np.testing.assert_array_equal(_kernel_labels(ens, Z), theirs)
        disagree += int(raw > 0 and theirs[0] == 0)
    assert disagree > 0


def test_lightgbm_multiclass_near_tie_follows_float64_softmax():
    """Class margins 0.25 and 0.25 + 2^-54: exp rounds both to 1, the softmax ties, and the
    first class wins although the raw argmax is the second."""
    X = np.linspace(-1, 1, 90)[:, None]
    model = lgb.LGBMClassifier(
        n_estimators=1, num_leaves=2, min_child_samples=5, verbose=-1, n_jobs=1
    )
    text = model.fit(X, np.repeat([0, 1, 2], 30)).booster_.model_to_string()
    Z = np.array([[-1.0], [1.0]])
    disagree = 0
    for d in (2.0**-54, 2.0**-53, 2.0**-52, 2.0**-51, 1e-15, 1e-12):
        booster = lgb.Booster(model_str=_edit_leaves(text, [0.25, 0.25 + d, 0.25]))
        ens = extract_ensemble(booster)
        theirs = np.argmax(booster.predict(Z), axis=1)
        np.testing.assert_array_equal(ens.predict(Z), theirs)
        np.testing.assert_array_equal(_kernel_labels(ens, Z), theirs)
        disagree += int(np.any(np.argmax(ens.scores(Z), axis=1) != theirs))
    assert disagree > 0


@pytest.mark.parametrize("kind", ["hgb", "gb"])
def test_sklearn_zero_margin_ties(kind, data):
    """Leaves edited to give a raw score of exactly 0 in part of the space: scikit-learn's
    GradientBoostingClassifier says class 1 (>= 0), HistGradientBoosting class 0 (> 0)."""
    X, y = data
    if kind == "gb":
        model = GradientBoostingClassifier(n_estimators=3, max_depth=2, init="zero").fit(X, y == 1)
        for i, est in enumerate(model.estimators_[:, 0]):
            leaf = est.tree_.children_left < 0
            pattern = np.resize([0.0, 3.0, -2.0], leaf.sum()) if i == 0 else 0.0
            est.tree_.value[leaf, 0, 0] = pattern
    else:
        model = HistGradientBoostingClassifier(max_iter=3, max_depth=2, early_stopping=False)
        model.fit(X, y == 1)
        model._baseline_prediction[:] = 0.0
        for i, (pred,) in enumerate(model._predictors):
            leaf = pred.nodes["is_leaf"].astype(bool)
            pred.nodes["value"][leaf] = np.resize([0.0, 3.0, -2.0], leaf.sum()) if i == 0 else 0.0
    ens = extract_ensemble(model)
    rng = np.random.default_rng(3)
    Z = np.vstack([X, _threshold_inputs(ens, X, rng)])
    raw = _our_raw(ens, Z)[:, 0]
    assert np.any(raw == 0.0) and np.any(raw > 0) and np.any(raw < 0)
    theirs = model.predict(Z)
    tie_label = kind == "gb"
    assert np.all(theirs[raw == 0.0] == tie_label)
    np.testing.assert_array_equal(ens.predict(Z), theirs)
    np.testing.assert_array_equal(_kernel_labels(ens, Z), theirs)
    for mu in X[:3]:
        noise = IndependentNormal(mu, SCALES)
        exact = exact_robustness(ens, noise, mu, tol=0.0)
        assert exact.lower == pytest.approx(grid_robustness(ens, noise, mu).robustness, abs=1e-12)


@pytest.mark.parametrize(("kind", "classes"), CASES, ids=IDS)
def test_engine_equals_grid_and_monte_carlo_on_the_model(kind, classes, data):
    X, _ = data
    model = _fit(kind, classes, data, n=4, depth=2)
    ens = extract_ensemble(model)
    rng = np.random.default_rng(0)
    for mu in X[:2]:
        noise = IndependentNormal(mu, 0.7 * SCALES)
        g = grid_robustness(ens, noise, mu)
        exact = exact_robustness(ens, noise, mu, tol=0.0)
        assert exact.exact and exact.gap <= 1e-12
        assert exact.lower == pytest.approx(g.robustness, abs=1e-12)
        r = exact_robustness(ens, noise, mu, tol=1e-9)
        assert r.converged and r.lower - 1e-12 <= g.robustness <= r.upper + 1e-12
        mc = monte_carlo_robustness(model.predict, noise, mu, 20_000, rng, confidence=0.999)
        assert mc.ci_low <= exact.lower <= mc.ci_high


@pytest.mark.parametrize(("kind", "classes"), CASES, ids=IDS)
def test_robustness_takes_the_model_directly(kind, classes, data):
    X, _ = data
    model = _fit(kind, classes, data)
    x = X[5]
    spec = Gaussian((0.7 * SCALES) ** 2)
    exact = exact_robustness(extract_ensemble(model), spec.bind(x, 4), x, tol=0.0).lower
    r = robustness(model, x, spec, time_budget=1.0)
    assert r.label == model.predict(x[None])[0]
    assert r.lower - 1e-9 <= exact <= r.upper + 1e-9
    # certification cut short: the undecided part is sampled by the kernel (seeded)
    s = robustness(model, x, spec, max_boxes=2, max_draws=40_000, seed=1, confidence=0.999)
    assert s.n_draws == 40_000
    assert s.lower - 1e-12 <= exact <= s.upper + 1e-12
    assert s.ci_low - 1e-12 <= exact <= s.ci_high + 1e-12


def test_refused_models_name_the_problem(data):
    X, y = data
    Xc = X.copy()
    Xc[:, 3] = np.arange(len(X)) % 4
    kw = {"n_estimators": 3, "num_leaves": 4, "min_child_samples": 5, "verbose": -1, "n_jobs": 1}
    cat = lgb.LGBMClassifier(**kw, min_data_per_group=5, cat_smooth=1)
    cat.fit(Xc, (Xc[:, 3] == 2) ^ (y == 1), categorical_feature=[3])
    cases = [
        (cat, "categorical split"),
        (lgb.LGBMClassifier(**kw, zero_as_missing=True).fit(X, y), "missing_type 'Zero'"),
        (lgb.LGBMClassifier(**kw, linear_tree=True).fit(X, y == 1), "linear tree"),
        (lgb.LGBMClassifier(**kw, objective="multiclassova").fit(X, y), "objective.*multiclassova"),
        (lgb.LGBMClassifier(**kw, objective="cross_entropy").fit(X, y == 1), "objective.*cross_entropy"),
        (lgb.LGBMClassifier(**kw, boosting_type="rf", bagging_freq=1, bagging_fraction=0.5).fit(X, y == 1), "rf"),
        (lgb.LGBMRegressor(**kw).fit(X, y), "regressor"),
        (lgb.train({"objective": "regression", "verbose": -1, "num_threads": 1}, lgb.Dataset(X, y), 2), "objective.*regression"),
        (HistGradientBoostingClassifier(max_iter=2, categorical_features=[3]).fit(Xc, y), "categorical"),
        (HistGradientBoostingRegressor(max_iter=2).fit(X, y), "regressor"),
        (GradientBoostingClassifier(n_estimators=2, init=LogisticRegression()).fit(X, y), "init estimator"),
        (GradientBoostingRegressor(n_estimators=2).fit(X, y), "regressor"),
    ]  # fmt: skip
    for model, message in cases:
        with pytest.raises(ValueError, match=message):
            extract_ensemble(model)
    with pytest.raises(ValueError, match="not fitted"):
        extract_ensemble(lgb.LGBMClassifier())
    with pytest.raises(ValueError, match="regressor"):
        robustness(lgb.LGBMRegressor(**kw).fit(X, y), X[0], Gaussian(0.1))


def test_unsupported_models_raise(data):
    X, y = data
    with pytest.raises(ValueError, match="unsupported"):
        extract_ensemble(LogisticRegression().fit(X, y))
    reg = xgb.XGBRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="XGBClassifier"):
        extract_ensemble(reg)
    model = DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        extract_ensemble(model).predict(np.full((1, X.shape[1]), np.nan))


def test_xgboost_categorical_split_raises():
    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"c": pd.Categorical(rng.integers(0, 4, 200)), "x": rng.normal(size=200)})
    y = (df["c"].cat.codes % 2).to_numpy()
    model = xgb.XGBClassifier(
        n_estimators=2, max_depth=2, enable_categorical=True, tree_method="hist"
    )
    model.fit(df, y)
    with pytest.raises(ValueError, match="categorical"):
        extract_ensemble(model)


# --------------------------------------------------------------------------------------
# the entry point (readers/__init__.py) and the shared checks
# --------------------------------------------------------------------------------------
def test_every_library_goes_to_its_reader(data):
    X, y = data
    kw = {"n_estimators": 3, "max_depth": 2}
    models = {
        "DecisionTreeClassifier": DecisionTreeClassifier(max_depth=3).fit(X, y),
        "RandomForestClassifier": RandomForestClassifier(3, max_depth=3).fit(X, y),
        "GradientBoostingClassifier": GradientBoostingClassifier(**kw).fit(X, y),
        "HistGradientBoostingClassifier": HistGradientBoostingClassifier(max_iter=3).fit(X, y),
        "xgboost multi:softprob": xgb.XGBClassifier(**kw).fit(X, y),
        "lightgbm multiclass": lgb.LGBMClassifier(**kw, verbose=-1, n_jobs=1).fit(X, y),
    }
    for source, model in models.items():
        ens = extract_ensemble(model)
        assert ens.source.startswith(source)
        np.testing.assert_array_equal(ens.predict(X[:50]), model.predict(X[:50]))
        readers = [r for r in READERS if r.accepts(model)]
        assert readers and readers[0].read(model).source == ens.source
    assert READERS.index(sklearn_boosting) < READERS.index(sklearn_trees)


@pytest.mark.slow
def test_the_entry_point_refuses_what_no_reader_takes(data):
    X, y = data
    with pytest.raises(ValueError, match="unsupported model type builtins.object") as err:
        extract_ensemble(object())
    assert SUPPORTED in str(err.value)
    with pytest.raises(ValueError, match="unsupported scikit-learn model LogisticRegression"):
        extract_ensemble(LogisticRegression(max_iter=1000).fit(X, y))
    with pytest.raises(ValueError, match="pipelines are not supported"):
        extract_ensemble(make_pipeline(StandardScaler(), DecisionTreeClassifier()).fit(X, y))
    with pytest.raises(ValueError, match="not fitted"):
        extract_ensemble(GradientBoostingClassifier())
    with pytest.raises(ValueError, match="multi-output"):
        extract_ensemble(DecisionTreeClassifier(max_depth=2).fit(X, np.c_[y, y]))


def test_xgboost_base_score_forms():
    np.testing.assert_array_equal(parse_base_score(0.5), [0.5])
    np.testing.assert_array_equal(parse_base_score("5E-1"), [0.5])
    np.testing.assert_array_equal(parse_base_score("[4.89E-1]"), [0.489])
    np.testing.assert_array_equal(parse_base_score("[0E0,0E0,0E0]"), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="base_score"):
        parse_base_score("[a,b]")


def test_verify_scores_refuses_a_model_that_does_not_reproduce(data):
    X, y = data
    ens = extract_ensemble(GradientBoostingClassifier(n_estimators=2).fit(X, y))
    theirs = ens.scores(probe_inputs(ens.n_features))
    verify_scores(ens, theirs, "decision_function")  # its own scores pass
    with pytest.raises(ValueError, match="does not reproduce the library's decision_function"):
        verify_scores(ens, theirs + 1e-6, "decision_function")


@pytest.mark.parametrize("suffix", [".json", ".ubj", ".txt"])
def test_a_saved_model_file_reads_the_same(suffix, data, tmp_path):
    X, y = data
    path = tmp_path / f"model{suffix}"
    if suffix == ".txt":
        model = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, n_jobs=1).fit(X, y)
        model.booster_.save_model(path)
    else:
        model = xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y)
        model.save_model(path)
    loaded = extract_ensemble(load_model(path))
    np.testing.assert_array_equal(loaded.predict_index(X), extract_ensemble(model).predict_index(X))
    with pytest.raises(ValueError, match="pickle files are never loaded"):
        load_model(tmp_path / "model.pkl")
