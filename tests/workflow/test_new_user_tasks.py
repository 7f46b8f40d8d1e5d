"""New-user tasks (issue 32): each task written as a newcomer would write it, in at most 15
lines of user code (counted in a comment at the top of each block), and each answer checked
against an independent Monte Carlo or brute force computed here, never by the library.

(b) XGBoost robustness from DataFrame rows, columns reordered against training, the noise as a
    named pandas Series; (c) Naive Bayes with string categories, eps_glob and eps_loc; (d) the
    workflow's ``custom:`` section on a tiny model and table (marked ``workflow``: the run
    compiles the trees kernels in a fresh copy, about 90 s); (e) the MLM on a logistic
    regression's softmax; and the budget contract measured as the wall time of whole calls.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reliquant.trees.anytime import budget_allowance

CONFIDENCE_MC = 1 - 1e-4  # the Monte Carlo interval's level: a false alarm once in 10,000 runs


def clopper_pearson(k: int, n: int, level: float = CONFIDENCE_MC) -> tuple[float, float]:
    """The exact binomial interval from scipy's beta quantiles (independent of the library)."""
    a = 1 - level
    lo = 0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k)
    return float(lo), float(hi)


def overlaps(ci_low: float, ci_high: float, k: int, n: int) -> bool:
    """The library's interval meets the Monte Carlo's Clopper-Pearson interval."""
    lo, hi = clopper_pearson(k, n)
    return ci_low <= hi + 1e-12 and lo <= ci_high + 1e-12


# ------------------------------------------------------------------------------------ (b)
def test_b_xgboost_robustness_of_reordered_dataframe_rows_with_named_noise():
    import xgboost as xgb

    rng = np.random.default_rng(0)
    train = pd.DataFrame(rng.normal(size=(500, 4)), columns=["age", "income", "debt", "score"])
    y = (train["age"] + 0.8 * train["debt"] - 0.3 * train["score"] > 0).astype(int)
    # --- user code (6 lines) ---
    from reliquant.trees import Gaussian, robustness_batch

    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(train, y)
    rows = train.iloc[:6][["score", "debt", "income", "age"]]  # another column order
    noise = pd.Series({"age": 0.5, "income": 0.01, "debt": 0.02, "score": 0.05})
    result = robustness_batch(model, rows, Gaussian(noise), time_budget=0.5, seed=0)
    # --- end of user code ---
    n = 40_000
    sd = np.sqrt(noise[train.columns].to_numpy())  # in the training order, by name
    wrong = np.sqrt(noise.to_numpy()[[3, 2, 1, 0]])  # the noise read in the rows' order
    differs = 0
    for i in range(len(rows)):
        x = train.iloc[i].to_numpy()
        label = model.predict(train.iloc[[i]])[0]
        assert result["label"][i] == label
        draws = pd.DataFrame(x + rng.normal(size=(n, 4)) * sd, columns=train.columns)
        k = int((model.predict(draws) == label).sum())
        r = result.iloc[i]
        assert np.isfinite(r["estimate"]) and r["lower"] <= r["estimate"] <= r["upper"]
        assert overlaps(r["ci_low"], r["ci_high"], k, n), (i, r["ci_low"], r["ci_high"], k / n)
        draws = pd.DataFrame(x + rng.normal(size=(n, 4)) * wrong, columns=train.columns)
        k_wrong = int((model.predict(draws) == label).sum())
        differs += not overlaps(r["ci_low"], r["ci_high"], k_wrong, n)
    assert differs >= 2  # the test would catch the noise read in the wrong order


# ------------------------------------------------------------------------------------ (c)
def _eq18(table: pd.DataFrame, target: str, alpha: float):
    """Paper 000's eq. 18 from counts, by hand: ``p(c)`` and ``p(f_i | c)`` as dicts."""
    n, classes = len(table), sorted(table[target].unique())
    counts = table[target].value_counts()
    prior = {c: (counts[c] + alpha) / (n + alpha * len(classes)) for c in classes}
    cond = {}
    for col in table.columns.drop(target):
        values = sorted(table[col].unique())
        for c in classes:
            sub = table.loc[table[target] == c, col]
            for v in values:
                cond[col, v, c] = ((sub == v).sum() + alpha) / (counts[c] + alpha * len(values))
    return classes, prior, cond


