"""A classifier that abstains unless its selective risk is certified (issue 43).

:class:`CertifiedSelectiveClassifier` wraps any fitted classifier: :meth:`fit` on a
calibration set computes a reliability score of each calibration prediction
(:func:`reliquant.compare.score_predictions`, or a function of your own) and certifies the
threshold that keeps the most predictions at ``P(error | kept) <= risk`` with probability
``>= 1 - delta`` (:func:`reliquant.compare.certify_threshold`; with several scores the best
one, ``delta`` split over them: :func:`reliquant.compare.certify_best_score`). :meth:`predict`
returns the classifier's prediction where the score reaches the threshold and ``abstain``
elsewhere. The guarantee holds for new predictions exchangeable with the calibration set
(same population, same model); under a shift it is void.

Public API: :class:`CertifiedSelectiveClassifier`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator

from reliquant.compare.all_scores import MODEL_SCORES, score_predictions
from reliquant.compare.certified_scores import BestScoreCertificate, certify_best_score
from reliquant.compare.certified_selection import ThresholdCertificate, certify_threshold
from reliquant.compare.probability_scores import PROBABILITY_SCORES

__all__ = ["CertifiedSelectiveClassifier"]

_NO_NOISE = set(PROBABILITY_SCORES) - {"centroid_proximity"}  # need neither noise nor X_train


class CertifiedSelectiveClassifier(BaseEstimator):
    """Predict where the selective risk is certified, abstain elsewhere (module docstring).

    Parameters
    ----------
    estimator
        A fitted classifier (``predict``; ``predict_proba`` for the probability scores): any
        model :func:`reliquant.compare.score_predictions` scores.
    score
        What rates each prediction (higher = more reliable): a name of
        :data:`reliquant.compare.MODEL_SCORES` that applies to ``estimator``; a sequence of
        names, or ``"all"`` (every score ``score_predictions`` gives for ``estimator`` and
        ``score_options``), of which the one of largest certified coverage is kept with
        ``delta`` split over them; or a callable ``score(estimator, X) -> (n,)``.
    risk, delta, method, n_grid
        The target selective risk, the confidence parameter and the method of
        :func:`reliquant.compare.certify_threshold`.
    abstain
        What :meth:`predict` returns for a rejected prediction (default ``-1``); refused if
        it is one of the classes. With numeric classes and a numeric ``abstain`` the result is
        numeric, else an object array.
    score_options
        Keyword arguments of :func:`reliquant.compare.score_predictions` (``noise``,
        ``X_train``, ``y_train``, ``seed``, ...), used at fit and predict alike.

    Attributes
    ----------
    score_
        The name of the score used (``None`` when no score certifies).
    certificate_
        Its :class:`reliquant.compare.ThresholdCertificate` (the first score's, not
        certified, when none certifies).
    selection_
        The :class:`reliquant.compare.BestScoreCertificate` when several scores were
        compared, else ``None``.
    threshold_, coverage_, certified_
        The certificate's threshold, calibration coverage and whether it certifies.
    classes_
        The estimator's classes (when it has ``classes_``).
    """

    def __init__(
        self,
        estimator: Any,
        *,
        score: str | Sequence[str] | Callable[[Any, Any], ArrayLike] = "max_probability",
        risk: float = 0.05,
        delta: float = 0.1,
        method: str = "sgr",
        n_grid: int | None = None,
        abstain: Any = -1,
        score_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.estimator = estimator
        self.score = score
        self.risk = risk
        self.delta = delta
        self.method = method
        self.n_grid = n_grid
        self.abstain = abstain
        self.score_options = score_options

    # ----------------------------------------------------------------- scores
    def _names(self) -> list[str] | None:
        """The score names asked for (``None``: all that apply)."""
        if isinstance(self.score, str):
            return None if self.score == "all" else [self.score]
        names = list(self.score)
        if not names or not all(isinstance(n, str) for n in names):
            raise ValueError(f"score must be a score name, 'all', a sequence of names or a "
                             f"callable; got {self.score!r}")  # fmt: skip
        return names

    def _score_frame(self, X: Any, names: list[str] | None) -> tuple[np.ndarray, pd.DataFrame]:
        """The estimator's predictions and the scores ``names`` of every row of ``X``."""
        if callable(self.score):
            pred = np.asarray(self.estimator.predict(X))
            s = np.asarray(self.score(self.estimator, X), dtype=np.float64)
            if s.shape != pred.shape:
                raise ValueError(f"score(estimator, X) must return one value per row of X "
                                 f"({pred.shape[0]}); got shape {s.shape}")  # fmt: skip
            return pred, pd.DataFrame({getattr(self.score, "__name__", "score"): s})
        opts = dict(self.score_options or {})
        if names is not None and set(names) <= _NO_NOISE:  # probability scores only
            opts = {k: v for k, v in opts.items() if k not in ("noise", "X_train", "y_train")}
        frame = score_predictions(self.estimator, X, **opts)
        pred = frame.pop("prediction").to_numpy()
        if names is None:
            return pred, frame
        for name in names:
            if name not in frame.columns:
                why = frame.attrs["skipped"].get(name, f"not a score; known: {MODEL_SCORES}")
                raise ValueError(f"score {name!r} does not apply here: {why}")
        return pred, frame[names]

    def _check_labels(self, y: ArrayLike, n: int) -> np.ndarray:
        labels = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(f"y must hold one label per row of X ({n}); got shape {labels.shape}")
        classes = getattr(self.estimator, "classes_", None)
        if classes is not None:
            unknown = ~np.isin(labels, np.asarray(classes))
            if unknown.any():
                raise ValueError(
                    f"y holds {labels[unknown][0]!r}, not one of the estimator's classes "
                    f"{np.asarray(classes).tolist()[:20]}: every prediction would count as wrong"
                )
            if np.isin(
                np.asarray([self.abstain], dtype=object), np.asarray(classes, dtype=object)
            ).any():
                raise ValueError(f"abstain={self.abstain!r} is one of the classes: choose a value "
                                 "no prediction can take")  # fmt: skip
        return labels

    # ----------------------------------------------------------------- fit / predict
    def fit(self, X: Any, y: ArrayLike) -> CertifiedSelectiveClassifier:
        """Certify the threshold on the calibration set ``(X, y)`` (not used to fit the
        estimator, which is already fitted)."""
        if not callable(getattr(self.estimator, "predict", None)):
            raise TypeError(f"estimator must be a fitted classifier with predict; got "
                            f"{type(self.estimator).__name__}")  # fmt: skip
        names = None if callable(self.score) else self._names()
        pred, frame = self._score_frame(X, names)
        correct = pred == self._check_labels(y, pred.shape[0])
        kw = dict(risk=self.risk, delta=self.delta, method=self.method, n_grid=self.n_grid)
        self.selection_: BestScoreCertificate | None = None
        if frame.shape[1] == 1:
            name = str(frame.columns[0])
            self.certificate_: ThresholdCertificate = certify_threshold(frame[name], correct, **kw)
            self.score_ = name if self.certificate_.certified else None
        else:
            self.selection_ = certify_best_score(frame, correct, **kw)
            self.score_ = self.selection_.score
            first = next(iter(self.selection_.certificates.values()))
            self.certificate_ = self.selection_.certificate or first
        self.threshold_ = self.certificate_.threshold
        self.coverage_ = self.certificate_.coverage
        self.certified_ = self.certificate_.certified
        if hasattr(self.estimator, "classes_"):
            self.classes_ = np.asarray(self.estimator.classes_)
        return self

    def accepts(self, X: Any) -> np.ndarray:
        """Bool per row of ``X``: the prediction is kept (its score reaches the threshold)."""
        return self._predict_and_accept(X)[1]

    def _predict_and_accept(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        if not hasattr(self, "certificate_"):
            raise RuntimeError("CertifiedSelectiveClassifier is not fitted: call fit(X_cal, y_cal)")
        if self.score_ is None:
            pred = np.asarray(self.estimator.predict(X))
            return pred, np.zeros(pred.shape[0], dtype=bool)
        pred, frame = self._score_frame(X, None if callable(self.score) else [self.score_])
        return pred, self.certificate_.accepts(frame.iloc[:, 0].to_numpy())

    def predict(self, X: Any) -> np.ndarray:
        """The estimator's prediction where :meth:`accepts`, ``abstain`` elsewhere."""
        pred, keep = self._predict_and_accept(X)
        numeric = pred.dtype.kind in "iuf" and isinstance(self.abstain, int | float | np.number)
        if numeric and not isinstance(self.abstain, bool | np.bool_):
            return np.where(keep, pred, np.asarray(self.abstain))
        out = pred.astype(object)
        out[~keep] = self.abstain
        return out
