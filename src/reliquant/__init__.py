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

Paper packages import ``core`` and never each other.
"""

__version__ = "0.1.0"
