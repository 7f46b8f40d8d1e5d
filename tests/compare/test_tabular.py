"""Tabular data sets of the compare topic: discretisation, NBC cells, the scikit-learn table,
Pima, the benchmark sets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from reliquant.compare.reproduction.tables import (
    BASE_COLUMNS,
    assign_parts,
    prediction_schema,
    score_columns,
)
from reliquant.compare.reproduction.tabular import (
    benchmark_predictions,
    discretise,
    nbc_case,
    nbc_cell_predictions,
    pima_predictions,
    table_predictions,
)


def test_discretise_matches_a_direct_count() -> None:
    rng = np.random.default_rng(0)
    train, X = rng.normal(size=(50, 3)), rng.normal(size=(20, 3))
    codes = discretise(train, X, 4)
    for j in range(3):
        edges = np.quantile(train[:, j], [0.25, 0.5, 0.75])
        assert codes[:, j].tolist() == [int((x >= edges).sum()) for x in X[:, j]]
    assert codes.min() >= 0 and codes.max() <= 3
    with pytest.raises(ValueError, match="n_bins"):
        discretise(train, X, 1)


def _cell(n_train: int, gamma: float, n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(n_train)
    rows = []
    for train_set in (0, 1):
        y = rng.integers(0, 3, n)
        rows.append(pd.DataFrame({
            "n_train": n_train, "gamma": gamma, "train_set": train_set,
            "test_index": np.arange(n)[::-1], "y_true": y, "y_pred": rng.integers(0, 3, n),
            **{m: rng.random(n) for m in ("u_m", "u_H", "u_a", "u_t", "u_e", "eps_glob", "eps_loc")},
        }))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def test_nbc_cells_every_training_set_negated_exactly() -> None:
    cells = {(25, 0.0): _cell(25, 0.0), (25, 0.4): _cell(25, 0.4)}
    frame = nbc_cell_predictions(cells)
    assert frame["case"].unique().tolist() == [nbc_case(25, 0.0), nbc_case(25, 0.4)]
    assert frame["condition"].unique().tolist() == ["clean", "shifted"]
    assert sorted(frame["split"].unique()) == [0, 1]
    for train_set in (0, 1):
        src = cells[(25, 0.4)]
        src = src[src["train_set"] == train_set].sort_values("test_index")
        got = frame[(frame["case"] == "N=25, gamma=0.4") & (frame["split"] == train_set)]
        assert got["item"].tolist() == src["test_index"].tolist()
        assert (got["negative_u_m"].to_numpy() == -src["u_m"].to_numpy()).all()
        assert (got["negative_u_H"].to_numpy() == -src["u_H"].to_numpy()).all()
        assert (got["eps_loc"].to_numpy() == src["eps_loc"].to_numpy()).all()
        assert (got["correct"] == (src["y_true"].to_numpy() == src["y_pred"].to_numpy())).all()


def test_wine_table_scores_every_row_twice() -> None:
    exp = dict(name="wine", test_fraction=0.5, n_bins=3, flip=0.5, alphas=[0.1, 1.0],
               cv_folds=3, n_bootstrap=2)  # fmt: skip
    frame = table_predictions(exp=exp, seed=1, n_splits=2)
    assert frame["case"].value_counts().to_dict() == {"clean": 178, "value noise": 178}
    # each split its own random split of the 178 wines
    items = [set(frame.loc[(frame["split"] == s) & (frame["case"] == "clean"), "item"])
             for s in (0, 1)]  # fmt: skip
    assert len(items[0]) == len(items[1]) == 89 and items[0] != items[1]
    assert set(score_columns(frame)) >= {"eps_glob", "eps_loc", "log_ratio", "negative_u_e"}
    clean = frame[frame["case"] == "clean"]
    assert clean["correct"].mean() > 0.8  # the NBC fits wine well
    assert (frame["eps_glob"] >= 0).all() and (frame["eps_loc"] >= frame["eps_glob"] - 1e-12).all()
    again = table_predictions(exp=exp, seed=1, n_splits=2)
    pd.testing.assert_frame_equal(frame, again)


def test_pima_like_table() -> None:
    from reliquant.trees.reproduction.data import PIMA_DROPPED, PIMA_FEATURES, PIMA_TARGET

    rng = np.random.default_rng(0)
    n = 120
    data = {c: rng.uniform(1, 100, n) for c in [*PIMA_FEATURES, *PIMA_DROPPED]}
    data[PIMA_TARGET] = (data[PIMA_FEATURES[1]] + rng.normal(0, 20, n) > 50).astype(int)
    exp = dict(model={"n_estimators": 5, "max_depth": 2}, test_fraction=0.5, shift_scale=0.5,
               snr=10.0, max_boxes=0, max_draws=300, half_width=0.05)  # fmt: skip
    frame = pima_predictions(pd.DataFrame(data), exp=exp, seed=2)
    assert frame["case"].value_counts().to_dict() == {"clean": 60, "noise": 60}
    assert ((frame["tree_robustness"] >= 0) & (frame["tree_robustness"] <= 1)).all()
    assert frame["item"].iloc[:60].tolist() == frame["item"].iloc[60:].tolist()


def test_a_noise_variance_out_of_floating_point_names_snr() -> None:
    """Below the schema's bounds (sd / snr)^2 is infinite: the job names the key, not the
    noise model's "variances must be finite and >= 0"."""
    from reliquant.trees.reproduction.data import PIMA_DROPPED, PIMA_FEATURES, PIMA_TARGET

    rng = np.random.default_rng(1)
    n = 40
    data = {c: rng.uniform(1, 100, n) for c in [*PIMA_FEATURES, *PIMA_DROPPED]}
    data[PIMA_TARGET] = np.arange(n) % 2
    exp = dict(model={"n_estimators": 2, "max_depth": 2}, test_fraction=0.5, shift_scale=0.5,
               snr=1.0e-300, max_boxes=0, max_draws=100, half_width=0.1)  # fmt: skip
    with pytest.raises(ValueError, match=r"compare.pima.snr = 1e-300 gives noise variances"):
        pima_predictions(pd.DataFrame(data), exp=exp, seed=2)


