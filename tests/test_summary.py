"""Cross-paper summary tables."""

from __future__ import annotations

import math

from reliquant.core.paper import Claim, Comparison, claim_frame, comparison_frame, render_summary


def test_difference_is_ours_minus_paper_and_nan_is_kept():
    frame = comparison_frame(
        [
            Comparison("mlm", "test accuracy", 98.46, 98.90, "%"),
            Comparison("mlm", "parameters", float("nan"), 206922),
        ]
    )
    assert math.isclose(frame["difference"].iloc[0], 0.44, abs_tol=1e-12)
    assert math.isnan(frame["difference"].iloc[1])


def test_render_groups_by_paper_and_marks_claims():
    comparisons = comparison_frame(
        [Comparison("nbc", "AUC", 0.9, 0.91), Comparison("trees", "R^2", 0.99, 0.98)]
    )
    claims = claim_frame(
        [
            Claim("nbc", "robustness beats uncertainty", True, "7 of 9 cells"),
            Claim("trees", "pruning error below 1 point", False, "max 2 points"),
        ]
    )
    text = render_summary(comparisons, claims, {"nbc": "NBC", "trees": "Trees"})
    nbc_part, trees_part = text.split("## NBC")[1].split("## Trees")
    assert "| AUC | 0.9 | 0.91 | 0.01 |" in nbc_part
    assert "**holds**: robustness beats uncertainty (7 of 9 cells)" in nbc_part
    assert "R^2" in trees_part and "**does not hold**" in trees_part
    assert "R^2" not in nbc_part


def test_collect_benchmarks_keeps_order_and_drops_inner_titles():
    from reliquant.core.benchmarks import collect_benchmarks

    text = collect_benchmarks({"nbc": "# NBC bench\n| a | b |", "mlm": "ratio 12x"})
    assert text.index("## nbc") < text.index("## mlm")
    assert "# NBC bench" not in text and "| a | b |" in text and "ratio 12x" in text


def test_pipes_in_cells_are_escaped():
    text = render_summary(
        comparison_frame([Comparison("p", "max |a - b|", 1.0, 2.0)]),
        claim_frame([]),
        {"p": "P"},
    )
    row = next(line for line in text.splitlines() if line.startswith("| max"))
    assert row.count("|") - row.count("\\|") == 7


def _cells(verdicts):
    import pandas as pd

    rows = [
        {"n_train": n, "gamma": g, "hard": n < 100 or g > 0, "verdict": v}
        for (n, g), v in verdicts.items()
    ]
    return pd.DataFrame(rows)


def test_nbc_claims_follow_the_cell_verdicts():
    from reliquant.nbc.paper import nbc_claims

    all_better = _cells({(100, 0.0): "tie", (25, 0.0): "better", (100, 0.4): "better"})
    first, second = nbc_claims(all_better)
    assert first.holds and second.holds
    one_tie = _cells({(100, 0.0): "worse", (25, 0.0): "better", (100, 0.4): "tie"})
    first, second = nbc_claims(one_tie)
    assert not first.holds and "not in N=100, γ=0.4" in first.evidence
    assert not second.holds


def test_mlm_claims_linearity_and_moved_classes():
    import numpy as np
    import pandas as pd

    from reliquant.mlm.paper import mlm_claims

    levels = np.arange(1, 11)
    per_level = pd.DataFrame({"corruption": "a", "level": levels, "accuracy": 0.98 - 0.05 * levels})
    shift = pd.DataFrame({"class": range(10), "distance": [1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3})
    linear, regimes, which = mlm_claims(per_level, shift, [5, 6])
    assert linear.holds and "R^2 = 1.000" in linear.evidence
    assert regimes.holds and which.holds
    curved = per_level.assign(accuracy=0.98 - 0.9 * (levels / 10) ** 6)
    assert not mlm_claims(curved, shift, [5, 6])[0].holds
    assert not mlm_claims(per_level, shift, [5, 8])[2].holds
