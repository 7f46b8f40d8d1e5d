"""reliquant: per-prediction reliability quantification.

Algorithms only: numpy in, numpy out; no Snakemake imports, no global state. The
Snakemake workflow in ``workflow/`` drives these functions through thin scripts.

Packages
--------
core    I/O, seeding, logging, plotting style, data sets, and the one paper-comparison mechanism
nbc     robustness quantification for Naive Bayes (paper 000)
trees   probabilistic robustness of tree ensembles (papers 001/002)
pmnist  the perturbed MNIST data set (paper 004, Section 3.2)
mlm     the Misclassification Likelihood Matrix (paper 004)
compare which reliability score to trust: every score on the same predictions (cross-paper)

Paper packages import ``core`` and never each other; ``compare`` may import the paper
packages, which never import it (``tests/core/test_import_graph.py``). Every module lists
its public names in ``__all__``; any other name is private to its module.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
