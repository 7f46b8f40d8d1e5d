"""Probabilistic robustness of tree ensembles (papers 001/002).

Modules
-------
structure    split structure of scikit-learn and XGBoost models, exact split semantics
box_mass     noise models (independent, correlated, NORTA) and the mass of a box
norta        NORTA marginals and the Spearman-to-normal correlation map
boxes        the papers' grid method and its 99 % pruning
engine       our exact branch-and-bound engine with certified bounds
monte_carlo  the Monte Carlo baseline with a Clopper-Pearson interval
data         data preparation of Section 5 (MNIST resizing, Pima, NORTA marginals)
experiments  the experiments of Section 5 (Tables 1-3, Pima, Iris mixed noise)
"""

from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal, NortaNoise
from reliquant.trees.boxes import grid_robustness
from reliquant.trees.engine import EngineResult, exact_robustness
from reliquant.trees.monte_carlo import MonteCarloResult, monte_carlo_robustness
from reliquant.trees.structure import TreeEnsemble, extract_ensemble

__all__ = [
    "CorrelatedNormal",
    "EngineResult",
    "IndependentNormal",
    "MonteCarloResult",
    "NortaNoise",
    "TreeEnsemble",
    "exact_robustness",
    "extract_ensemble",
    "grid_robustness",
    "monte_carlo_robustness",
]