def _kept(eps: np.ndarray, top: np.ndarray, others: list[np.ndarray]) -> np.ndarray:
    """Per eps, whether the predicted class's value stays above every competitor's."""
    return np.all([top > o for o in others], axis=0)


def test_c_naive_bayes_with_string_categories_against_brute_force():
    rng = np.random.default_rng(3)
    n = 120
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.choice(["small", "large", "medium"], n, p=[0.5, 0.3, 0.2])
    label = np.where((colour == "red") ^ (rng.random(n) < 0.25), "yes",
                     np.where(size == "large", "maybe", "no"))  # fmt: skip
    table = pd.DataFrame({"colour": colour, "size": size, "label": label})
    # --- user code (4 lines) ---
    from reliquant.nbc import fit_table, robustness

    fitted = fit_table(table, "label", alpha=1.0)
    scores = robustness(fitted, table[["size", "colour"]].head(12))  # any column order
    # --- end of user code ---
    classes, prior, cond = _eq18(table, "label", 1.0)
    features = ["colour", "size"]
    grid = np.linspace(0.0, 0.5, 5001)  # eps to a step of 1e-4
    step = grid[1]
    cells = list(itertools.product(classes, *[sorted(table[f].unique()) for f in features]))
    joint = {cell: prior[cell[0]] * np.prod([cond[f, v, cell[0]] for f, v in
                                             zip(features, cell[1:], strict=True)])
             for cell in cells}  # fmt: skip
    for i in range(12):
        f = tuple(table.loc[i, features])
        p = {c: joint[(c, *f)] for c in classes}
        pred = max(classes, key=p.get)
        assert scores["prediction"][i] == pred
        # eps_glob: (1 - eps) p + eps r for any joint r; the worst r is a point mass on a cell
        glob = np.ones_like(grid, dtype=bool)
        for cell in cells:
            q = {c: (1 - grid) * p[c] + grid * (cell == (c, *f)) for c in classes}
            glob &= _kept(grid, q[pred], [q[c] for c in classes if c != pred])
        # eps_loc: each local distribution contaminated on its own; at a vertex each factor of
        # the instance either gains eps (the point mass hits its value) or not
        loc = np.ones_like(grid, dtype=bool)
        factors = [(f_, v, c) for c in classes for f_, v in zip(features, f, strict=True)]
        for prior_hit in classes:
            for hits in itertools.product([0, 1], repeat=len(factors)):
                hit = dict(zip(factors, hits, strict=True))
                q = {}
                for c in classes:
                    q[c] = (1 - grid) * prior[c] + grid * (prior_hit == c)
                    for f_, v in zip(features, f, strict=True):
                        q[c] = q[c] * ((1 - grid) * cond[f_, v, c] + grid * hit[f_, v, c])
                loc &= _kept(grid, q[pred], [q[c] for c in classes if c != pred])
        brute_glob = grid[glob].max() if glob[0] else 0.0  # kept up to the first break
        brute_loc = grid[loc].max() if loc[0] else 0.0
        for kept in (glob, loc):  # the kept contaminations are an interval [0, eps]
            assert kept.all() or not kept[kept.argmin() :].any()
        assert abs(scores["eps_glob"][i] - brute_glob) <= step, (i, scores["eps_glob"][i])
        assert abs(scores["eps_loc"][i] - brute_loc) <= step, (i, scores["eps_loc"][i])
    assert scores["eps_loc"].nunique() > 3


