"""The perturbed MNIST data set of paper 004 (Section 3.2): 12 corruptions x 10 levels.

What a user applies to images lives here, at ``reliquant.pmnist`` (:data:`__all__`): the
corruptions by name with their parameter types and bounds (:data:`REGISTRY`), one level's
parameters (:func:`level_params`), a schedule's validation (:func:`validate_schedule`), the
corruption of a batch (:func:`corrupt`) with its random fields (:func:`draw_fields`), and the
``uint8 <-> [-1, 1]`` pipeline (:func:`to_float`, :func:`to_uint8`).

The code that builds the perturbed set as the workflow does (seeded per-block generation and
the partition files, the ``calibrated`` severity schedule, the figures, the generated doc
blocks) and the OpenCV per-image reference of the benchmark live in
:mod:`reliquant.pmnist.reproduction`; nothing here imports it.

Modules
-------
kernels       filters and area resampling on float batches (reflect-101, OpenCV anchors)
corruptions   the uint8 <-> [-1, 1] pipeline and the 12 batch corruptions
registry      corruptions by name: parameter types/bounds, one level's parameters, validation
fields        the random fields of a batch, drawn per image from counter-based block streams
streams       NumPy's PCG64 stream, normal and uniform draws, compiled (numba), bit for bit
fused         (package) each corruption as one compiled per-image loop, fields included
              (generation): compiled code in one module, per-level constants, dispatch
reproduction  the perturbed set as the workflow builds it, calibration, figures (see its docstring)
"""

from reliquant.core.lazy import lazy_attributes

#: Each public name and the module that defines it, imported when the name is first used
#: (PEP 562): code that reads the run's tables (the doc blocks) loads no numba.
_HOMES = {
    "to_float": "corruptions",
    "to_uint8": "corruptions",
    "draw_fields": "fields",
    "CORRUPTIONS": "registry",
    "N_LEVELS": "registry",
    "REGISTRY": "registry",
    "CorruptionConfigError": "registry",
    "corrupt": "registry",
    "level_params": "registry",
    "validate_schedule": "registry",
}

__all__ = [
    "CORRUPTIONS",
    "N_LEVELS",
    "REGISTRY",
    "CorruptionConfigError",
    "corrupt",
    "draw_fields",
    "level_params",
    "to_float",
    "to_uint8",
    "validate_schedule",
]

__getattr__, __dir__ = lazy_attributes(__name__, _HOMES, globals())