# ------------------------------------------------------------------ benchmark sets
def _bench_table(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """Three classes, three continuous features (distinct values) in very different units:
    the class shifts every feature's mean."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    data = {
        "a": rng.normal(y, 1.0),
        "b": rng.normal(100.0 * y, 150.0),
        "c": rng.normal(0.001 * y, 0.001),
    }
    return pd.DataFrame({**data, "class": y.astype(np.int64)})


def _bench_exp(**changes) -> dict:
    exp = dict(
        model={"kind": "random_forest", "n_estimators": 5, "max_depth": 4},
        test_fraction=0.25,
        max_rows=None,
        shift={"kind": "quantile", "quantile": 0.6, "feature": "b"},
        robustness={"variances": [0.01, 0.5], "n_draws": 40},
        n_splits=2,
    )
    return {**exp, **changes}


def test_benchmark_quantile_shift_holds_out_the_rows_above_each_class_quantile() -> None:
    """The shifted case is, per class c, exactly the n_c - round(q n_c) rows with the largest
    values of the named feature (a direct sort); the clean case is round(f m_c) of the other
    m_c rows of each class; the two never share a row."""
    frame = _bench_table()
    out = benchmark_predictions(frame, name="vowel", exp=_bench_exp(), seed=5)
    assert set(out["dataset"]) == {"bench_vowel"}
    for split in (0, 1):
        rows = out[out["split"] == split]
        shifted = set(rows.loc[rows["case"] == "covariate shift", "item"])
        clean = rows.loc[rows["case"] == "clean", "item"]
        expected, n_clean = set(), 0
        for c in range(3):
            members = frame.index[frame["class"] == c].to_numpy()
            order = members[np.argsort(frame.loc[members, "b"].to_numpy())]
            kept = int(round(0.6 * members.size))
            expected |= set(order[kept:].tolist())
            n_clean += int(round(0.25 * kept))
        assert shifted == expected
        assert len(clean) == n_clean and not set(clean) & shifted
        assert (rows["condition"] == np.where(rows["case"] == "clean", "clean", "shifted")).all()
        assert (rows["label"] == frame.loc[rows["item"], "class"].to_numpy()).all()


def test_benchmark_quantile_shift_defaults_to_the_principal_feature_of_the_whole_table() -> None:
    """feature null: the column most correlated with the first principal component of the
    standardised features. Columns b and c are a noisy copy of one signal, a is noise: the
    principal feature is b or c on every split, the same one (the shifted rows sit above
    each class's quantile of it)."""
    rng = np.random.default_rng(3)
    n = 180
    y = np.arange(n) % 2
    signal = rng.normal(y, 1.0)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": signal + rng.normal(0, 0.1, n),
                          "c": 7.0 * signal + rng.normal(0, 0.1, n), "class": y})  # fmt: skip
    shift = {"kind": "quantile", "quantile": 0.5, "feature": None}
    out = benchmark_predictions(frame, name="authent", exp=_bench_exp(shift=shift), seed=1)
    z = (frame[["a", "b", "c"]] - frame[["a", "b", "c"]].mean()) / frame[["a", "b", "c"]].std()
    loading = np.abs(np.linalg.eigh(np.cov(z.to_numpy(), rowvar=False))[1][:, -1])
    feature = "abc"[int(np.argmax(loading))]
    assert feature in "bc"
    for split in (0, 1):
        rows = out[(out["split"] == split) & (out["case"] == "covariate shift")]
        for c in (0, 1):
            values = frame.loc[frame["class"] == c, feature]
            above = set(values.index[values > values.sort_values().iloc[44]])
            assert set(rows.loc[rows["label"] == c, "item"]) == above


