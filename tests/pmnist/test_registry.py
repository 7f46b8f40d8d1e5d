"""The corruption registry: level -> parameters, validation, and no second source of bounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from reliquant.core.config import config_section
from reliquant.pmnist import registry as R
from reliquant.pmnist.corruptions import pixelation_side, to_float
from reliquant.pmnist.fields import draw_fields

REPO = Path(__file__).resolve().parents[2]
#: The paper preset, from its one home (config.yaml).
PAPER = config_section("pmnist", REPO / "config.yaml")["corruptions"]
Err = R.CorruptionConfigError


def test_paper_preset_in_config_is_complete_and_valid() -> None:
    assert list(PAPER) == list(R.CORRUPTIONS)
    R.validate_schedule(PAPER, complete=True)
    partial = {k: v for k, v in PAPER.items() if k != "fog"}
    R.validate_schedule(partial)  # one corruption at a time is fine (the generator's jobs)
    with pytest.raises(Err, match=r"missing corruption\(s\) \['fog'\]"):
        R.validate_schedule(partial, complete=True)
    with pytest.raises(Err, match=r"pmnist\.corruptions\.fog must be a mapping"):
        R.validate_schedule({"fog": [0.1] * 10})


@pytest.mark.parametrize("name", R.CORRUPTIONS)
def test_level_takes_item_level_minus_one_or_the_constant(name: str) -> None:
    """The same rule for every corruption: lists of 10 are indexed, scalars are constants."""
    for level in range(1, R.N_LEVELS + 1):
        got = R.level_params(name, PAPER[name], level)
        want = {k: v[level - 1] if isinstance(v, list) else v for k, v in PAPER[name].items()}
        assert got == want
        spec = R.REGISTRY[name]
        assert set(spec.per_level) == {k for k, v in PAPER[name].items() if isinstance(v, list)}
        for key, value in got.items():
            assert type(value) is spec.params[key].kind


@pytest.mark.parametrize("name", R.CORRUPTIONS)
def test_every_registered_parameter_is_read_by_its_corruption(name: str) -> None:
    """Dropping any one parameter breaks the corruption, so the registry lists no dead keys."""
    p = R.level_params(name, PAPER[name], 3)
    x = to_float(np.zeros((1, 28, 28), dtype=np.uint8))
    fields = draw_fields(name, 1, 3, np.array([0]))
    for key in p:
        with pytest.raises(KeyError):
            R.apply_float(name, x, {k: v for k, v in p.items() if k != key}, fields)


@pytest.mark.parametrize("name", R.CORRUPTIONS)
def test_bounds_are_enforced_for_every_parameter(name: str) -> None:
    for key, param in R.REGISTRY[name].params.items():
        for bound, step in ((param.lo, -1), (param.hi, +1)):
            if bound is None:
                continue
            bad = dict(PAPER[name])
            # the nearest value of the right kind beyond the bound (odd stays odd)
            value = bound + step * (1e-6 if param.kind is float else 2 if param.odd else 1)
            bad[key] = [value] * R.N_LEVELS if param.per_level else value
            with pytest.raises(Err, match=rf"{name}\.{key} = .* is outside"):
                R.level_params(name, bad, 1)


def test_declared_constraints_replace_name_special_cases() -> None:
    frost = dict(PAPER["frost"], blur_ksize=4)
    with pytest.raises(Err, match=r"frost\.blur_ksize must be odd; got 4"):
        R.level_params("frost", frost, 1)
    # pixelation's upper bound keeps the resampled side 28 // f at least one pixel
    f = R.REGISTRY["pixelation"].params["f"]
    assert pixelation_side(f.hi) == 1 and pixelation_side(f.lo) >= 28
    with pytest.raises(Err, match=r"pixelation\.f = 28\.5 is outside"):
        R.level_params("pixelation", {"f": [28.5] * 10}, 1)


def test_searches_name_per_level_parameters_within_bounds() -> None:
    for name, spec in R.REGISTRY.items():
        s = spec.search
        assert s.param in spec.per_level and set(s.fixed) <= set(spec.per_level), name
        p = spec.params[s.param]
        for v in (s.mild, s.severe):
            assert (p.lo is None or v >= p.lo) and (p.hi is None or v <= p.hi), name
        assert s.integer == (p.kind is int), name


def test_schema_leaves_parameters_to_the_registry() -> None:
    """The config schema does not repeat names, types or bounds of the registry."""
    schema = yaml.safe_load((REPO / "workflow/schemas/pmnist.schema.yaml").read_text())
    section = schema["properties"]["corruptions"]
    assert "properties" not in section and "required" not in section
    assert section["additionalProperties"] == {"type": "object"}


def test_bad_inputs_name_what_is_wrong() -> None:
    with pytest.raises(Err, match="unknown corruption 'sepia'"):
        R.level_params("sepia", {}, 1)
    for bad in (0, 11, 2.0, True):
        with pytest.raises(Err, match="level"):
            R.level_params("brightness", PAPER["brightness"], bad)
    k = list(PAPER["motion_blur"]["k"])
    k[3] = 4.5
    with pytest.raises(Err, match=r"motion_blur\.k must be an integer"):
        R.level_params("motion_blur", {"k": k, "centred": False}, 4)
    with pytest.raises(Err, match=r"brightness\.b must be a float"):
        R.level_params("brightness", {"b": ["x"] * 10}, 1)
    with pytest.raises(Err, match=r"brightness\.b must be finite"):
        R.level_params("brightness", {"b": [float("nan")] * 10}, 1)
    with pytest.raises(Err, match="10 values"):
        R.level_params("brightness", {"b": [0.1] * 9}, 1)
    with pytest.raises(Err, match=r"brightness\.b must be a list of 10 values"):
        R.level_params("brightness", {"b": 0.1}, 1)
    with pytest.raises(Err, match="unknown parameter"):
        R.level_params("brightness", {"b": [0.1] * 10, "gamma": 2}, 1)
    with pytest.raises(Err, match="missing parameter 'a'"):
        R.level_params("defocus_blur", {"k": [3] * 10}, 1)
    with pytest.raises(Err, match="missing parameter 'noise_std'"):
        R.level_params("fog", {"f": [0.5] * 10}, 1)  # constants live in config too
    with pytest.raises(Err, match=r"density = 1.5 is outside"):
        R.level_params("impulse_noise", {"density": [1.5] * 10, "amount": 1.0}, 1)
