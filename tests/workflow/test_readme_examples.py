"""docs/library.md's "Your own model and data" and "Compare the scores on your own model"
sections (moved there from the README): every ```python block runs as it is and gives what the
text says, and the ```yaml block passes the config schema."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO

from reliquant.core.config import load_config, validate_config

HEADING = "## Your own model and data"
LIBRARY = REPO / "docs" / "library.md"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def section() -> str:
    page = LIBRARY.read_text(encoding="utf-8")
    assert page.count(HEADING) == 1, f"docs/library.md needs exactly one {HEADING!r}"
    return page.split(HEADING, 1)[1].split("\n## ", 1)[0]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(), flags=re.S)


def _name(code: str) -> str:
    """A test id: the model the block fits, else its first import from reliquant."""
    fit = re.search(r"= ([A-Za-z_.]+)\(.*\)\.fit\(", code)
    return fit.group(1) if fit else re.search(r"from reliquant\.(\w+)", code).group(1)


def test_the_section_has_one_example_per_kind():
    code = "\n".join(blocks("python"))
    for call in ("fit_table(", "CategoricalNB(", "RandomForestClassifier(", "XGBClassifier(",
                 "LGBMClassifier(", "misclassification_likelihood("):  # fmt: skip
        assert call in code, call
    assert "robustness_batch(" in code and "robustness(" in code and "Gaussian(" in code
    for block in blocks("python"):
        calls = [line for line in block.splitlines() if line and not line.startswith(("import",
                 "from"))]  # fmt: skip
        assert len(calls) <= 6, block


def _check_eps(scores: pd.DataFrame) -> None:
    for col in ("eps_glob", "eps_loc"):
        assert scores[col].between(0, 1).all(), col
    assert scores["eps_loc"].max() > 0


def _check_trees(frame: pd.DataFrame) -> None:
    for col in ("lower", "estimate", "upper", "ci_low", "ci_high"):
        assert frame[col].between(0, 1).all(), col
    tol = 1e-12
    assert (frame["lower"] <= frame["estimate"] + tol).all()
    assert (frame["estimate"] <= frame["upper"] + tol).all()
    assert (frame["lower"] <= frame["ci_low"] + tol).all()
    assert (frame["ci_high"] <= frame["upper"] + tol).all()
    exact = frame["exact"].to_numpy(dtype=bool)
    np.testing.assert_allclose(frame["lower"][exact], frame["upper"][exact], atol=1e-9)


def _check_against_monte_carlo(code: str, namespace: dict, scores: pd.DataFrame) -> None:
    """The certified bounds hold against an independent Monte Carlo estimate of
    R(x) = P(f(x') = f(x)) from the model's own ``predict`` (whatever the time budget let the
    method certify or sample: under load a short budget may certify nothing exactly)."""
    call = re.search(r"robustness_batch\((\w+), (.+?), (Gaussian\(.+?\)), ", code)
    model, X, noise = (eval(part, namespace) for part in call.groups())  # noqa: S307
    rng = np.random.default_rng(0)
    n = 20_000
    sd = np.sqrt(np.broadcast_to(np.asarray(noise.variance, dtype=float), X.shape[1:]))
    for x, row in zip(X, scores.itertuples(), strict=True):
        label = model.predict(x[None, :])[0]
        mc = float(np.mean(model.predict(x + sd * rng.standard_normal((n, x.size))) == label))
        slack = 5.0 * np.sqrt(max(mc * (1.0 - mc), 1.0 / n) / n)
        assert row.lower - slack <= mc <= row.upper + slack, (row, mc)
        assert abs(row.estimate - mc) <= 2.0 * (row.ci_high - row.ci_low) + slack, (row, mc)


@pytest.mark.parametrize("code", blocks("python"), ids=lambda code: _name(code))
def test_python_example_runs_and_gives_what_it_says(code):
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, "docs/library.md", "exec"), namespace)  # noqa: S102 - our own docs
    if "result" in namespace:  # reliquant.trees.robustness: one RobustnessResult
        result = namespace["result"]
        _check_trees(pd.DataFrame([vars(result)]))
        return
    scores = namespace["scores"]
    assert isinstance(scores, pd.DataFrame) and len(scores) > 0
    if "eps_glob" in scores:  # nbc
        _check_eps(scores)
        assert list(scores.columns[:3]) == ["prediction", "eps_glob", "eps_loc"]
        if "bootstrap=" in code:
            assert list(scores.columns[3:]) == ["u_m", "u_H", "u_a", "u_t", "u_e"]
            k = scores["prediction"].nunique()
            assert scores["u_m"].between(0, 1 - 1 / k).all()
            for col in ("u_H", "u_a", "u_t"):
                assert scores[col].between(0, np.log2(k) + 1e-12).all(), col
            assert (scores["u_e"] >= 0).all() and scores["u_e"].max() > 0
            np.testing.assert_allclose(scores["u_e"], scores["u_t"] - scores["u_a"], atol=1e-12)
    elif "lower" in scores:  # trees, one row per sample
        _check_trees(scores)
        _check_against_monte_carlo(code, namespace, scores)
    else:  # mlm: the off-diagonal pairs of D and L
        assert list(scores.columns) == ["true", "predicted", "distance", "likelihood"]
        k = scores["true"].nunique()
        assert len(scores) == k * (k - 1) and (scores["true"] != scores["predicted"]).all()
        assert (scores["distance"] >= 0).all() and scores["likelihood"].between(0, 1).all()
        rows = scores.groupby("true")["likelihood"].sum()
        np.testing.assert_allclose(rows, 1.0, atol=1e-9)  # each row of L sums to 1
        # the centroids come from the reference (training) set, as in the paper (eq. 3): the
        # mean softmax of its correctly classified examples of each class
        assert "reference_softmax=" in code and "reference_labels=" in code
        train, labels = namespace["ref"], namespace["y"][:1200]
        right = train.argmax(axis=1) == labels
        means = np.stack([train[right & (labels == c)].mean(axis=0) for c in range(k)])
        np.testing.assert_allclose(namespace["mlm"].class_means, means, atol=1e-12)


def test_yaml_example_passes_the_config_schema():
    (example,) = blocks("yaml")
    cases = yaml.safe_load(example)["custom"]
    assert sorted(case["kind"] for case in cases) == ["mlm", "nbc", "trees"]
    validate_config(dict(load_config(REPO / "config.yaml"), custom=cases), SCHEMA)


COMPARE_HEADING = "## Compare the scores on your own model"


def compare_blocks() -> list[str]:
    page = LIBRARY.read_text(encoding="utf-8")
    assert page.count(COMPARE_HEADING) == 1, f"docs/library.md needs one {COMPARE_HEADING!r}"
    text = page.split(COMPARE_HEADING, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_compare_section_has_one_example_per_model_kind():
    code = "\n".join(compare_blocks())
    for call in ("probability_scores(", "tree_robustness(", "black_box_robustness(",
                 "nbc_robustness(", "compare_scores("):  # fmt: skip
        assert call in code, call


@pytest.mark.parametrize("code", compare_blocks(), ids=lambda code: _name(code))
def test_compare_example_runs_and_ranks_its_scores(code):
    from reliquant.compare import COMPARISON_COLUMNS

    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, "docs/library.md", "exec"), namespace)  # noqa: S102 - our own docs
    comparison = namespace["comparison"]
    assert list(comparison.columns) == list(COMPARISON_COLUMNS)
    assert set(comparison["score"]) == set(namespace["scores"])
    assert comparison["best"].sum() == 1
    best = comparison.loc[comparison["best"]].iloc[0]
    assert best["auarc"] == comparison["auarc"].max() and best["diff_vs_best"] == 0
    assert comparison["auarc"].between(0, 1).all()
    assert (comparison["ci_low"] <= comparison["auarc"] + 1e-12).all()
    assert (comparison["auarc"] <= comparison["ci_high"] + 1e-12).all()
    assert (comparison["diff_vs_best"] <= 1e-12).all()


WHICH_HEADING = "## Which score should I trust? One answer"


def test_which_score_example_says_what_an_independent_t_interval_says():
    """The result object's example: the sentence it prints is the answer's, its numbers are
    the t-interval (scipy) of the per-split AU-ARC differences of the two scores each split's
    fold picked on the other splits (every split judged once), and its plot draws a line per
    score."""
    import contextlib
    import io

    import matplotlib.pyplot as plt
    from scipy import stats

    from reliquant.compare import SCORE_VERDICTS, auarc

    page = LIBRARY.read_text(encoding="utf-8")
    assert page.count(WHICH_HEADING) == 1, f"docs/library.md needs one {WHICH_HEADING!r}"
    text = page.split(WHICH_HEADING, 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace: dict = {"__name__": "readme_example"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/library.md", "exec"), namespace)  # noqa: S102 - our own docs
    answer, table = namespace["answer"], namespace["table"]
    correct, groups = namespace["correct"].to_numpy(), namespace["groups"].to_numpy()
    assert out.getvalue().strip() == answer.recommendation
    assert answer.verdict in SCORE_VERDICTS and answer.method == "groups"
    judged = answer.judged
    assert sorted(judged["unit"]) == sorted(set(groups))  # every split judged once
    d = np.array([auarc(table[r][groups == g], correct[groups == g])
                  - auarc(table[u][groups == g], correct[groups == g])
                  for g, r, u in zip(judged["unit"], judged["robustness"], judged["uncertainty"],
                                     strict=True)])  # fmt: skip
    lo, hi = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert (answer.diff, answer.ci_low, answer.ci_high) == pytest.approx((d.mean(), lo, hi))
    assert f"{d.size - 1} degrees of freedom" in answer.recommendation
    assert answer.robustness in answer.recommendation
    assert answer.uncertainty in answer.recommendation
    assert len(plt.gca().get_lines()) == len(answer.table) == table.shape[1]
    plt.close("all")


COMPARATORS_HEADING = "## The failure-detection comparators on your own model"


def test_comparators_example_scores_as_independent_computations_say():
    """The comparators' example: its logits are the model's (softmax = predict_proba), DOCTOR
    ranks as the Gini impurity, the trust score and the k-NN distance equal a brute force over
    scipy's pairwise distances, the Mahalanobis score scikit-learn's, AUROC_f scikit-learn's
    ROC AUC and AUGRC its closed form; every score beats random rejection (AUROC_f > 1/2)."""
    from scipy.spatial.distance import cdist
    from scipy.special import softmax
    from scipy.stats import rankdata
    from sklearn.covariance import EmpiricalCovariance
    from sklearn.metrics import roc_auc_score

    from reliquant.compare import COMPARISON_COLUMNS

    page = LIBRARY.read_text(encoding="utf-8")
    assert page.count(COMPARATORS_HEADING) == 1, f"docs/library.md needs one {COMPARATORS_HEADING!r}"  # fmt: skip
    text = page.split(COMPARATORS_HEADING, 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    ns: dict = {"__name__": "readme_example"}
    exec(compile(code, "docs/library.md", "exec"), ns)  # noqa: S102 - our own docs
    scores, correct, comparison = ns["scores"], ns["correct"], ns["comparison"]
    z_tr, z_te, y_tr, pred, proba = ns["Z_tr"], ns["Z_te"], ns["y_tr"], ns["pred"], ns["proba"]
    np.testing.assert_allclose(softmax(ns["logits"], axis=1), proba, atol=1e-10)
    np.testing.assert_array_equal(rankdata(scores["doctor"]), rankdata((proba**2).sum(axis=1)))
    # trust score (alpha 0.1, k 10): per class, k-NN radii counting the point itself
    kept = {}
    for c in np.unique(y_tr):
        pts = z_tr[y_tr == c]
        radii = np.sort(cdist(pts, pts), axis=1)[:, 9]
        kept[c] = pts[radii <= np.percentile(radii, 90.0)]
    d = np.column_stack([cdist(z_te, kept[c]).min(axis=1) for c in sorted(kept)])
    rows = np.arange(len(pred))
    to_pred, d[rows, pred] = d[rows, pred].copy(), np.inf
    np.testing.assert_allclose(scores["trust_score"], d.min(axis=1) / (to_pred + 1e-12), rtol=1e-6)
    unit_tr = z_tr / np.linalg.norm(z_tr, axis=1, keepdims=True)
    unit_te = z_te / np.linalg.norm(z_te, axis=1, keepdims=True)
    knn = -np.sort(cdist(unit_te, unit_tr), axis=1)[:, 9]
    np.testing.assert_allclose(scores["knn_distance"], knn, rtol=1e-6, atol=1e-9)
    means = np.array([z_tr[y_tr == c].mean(axis=0) for c in sorted(kept)])
    ec = EmpiricalCovariance(assume_centered=True).fit(z_tr - means[y_tr])
    maha = -np.array([ec.mahalanobis((z_te[i] - means[pred[i]])[None, :])[0] for i in rows])
    np.testing.assert_allclose(scores["mahalanobis"], maha, rtol=1e-6)
    assert list(comparison.columns) == list(COMPARISON_COLUMNS)
    assert set(comparison["score"]) == set(scores) and comparison["best"].sum() == 1
    acc = correct.mean()
    for name, metrics in ns["failure"].items():
        auc = roc_auc_score(correct, scores[name])
        assert metrics["auroc_f"] == pytest.approx(auc) and auc > 0.5, name
        closed = acc * (1 - acc) * (1 - auc) + (1 - acc) ** 2 / 2
        assert metrics["augrc"] == pytest.approx(closed), name
        assert 0 <= metrics["aurc"] <= 1 - acc, name  # better than a constant score


CERTIFIED_HEADING = "## Act only on predictions you can trust: a certified threshold"


def test_certified_threshold_example_answers_the_safety_engineers_question():
    """The certified-selection example (issue 43) is at most 10 lines of user code, prints the
    chosen score's certificate and, checked against the model's own predictions, what its
    threshold keeps on the test set; the choice keeps the guarantee's bookkeeping (each score
    at delta / S, the largest certified coverage, a bound below the target) and the figure
    draws every score."""
    import contextlib
    import io

    import matplotlib.pyplot as plt

    page = LIBRARY.read_text(encoding="utf-8")
    assert page.count(CERTIFIED_HEADING) == 1, f"docs/library.md needs one {CERTIFIED_HEADING!r}"
    text = page.split(CERTIFIED_HEADING, 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    user = [line for line in code.splitlines() if line and not line.startswith(("import", "from"))]
    assert len(user) <= 10, user
    namespace: dict = {"__name__": "readme_example"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/library.md", "exec"), namespace)  # noqa: S102 - our own docs
    first, second = out.getvalue().strip().splitlines()
    safe, forest, test = namespace["safe"], namespace["forest"], namespace["test"]
    X_cal, y_cal = namespace["X_cal"], namespace["y_cal"]
    X_te, y_te = namespace["X_te"], namespace["y_te"]
    sel = safe.selection_
    assert first == sel.message and sel.score in first and safe.score_ == sel.score
    certs = sel.certificates
    assert set(certs) == set(test.columns) and len(certs) >= 4
    assert all(c.delta == pytest.approx(0.1 / len(certs)) for c in certs.values())
    assert safe.coverage_ == max(c.coverage for c in certs.values() if c.certified)
    assert safe.certificate_.bound < 0.05 and safe.certificate_.empirical_risk < 0.05
    # what the threshold keeps, by hand from the model's own predictions and the score column
    score_cal = namespace["score_predictions"](forest, X_cal)[sel.score].to_numpy()
    assert safe.coverage_ == pytest.approx(np.mean(score_cal >= safe.threshold_))
    kept = test[sel.score].to_numpy() >= safe.threshold_
    wrong = forest.predict(X_te) != y_te
    assert second == f"test: {kept.mean():.1%} kept, {wrong[kept].mean():.2%} wrong"
    pred = safe.predict(X_te)
    np.testing.assert_array_equal(pred[kept], forest.predict(X_te)[kept])
    assert (pred[~kept] == -1).all() and 0 < kept.mean() < 1
    assert len(y_cal) == len(X_cal)
    ax = plt.gca()
    assert {line.get_label() for line in ax.get_lines()} >= {*certs, "target 0.05"}
    plt.close("all")
