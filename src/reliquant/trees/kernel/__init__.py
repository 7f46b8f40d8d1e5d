"""The compiled (numba) sampler and evaluator of tree ensembles under noise.

Draws come in blocks of ``BLOCK``, for a :class:`reliquant.trees.plan.Plan`:

1. Bins, feature by feature (the feature's tables stay in cache): for independent noise
   one 53-bit integer ``r`` (the uniform ``r / 2^53``) and the bin ``#{j: t_j < r}`` of the
   feature's integer thresholds ``t_j`` (inverse-CDF sampling of the marginal truncated to
   the region, exact to 2^-53: :func:`reliquant.trees.plan._guide_tables`): for a feature with
   at most ``LINEAR_MAX`` thresholds by counting them (one compare per threshold and draw,
   vectorised across the block's draws: no gathers), else from a guide table with usually
   one comparison, no branch to mispredict; both give the same bin. Only in-play features
   are drawn, never the 784-wide input. (The stream is the one of the binary-search
   version: for a seed, bins differ only where ``u`` falls within 2^-53 of a threshold.)
   For correlated and NORTA noise, ``z = L e`` with ``e`` standard normal (Box-Muller, the
   uniforms made first, vectorised) and ``L`` the Cholesky factor of the in-play scores'
   correlation; each bin is the number of the feature's normal-score cuts below ``z``,
   counted (at most ``ZLINEAR_MAX`` cuts: one vectorised compare per cut) or by binary
   search. Within :func:`shared_normal_scores` the scores ``z`` of each chunk are kept and
   reused by every plan with the same ``L`` and seed (several models on one sample's
   stream draw them once).
2. (strata) each draw picks a box with probability proportional to its mass (one uniform,
   binary search in the cumulative masses) and redraws the few features the box narrows,
   inside the box's bin range (independent noise).
3. The trees' leaves, one of two ways (both reach the same leaves; the plan decides):
   leaf masks (QuickScorer, Lucchese et al. 2015), when the plan has them
   (:func:`reliquant.trees.live_trees._leaf_masks`: at least ``MASK_MIN_TREES`` live trees, each
   scoring one class with at most 8 reachable leaves): per in-play feature and bin one row
   of bytes, one per live tree, keeping the tree's leaves that bin does not rule out; the
   AND of a draw's rows keeps each tree's leaf alone (8 trees to a 64-bit word, ANDed
   across the block's draws word by word when a draw has at most ``MASK_ACROSS_MAX`` words,
   else across a draw's words, vectorised), and three bit tests of the byte select the
   leaf's score (no branch, no gather). Otherwise tree by tree (its nodes stay in cache),
   eight draws at a time: their walks advance one step together in registers (independent
   loads that overlap in the CPU), each step one packed int64 per node (left child, cut,
   feature; the right child is left + 1), the block's bins read as one flat array (rows of
   a power-of-two width). Either way the leaf's scores are added, tree by tree in order, to
   the fixed trees' sum (float64; only the tree's own class for margin models, read from
   ``plan.node_val`` or ``plan.qval``), so the sums are the same to the bit. If the top
   class leads the runner-up by more than ``plan.eps`` that is the label; otherwise the
   scores are recomputed exactly as the library does (every tree walked in order; float32
   margins with XGBoost's sigmoid/softmax; float64 margins with LightGBM's sigmoid/softmax
   or scikit-learn's sign rules; :mod:`reliquant.trees.structure`). With exactly one live
   tree (a single decision tree) a draw's label is a function of the leaf it reaches: the
   draws are walked and each leaf's label, made once per kernel call by the same sums and
   decision (:func:`reliquant.trees.kernel.compiled._leaf_label`), is looked up (no per-draw
   score arithmetic).

Random numbers: SplitMix64 (Steele, Lea & Flood 2014) per chunk of draws, each chunk seeded
by hashing ``(seed, chunk index)``, so results do not depend on the number of threads.

Compile time (paid once per machine, rule ``trees_kernels``): only the entry points take the
plan (a named tuple of 40-odd arrays, which costs numba tenths of a second per function that
takes it); the helpers they call take the plan's arrays they read. One kernel,
:func:`~reliquant.trees.kernel.compiled.count_chunk`, serves both paths of :func:`count_agree`
(drawing, or reading the score store), and the exact fallback avoids numba's ``np.argmax``/``max``/``copy`` (a loop each).

Public API: :func:`count_agree` (parallel over chunks: each chunk one call of a ``nogil``
kernel, the chunks shared out among ``numba.get_num_threads()`` Python threads, so that no
``parallel=True`` kernel has to be compiled), :func:`shared_normal_scores` (a
context in which correlated plans share their normal scores), :func:`compile_for` (compile
the kernels :func:`count_agree` runs for a plan's type, before any timing; remembered per
type, so that later calls cost microseconds),
:func:`kernel_signatures` (every kernel called from Python with its argument types, for
compiling them all once per machine: :mod:`reliquant.trees.kernel_cache`), :func:`dispatchers`
(the package's numba kernels by name: their signatures and cache statistics), :func:`sample_bins`,
:func:`labels_of_bins`, :func:`bins_of`, :func:`chunk_seeds`, and the profiling hook
:func:`profile_draws` (one chunk on the calling thread, whole kernel or its first step alone:
where a draw's time goes; ``bench/trees_anytime.py`` uses it).

Modules
-------
compiled     every ``@njit`` function and the constants they read, in one file (numba's disk
             cache follows no call into another file), and the random stream's chunk seeds
threads      kernel calls shared out among threads (``nogil`` kernels, one task each)
score_store  the normal scores of correlated draws, shared within ``shared_normal_scores``
agreement    ``count_agree`` chunk by chunk, ``compile_for`` a plan's type,
             ``kernel_signatures``
bins         single draws and inputs: ``sample_bins``, ``labels_of_bins``, ``bins_of``,
             ``profile_draws``

Every name below is importable from ``reliquant.trees.kernel`` itself.
"""

from __future__ import annotations

from reliquant.trees.kernel.agreement import compile_for, count_agree, kernel_signatures
from reliquant.trees.kernel.bins import bins_of, labels_of_bins, profile_draws, sample_bins
from reliquant.trees.kernel.compiled import (
    BLOCK,
    LINEAR_MAX,
    MASK_ACROSS_MAX,
    ZLINEAR_MAX,
    chunk_seeds,
    dispatchers,
)
from reliquant.trees.kernel.score_store import shared_normal_scores

__all__ = [
    "BLOCK",
    "LINEAR_MAX",
    "MASK_ACROSS_MAX",
    "ZLINEAR_MAX",
    "bins_of",
    "chunk_seeds",
    "compile_for",
    "count_agree",
    "dispatchers",
    "kernel_signatures",
    "labels_of_bins",
    "profile_draws",
    "sample_bins",
    "shared_normal_scores",
]
