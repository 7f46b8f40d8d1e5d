"""Every reliability score that applies to a fitted model, in one call (issue 32).

:func:`score_predictions` takes a fitted classifier and the rows to score and returns one row
per input row: the model's ``prediction`` and one column per score that applies, each
oriented so that **higher = more reliable**, computed by this package's public functions:

===================== ========================================== ============================
column(s)             applies to                                 computed by
===================== ========================================== ============================
max_probability,      any model with ``predict_proba`` (a        :func:`probability_scores`
negative_entropy,     Naive Bayes from :func:`reliquant.nbc.fit_
margin, log_ratio     table`: its posterior ``p(c | f)``)
centroid_proximity    the same, with ``X_train`` and ``y_train``  :func:`fit_centroids`,
                      (centroids of the correct training          :func:`probability_scores`
                      predictions, paper 004 eq. 3)
tree_robustness       a tree ensemble the trees readers read      :func:`tree_robustness`
                      (scikit-learn trees, forests, gradient
                      boosting; XGBoost; LightGBM), with ``noise``
mc_robustness         any other model with a numeric input, with  :func:`black_box_robustness`
                      ``noise`` (independent Gaussian)
eps_glob, eps_loc     a categorical Naive Bayes: scikit-learn     :func:`nbc_robustness`
                      ``CategoricalNB`` (or a ``Pipeline`` ending
                      in one), :func:`reliquant.nbc.fit_table`'s
                      model, a :class:`reliquant.nbc.NBCModel`
doctor_alpha,         any model with ``predict_proba`` (DOCTOR    :func:`doctor_alpha`,
doctor_beta           without input perturbation)                 :func:`doctor_beta`
max_logit,            a model whose logits are known: XGBoost,    :func:`max_logit`,
energy_score          LightGBM, scikit-learn's logistic           :func:`energy_score`
                      regression and gradient boosting (their
                      softmax checked against predict_proba)
trust_score,          a model with numeric inputs, with           :func:`fit_trust_score`,
negative_mahalanobis, ``X_train`` and ``y_train`` (standardised   :func:`fit_mahalanobis`,
negative_knn_distance raw features, distances to the predicted    :func:`fit_knn_distance`
                      class)
===================== ========================================== ============================

The last three rows are the failure-detection comparators of issue 44; which models get
logits and why the others do not, and the feature space's settings, are in
:mod:`reliquant.compare.model_comparators`.

``tree_robustness`` and ``mc_robustness`` estimate the same quantity, ``R(x) = P(f(x') =
f(x))`` with ``x' ~ N(x, Sigma)`` (papers 001/002 eq. 1); a tree ensemble gets the certified
one, any other model the Monte Carlo one (``n_draws`` draws per row, Clopper-Pearson
interval). The column names are those of the compare topic's tables, so the result goes
straight into :func:`compare_scores` (drop ``prediction``).

**Reproducible by default**: both robustness scores do a fixed amount of work per row
(``tree_robustness``: :data:`reliquant.compare.robustness_scores.SCORE_MAX_DRAWS` draws;
``mc_robustness``: ``n_draws``), so two identical calls give identical numbers on any
machine; ``time_budget=`` asks for the tree robustness' timed mode. ``attrs`` name what
bounded the call (``budget``), its wall time (``seconds``) and why a timed call ran over
(``overrun``), as the other calls do.

**What was skipped, and why**: ``frame.attrs["skipped"]`` is a dict ``{score: reason}``
holding every score of :data:`MODEL_SCORES` that is not a column (e.g. ``"tree_robustness":
"needs noise=..."``). Every name of :data:`MODEL_SCORES` is either a column or a key there.

**Inputs are matched by name.** ``X`` (and ``X_train``) as a DataFrame is matched to the
model's feature names (``feature_names_in_``; LightGBM's names with spaces as ``_``, as
LightGBM stores them) in any order; a missing, unknown or repeated name is refused naming
both lists. A model without feature names reads the columns by position, as its ``predict``
does. A named noise (a pandas Series or dict of variances by feature) is matched the same
way; a plain per-feature vector is in the model's feature order and is refused next to an
``X`` whose columns come in another order (both orders in the message), as
:func:`reliquant.trees.robustness` refuses it.

**Pipelines** are accepted as the readers accept them: a scikit-learn ``Pipeline`` scores
through its ``predict_proba``; one ending in a ``CategoricalNB`` gets ``eps_glob`` and
``eps_loc`` (:func:`reliquant.nbc.robustness` transforms ``X`` by ``pipeline[:-1]``); one
ending in a tree ensemble gets the Monte Carlo robustness of the whole pipeline (noise on
``X``), and ``attrs["skipped"]["tree_robustness"]`` gives the readers' fix for the certified
one (the final estimator, the transformed input, the noise in that space).

The probability scores rank the class of largest probability; where a model's ``predict``
disagrees with its ``argmax predict_proba`` (e.g. an ``SVC(probability=True)``, whose
probabilities come from a separate Platt fit) a ``UserWarning`` says on how many rows.

Public API: :data:`MODEL_SCORES`, :func:`score_predictions`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.model_comparators import (
    COMPARATOR_SCORES,
    feature_comparators,
    logit_comparators,
    probability_comparators,
)
from reliquant.compare.model_inputs import (
    NOISE_HELP,
    ModelRows,
    check_noise,
    is_pipeline,
    mc_variance,
    tree_noise,
)
from reliquant.compare.probability_scores import (
    DEFAULT_FLOOR,
    fit_centroids,
    probability_scores,
)
from reliquant.compare.robustness_scores import (
    black_box_robustness,
    nbc_robustness,
    tree_robustness,
)
from reliquant.core.arguments import check_int, check_level, check_real, check_seed
from reliquant.core.labels import match_labels
from reliquant.core.progress import progress_bar

__all__ = ["MODEL_SCORES", "score_predictions"]

#: Every score :func:`score_predictions` knows, in its column order; each is a column of the
#: result or a key of ``attrs["skipped"]``.
MODEL_SCORES = (
    "max_probability",
    "negative_entropy",
    "margin",
    "log_ratio",
    "centroid_proximity",
    "tree_robustness",
    "mc_robustness",
    "eps_glob",
    "eps_loc",
    *COMPARATOR_SCORES,
)
_PROBA = MODEL_SCORES[:4]
_NEED_TRAIN = "needs the training data: pass X_train and y_train"


# ----------------------------------------------------------------------------- model kinds
def _nbc_kind(model: Any) -> str | None:
    """``"table"`` (fit_table's model), ``"codes"`` (an NBCModel), ``"sklearn"`` (a
    CategoricalNB or a Pipeline ending in one), else ``None``."""
    from reliquant.nbc import FittedTable, NBCModel

    if isinstance(model, FittedTable):
        return "table"
    if isinstance(model, NBCModel):
        return "codes"
    last = model.steps[-1][1] if is_pipeline(model) else model
    return "sklearn" if type(last).__name__ == "CategoricalNB" else None


def _tree_ensemble(model: Any) -> tuple[Any, str]:
    """``(ensemble, "")`` when the trees readers read ``model``, else ``(None, why not)``."""
    from reliquant.trees import MalformedTreeError, extract_ensemble

    try:
        return extract_ensemble(model), ""
    except MalformedTreeError:  # a tree model whose trees no predict may walk: refused
        raise
    except ValueError as err:
        if str(err).startswith("unsupported"):  # another kind of model: no need for the list
            return None, f"{type(model).__name__} is not a tree ensemble the trees readers read"
        return None, f"not a tree ensemble the trees readers support: {err}"


# ----------------------------------------------------------------------------- probabilities
def _nbc_codes(model: Any, X: Any) -> np.ndarray:
    """The integer codes of ``X`` for fit_table's model or an NBCModel."""
    from reliquant.nbc import FittedTable

    if isinstance(model, FittedTable):
        if not isinstance(X, pd.DataFrame):
            raise ValueError(
                f"a model from fit_table scores a DataFrame with the training columns "
                f"{list(model.encoder.columns)}; got {type(X).__name__}"
            )
        ignore = () if model.target is None else (model.target,)
        return model.encoder.transform(X, ignore=ignore)
    return X.to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)


