"""Benchmark: how often ``which_score``'s verdict changes over seeds and over row orders of the
same rows, before (the algorithm of a git revision) and after (the working tree).

    python bench/which_score.py [--baseline c0885be] [--seeds 20] [--orders 20] [--n-boot 1000]
                                [--data readme digits_forest ...] [--out results/bench/which_score.md]
                                [--docs-block results/docs/compare_which_score_timings.md]

The data sets (built once, by this working tree's library, seeded; the same rows go to both
algorithms):

* ``readme``: the README's example (a logistic regression on breast cancer, eight splits,
  ``score_predictions`` with a Monte Carlo robustness), ``groups`` = the split;
* ``readme_pooled``: the same predictions without ``groups`` (a user who forgets them);
* ``digits_forest``: the issue's trial, a random forest on scikit-learn's digits over six
  splits of 150 test rows shifted by Gaussian pixel noise, the probability scores and the
  certified tree robustness (deterministic: ``max_boxes=0``, ``max_draws=2000``), by split;
* ``table_nbc``: the compare topic's ``table_nbc`` case in small, breast cancer cut into 3
  bins at the training quantiles, a categorical Naive Bayes, ``eps_glob``/``eps_loc`` and the
  probability scores, 15 splits;
* ``six_groups``: the issue's synthetic reproducer, six groups of 100 predictions, one score
  of each family.

For each data set and algorithm: the verdict at seeds ``0..seeds-1`` on the rows as built,
and at seed 0 on ``orders`` random orders of the rows (``numpy.random.default_rng(order)
.permutation``); a *change* is a run whose verdict differs from the seed-0 run on the rows as
built. The "before" algorithm is ``src/reliquant/compare/verdict.py`` of ``--baseline``
(``git show``, loaded as a module beside this working tree's library, whose modules it
imports, ``comparison`` and ``rejection``, are unchanged since), called as the README calls
it; the "after" is this working tree's :func:`reliquant.compare.which_score`. Seconds: the
median wall time of one call (a shared machine: an indication only).

As the Snakemake rule ``compare_which_score_stability`` (a named target: ``snakemake --cores 1
compare_which_score_stability``) it writes the report and the generated block of
docs/compare.md, with the defaults above.
"""

import argparse
import importlib.util
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
MODULE = "src/reliquant/compare/verdict.py"
BASELINE = "c0885be"
DATASETS = ("readme", "readme_pooled", "digits_forest", "table_nbc", "six_groups")


# ------------------------------------------------------------------------------ data sets
def readme_data() -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """The README's example, verbatim in what it computes."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from reliquant.compare import score_predictions

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, parts = X / X.max(), []
    for split in range(8):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=split)
        clf = LogisticRegression(max_iter=1000).fit(X_tr, y_tr)
        scores = score_predictions(clf, X_te, noise=0.01, n_draws=200, seed=split)
        parts.append(scores.assign(correct=scores.pop("prediction") == y_te, split=split))
    table = pd.concat(parts, ignore_index=True)
    correct, groups = table.pop("correct"), table.pop("split")
    return table, correct, groups


def digits_forest_data() -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """A random forest on digits, six splits of 150 test rows with pixel noise."""
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    from reliquant.compare import probability_scores, tree_robustness
    from reliquant.core.seeding import block_rng
    from reliquant.trees import Gaussian

    X, y = load_digits(return_X_y=True)
    X = X / 16
    parts = []
    for split in range(6):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=150, random_state=split)
        model = RandomForestClassifier(50, max_depth=8, random_state=split).fit(X_tr, y_tr)
        shifted = X_te + block_rng(0, "bench_which_score", split).normal(0, 0.15, X_te.shape)
        scores = probability_scores(model.predict_proba(shifted))
        pred = scores.pop("prediction").to_numpy()
        scores["tree_robustness"] = tree_robustness(
            model, shifted, Gaussian(0.01), seed=split, max_boxes=0, max_draws=2000,
            half_width=0.02,
        )  # fmt: skip
        parts.append(scores.assign(correct=model.classes_[pred] == y_te, split=split))
    table = pd.concat(parts, ignore_index=True)
    correct, groups = table.pop("correct"), table.pop("split")
    return table, correct, groups


def table_nbc_data() -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """A categorical Naive Bayes on breast cancer in 3 quantile bins, 15 splits."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import KBinsDiscretizer

    from reliquant.compare import score_predictions

    X, y = load_breast_cancer(return_X_y=True)
    parts = []
    for split in range(15):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=split)
        bins = KBinsDiscretizer(n_bins=3, encode="ordinal", strategy="quantile")
        model = make_pipeline(bins, CategoricalNB(min_categories=3)).fit(X_tr, y_tr)
        scores = score_predictions(model, X_te)
        parts.append(scores.assign(correct=scores.pop("prediction") == y_te, split=split))
    table = pd.concat(parts, ignore_index=True)
    correct, groups = table.pop("correct"), table.pop("split")
    return table, correct, groups


def six_groups_data() -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """The issue's reproducer: six groups of 100 predictions, two scores."""
    from reliquant.core.seeding import block_rng

    rng = block_rng(0, "bench_which_score", "six_groups")
    n = 600
    groups = pd.Series(np.repeat(np.arange(6), 100), name="split")
    correct = pd.Series(rng.random(n) < 0.8, name="correct")
    table = pd.DataFrame({"mc_robustness": correct + rng.normal(0, 1.1, n),
                          "max_probability": correct + rng.normal(0, 1.0, n)})  # fmt: skip
    return table, correct, groups


