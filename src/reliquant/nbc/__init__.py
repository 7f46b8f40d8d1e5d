"""Robustness quantification for Naive Bayes (paper 000, Detavernier & De Bock).

Modules
-------
classifier          categorical NBC with eq. 18 smoothing, cross-validated alpha
uncertainty         u_m, u_H, and the bootstrap-ensemble u_a, u_t, u_e
robustness_metrics  eps_glob (eq. 13) and eps_loc (Theorem 6.1) in log space
acceptance          accuracy-acceptance curves with order-free tie handling, AUC
experiment          the synthetic experiment of Section 7
"""

from reliquant.nbc.acceptance import accuracy_acceptance_curve, area_under_curve
from reliquant.nbc.classifier import NBCModel, cv_alpha, fit_nbc, log_factors, log_joint, predict
from reliquant.nbc.robustness_metrics import eps_glob, eps_loc
from reliquant.nbc.uncertainty import ensemble_uncertainty, u_entropy, u_max_prob

__all__ = [
    "NBCModel",
    "accuracy_acceptance_curve",
    "area_under_curve",
    "cv_alpha",
    "ensemble_uncertainty",
    "eps_glob",
    "eps_loc",
    "fit_nbc",
    "log_factors",
    "log_joint",
    "predict",
    "u_entropy",
    "u_max_prob",
]