def _probabilities(model: Any, kind: str | None, X: Any, rows: ModelRows | None) -> np.ndarray:
    """Class probabilities ``(n, K)``, columns in :func:`_classes` order."""
    from scipy.special import softmax  # p(c | f) from log p(c, f)

    from reliquant.nbc import log_joint

    if kind == "table":
        return softmax(log_joint(model.model, _nbc_codes(model, X)), axis=1)
    if kind == "codes":
        return softmax(log_joint(model, _nbc_codes(model, X)), axis=1)
    return np.asarray(model.predict_proba(rows.data), dtype=np.float64)


def _classes(model: Any, kind: str | None, k: int) -> np.ndarray:
    if kind == "table":
        out = np.empty(len(model.classes), dtype=object)
        out[:] = list(model.classes)
        return out
    if kind == "codes":
        return np.arange(k)
    return np.asarray(model.classes_)


def _label_codes(y: ArrayLike, classes: np.ndarray, n: int) -> np.ndarray:
    """``y_train`` as column indices of ``classes``, by value (``match_labels``)."""
    labels = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(
            f"y_train must be 1-D with one label per row of X_train ({n}); got {labels.shape}"
        )
    return match_labels(y if isinstance(y, list | tuple) else labels, classes, what="y_train")


# ----------------------------------------------------------------------------- the call
def score_predictions(
    model: Any,
    X: pd.DataFrame | ArrayLike,
    *,
    noise: Any = None,
    X_train: pd.DataFrame | ArrayLike | None = None,
    y_train: ArrayLike | None = None,
    time_budget: float | None = None,
    n_draws: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    floor: float | None = DEFAULT_FLOOR,
    tree_options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Every score of :data:`MODEL_SCORES` that applies to ``model``, for every row of ``X``
    (module docstring: which score applies when).

    Parameters
    ----------
    model
        A fitted classifier: anything with ``predict`` (and ``predict_proba`` for the
        probability scores), a scikit-learn ``Pipeline``, or a Naive Bayes from
        :func:`reliquant.nbc.fit_table` / a :class:`reliquant.nbc.NBCModel`.
    X
        The rows to score: a DataFrame (matched to the model's feature names by name) or a
        2-D array in the model's feature order.
    noise
        Input noise for the robustness ``R(x) = P(f(x') = f(x))``, ``x' ~ N(x, Sigma)``: a
        variance ``v`` (``Sigma = v I``), per-feature variances (a pandas Series or dict by
        feature name, or an array in the model's order), a covariance, or
        :class:`reliquant.trees.Gaussian` / :class:`reliquant.trees.Norta` (trees only).
        ``None``: no robustness score (``attrs["skipped"]`` says so).
    X_train, y_train
        Training rows and their labels (the model's classes): adds ``centroid_proximity``
        (centroids of the correct training predictions, :func:`fit_centroids` with ``seed``).
    time_budget
        ``None`` (default): :func:`tree_robustness` with a fixed amount of work per row
        (reproducible: two identical calls give identical numbers, on any machine). Seconds
        per row: its timed mode, where you ask for it (its whole batch within ``len(X)``
        budgets plus :data:`reliquant.trees.budget.BUDGET_TOLERANCE`; the number of draws,
        and so the scores, then depend on the machine's speed).
    n_draws
        Draws per row of :func:`black_box_robustness`.
    seed, confidence
        The seed of every random step (tree sampling, Monte Carlo draws, K-Means) and the
        level of the robustness intervals.
    floor
        The log-ratio's clamp (:func:`reliquant.compare.log_ratio`).
    tree_options
        More keyword arguments of :func:`tree_robustness` (e.g. ``{"max_boxes": 2000,
        "max_draws": 20000}``: results that depend on ``seed`` only).
    progress
        A progress bar over the scores, and :func:`tree_robustness`'s over the rows
        (:func:`reliquant.core.progress.show_progress`: by default on in a terminal only).

    Returns
    -------
    pandas.DataFrame
        ``X``'s index; ``prediction`` (the model's ``predict``; fit_table's class labels; an
        NBCModel's class indices) then the score columns in :data:`MODEL_SCORES` order;
        ``attrs["skipped"]``: ``{score: reason}`` for every other score of
        :data:`MODEL_SCORES`; ``attrs["seconds"]``: the call's wall time;
        ``attrs["budget"]``: what bounded the robustness score (``"tree_robustness:
        max_boxes=0, max_draws=32768 per row"``, ``"tree_robustness: time_budget=0.1 s per
        row"``, ``"mc_robustness: n_draws=1000 per row"``, ``""`` without one);
        ``attrs["overrun"]``: why a timed tree robustness ran past its budgets (``""`` when
        it did not, and in every untimed call), as :func:`tree_robustness` says it.
    """
    t_call = time.perf_counter()
    if time_budget is not None:
        check_real(time_budget, "time_budget", low=0.0, low_open=True)
    check_int(n_draws, "n_draws", minimum=1)
    check_seed(seed)
    check_level(confidence)
    if tree_options is not None and not isinstance(tree_options, Mapping):
        raise ValueError(f"tree_options must be a dict of keyword arguments; got {tree_options!r}")
    if noise is not None:
        check_noise(noise)
    if (X_train is None) != (y_train is None):
        given, absent = ("X_train", "y_train") if y_train is None else ("y_train", "X_train")
        raise ValueError(
            f"{given} is given without {absent}: centroid_proximity and the feature-space "
            "scores need both"
        )
    kind = _nbc_kind(model)
    if kind is None and not callable(getattr(model, "predict", None)):
        raise TypeError(
            f"model must be a fitted classifier with predict (or a Naive Bayes from "
            f"reliquant.nbc.fit_table); got {type(model).__name__}"
        )
    own = kind in ("table", "codes")  # reliquant's Naive Bayes: X passed to it as it is
    rows = None if own else ModelRows(model, X, "X")
    index = (X.index if isinstance(X, pd.DataFrame) else None) if own else rows.index
    ens, not_tree = (None, "") if kind else _tree_ensemble(model)

    skipped: dict[str, str] = {}
    columns: dict[str, np.ndarray] = {}
    budget = overrun = ""
    has_proba = own or callable(getattr(model, "predict_proba", None))
    steps = ["probability"] + ["nbc" if kind else "robustness"]
    bar = progress_bar(total=len(steps), desc="scores", unit="score", progress=progress)
    with bar:
        # the model's own predictions, then the probability scores
        nbc = nbc_robustness(model, X if own else rows.data) if kind else None
        prediction = np.asarray(nbc["prediction"] if nbc else model.predict(rows.data))
        if has_proba:
            proba = _probabilities(model, kind, X, rows)
            classes = _classes(model, kind, proba.shape[1])
            centroids = None
            if X_train is not None:
                train_rows = None if own else ModelRows(model, X_train, "X_train")
                train_p = _probabilities(model, kind, X_train, train_rows)
                labels = _label_codes(y_train, classes, train_p.shape[0])
                centroids = fit_centroids(train_p, labels, seed=seed)
            else:
                skipped["centroid_proximity"] = _NEED_TRAIN
            scores = probability_scores(proba, centroids=centroids, floor=floor)
            columns.update({c: scores[c].to_numpy() for c in scores.columns if c != "prediction"})
            columns.update(probability_comparators(proba))
            differ = int((classes[proba.argmax(axis=1)] != prediction).sum())
            if differ:
                warnings.warn(
                    f"the model's predict differs from the class of largest predict_proba on "
                    f"{differ} of {len(prediction)} rows: there the probability scores rate "
                    "another class than the prediction",
                    UserWarning,
                    stacklevel=2,
                )
        else:
            why = f"the model ({type(model).__name__}) has no predict_proba"
            skipped.update(dict.fromkeys((*_PROBA, "centroid_proximity"), why))
            skipped.update(dict.fromkeys(("doctor_alpha", "doctor_beta"), why))
        _comparators(model, kind, rows, X_train, y_train, prediction, proba if has_proba else None,
                     classes if has_proba else None, columns, skipped, progress)  # fmt: skip
        bar.update()

        # robustness: eps_glob / eps_loc, certified tree robustness, or Monte Carlo
        if kind:
            columns["eps_glob"], columns["eps_loc"] = nbc["eps_glob"], nbc["eps_loc"]
            why = "a categorical Naive Bayes: its robustness scores are eps_glob and eps_loc"
            skipped.update({"tree_robustness": why, "mc_robustness": why})
        else:
            why = (
                "only for a categorical Naive Bayes (CategoricalNB, a Pipeline ending in one, "
                "reliquant.nbc.fit_table's model)"
            )
            skipped.update({"eps_glob": why, "eps_loc": why})
            if noise is None:
                skipped["tree_robustness"] = (
                    f"needs noise: {NOISE_HELP}" if ens is not None else not_tree
                )
                skipped["mc_robustness"] = f"needs noise: {NOISE_HELP}"
            elif ens is not None:
                options = {**dict(tree_options or {}), "return_frame": True}
                frame = tree_robustness(
                    ens, X, tree_noise(noise), time_budget=time_budget, seed=seed,
                    confidence=confidence, progress=progress, **options,
                )  # fmt: skip
                columns["tree_robustness"] = frame["estimate"].to_numpy(dtype=np.float64)
                budget = f"tree_robustness: {frame.attrs['budget']} per row"
                overrun = frame.attrs["overrun"]
                skipped["mc_robustness"] = (
                    "a tree ensemble: tree_robustness estimates the same R(x) with certified bounds"
                )
            else:
                skipped["tree_robustness"] = not_tree
                _mc(model, rows, noise, columns, skipped, n_draws, seed, confidence)
                if "mc_robustness" in columns:
                    budget = f"mc_robustness: n_draws={n_draws} per row"
        bar.update()

    out = pd.DataFrame(
        {"prediction": prediction, **{s: columns[s] for s in MODEL_SCORES if s in columns}}
    )
    if index is not None:
        out.index = index
    out.attrs["skipped"] = {s: skipped[s] for s in MODEL_SCORES if s in skipped}
    out.attrs.update(seconds=time.perf_counter() - t_call, budget=budget, overrun=overrun)
    return out


def _comparators(model, kind, rows, X_train, y_train, prediction, proba, classes,
                 columns: dict, skipped: dict, progress) -> None:  # fmt: skip
    """The logit and feature-space comparators (:mod:`reliquant.compare.model_comparators`)
    into ``columns``, or the reasons they do not apply into ``skipped``."""
    names = ("trust_score", "negative_mahalanobis", "negative_knn_distance")
    if kind:
        why = "a categorical Naive Bayes: no logits (a normalised product of frequencies)"
        skipped.update({"max_logit": why, "energy_score": why})
        why = "a categorical Naive Bayes: its features are categories, no Euclidean distance"
        skipped.update(dict.fromkeys(names, why))
        return
    found, why = logit_comparators(model, rows, proba)
    columns.update(found)
    skipped.update(why)
    if X_train is None:
        skipped.update(dict.fromkeys(names, _NEED_TRAIN))
        return
    train_rows = ModelRows(model, X_train, "X_train")
    if classes is None:
        labels = np.asarray(y_train.to_numpy() if isinstance(y_train, pd.Series) else y_train)
        classes = np.unique(labels)
    codes = _label_codes(y_train, classes, train_rows.data.shape[0])
    predicted = match_labels(prediction, classes, what="the model's predictions")
    found, why = feature_comparators(rows, train_rows, codes, predicted, progress=progress)
    columns.update(found)
    skipped.update(why)


def _mc(model, rows: ModelRows, noise, columns: dict, skipped: dict, n_draws: int, seed: int,
        confidence: float) -> None:  # fmt: skip
    """The Monte Carlo robustness of any model (:func:`black_box_robustness`) into
    ``columns``, or the reason it does not apply into ``skipped``."""
    values = rows.values()
    if values is None:
        skipped["mc_robustness"] = "X has non-numeric columns: no Gaussian input noise applies"
        return
    variance, why = mc_variance(noise, rows, model, values.shape[1])
    if variance is None:
        skipped["mc_robustness"] = why
        return

    def predict(batch: np.ndarray) -> np.ndarray:
        return model.predict(rows.as_model_input(batch))

    res = black_box_robustness(
        predict, values, variance, n_draws=n_draws, seed=seed, confidence=confidence
    )
    columns["mc_robustness"] = res.estimate