# ------------------------------------------------------------------------------------ (d)
@pytest.mark.workflow
def test_d_the_custom_section_on_my_own_forest_against_monte_carlo(tmp_path, monkeypatch):
    """About 90 s on a shared 2-core machine: the run compiles the trees kernels in a fresh
    copy (rule trees_kernels), hence the ``workflow`` mark."""
    import pyarrow.parquet as pq
    import skops.io as sio
    import yaml
    from sklearn.ensemble import RandomForestClassifier
    from workflow_helpers import copy_repo, snakemake

    work = copy_repo(tmp_path / "w")
    monkeypatch.setenv("PYTHONPATH", str(work / "src"))
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["height", "weight", "age"])
    y = (X["height"] - X["weight"] + 0.2 * X["age"] > 0).astype(int)
    # --- user code (9 lines) ---
    (work / "mine").mkdir()
    forest = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(X, y)
    sio.dump(forest, work / "mine" / "forest.skops")
    X.iloc[:5][["age", "height", "weight"]].to_parquet(work / "mine" / "samples.parquet")
    case = {
        "name": "my_forest",
        "kind": "trees",
        "model": "mine/forest.skops",
        "samples": "mine/samples.parquet",
        "noise": {"variance": [0.1, 0.3, 0.2]},
        "time_budget": 1.0,
        "seed": 0,
    }  # variances in the samples' column order
    (work / "mine.yaml").write_text(yaml.safe_dump({"custom": [case]}))
    snakemake(work, "--cores", "2", "custom", "--configfile", "mine.yaml", timeout=600)
    # --- end of user code ---
    table = pq.read_table(work / "results" / "custom" / "my_forest.parquet").to_pandas()
    assert len(table) == 5 and (table["overrun"] == "").sum() + (table["overrun"] != "").sum() == 5
    sd = np.sqrt(np.array([0.3, 0.2, 0.1]))  # height, weight, age: the model's order
    n = 40_000
    for i in range(5):
        x = X.iloc[i].to_numpy()
        label = forest.predict(X.iloc[[i]])[0]
        draws = pd.DataFrame(x + rng.normal(size=(n, 3)) * sd, columns=X.columns)
        k = int((forest.predict(draws) == label).sum())
        r = table.iloc[i]
        assert r["label"] == label
        assert overlaps(r["ci_low"], r["ci_high"], k, n), (i, r["ci_low"], r["ci_high"], k / n)


# ------------------------------------------------------------------------------------ (e)
def test_e_mlm_of_a_logistic_regression_against_its_definition():
    from sklearn.cluster import KMeans
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    # --- user code (6 lines) ---
    from reliquant.mlm import misclassification_likelihood

    X, y = load_digits(return_X_y=True)
    model = LogisticRegression(max_iter=2000).fit(X[:1000] / 16, y[:1000])
    softmax = model.predict_proba(X[1000:] / 16)
    mlm = misclassification_likelihood(softmax, y[1000:])
    # --- end of user code ---
    labels, k = y[1000:], 10
    correct = softmax.argmax(axis=1) == labels
    means = np.array([softmax[correct & (labels == c)].mean(axis=0) for c in range(k)])  # eq. 3
    refined = KMeans(k, init=means, n_init=1).fit(softmax[correct]).cluster_centers_
    for centroids, got in ((refined, mlm), (means, misclassification_likelihood(
            softmax, labels, refine=False))):  # fmt: skip
        D = np.full((k, k), np.nan)  # eq. 5: nearest example of class y to centroid c
        for t, c in itertools.permutations(range(k), 2):
            D[t, c] = min(np.linalg.norm(s - centroids[c]) for s in softmax[labels == t])
        L = (1 / D) / np.nansum(1 / D, axis=1, keepdims=True)  # eq. 6
        np.testing.assert_allclose(got.centroids, centroids, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.distances, D, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.likelihood, L, rtol=0, atol=1e-10)
        np.testing.assert_allclose(np.nansum(got.likelihood, axis=1), 1.0, atol=1e-12)


# ------------------------------------------------------------------------------- budgets
@pytest.fixture(scope="module")
def forest_data():
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(11)
    X = rng.normal(size=(600, 4))
    y = np.digitize(X[:, 0] + 0.6 * X[:, 2] - 0.4 * X[:, 1] * X[:, 3], [-0.8, 0.0, 0.8])
    model = RandomForestClassifier(n_estimators=40, max_depth=8, random_state=0).fit(X, y)
    return model, X


