"""Robustness quantification for Naive Bayes (paper 000, Detavernier & De Bock).

What a user calls lives here, at ``reliquant.nbc`` (:data:`__all__`): fit a categorical Naive
Bayes classifier on a table (:func:`fit_table`, or take scikit-learn's ``CategoricalNB`` with
:func:`from_sklearn`) and score each prediction's robustness and uncertainty
(:func:`robustness`; the metrics alone: :func:`eps_glob`, :func:`eps_loc`, :func:`u_max_prob`,
:func:`u_entropy`, :func:`ensemble_uncertainty`).

The code that reproduces the paper's synthetic study (its distributions, the (N_train, gamma)
cells, accuracy-acceptance curves and their areas, Figures 1-2, the claims check, the settings
check of the ``nbc`` config section and the generated doc blocks) lives in
:mod:`reliquant.nbc.reproduction`; it builds on the modules below and nothing here imports it.

Modules
-------
classifier          categorical NBC with eq. 18 smoothing, cross-validated alpha
uncertainty         u_m, u_H, and the bootstrap-ensemble u_a, u_t, u_e
robustness_metrics  eps_glob (eq. 13) and eps_loc (Theorem 6.1) in log space
encoding            a table's columns as category codes (CategoryEncoder: declared, seen or refused)
sklearn_models      scikit-learn's CategoricalNB (or a Pipeline ending in one) read as an NBCModel
scoring             a user's own model (ours or sklearn's CategoricalNB) and table, scored;
                    with a bootstrap ensemble, also u_m .. u_e
custom              a workflow ``custom:`` case of kind nbc: fit on a train table, score a test table
reproduction        the paper's synthetic study, figures, claims and doc blocks (see its docstring)
"""

from reliquant.nbc.classifier import NBCModel, cv_alpha, fit_nbc, log_factors, log_joint, predict
from reliquant.nbc.encoding import CategoryEncoder
from reliquant.nbc.robustness_metrics import eps_glob, eps_loc
from reliquant.nbc.scoring import FittedTable, bootstrap_uncertainty, fit_table, robustness
from reliquant.nbc.sklearn_models import from_sklearn
from reliquant.nbc.uncertainty import ensemble_uncertainty, u_entropy, u_max_prob

__all__ = [
    "CategoryEncoder",
    "FittedTable",
    "NBCModel",
    "bootstrap_uncertainty",
    "cv_alpha",
    "ensemble_uncertainty",
    "eps_glob",
    "eps_loc",
    "fit_nbc",
    "fit_table",
    "from_sklearn",
    "log_factors",
    "log_joint",
    "predict",
    "robustness",
    "u_entropy",
    "u_max_prob",
]
