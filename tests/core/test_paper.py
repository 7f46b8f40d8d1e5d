"""The paper-comparison mechanism (reliquant.core.paper): comparison and claim frames and the
cross-paper summary tables."""

from __future__ import annotations

import math

from reliquant.core.paper import (
    Claim,
    Comparison,
    claim_frame,
    comparison_frame,
    format_pair,
    render_summary,
)


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
            Claim("nbc", "robustness beats uncertainty", True, "7 of 9 cells", "holds if >= 5"),
            Claim("trees", "pruning error below 1 point", False, "max 2 points", "holds if <= 1"),
        ]
    )
    text = render_summary(comparisons, claims, {"nbc": "NBC", "trees": "Trees"})
    nbc_part, trees_part = text.split("## NBC")[1].split("## Trees")
    assert "| AUC | 0.9 | 0.91 | 0.01 |" in nbc_part
    assert "**holds**: robustness beats uncertainty (7 of 9 cells; holds if >= 5)" in nbc_part
    assert "R^2" in trees_part and "**does not hold**" in trees_part
    assert "R^2" not in nbc_part


def test_pipes_in_cells_are_escaped():
    text = render_summary(
        comparison_frame([Comparison("p", "max |a - b|", 1.0, 2.0)]),
        claim_frame([]),
        {"p": "P"},
    )
    row = next(line for line in text.splitlines() if line.startswith("| max"))
    assert row.count("|") - row.count("\\|") == 7


def test_different_numbers_never_print_alike():
    text = render_summary(
        comparison_frame(
            [Comparison("p", "R^2", 0.9999, 0.999896), Comparison("p", "acc", 0.98, 0.98)]
        ),
        claim_frame([]),
        {"p": "P"},
    )
    assert "| R^2 | 0.9999 | 0.999896 |" in text
    assert "| acc | 0.98 | 0.98 |" in text
    assert format_pair(1.0, 1.0 + 1e-12) == ("1", "1")  # beyond 10 digits: as equal as printed
    assert format_pair(0.9999, 0.999988) == ("0.9999", "0.99999")  # not rounded up to 1
    assert format_pair(float("nan"), 0.5) == ("–", "0.5")
    assert format_pair(2.5e-5, 2.50001e-5) == ("2.5e-05", "2.50001e-05")