def test_tree_robustness_on_several_rows_keeps_the_budget_of_the_whole_call(forest_data):
    """``time_budget`` is per row: the whole call of ``n`` rows takes at most
    ``budget_allowance(n * b)`` = ``1.1 n b + 0.05`` s (BUDGET_TOLERANCE, 10 % + 50 ms, on the
    whole call), or ``frame.attrs["overrun"]`` says why; each row within
    ``budget_allowance(b)`` or its ``overrun`` says why; every row answers with draws (no
    rerun, no NaN)."""
    from reliquant.compare import tree_robustness

    model, X = forest_data
    rows, b = X[:5], 0.2
    # --- user code (3 lines) ---
    t = time.perf_counter()
    frame = tree_robustness(model, rows, 0.3, time_budget=b, return_frame=True)
    wall = time.perf_counter() - t
    # --- end of user code ---
    whole = budget_allowance(len(rows) * b)
    # the library's own accounting (never the wall clock of a busy machine): seconds is the
    # whole call, inside the user's clock, and holds every row's (a lost attempt would add a
    # budget); past its allowance, overrun says why
    assert frame.attrs["seconds"] <= wall and frame["seconds"].sum() <= frame.attrs["seconds"]
    assert frame.attrs["seconds"] <= whole or frame.attrs["overrun"], frame.attrs
    assert (frame.attrs["overrun"] != "") == (frame.attrs["seconds"] > whole), frame.attrs
    assert ((frame["seconds"] <= budget_allowance(b)) | (frame["overrun"] != "")).all()
    assert frame["estimate"].notna().all()
    assert ((frame["n_draws"] > 0) | (frame["status"] == "exact")).all()
    assert (frame["status"] != "exact").any()  # the budget was really spent somewhere
    over = frame.loc[frame["overrun"] != "", "overrun"]
    assert over.str.contains("s for a time_budget of").all()


@pytest.mark.parametrize("b", [0.02, 0.4])
def test_robustness_under_norta_noise_keeps_its_budget_and_always_draws(forest_data, b):
    """A budget too short to certify (0.02 s) still answers from draws; a longer one too; both
    within ``budget_allowance(b)`` or ``overrun`` says why, and both agree with a Monte Carlo
    of the NORTA noise built here (normal copula, exponential and normal marginals)."""
    from reliquant.trees import Norta, robustness
    from reliquant.trees.norta import ExponentialMarginal, NormalMarginal

    model, X = forest_data
    x = X[3]
    corr = np.array([[1.0, 0.5, 0.0, 0.0], [0.5, 1.0, 0.3, 0.0],
                     [0.0, 0.3, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])  # fmt: skip
    scales = [0.4, 0.3, 0.5, 0.2]
    # --- user code (6 lines) ---
    noise = Norta([lambda v: NormalMarginal(v, 0.4), lambda v: ExponentialMarginal(v, 0.3),
                   lambda v: NormalMarginal(v, 0.5), lambda v: ExponentialMarginal(v, 0.2)],
                  corr)  # fmt: skip
    t = time.perf_counter()
    r = robustness(model, x, noise, time_budget=b, seed=2)
    wall = time.perf_counter() - t
    # --- end of user code ---
    assert r.seconds <= wall  # the call's own clock, inside the user's
    assert r.seconds <= budget_allowance(b) or r.overrun, r
    assert np.isfinite(r.estimate) and (r.n_draws > 0 or r.status == "exact"), r
    assert r.status in ("exact", "sampled")
    n = 100_000
    rng = np.random.default_rng(8)
    u = stats.norm.cdf(rng.multivariate_normal(np.zeros(4), corr, size=n))
    draws = np.empty((n, 4))
    for j, scale in enumerate(scales):
        law = stats.norm(x[j], scale) if j % 2 == 0 else stats.expon(x[j], scale)
        draws[:, j] = law.ppf(u[:, j])
    k = int((model.predict(draws) == model.predict(x[None])[0]).sum())
    assert overlaps(r.ci_low, r.ci_high, k, n), (r, k / n)
