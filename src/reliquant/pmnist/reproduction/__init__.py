"""The perturbed MNIST set of paper 004 as the workflow builds it, with :mod:`reliquant.pmnist`.

Everything the workflow's ``pmnist_*`` rules and ``bench/pmnist.py`` run; a user corrupting
their own images needs none of it (see :mod:`reliquant.pmnist`).

Modules
-------
partitions        seeded per-block generation (``generate_block``), partition I/O, intensity summaries
partition_names   the names of the partitions that are not a corruption's (``CLEAN``)
calibration       the ``calibrated`` severity schedule (for any classifier's predict function)
figures           sample grids (Figure 6 style) and intensity-per-level plots
highlights        the schedule's quirks docs/pmnist.md quotes, generated from the run's statistics
opencv_reference  each corruption of one image as a user of OpenCV writes it (the benchmark's
                  reference; needs the ``bench`` extra, ``cv2`` is imported on use)
"""

__all__: list[str] = []
