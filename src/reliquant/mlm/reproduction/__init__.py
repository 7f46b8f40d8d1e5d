"""The reproduction of paper 004's MNIST run (Sections 3-4) with :mod:`reliquant.mlm`.

Everything the workflow's ``mlm_*`` rules run to set the paper's tables and figures beside
ours; a user computing the matrix of their own classifier needs none of it (see
:mod:`reliquant.mlm`).

Modules
-------
centroid_tables  the training set's centroids, Table 1 and the misclustered images (rule
                 ``mlm_centroids``; Sections 4.2-4.3, Figures 3-4)
accuracy         accuracy per corruption and level beside the paper's, confusion matrix
                 (Sections 4.1, 4.4)
paper            the paper's numbers beside ours and its claims, thresholds from config
                 ``mlm.paper`` (:func:`~reliquant.mlm.reproduction.paper.paper_tables`)
figures          the paper's Figures 1-7, the mean/std and per-level MLM figures
settings         checks of the ``mlm`` config section before any job (``mlm.model`` file, digest)
highlights       the numbers the README, docs/mlm.md and docs/pmnist.md quote, from the run's tables
"""

__all__: list[str] = []