def test_benchmark_noise_shift_perturbs_the_held_out_rows_only() -> None:
    """Noise: the shifted case holds the clean case's rows; at a vanishing scale its
    predictions and probability scores equal the clean ones, at a large scale its accuracy
    falls to about chance (1/3)."""
    frame = _bench_table(n=300)
    tiny = _bench_exp(shift={"kind": "noise", "scale": 1e-12}, test_fraction=0.5)
    out = benchmark_predictions(frame, name="segment", exp=tiny, seed=2)
    clean, noisy = out[out["case"] == "clean"], out[out["case"] == "noise"]
    assert clean["item"].tolist() == noisy["item"].tolist() and len(clean) == 2 * 150
    for col in ("prediction", "max_probability", "margin", "centroid_proximity"):
        assert clean[col].tolist() == noisy[col].tolist(), col
    assert clean["correct"].mean() > 0.6
    big = benchmark_predictions(
        frame, name="segment", exp={**tiny, "shift": {"kind": "noise", "scale": 30.0}}, seed=2
    )
    assert abs(big.loc[big["case"] == "noise", "correct"].mean() - 1 / 3) < 0.12


def test_benchmark_table_has_every_data_sets_schema_and_is_deterministic() -> None:
    """The columns of every per-prediction table, the same arrow schema as Pima's but its
    robustness column (one Monte Carlo column per variance), estimates in steps of
    1 / n_draws; two calls give identical tables, another seed another one."""
    exp = _bench_exp(max_rows=150)
    out = benchmark_predictions(_bench_table(), name="waveform_21", exp=exp, seed=7)
    assert list(out.columns[: len(BASE_COLUMNS)]) == list(BASE_COLUMNS)
    scores = score_columns(out)
    assert scores == ["mc_robustness@0.01", "mc_robustness@0.5", "max_probability",
                      "negative_entropy", "margin", "log_ratio", "centroid_proximity",
                      "doctor_alpha", "trust_score", "negative_mahalanobis",
                      "negative_knn_distance"]  # fmt: skip  # a forest: no logits
    from reliquant.trees.reproduction.data import PIMA_DROPPED, PIMA_FEATURES, PIMA_TARGET

    rng = np.random.default_rng(0)
    pima = {c: rng.uniform(1, 100, 60) for c in [*PIMA_FEATURES, *PIMA_DROPPED]}
    pima[PIMA_TARGET] = np.arange(60) % 2
    pima_exp = dict(model={"n_estimators": 2, "max_depth": 2}, test_fraction=0.5,
                    shift_scale=0.5, snr=10.0, max_boxes=0, max_draws=50, half_width=0.1)  # fmt: skip
    other = pima_predictions(pd.DataFrame(pima), exp=pima_exp, seed=1)
    ours = prediction_schema(scores)
    theirs = prediction_schema(score_columns(other))
    assert [ours.field(c) for c in BASE_COLUMNS] == [theirs.field(c) for c in BASE_COLUMNS]
    assert dict(out.dtypes.iloc[: len(BASE_COLUMNS)]) == dict(
        other.dtypes.iloc[: len(BASE_COLUMNS)]
    )
    parted = assign_parts(out, validation_fraction=0.5, seed=7)
    pa_table = pa.Table.from_pandas(parted, schema=ours, preserve_index=False)
    assert pa_table.num_rows == len(out)
    for col in scores[:2]:
        steps = out[col].to_numpy() * 40
        assert np.allclose(steps, np.round(steps)) and out[col].between(0, 1).all()
    # 150 rows drawn per split: each split its own rows
    items = [set(out.loc[out["split"] == s, "item"]) for s in (0, 1)]
    assert items[0] != items[1] and all(len(i) <= 150 for i in items)
    again = benchmark_predictions(_bench_table(), name="waveform_21", exp=exp, seed=7)
    pd.testing.assert_frame_equal(out, again)
    other_seed = benchmark_predictions(_bench_table(), name="waveform_21", exp=exp, seed=8)
    assert not out["item"].equals(other_seed["item"])


def test_benchmark_robustness_does_not_depend_on_the_features_units() -> None:
    """Noise in units of each feature's training sd: every feature multiplied by 2^10 (exact
    in floating point) leaves every score and prediction identical, bit for bit; noise of a
    fixed variance would not."""
    frame = _bench_table()
    scaled = frame.copy()
    scaled[["a", "b", "c"]] *= 1024.0
    exp = _bench_exp()
    pd.testing.assert_frame_equal(
        benchmark_predictions(frame, name="vowel", exp=exp, seed=4),
        benchmark_predictions(scaled, name="vowel", exp=exp, seed=4),
    )


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"shift": {"kind": "quantile", "quantile": 0.5, "feature": "d"}},
         r"compare.benchmarks.vowel.shift.feature = 'd' is not a feature of vowel \(a, b, c\)"),
        ({"max_rows": 12, "test_fraction": 0.9, "shift": {"kind": "noise", "scale": 1.0}},
         r"compare.benchmarks.vowel: split 0's 1 training rows hold no row of class"),
        ({"model": {"kind": "random_forest", "n_estimators": 2, "max_depth": 2,
                    "learning_rate": 0.1}},
         "config key compare.benchmarks.vowel.model: model kind random_forest takes no "
         "learning_rate"),
    ],
)  # fmt: skip
def test_benchmark_errors_name_the_config_key(changes, match) -> None:
    with pytest.raises(ValueError, match=match):
        benchmark_predictions(_bench_table(), name="vowel", exp=_bench_exp(**changes), seed=0)
