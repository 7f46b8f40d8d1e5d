"""The reproduction of papers 001/002 (Section 5): what the workflow's ``trees_*`` rules run.

Built on the method of :mod:`reliquant.trees`; nothing of the method imports from here.

Modules
-------
data            data preparation of Section 5 (MNIST resizing, Pima, NORTA noise specifications)
models          model fitting from a config ``model:`` key (decision tree, random forest, XGBoost):
                ``fit_model``, ``MODEL_KINDS``
per_sample      per-sample robustness by grid, 99 % grid, engine and Monte Carlo side by side
                (Tables 1-3); every per-sample name importable from it
norta_samples   per-sample robustness under NORTA noise: engine or Monte Carlo, anytime
sample_methods  what the per-sample tables share: the grid's size, the engine held to tol
agreement       R^2 and agreement summaries between robustness estimates (Table 3, Figure 4)
figures         the figures of Section 5
experiments     one function per experiment job of Section 5 (Tables 1-3, Iris mixed noise)
pima            Figure 4 of 002: Pima under NORTA noise, the noise-reading sensitivity table
pima_paper      Figure 4 of 002 beside our run: the sensitivity cells ranked by distance
paper           the papers' numbers and claims beside ours, the Pima best-matching cell:
                ``paper_tables`` returns a :class:`reliquant.core.paper.PaperTables`
highlights      the numbers the README and docs/trees.md quote, generated from the run's tables
"""

__all__: list[str] = []
