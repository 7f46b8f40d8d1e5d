"""The perturbed MNIST data set of paper 004 (Section 3.2): 12 corruptions x 10 levels.

Modules
-------
corruptions  12 batch corruptions on (n, 28, 28) images, the registry of their parameters
partitions   seeded per-block generation, partition I/O, intensity summaries, figures
calibration  the ``calibrated`` severity schedule (for any classifier's predict function)
"""

from reliquant.pmnist.corruptions import N_LEVELS, corrupt, level_params, validate_schedule

__all__ = ["N_LEVELS", "corrupt", "level_params", "validate_schedule"]
