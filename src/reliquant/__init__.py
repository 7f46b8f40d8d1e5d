"""reliquant: per-prediction reliability quantification.

Algorithms only: numpy in, numpy out; no Snakemake imports, no global state. The
Snakemake workflow in ``workflow/`` drives these functions through thin scripts.

Modules
-------
io              atomic parquet / figure / text writers, the uint8 image column codec
seeding         per-block random generators derived from one config seed
datasets        IDX (MNIST) parsing, checksum verification, Pima and Iris tables
"""

__version__ = "0.1.0"
