"""Probabilistic robustness of tree ensembles (papers 001/002).

The method a user calls is exported here (``__all__``); the reproduction of the papers'
Section 5 lives in :mod:`reliquant.trees.reproduction`.

The names of ``__all__`` are imported on first use (PEP 562), so that a job which only reads
tables (the paper comparison, the doc blocks) loads neither numba nor scipy. Importing
:func:`robustness` (``from reliquant.trees import robustness``, or any import of
:mod:`reliquant.trees.anytime`) compiles the numba sampling kernel (:func:`warm_up`), so that
no ``robustness(..., time_budget=...)`` call spends its budget compiling: once per machine
this takes tens of seconds (numba then caches it on disk beside
:mod:`reliquant.trees.kernel`); later imports load it from the cache in a fraction of a
second.

Modules
-------
structure     the tree-ensemble representation: exact split semantics and label arithmetic
tree_checks   every tree's node arrays checked when a TreeEnsemble is built: one binary tree
              (no cycle, children in range, every node reached once), features in range,
              finite thresholds and values (a malformed model file never reaches a walk)
readers       fitted scikit-learn, XGBoost and LightGBM classifiers read into a TreeEnsemble
              (one module per library, shared checks, ``extract_ensemble``) and model files
              loaded safely (``load_model``)
box_mass      noise models (independent, correlated, NORTA) and the mass of a box
norta         NORTA marginals and the Spearman-to-normal correlation map
boxes         the papers' grid method and its 99 % pruning
grid_kernel   the compiled enumeration of the box grid (independent noise): every box
              labelled at its representative point, the masses of the sample's label summed
engine        our exact branch-and-bound engine with certified bounds
leaf_tables   the engine's per-sample tables: reachable leaves, path conditions, score gaps
noise         noise around one input: Gaussian (scalar, per-feature or covariance) and Norta
inputs        a user's sample (array, Series, DataFrame) and noise matched to the model's
              features, by name when both have names
plan          the compiled sampler's plan: in-play features, their bins, the live trees
kernel        (package) the numba kernel that draws bins, evaluates live trees and counts
              agreements: compiled code in one module, threads, the score store, the counts
kernel_cache  every numba kernel compiled in one go, once per machine (rule trees_kernels)
confidence    an anytime-valid confidence sequence for a Bernoulli mean (betting)
anytime       robustness(): certify first, sample the undecided part, stop at a budget
sampling_phase  robustness()'s sampling phase: the timing pilot, draws for a half-width,
              sampling until the half-width, the deadline or the draw budget
budget        what bounds a call: a fixed amount of work by default (reproducible), a time
              budget on request, and the accounting of a timed call
monte_carlo   the Monte Carlo baseline with a Clopper-Pearson interval
custom        a workflow ``custom:`` case of kind trees: robustness of a model file on a
              samples table
reproduction  the papers' Section 5: data preparation, model fitting, per-sample tables,
              agreement, figures, experiments, Pima, paper comparison, highlights
"""

from reliquant.core.lazy import lazy_attributes

#: Each public name and the module that defines it (imported when the name is first used).
_HOMES = {
    "RobustnessResult": "anytime",
    "robustness": "anytime",
    "robustness_batch": "anytime",
    "warm_up": "anytime",
    "CorrelatedNormal": "box_mass",
    "IndependentNormal": "box_mass",
    "NortaNoise": "box_mass",
    "grid_robustness": "boxes",
    "EngineResult": "engine",
    "exact_robustness": "engine",
    "MonteCarloResult": "monte_carlo",
    "monte_carlo_robustness": "monte_carlo",
    "Gaussian": "noise",
    "Norta": "noise",
    "extract_ensemble": "readers",
    "load_model": "readers",
    "TreeEnsemble": "structure",
    "MalformedTreeError": "tree_checks",
}

__all__ = [
    "CorrelatedNormal",
    "EngineResult",
    "Gaussian",
    "IndependentNormal",
    "MalformedTreeError",
    "MonteCarloResult",
    "Norta",
    "NortaNoise",
    "RobustnessResult",
    "TreeEnsemble",
    "exact_robustness",
    "extract_ensemble",
    "grid_robustness",
    "load_model",
    "monte_carlo_robustness",
    "robustness",
    "robustness_batch",
    "warm_up",
]

__getattr__, __dir__ = lazy_attributes(__name__, _HOMES, globals())
