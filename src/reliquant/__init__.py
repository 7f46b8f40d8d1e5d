"""reliquant: per-prediction reliability quantification.

Algorithms only: numpy in, numpy out; no Snakemake imports, no global state. The
Snakemake workflow in ``workflow/`` drives these functions through thin scripts.

Modules
-------
Shared
    io                  atomic parquet / figure / text writers, the uint8 image column codec
    seeding             per-block random generators derived from one config seed
    runlog, plotting    logging set-up and the shared figure style
    datasets            checksum verification, IDX (MNIST) parsing, Pima and Iris tables
    summary             the papers' numbers beside ours, claims, benchmark collection
Naive Bayes robustness (paper 000)
    nbc                 categorical NBC with eq. 18 smoothing, cross-validated alpha
    uncertainty         u_m, u_H, and the bootstrap-ensemble u_a, u_t, u_e
    robustness_metrics  eps_glob (eq. 13) and eps_loc (Theorem 6.1) in log space
    acceptance          accuracy-acceptance curves with order-free tie handling, AUC
    nbc_experiment      the synthetic experiment of Section 7
Tree-ensemble robustness (papers 001/002)
    tree_structure      split structure of scikit-learn and XGBoost models, exact semantics
    box_mass            noise models (independent, correlated, NORTA) and box masses
    norta               NORTA marginals and the Spearman-to-normal correlation map
    tree_boxes          the papers' grid method and its 99 % pruning
    tree_engine         our exact branch-and-bound engine with certified bounds
    monte_carlo         the Monte Carlo baseline with a binomial interval
    tree_data, tree_experiments   data preparation and the experiments of Section 5
Perturbed MNIST and the MLM (paper 004)
    corruptions         12 batch corruptions on (n, 28, 28) images
    perturbed_mnist     seeded per-block generation, partition I/O, summaries
    calibration         the ``calibrated`` severity schedule
    cnn, inference      the CNN of Section 3.1, training, batched softmax on GPU or CPU
    mlm                 centroids, K-Means refinement, distance and likelihood matrices
    mlm_figures         the paper's Figures 1-7
"""

__version__ = "0.1.0"
