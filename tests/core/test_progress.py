"""Progress bars of long library calls (reliquant.core.progress): off when nobody watches
(stderr not a terminal: workflow logs, test runs), on in a terminal, and ``progress=`` wins.
Each test calls the library as a user does and reads what reached stderr."""

from __future__ import annotations

import io

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from reliquant.core import progress as progress_module
from reliquant.core.progress import progress_bar, show_progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_switch(monkeypatch):
    monkeypatch.delenv("RELIQUANT_NO_PROGRESS", raising=False)
    monkeypatch.setattr(progress_module.sys, "stderr", io.StringIO())
    monkeypatch.delitem(progress_module.sys.modules, "ipykernel", raising=False)
    assert show_progress() is False  # a log file, a pipe
    assert show_progress(True) is True
    monkeypatch.setattr(progress_module.sys, "stderr", _Terminal())
    assert show_progress() is True and show_progress(False) is False
    monkeypatch.setenv("RELIQUANT_NO_PROGRESS", "1")
    assert show_progress() is False and show_progress(True) is True
    with pytest.raises(ValueError, match="progress must be True, False or None; got 'yes'"):
        show_progress("yes")


def test_a_bar_counts_to_the_total(monkeypatch):
    term = _Terminal()
    monkeypatch.delenv("RELIQUANT_NO_PROGRESS", raising=False)
    monkeypatch.setattr(progress_module.sys, "stderr", term)
    assert list(progress_bar(range(7), desc="work", unit="row", leave=True)) == list(range(7))
    assert "work: 100%" in term.getvalue() and "7/7" in term.getvalue()


def test_robustness_batch_shows_samples_only_when_asked(monkeypatch, capsys):
    """A user's batch in a terminal gets a bar (count and time left); a log does not."""
    from reliquant.trees import Gaussian, robustness_batch

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    model = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, X[:, 0] > 0)
    det = {"max_boxes": 10, "max_draws": 4096}
    robustness_batch(model, X[:4], Gaussian(0.1), **det)
    assert capsys.readouterr().err == ""  # not a terminal: no bar
    robustness_batch(model, X[:4], Gaussian(0.1), progress=True, **det)
    err = capsys.readouterr().err
    assert "robustness:" in err and "/4 [" in err and "sample/s" in err  # count, rate, ETA


def test_nbc_bootstrap_and_mlm_softmax_bars(capsys):
    import pandas as pd

    from reliquant.nbc import fit_table, robustness

    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": rng.choice(list("xyz"), 300), "b": rng.choice(list("pq"), 300)})
    table["t"] = (table["a"] == "x").map({True: "yes", False: "no"})
    fitted = fit_table(table, "t", alpha=1.0)
    quiet = robustness(fitted, table.head(5), bootstrap=6)
    assert capsys.readouterr().err == ""
    shown = robustness(fitted, table.head(5), bootstrap=6, progress=True)
    assert "bootstrap" in capsys.readouterr().err
    pd.testing.assert_frame_equal(quiet, shown)  # the bar changes nothing else
    torch = pytest.importorskip("torch")
    from reliquant.mlm import predict_softmax

    net = torch.nn.Linear(3, 2)
    x = rng.normal(size=(10, 3)).astype(np.float32)
    out = predict_softmax(net, x, preprocess=torch.from_numpy, progress=True)
    assert "softmax" in capsys.readouterr().err
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)


def test_black_box_robustness_bar_counts_samples_and_changes_nothing(capsys):
    """The Monte Carlo robustness of any model: a bar over the samples when asked, the same
    estimates either way."""
    from reliquant.compare import black_box_robustness

    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    model = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, X[:, 0] > 0)
    quiet = black_box_robustness(model.predict, X[:6], 0.1, n_draws=64, seed=3)
    assert capsys.readouterr().err == ""
    shown = black_box_robustness(model.predict, X[:6], 0.1, n_draws=64, seed=3, progress=True)
    err = capsys.readouterr().err
    assert "Monte Carlo robustness:" in err and "/6 [" in err and "sample/s" in err
    np.testing.assert_array_equal(quiet.n_agree, shown.n_agree)


def test_compare_scores_bar_counts_resamples_and_changes_nothing(capsys):
    """The bootstrap of compare_scores (and which_score without groups): a bar over the
    resamples when asked, an identical table either way."""
    import pandas as pd

    from reliquant.compare import compare_scores

    rng = np.random.default_rng(4)
    scores = {"a": rng.random(300), "b": rng.random(300)}
    correct = rng.random(300) < 0.7
    quiet = compare_scores(scores, correct, n_boot=50, seed=1)
    assert capsys.readouterr().err == ""
    shown = compare_scores(scores, correct, n_boot=50, seed=1, progress=True)
    err = capsys.readouterr().err
    assert "bootstrap AU-ARC:" in err and "/50 [" in err and "resample/s" in err
    pd.testing.assert_frame_equal(quiet, shown)
