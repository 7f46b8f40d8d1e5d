"""The dynamic-selection protocol (RS-D / RS-I against the single best model and DESlib):
its splits are the authors' stratified calls, the label noise moves exactly the stated labels
and never a test label, RS-D / RS-I equal a brute-force search over every cut on the same
fitted models, DESlib runs through the shim and KNORA-U agrees with a hand computation, two
runs give identical parquet bytes, the summary and ranks agree with scipy, and bad config is
refused naming the key."""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.naive_bayes import MultinomialNB
from sklearn.neighbors import NearestNeighbors

from reliquant.compare.reproduction.logratio_protocol import protocol_estimator
from reliquant.compare.reproduction.selection_protocol import (
    BASE_MODELS,
    DESLIB_METHODS,
    SELECTION_METHODS,
    SELECTION_SCHEMA,
    TIMING_COLUMN,
    FrozenModel,
    OneClassSafeNB,
    fit_protocol_model,
    flip_count,
    flip_labels,
    mean_ranks,
    patch_deslib,
    run_selection,
    run_selection_split,
    selection_report,
    selection_split,
    selection_summary,
    tune_deslib,
)
from reliquant.compare.reproduction.settings import check_selection
from reliquant.compare.selection import protocol_log_ratio
from reliquant.core.datasets import BENCHMARK_CLASS, read_benchmark_csv
from reliquant.core.io import read_frame, write_frame

REPO = Path(__file__).resolve().parents[2]
SELECTION = {
    "train_fraction": 0.7,
    "validation_fraction": 0.15,
    "label_noise": 0.05,
    "k_range": [2, 10],
    "seed": 11,
}
#: Small grids, two points each for two models (GridSearchCV runs) and one for XGBoost.
SMALL = {
    "gradient_boosting": {
        "random_state": 8,
        "grid": {"learning_rate": [0.2], "n_estimators": [5, 15]},
    },
    "random_forest": {
        "random_state": 7,
        "grid": {
            "n_estimators": [10],
            "max_features": ["sqrt"],
            "max_depth": [3, None],
            "min_samples_split": [2],
        },
    },
    "xgboost": {
        "random_state": 6,
        "grid": {"max_depth": [2], "learning_rate": [0.3], "subsample": [1.0]},
    },
}