def build(name: str) -> tuple[pd.DataFrame, pd.Series, pd.Series | None]:
    """``(scores, correct, groups)`` of data set ``name`` (module docstring)."""
    if name == "readme_pooled":
        table, correct, _ = readme_data()
        return table, correct, None
    maker = {"readme": readme_data, "digits_forest": digits_forest_data,
             "table_nbc": table_nbc_data, "six_groups": six_groups_data}[name]  # fmt: skip
    return maker()


# ------------------------------------------------------------------------------ algorithms
def baseline_module(rev: str, folder: Path):
    """The verdict module of git revision ``rev``, loaded beside this working tree's library."""
    text = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{MODULE}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    path = folder / "baseline_verdict.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("baseline_verdict", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def runs(which, scores, correct, groups, *, seeds: int, orders: int, n_boot: int) -> dict:
    """Verdicts (and their differences) over the seeds on the rows as built and over random
    orders of the rows at seed 0; the median seconds of one call."""
    import warnings

    def call(s, c, g, seed):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = which(s, c, groups=g, seed=seed, n_boot=n_boot, progress=False)
        return v, time.perf_counter() - t0

    seconds, by_seed, by_order = [], [], []
    for seed in range(seeds):
        v, t = call(scores, correct, groups, seed)
        by_seed.append((v.verdict, v.diff))
        seconds.append(t)
    for order in range(orders):
        perm = np.random.default_rng(order).permutation(len(correct))
        g = None if groups is None else groups.iloc[perm].reset_index(drop=True)
        v, t = call(scores.iloc[perm].reset_index(drop=True),
                    correct.iloc[perm].reset_index(drop=True), g, 0)  # fmt: skip
        by_order.append((v.verdict, v.diff))
        seconds.append(t)
    return {"seed": by_seed, "order": by_order, "seconds": statistics.median(seconds)}


def summary(results: list[tuple[str, float]], reference: str) -> tuple[str, int, str]:
    """The verdict tally, the runs that differ from ``reference``, the range of the
    differences."""
    tally = Counter(v for v, _ in results)
    words = ", ".join(f"{v} {k}" for v, k in tally.most_common())
    diffs = [d for _, d in results]
    spread = f"{min(diffs):+.4f} .. {max(diffs):+.4f}"
    return words, sum(v != reference for v, _ in results), spread


def main(datasets, baseline, seeds, orders, n_boot) -> str:
    """Run every data set through both algorithms; the markdown report."""
    from reliquant.compare import which_score

    lines = [
        "# Benchmark: which_score's verdict over seeds and row orders",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy "
        f"{np.__version__}. Before: `compare/verdict.py` of {baseline} (half of the groups or "
        "predictions pick the two scores, the rest judge them); after: the working tree "
        "(cross-fitted, every group judged once). Seeds 0..{} on the rows as built; {} random "
        "orders of the rows at seed 0; a change is a verdict other than the seed-0 one on the "
        "rows as built; n_boot = {}.".format(seeds - 1, orders, n_boot),
        "",
        "| data set | rows | groups | code | verdicts over seeds | changes | verdicts over "
        "row orders | changes | difference over seeds | s per call |",
        "|---|---:|---:|---|---|---:|---|---:|---|---:|",
    ]
    headline = []
    with tempfile.TemporaryDirectory() as tmp:
        old = baseline_module(baseline, Path(tmp)).which_score
        for name in datasets:
            scores, correct, groups = build(name)
            n_groups = "-" if groups is None else str(groups.nunique())
            for code, which in ((baseline, old), ("working tree", which_score)):
                got = runs(which, scores, correct, groups, seeds=seeds, orders=orders,
                           n_boot=n_boot)  # fmt: skip
                ref = got["seed"][0][0]
                seed_words, seed_changes, spread = summary(got["seed"], ref)
                order_words, order_changes, _ = summary(got["order"], ref)
                lines.append(
                    f"| {name} | {len(correct):,} | {n_groups} | {code} | {seed_words} | "
                    f"{seed_changes}/{seeds} | {order_words} | {order_changes}/{orders} | "
                    f"{spread} | {got['seconds']:.2f} |"
                )
                headline.append((name, code, seed_changes, order_changes))
                print(lines[-1], flush=True)
    total = {c: [sum(h[k] for h in headline if h[1] == c) for k in (2, 3)]
             for c in (baseline, "working tree")}  # fmt: skip
    runs_each = len(datasets)
    lines += [
        "",
        f"Changes in all ({runs_each} data sets): before {total[baseline][0]} of "
        f"{runs_each * seeds} over seeds and {total[baseline][1]} of {runs_each * orders} over "
        f"row orders; after {total['working tree'][0]} and {total['working tree'][1]}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__" and "snakemake" in globals():
    from reliquant.core.benchmarks import report_body
    from reliquant.core.io import write_text
    from reliquant.core.runlog import start_job

    start_job(snakemake.log[0], "compare")  # noqa: F821
    report = main(DATASETS, BASELINE, 20, 20, 1000)
    write_text(report, snakemake.output.md)  # noqa: F821
    write_text(report_body(report), snakemake.output.block)  # noqa: F821
elif __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="the git revision of 'before'")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--orders", type=int, default=20)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--data", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--out", type=Path, default=Path("results/bench/which_score.md"))
    parser.add_argument("--docs-block", type=Path, help="also write the generated block")
    args = parser.parse_args()
    text = main(args.data, args.baseline, args.seeds, args.orders, args.n_boot)
    from reliquant.core.benchmarks import report_body
    from reliquant.core.io import write_text

    write_text(text, args.out)
    if args.docs_block is not None:
        write_text(report_body(text), args.docs_block)
    sys.stdout.write(text)
