"""The CNN's logits and penultimate features on the compare subsample, and the cnn_mnist
table's logit and feature-space comparators, against independent computations: the layers
run by hand in float64, the mlm topic's softmax, brute-force Mahalanobis and k-NN distances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.special import log_softmax, softmax
from torch.nn import functional as F

from reliquant.compare import energy_score, max_logit
from reliquant.compare.reproduction.cnn_features import check_logits, cnn_outputs
from reliquant.compare.reproduction.comparators import TABLE_COMPARATORS, comparator_columns
from reliquant.compare.reproduction.mnist import (
    cnn_predictions,
    cnn_representations,
    fit_mnist_model,
    mnist_train_rows,
)
from reliquant.mlm import build_cnn, predict_softmax

N_ROWS = 150  # more than one forward pass of 128 rows on the CPU


def _cnn(seed: int):
    torch.manual_seed(seed)
    return build_cnn().eval()


@pytest.fixture(scope="module")
def cnn():
    return _cnn(0)


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(0).integers(0, 256, (N_ROWS, 28, 28), dtype=np.uint8)


def _by_hand(model, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CNN's layers in float64, contiguous layout, ``F.max_pool2d``: (logits, features)."""
    p = {k: v.detach().double() for k, v in model.state_dict().items()}
    x = torch.from_numpy(images.astype(np.float64) / 255.0 * 2.0 - 1.0).unsqueeze(1)
    x = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=1)), 2)
    x = F.max_pool2d(F.relu(F.conv2d(x, p["conv2.weight"], p["conv2.bias"], padding=1)), 2)
    h = F.relu(F.linear(torch.flatten(x, 1), p["fc1.weight"], p["fc1.bias"]))
    return F.linear(h, p["fc2.weight"], p["fc2.bias"]).numpy(), h.numpy()


def test_logits_and_features_are_the_layers_outputs(cnn, images) -> None:
    logits, features = cnn_outputs(cnn, images)
    assert logits.shape == (N_ROWS, 10) and features.shape == (N_ROWS, 128)
    want_logits, want_features = _by_hand(cnn, images)
    np.testing.assert_allclose(logits, want_logits, rtol=0, atol=2e-5)
    np.testing.assert_allclose(features, want_features, rtol=0, atol=2e-5)
    assert (features >= 0).all()  # after the ReLU
    # the model's own forward returns log_softmax(logits)
    with torch.inference_mode():
        forward = cnn(torch.from_numpy(images / 255.0 * 2 - 1).float().unsqueeze(1)).numpy()
    np.testing.assert_allclose(log_softmax(logits.astype(np.float64), axis=1), forward,
                               rtol=0, atol=2e-5)  # fmt: skip


def test_softmax_of_logits_is_the_mlm_softmax(cnn, images) -> None:
    logits, _ = cnn_outputs(cnn, images)
    proba = predict_softmax(cnn, images)  # what the mlm topic's softmax partitions hold
    np.testing.assert_allclose(softmax(logits.astype(np.float64), axis=1), proba, atol=1e-6)
    check_logits(logits, proba)
    other, _ = cnn_outputs(_cnn(1), images)
    with pytest.raises(ValueError, match="cnn.pt the model"):
        check_logits(other, proba)
    with pytest.raises(ValueError, match="shape"):
        check_logits(logits[:, :9], proba)


def test_outputs_do_not_depend_on_the_batch(cnn, images) -> None:
    logits, features = cnn_outputs(cnn, images)
    part_logits, part_features = cnn_outputs(cnn, images[130:137])
    assert part_logits.tobytes() == logits[130:137].tobytes()
    assert part_features.tobytes() == features[130:137].tobytes()


def test_only_the_papers_cnn_is_accepted(images) -> None:
    with pytest.raises(TypeError, match="MnistCNN"):
        cnn_outputs(torch.nn.Linear(784, 10), images)


def test_training_rows_are_the_tree_models_split_zero() -> None:
    rng = np.random.default_rng(3)
    train = rng.integers(0, 256, (120, 28, 28), dtype=np.uint8)
    labels = np.arange(120) % 10
    exp = {"n_train": 90, "random_forest": {"n_estimators": 2, "max_depth": 2}}
    _, X, y = fit_mnist_model("random_forest", train, labels, exp=exp, seed=5)
    rows = mnist_train_rows(120, 90, seed=5)
    np.testing.assert_array_equal(X, train[rows].reshape(90, -1) / np.float32(255))
    np.testing.assert_array_equal(y, labels[rows])
    with pytest.raises(ValueError, match="n_train = 121"):
        mnist_train_rows(120, 121, seed=5)


