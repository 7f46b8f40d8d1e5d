"""One (N_train, gamma) cell of paper 000's synthetic experiment (Sections 7.3 and 7.5).

* Section 7.2: ``P_train = (1 - gamma) P_test + gamma P_shift``; per ``P_shift``, several
  training sets of size ``N_train`` (:mod:`reliquant.nbc.reproduction.distributions`).
* Section 7.3: per training set, alpha by k-fold CV (eq. 18 NBC), fit, then the seven metrics
  ``u_m, u_H, u_a, u_t, u_e, eps_glob, eps_loc`` on every test instance.

Randomness enters only through :func:`reliquant.core.seeding.block_rng` keys built here from the
config seed, so every cell and training set can be regenerated alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.seeding import block_rng
from reliquant.nbc.classifier import cv_alpha, fit_nbc, log_factors
from reliquant.nbc.reproduction.distributions import mix, sample_joint
from reliquant.nbc.robustness_metrics import eps_glob, eps_loc
from reliquant.nbc.uncertainty import (
    bootstrap_conditionals,
    conditional,
    ensemble_uncertainty,
    u_entropy,
    u_max_prob,
)

__all__ = [
    "CELL_SCHEMA",
    "METRICS",
    "evaluate_training_set",
    "gamma_key",
    "parse_gamma",
    "run_cell",
]

#: metric name -> (ordered by decreasing value?, family, label). Section 7.4: uncertainty
#: metrics by increasing value, robustness metrics by decreasing value.
METRICS: dict[str, tuple[bool, str, str]] = {
    "u_m": (False, "uncertainty", r"$u_m$"),
    "u_H": (False, "uncertainty", r"$u_H$"),
    "u_a": (False, "uncertainty", r"$u_a$"),
    "u_t": (False, "uncertainty", r"$u_t$"),
    "u_e": (False, "uncertainty", r"$u_e$"),
    "eps_glob": (True, "robustness", r"$\varepsilon_{glob}$"),
    "eps_loc": (True, "robustness", r"$\varepsilon_{loc}$"),
}

#: One row per (training set, test instance) of a cell (:func:`run_cell`).
CELL_SCHEMA = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("shift", pa.int16()),
        ("rep", pa.int16()),
        ("train_set", pa.int32()),
        ("alpha", pa.float64()),
        ("test_index", pa.int32()),
        ("y_true", pa.int16()),
        ("y_pred", pa.int16()),
        ("correct", pa.bool_()),
    ]
    + [(m, pa.float64()) for m in METRICS]
)


def gamma_key(gamma: float) -> str:
    """Canonical text of a shift coefficient, used in file names and seed keys (``0.2``)."""
    return f"{float(gamma):g}"


def parse_gamma(text: str) -> float:
    """The shift coefficient written ``text`` in a file name; a ValueError unless ``text`` is
    its canonical form (:func:`gamma_key`), so one cell has one file name and one seed key."""
    gamma = float(text)
    if gamma_key(gamma) != text:
        raise ValueError(
            f"gamma in the file name must be written {gamma_key(gamma)!r}; got {text!r}"
        )
    return gamma


def evaluate_training_set(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    n_classes: int,
    n_values: Sequence[int],
    alphas: Sequence[float],
    cv_folds: int,
    n_bootstrap: int,
    rng: np.random.Generator,
    tol: float = 1e-12,
) -> dict[str, Any]:
    """Section 7.3 for one training set: CV alpha, fit, predict, the seven metrics.

    The bootstrap ensemble (M = ``n_bootstrap`` resamples of the training set, with
    replacement, same size) is fitted with the alpha chosen for the main model. Metrics are
    computed once per distinct feature vector of the test set and broadcast back, so instances
    with identical features get bit-identical metric values (they tie on every metric).
    Returns ``alpha``, ``cv_accuracy``, ``y_pred``, ``correct`` and one array per metric.
    """
    alpha, cv_acc = cv_alpha(X_train, y_train, n_classes, n_values, alphas, cv_folds, rng)
    model = fit_nbc(X_train, y_train, n_classes, n_values, alpha)
    uniq, inverse = np.unique(np.asarray(X_test), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    lf = log_factors(model, uniq)
    lj = lf.sum(axis=2)
    c_hat = np.argmax(lj, axis=1)
    cond = conditional(lj)
    ens = bootstrap_conditionals(
        X_train, y_train, n_classes, n_values, alpha, uniq, n_bootstrap, rng
    )
    metrics = {
        "u_m": u_max_prob(cond),
        "u_H": u_entropy(cond),
        **ensemble_uncertainty(ens),
        "eps_glob": eps_glob(lj, c_hat),
        "eps_loc": eps_loc(lf, c_hat, tol=tol),
    }
    y_pred = c_hat[inverse]
    out: dict[str, Any] = {
        "alpha": alpha,
        "cv_accuracy": float(cv_acc.max()),
        "y_pred": y_pred,
        "correct": y_pred == np.asarray(y_test),
    }
    out.update({name: metrics[name][inverse] for name in METRICS})
    return out


def run_cell(
    dists: Mapping[str, Any],
    n_train: int,
    gamma: float,
    fit: Mapping[str, Any],
    seed: int,
    progress: bool = False,
) -> pd.DataFrame:
    """One (N_train, gamma) cell of Section 7.5: every P_shift x ``fit['n_train_sets']`` sets.

    ``dists`` as from :func:`make_distributions` (``test``, ``shift``, ``X_test``, ``y_test``).
    Training set ``(s, r)`` is drawn with ``block_rng(seed, "train", n_train, gamma_key(gamma),
    s, r)``, which also drives its CV folds and bootstrap. Returns one row per (training set,
    test instance) with the prediction, correctness and the seven metrics.
    """
    from tqdm.auto import tqdm

    test, shifts = dists["test"], dists["shift"]
    X_test, y_test = dists["X_test"], dists["y_test"]
    n_classes, n_values = test.shape[0], test.shape[1:]
    frames = []
    jobs = [(s, r) for s in range(shifts.shape[0]) for r in range(fit["n_train_sets"])]
    for s, r in tqdm(jobs, disable=not progress, desc=f"n={n_train} g={gamma_key(gamma)}"):
        rng = block_rng(seed, "train", int(n_train), gamma_key(gamma), s, r)
        X_tr, y_tr = sample_joint(rng, mix(test, shifts[s], gamma), int(n_train))
        res = evaluate_training_set(
            X_tr, y_tr, X_test, y_test, n_classes, n_values, fit["alphas"], fit["cv_folds"],
            fit["n_bootstrap"], rng, tol=fit["eps_loc_tol"],
        )  # fmt: skip
        frame = pd.DataFrame(
            {
                "n_train": int(n_train),
                "gamma": float(gamma),
                "shift": s,
                "rep": r,
                "train_set": s * fit["n_train_sets"] + r,
                "alpha": res["alpha"],
                "test_index": np.arange(len(y_test)),
                "y_true": y_test,
                "y_pred": res["y_pred"],
                "correct": res["correct"],
                **{m: res[m] for m in METRICS},
            }
        )
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