def _synthetic(n: int = 400, k: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    x = rng.normal(size=(n, 4)) + 0.9 * y[:, None] * np.array([1.0, -0.5, 0.0, 0.3])
    return x, y


def _benchmark(name: str) -> tuple[np.ndarray, np.ndarray]:
    frame = read_benchmark_csv(REPO / "data" / "raw" / "benchmarks" / f"{name}.csv.gz")
    return frame.drop(columns=BENCHMARK_CLASS).to_numpy(), frame[BENCHMARK_CLASS].to_numpy()


# ------------------------------------------------------------------------ splits
def test_splits_are_the_authors_two_stratified_calls_and_partition_the_rows():
    x, y = _synthetic(403)
    ids = np.column_stack([np.arange(len(y)), x])  # row ids travel with the rows
    for i in range(4):
        train, val, test = selection_split(y, split=i, train_fraction=0.7, validation_fraction=0.15)
        # the authors' calls on (X, y): train_size=0.7, then pval / (1 - ptrain) of the rest
        x_tr, x2, y_tr, y2 = train_test_split(ids, y, train_size=0.7, random_state=i, stratify=y)
        x_va, x_te, _, _ = train_test_split(
            x2, y2, train_size=0.15 / (1 - 0.7), random_state=i, stratify=y2
        )
        for got, want in ((train, x_tr), (val, x_va), (test, x_te)):
            np.testing.assert_array_equal(got, want[:, 0].astype(int))
        assert len(train) == math.floor(0.7 * 403)
        assert len(val) == math.floor(0.15 / 0.3 * (403 - len(train)))
        assert sorted(np.concatenate([train, val, test]).tolist()) == list(range(403))
        # stratified: each part's class counts within one row of its share of the class
        for part in (train, val, test):
            for c in range(3):
                share = np.mean(y == c) * len(part)
                assert abs(np.sum(y[part] == c) - share) <= 1.0 + 1e-9, (i, c)
    other = selection_split(y, split=1, train_fraction=0.7, validation_fraction=0.15)
    assert not np.array_equal(other[2], selection_split(y, split=0, train_fraction=0.7,
                                                        validation_fraction=0.15)[2])  # fmt: skip


# ------------------------------------------------------------------- label noise
@pytest.mark.parametrize(("n", "want"), [(10, 0), (19, 0), (20, 1), (30, 1), (50, 2), (283, 14)])
def test_flip_count_is_the_authors_int_of_five_percent(n, want):
    assert flip_count(n, 0.05) == want == int(0.05 * n)


def _authors_label_noise(y, classes, noise_fraction, random_state):
    """The published ``introduce_label_noise`` (rflassance/rob4discriminative, dynsel.py),
    transcribed from its description: numpy's global legacy generator seeded, ``int(f n)``
    rows by ``np.random.choice(n, m, replace=False)``, then per row a uniform
    ``np.random.choice`` among the sorted classes without the row's own."""
    np.random.seed(random_state)  # noqa: NPY002 (the authors' global generator)
    n_noisy = int(noise_fraction * len(y))
    idx = np.random.choice(len(y), n_noisy, replace=False)  # noqa: NPY002 (the authors' global generator)
    out = y.copy()
    for i in idx:
        possible = np.sort(classes)
        out[i] = np.random.choice(possible[possible != y[i]])  # noqa: NPY002 (the authors' global generator)
    return out


@pytest.mark.parametrize(("n", "k", "seed"), [(85, 2, 0), (283, 3, 4), (600, 11, 14)])
def test_label_noise_is_the_authors_draw_label_for_label(n, k, seed):
    y = np.random.default_rng(n).integers(0, k, size=n)
    state = np.random.get_state()  # noqa: NPY002 (the authors' global generator)
    try:
        want = _authors_label_noise(y, np.arange(k), 0.05, seed)
    finally:
        np.random.set_state(state)  # noqa: NPY002 (the authors' global generator)
    noisy, rows = flip_labels(y, k, fraction=0.05, random_state=seed)
    np.testing.assert_array_equal(noisy, want)
    np.testing.assert_array_equal(rows, np.flatnonzero(want != y))
    assert len(rows) == int(0.05 * n)
    # a generator of our own (the old draw) would move other rows
    other = np.sort(np.random.default_rng(seed).choice(n, len(rows), replace=False))
    assert not np.array_equal(other, rows)


def test_flipped_labels_move_to_every_other_class_uniformly():
    y = np.zeros(200_000, dtype=np.int64)
    noisy, rows = flip_labels(y, 4, fraction=0.05, random_state=3)
    assert len(rows) == 10_000 and np.all(noisy[rows] != 0)
    assert np.array_equal(np.flatnonzero(noisy != y), rows)
    counts = np.bincount(noisy[rows], minlength=4)[1:]
    # uniform over the 3 other classes: chi-square against 10000 / 3 each
    assert stats.chisquare(counts).pvalue > 1e-3, counts


def test_label_noise_moves_the_authors_5_percent_of_training_and_validation_never_test():
    x, y = _synthetic(403)
    clean = run_selection_split(x, y, dataset="syn", setting="clean", split=2,
                                selection=SELECTION, models=SMALL, cv_folds=3)  # fmt: skip
    noisy = run_selection_split(x, y, dataset="syn", setting="label_noise", split=2,
                                selection=SELECTION, models=SMALL, cv_folds=3)  # fmt: skip
    for part, labels, col in (
        (noisy.train, noisy.y_train, "flipped_train"),
        (noisy.validation, noisy.y_validation, "flipped_validation"),
    ):
        moved = np.flatnonzero(labels != y[part])
        assert len(moved) == int(0.05 * len(part)) > 0
        # the authors' seed for both parts: the split index
        np.testing.assert_array_equal(labels, flip_labels(y[part], 3, fraction=0.05,
                                                          random_state=2)[0])  # fmt: skip
        assert (noisy.rows[col] == len(moved)).all()
    assert (clean.rows[["flipped_train", "flipped_validation"]] == 0).all().all()
    assert np.array_equal(clean.y_train, y[clean.train])
    # the same split rows; test accuracy is scored on the true labels
    np.testing.assert_array_equal(noisy.test, clean.test)
    for name in BASE_MODELS:
        row = noisy.rows.set_index("method").loc[name]
        acc = np.mean(noisy.models[name].predict(x[noisy.test]) == y[noisy.test])
        assert row["accuracy"] == acc
        # and the models were fitted on the noisy training labels
        refit, _ = fit_protocol_model(name, x[noisy.train], noisy.y_train, settings=SMALL[name],
                                      cv_folds=3)  # fmt: skip
        np.testing.assert_array_equal(refit.predict(x), noisy.models[name].predict(x))


# ------------------------------------------------------ RS-D / RS-I brute force
def _brute_cut(q: np.ndarray, r1: np.ndarray, r2: np.ndarray, rule: str) -> float:
    """The authors' positional rule tried position by position (loops, no cumulative sums):
    rows sorted by q (ties in row order); RS-D: M1 on positions 0..i, M2 after, the first i of
    most right answers, cut q_(i), +inf when that is the largest ratio; RS-I: the gain of M2
    over M1 on positions i..n-1 divided by their count, the first largest, cut q_(i), +inf
    when no gain is positive."""
    order = sorted(range(q.size), key=lambda j: (q[j], j))
    qs = [q[j] for j in order]
    a = [int(r1[j]) for j in order]
    b = [int(r2[j]) for j in order]
    n = len(qs)
    if rule == "RS-D":
        right = [sum(a[: i + 1]) + sum(b[i + 1 :]) for i in range(n)]
        i = right.index(max(right))
        return math.inf if qs[i] == max(qs) else qs[i]
    gains = [Fraction(sum(b[i:]) - sum(a[i:]), n - i) for i in range(n)]
    if max(gains) <= 0:
        return math.inf
    return qs[gains.index(max(gains))]


def test_rs_d_and_rs_i_equal_a_brute_force_over_every_cut_on_the_same_models():
    x, y = _benchmark("diabetes")
    finite = 0
    for setting in ("clean", "label_noise"):
        for split in range(3):
            res = run_selection_split(x, y, dataset="diabetes", setting=setting, split=split,
                                      selection=SELECTION, models=SMALL, cv_folds=3)  # fmt: skip
            rows = res.rows.set_index("method")
            xv, xt, yv, yt = x[res.validation], x[res.test], res.y_validation, y[res.test]
            models = [res.models[m] for m in BASE_MODELS]
            val_acc = [np.mean(m.predict(xv) == yv) for m in models]
            order = sorted(range(3), key=lambda j: (-val_acc[j], -j))  # ties: listed last
            m1, m2 = models[order[0]], models[order[1]]

            def ratio(xs, m1=m1, m2=m2):
                s1 = protocol_log_ratio(m1.predict_proba(xs))
                s2 = protocol_log_ratio(m2.predict_proba(xs))
                with np.errstate(divide="ignore", invalid="ignore"):
                    q = s2 / s1
                q[(s1 == 0) & (s2 == 0)] = 1.0
                return q

            qv, qt = ratio(xv), ratio(xt)
            r1, r2 = m1.predict(xv) == yv, m2.predict(xv) == yv
            assert rows.loc["single_best", "first"] == BASE_MODELS[order[0]]
            assert rows.loc["single_best", "accuracy"] == np.mean(m1.predict(xt) == yt)
            for rule in ("RS-D", "RS-I"):
                cut = _brute_cut(qv, r1, r2, rule)
                assert rows.loc[rule, "cut"] == cut, (setting, split, rule)
                assert rows.loc[rule, "first"] == BASE_MODELS[order[0]]
                assert rows.loc[rule, "second"] == BASE_MODELS[order[1]]
                pred = np.where(qt > cut, m2.predict(xt), m1.predict(xt))
                assert rows.loc[rule, "accuracy"] == np.mean(pred == yt)
                assert rows.loc[rule, "second_share"] == np.mean(qt > cut)
                finite += math.isfinite(cut)
    assert finite >= 2, "no split chose a finite cut: the check compared only M1 with itself"


# ---------------------------------------------------------------------- models
def test_a_one_point_grid_is_what_grid_search_would_refit():
    x, y = _synthetic(200)
    for name, settings in SMALL.items():
        one = {"random_state": settings["random_state"],
               "grid": {k: v[:1] for k, v in settings["grid"].items()}}  # fmt: skip
        direct, params = fit_protocol_model(name, x, y, settings=one, cv_folds=3)
        search = GridSearchCV(protocol_estimator(name, random_state=one["random_state"]),
                              one["grid"], cv=3, scoring="neg_log_loss").fit(x, y)  # fmt: skip
        assert params == search.best_params_
        np.testing.assert_array_equal(
            direct.predict_proba(x), search.best_estimator_.predict_proba(x)
        )


def test_frozen_model_answers_with_the_models_own_predictions_computed_once():
    x, y = _synthetic(150)
    model, _ = fit_protocol_model("random_forest", x, y, settings=SMALL["random_forest"],
                                  cv_folds=3)  # fmt: skip
    calls = []
    real = model.predict_proba
    model.predict_proba = lambda a: calls.append(1) or real(a)
    frozen = FrozenModel(model)
    first = frozen.predict_proba(x[:50])
    again = frozen.predict_proba(x[:50].copy())  # equal content, another array
    other = frozen.predict_proba(x[50:100])
    assert len(calls) == 2
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(other, real(x[50:100]))
    first[:] = -1  # the cache hands out copies
    np.testing.assert_array_equal(frozen.predict_proba(x[:50]), real(x[:50]))
    with pytest.raises(TypeError, match="cannot be refitted"):
        frozen.fit(x, y)


def test_meta_classifier_answers_two_columns_when_it_saw_one_class():
    rng = np.random.default_rng(0)
    xm = rng.integers(0, 5, size=(40, 6))
    only = OneClassSafeNB().fit(xm, np.ones(40, dtype=bool))
    np.testing.assert_array_equal(only.predict_proba(xm[:3]), [[0.0, 1.0]] * 3)
    none = OneClassSafeNB().fit(xm, np.zeros(40, dtype=bool))
    np.testing.assert_array_equal(none.predict_proba(xm[:3]), [[1.0, 0.0]] * 3)
    both = rng.random(40) < 0.5
    np.testing.assert_allclose(
        OneClassSafeNB().fit(xm, both).predict_proba(xm),
        MultinomialNB().fit(xm, both).predict_proba(xm),
    )


# ---------------------------------------------------------------------- DESlib
def test_deslib_fails_without_the_shim_and_the_shim_is_idempotent(monkeypatch):
    from deslib.base import BaseDS
    from deslib.dcs.mcb import MCB

    x, y = _synthetic(300)
    pool = [fit_protocol_model(m, x[:200], y[:200], settings=SMALL[m], cv_folds=3)[0]
            for m in BASE_MODELS]  # fmt: skip
    if "_validate_data" in BaseDS.__dict__:  # an earlier test patched it: undo for this test
        monkeypatch.delattr(BaseDS, "_validate_data")
    with pytest.raises(AttributeError, match="_validate_data"):
        MCB(pool, k=3).fit(x[200:250], y[200:250])
    assert patch_deslib() is True
    shim = BaseDS.__dict__["_validate_data"]
    assert patch_deslib() is False
    assert BaseDS.__dict__["_validate_data"] is shim
    for method in DESLIB_METHODS:
        est, k, acc = tune_deslib(method, [FrozenModel(m) for m in pool], x[200:250], y[200:250],
                                  k_range=[2, 6], random_state=5)  # fmt: skip
        assert 2 <= k <= 6 and 0 <= acc <= 1
        assert est.n_features_in_ == x.shape[1]  # set by sklearn's validate_data
        assert set(est.predict(x[250:])) <= {0, 1, 2}


def test_knora_u_through_the_shim_equals_a_hand_computation():
    """KNORA-U: each model votes with the number of the k nearest validation rows (Euclidean)
    it gets right; the label with most votes wins."""
    x, y = _synthetic(400, seed=3)
    pool = [FrozenModel(fit_protocol_model(m, x[:250], y[:250], settings=SMALL[m], cv_folds=3)[0])
            for m in BASE_MODELS]  # fmt: skip
    xv, yv, xt = x[250:330], y[250:330], x[330:]
    est, k, _ = tune_deslib("KNORA-U", pool, xv, yv, k_range=[5, 5], random_state=0)
    assert k == 5
    _, idx = NearestNeighbors(n_neighbors=5).fit(xv).kneighbors(xt)
    preds = np.stack([m.predict(xt) for m in pool], axis=1)
    right = np.stack([m.predict(xv) == yv for m in pool], axis=1)
    weights = right[idx].sum(axis=1)  # (n_test, n_models)
    votes = np.zeros((len(xt), 3))
    for j in range(len(pool)):
        np.add.at(votes, (np.arange(len(xt)), preds[:, j]), weights[:, j])
    decided = (votes.max(axis=1) > np.sort(votes, axis=1)[:, -2]) | (preds == preds[:, :1]).all(1)
    assert decided.mean() > 0.9
    np.testing.assert_array_equal(est.predict(xt)[decided], votes.argmax(axis=1)[decided])


# ------------------------------------------------------------------ determinism
def test_two_runs_of_the_small_case_give_identical_parquet_bytes(tmp_path):
    tables = {"wdbc": _benchmark("wdbc")}
    paths = []
    for run in range(2):
        rows = run_selection(tables, settings=["clean", "label_noise"], n_splits=1,
                             selection=SELECTION, models=copy.deepcopy(SMALL), cv_folds=3)  # fmt: skip
        path = tmp_path / f"run{run}.parquet"
        write_frame(rows.drop(columns=TIMING_COLUMN), path, SELECTION_SCHEMA)
        paths.append(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    table = read_frame(paths[0])
    assert list(table["method"][:10]) == list(SELECTION_METHODS)
    assert table["accuracy"].between(0.5, 1).all()


# ---------------------------------------------------------------- summaries
def _rows(rng: np.random.Generator) -> pd.DataFrame:
    out = []
    for d in ("a", "b", "c"):
        for setting in ("clean", "label_noise"):
            for split in range(4):
                for m in SELECTION_METHODS:
                    acc = round(float(rng.uniform(0.7, 0.9)), 2)  # ties across methods happen
                    out.append({"dataset": d, "setting": setting, "split": split, "method": m,
                                "accuracy": acc})  # fmt: skip
    return pd.DataFrame(out)


def test_summary_and_mean_ranks_agree_with_scipy():
    rows = _rows(np.random.default_rng(4))
    summary = selection_summary(rows)
    ranks = mean_ranks(summary)
    for (d, s), part in rows.groupby(["dataset", "setting"]):
        wide = part.pivot(index="split", columns="method", values="accuracy")
        means = wide.mean()
        rk = pd.Series(stats.rankdata(-means.to_numpy()), index=means.index)
        got = summary[(summary.dataset == d) & (summary.setting == s)].set_index("method")
        for m in SELECTION_METHODS:
            assert got.loc[m, "accuracy_mean"] == pytest.approx(means[m])
            assert got.loc[m, "accuracy_sd"] == pytest.approx(wide[m].std(ddof=1))
            assert got.loc[m, "rank"] == rk[m]
            diff = (wide[m] - wide["single_best"]).to_numpy()
            assert got.loc[m, "diff_mean"] == pytest.approx(diff.mean(), abs=1e-12)
            if m != "single_best":
                ci = stats.ttest_1samp(diff, 0.0).confidence_interval(0.95)
                assert (got.loc[m, "diff_low"], got.loc[m, "diff_high"]) == pytest.approx(
                    (ci.low, ci.high)
                )
    for s in ("clean", "label_noise"):
        mine = ranks[ranks.setting == s].set_index("method")["mean_rank"]
        per = summary[summary.setting == s].pivot(index="dataset", columns="method",
                                                  values="rank")  # fmt: skip
        for m in SELECTION_METHODS:
            assert mine[m] == pytest.approx(per[m].mean())
    report = selection_report(rows)
    # per setting: the accuracy row and the RS-D / RS-I difference row of each data set
    assert "| **mean rank** |" in report.markdown and report.markdown.count("| a |") == 4
    for s in ("clean", "label_noise"):
        wide = rows[(rows.dataset == "a") & (rows.setting == s)].pivot(
            index="split", columns="method", values="accuracy"
        )
        cells = []
        for m in ("RS-D", "RS-I"):
            diff = (wide[m] - wide["single_best"]).to_numpy()
            ci = stats.ttest_1samp(diff, 0.0).confidence_interval(0.95)
            cells.append(f"{diff.mean():+.4f} [{ci.low:+.4f}, {ci.high:+.4f}]")
        assert f"| a | {cells[0]} | {cells[1]} |" in report.markdown


def test_summary_refuses_a_split_missing_a_method():
    rows = _rows(np.random.default_rng(0))
    with pytest.raises(ValueError, match="same methods"):
        selection_summary(rows.iloc[1:])


# --------------------------------------------------------------------- config
def test_config_refuses_an_unknown_data_set_and_inconsistent_keys_naming_them():
    compare = yaml.safe_load((REPO / "config.yaml").read_text())["compare"]
    benchmarks = yaml.safe_load((REPO / "config.yaml").read_text())["data"]["benchmarks"]
    check_selection(compare, benchmarks)
    bad = copy.deepcopy(compare)
    bad["selection"]["datasets"] = ["robot", "iris"]
    with pytest.raises(ValueError, match=r"compare\.selection\.datasets: \['iris'\]"):
        check_selection(bad, benchmarks)
    bad = copy.deepcopy(compare)
    bad["selection"]["default"]["datasets"] = ["wine"]
    with pytest.raises(ValueError, match=r"compare\.selection\.default\.datasets: \['wine'\]"):
        check_selection(bad, benchmarks)
    bad = copy.deepcopy(compare)
    bad["selection"]["k_range"] = [7, 3]
    bad["selection"]["validation_fraction"] = 0.35
    with pytest.raises(ValueError, match=r"k_range = \[7, 3\].*\n.*validation_fraction = 0\.3"):
        check_selection(bad, benchmarks)


def test_schema_refuses_unknown_keys_in_the_selection_section():
    from reliquant.core.config import ConfigError, load_config, validate_config

    config = load_config(REPO / "config.yaml")
    config["compare"]["selection"]["default"]["n_split"] = 2
    with pytest.raises(ConfigError, match=r"unknown key 'n_split' in compare\.selection\.default"):
        validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")


# -------------------------------------------------------------------- workflow
@pytest.mark.workflow
def test_target_aggregates_the_split_jobs_into_the_table_and_mean_ranks(tmp_path):
    """`snakemake compare_selection` on two small tables, 2 splits, one-point grids: one job per
    data set, setting and split; the table's means, sds and ranks recomputed here from the
    split jobs' own files (scipy's rankdata), the block and the figure written."""
    from workflow_helpers import copy_repo, planned_jobs, snakemake

    work = copy_repo(tmp_path / "w")
    one_point = {m: {"random_state": s["random_state"],
                     "grid": {k: v[-1:] for k, v in s["grid"].items()}}
                 for m, s in SMALL.items()}  # fmt: skip
    overlay = {"compare": {"selection": {"datasets": ["wdbc", "diabetes"], "n_splits": 2},
                           "logratio_protocol": {"models": one_point}}}  # fmt: skip
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    config = ["--configfile", "tests/smoke.yaml", "overlay.yaml"]
    jobs = planned_jobs(snakemake(work, "-n", "compare_selection", *config).stdout)
    assert (
        jobs.get("compare_selection_split") == 2 * 2 * 2
        and jobs.get("compare_selection_table") == 1
    )
    snakemake(work, "--cores", "2", "compare_selection", *config)
    splits = read_frame(work / "results/compare/selection_splits.parquet")
    parts = sorted((work / "results/compare/selection").glob("*/*_[0-9].parquet"))
    assert len(parts) == 8
    from_jobs = pd.concat([read_frame(p) for p in parts], ignore_index=True)
    key = ["dataset", "setting", "split", "method"]
    pd.testing.assert_frame_equal(
        splits.sort_values(key).reset_index(drop=True),
        from_jobs.sort_values(key).reset_index(drop=True),
    )
    summary = read_frame(work / "results/compare/selection.parquet")
    ranks = read_frame(work / "results/compare/selection_ranks.parquet")
    for setting in ("clean", "label_noise"):
        part = from_jobs[from_jobs.setting == setting]
        means = part.groupby(["dataset", "method"])["accuracy"].mean().unstack("method")
        sds = part.groupby(["dataset", "method"])["accuracy"].std(ddof=1).unstack("method")
        rank = pd.DataFrame([stats.rankdata(-means.loc[d].to_numpy()) for d in means.index],
                            index=means.index, columns=means.columns)  # fmt: skip
        got = summary[summary.setting == setting].set_index(["dataset", "method"])
        for d in means.index:
            for m in SELECTION_METHODS:
                assert got.loc[(d, m), "accuracy_mean"] == pytest.approx(means.loc[d, m])
                assert got.loc[(d, m), "accuracy_sd"] == pytest.approx(sds.loc[d, m])
        mine = ranks[ranks.setting == setting].set_index("method")
        for m in SELECTION_METHODS:
            assert mine.loc[m, "mean_rank"] == pytest.approx(rank[m].mean())
            assert mine.loc[m, "n_datasets"] == 2
    block = (work / "results/docs/compare_selection_timings.md").read_text()
    assert block.count("| **mean rank** |") == 2 and "| wdbc |" in block
    assert (work / "results/figures/compare/selection.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