def _meta(n: int) -> pd.DataFrame:
    case = np.where(np.arange(n) < n // 2, "clean", "level 1")
    return pd.DataFrame({
        "case": case, "corruption": np.where(case == "clean", "clean", "fog"),
        "level": (case != "clean").astype(np.uint8), "test_index": np.arange(n) % (n // 2),
        "label": np.arange(n) % 10,
    })  # fmt: skip


@pytest.fixture(scope="module")
def tables(cnn, images):
    """cnn_mnist's table without and with the CNN's representations, and what went in."""
    meta = _meta(N_ROWS)
    proba = predict_softmax(cnn, images)
    softmax_rows = pd.DataFrame(proba, columns=[f"p{c}" for c in range(10)])
    softmax_rows["prediction"] = proba.argmax(axis=1)
    rng = np.random.default_rng(4)
    train_images = rng.integers(0, 256, (400, 28, 28), dtype=np.uint8)
    train_labels = rng.integers(0, 10, 400)
    reps = cnn_representations(cnn, images, train_images, train_labels, n_train=300, seed=2)
    train_softmax = rng.dirichlet(np.ones(10), 200)

    def predict(batch: np.ndarray) -> np.ndarray:
        return (batch.reshape(len(batch), -1).sum(axis=1) > 380).astype(np.int64)

    args = (meta, images, softmax_rows, train_softmax, train_softmax.argmax(axis=1), predict)
    kw = {"exp": {"variances": [0.1], "n_draws": 5}, "seed": 3, "n_splits": 3}
    before = cnn_predictions(*args, **kw)
    after = cnn_predictions(*args, **kw, representations=reps)
    return before, after, reps, train_images, train_labels


def test_existing_columns_are_unchanged(tables) -> None:
    before, after, *_ = tables
    assert list(after.columns) == list(before.columns) + list(TABLE_COMPARATORS[1:])
    pd.testing.assert_frame_equal(after[before.columns], before, check_exact=True)


def test_logit_columns(tables) -> None:
    _, after, reps, *_ = tables
    np.testing.assert_array_equal(after["max_logit"], max_logit(reps.logits))
    np.testing.assert_array_equal(after["energy_score"], energy_score(reps.logits))
    z = reps.logits.astype(np.float64)
    np.testing.assert_allclose(after["max_logit"], z.max(axis=1), rtol=1e-12)
    np.testing.assert_allclose(after["energy_score"], np.log(np.exp(z).sum(axis=1)), rtol=1e-9)


def test_feature_columns_against_brute_force(cnn, tables) -> None:
    _, after, reps, train_images, train_labels = tables
    rows = mnist_train_rows(400, 300, seed=2)
    _, want_train = cnn_outputs(cnn, train_images[rows])
    np.testing.assert_array_equal(reps.train_features, want_train)
    np.testing.assert_array_equal(reps.train_labels, train_labels[rows])
    x_tr, y_tr = want_train.astype(np.float64), train_labels[rows]
    means = np.stack([x_tr[y_tr == c].mean(axis=0) for c in range(10)])
    resid = x_tr - means[y_tr]
    cov = sum(np.outer(r, r) for r in resid) / len(x_tr)
    prec = np.linalg.pinv(cov, rcond=128 * np.finfo(np.float64).eps, hermitian=True)
    pred = after["prediction"].to_numpy()
    for i in (0, 7, 80, 149):  # a few rows, one at a time
        d = reps.features[i].astype(np.float64) - means[pred[i]]
        assert after["negative_mahalanobis"].iloc[i] == pytest.approx(-d @ prec @ d, rel=1e-6)
        dist = np.sort(np.linalg.norm(x_tr - reps.features[i], axis=1))
        assert after["negative_knn_distance"].iloc[i] == pytest.approx(-dist[49], rel=1e-9)
        own = np.linalg.norm(x_tr[y_tr == pred[i]] - reps.features[i], axis=1).min()
        other = np.linalg.norm(x_tr[y_tr != pred[i]] - reps.features[i], axis=1).min()
        assert after["trust_score"].iloc[i] == pytest.approx(other / own, rel=1e-9)


def test_a_model_and_logits_together_are_refused(tables) -> None:
    _, after, reps, *_ = tables
    proba = softmax(reps.logits.astype(np.float64), axis=1)
    with pytest.raises(ValueError, match="not both"):
        comparator_columns(proba, after["prediction"].to_numpy(), model=object(),
                           logits=reps.logits)  # fmt: skip
