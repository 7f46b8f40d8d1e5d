"""The names of the perturbed set's partitions that are not a corruption's.

Kept apart from :mod:`reliquant.pmnist.reproduction.partitions` (which compiles the
generation kernels) so that code reading the run's tables by name, such as the generated doc
blocks (:mod:`reliquant.pmnist.reproduction.highlights`), loads no numba.
"""

from __future__ import annotations

__all__ = ["CLEAN"]

#: The partition of the unperturbed test images (level 0), beside the 12 corruptions'.
CLEAN = "clean"
