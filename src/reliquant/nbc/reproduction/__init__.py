"""The reproduction of paper 000's synthetic study (Section 7) with :mod:`reliquant.nbc`.

Everything the workflow's ``nbc_*`` rules run to set the paper's experiment beside ours; a
user scoring their own model needs none of it (see :mod:`reliquant.nbc`).

Modules
-------
distributions  P_fix, P_rand, P_test, P_shift and D_test of Sections 7.1-7.2, sampling
experiment     one (N_train, gamma) cell of Section 7.5: CV, fit, the seven metrics
acceptance     accuracy-acceptance curves with order-free tie handling, AUC (Section 7.4)
curves         accuracy-acceptance curves per training set and their areas (Section 7.4)
figures        Figures 1 and 2 (mean and standard deviation of the curves)
paper          the per-cell claims check under config thresholds, the paper's claims
               (:func:`~reliquant.nbc.reproduction.paper.paper_tables`)
settings       constraints between keys of the nbc config section (``check_settings``)
highlights     the numbers the README and docs/nbc.md quote, generated from the run's tables
"""

__all__: list[str] = []
