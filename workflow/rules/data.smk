# Data: verify the vendored raw files of each data set against their digests, convert each
# source once to parquet. Nothing downstream reads data/raw directly. Verification is per
# data set (the manifest path's first folder: mnist, pima, benchmarks), so editing the Pima
# CSV or its digest reruns only the Pima jobs. The tabular benchmark tables (data_benchmark)
# are made only when a rule asks for one.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

DATA_CODE = code_digest()


DATA_SETS = sorted(data_manifest(config["data"]["manifest"])["dataset"].unique())
DATA_TARGETS = [
    "results/data/mnist_train.parquet",
    "results/data/mnist_test.parquet",
    "results/data/pima.parquet",
    "results/data/iris.parquet",
]


# The tabular benchmark sets (config data.benchmarks): each must be in the manifest. Not final
# outputs: the rules that use one ask for it.
DATA_BENCHMARKS = config["data"]["benchmarks"]
DATA_BENCHMARK_PATHS = {f"benchmarks/{name}.csv.gz": name for name in DATA_BENCHMARKS}
DATA_UNLISTED = sorted(
    set(DATA_BENCHMARK_PATHS) - set(data_manifest(config["data"]["manifest"])["path"])
)
if DATA_UNLISTED:
    raise ValueError(
        f"config data.benchmarks: {DATA_UNLISTED} not in the manifest {config['data']['manifest']}"
    )


wildcard_constraints:
    dataset="|".join(DATA_SETS),
    benchmark="|".join(DATA_BENCHMARKS),


rule data_verify:
    input:
        raw=lambda wc: present_raw_files(config["data"]["manifest"], wc.dataset),
    output:
        "results/data/verified_{dataset}.tsv",
    params:
        code=DATA_CODE,
        manifest=config["data"]["manifest"],
        rows=lambda wc: manifest_rows(config["data"]["manifest"], wc.dataset),
        allow_download=config["data"]["allow_download"],
    log:
        "logs/data/verify_{dataset}.log",
    benchmark:
        "benchmarks/data/verify_{dataset}.tsv"
    # On the critical path (MNIST -> CNN training -> inference): scheduled first.
    priority: 100
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_verify.py"


rule data_mnist:
    input:
        verified="results/data/verified_mnist.tsv",
    output:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    params:
        code=DATA_CODE,
    log:
        "logs/data/mnist.log",
    benchmark:
        "benchmarks/data/mnist.tsv"
    priority: 100
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_mnist.py"


rule data_pima:
    input:
        verified="results/data/verified_pima.tsv",
    output:
        "results/data/pima.parquet",
    params:
        code=DATA_CODE,
    log:
        "logs/data/pima.log",
    benchmark:
        "benchmarks/data/pima.tsv"
    # the data first: priorities do not pass to the jobs a job waits for (trees_pima)
    priority: 100
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_pima.py"


rule data_iris:
    output:
        "results/data/iris.parquet",
    params:
        code=DATA_CODE,
    log:
        "logs/data/iris.log",
    benchmark:
        "benchmarks/data/iris.tsv"
    # the data first: priorities do not pass to the jobs a job waits for
    priority: 100
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_iris.py"


rule data_benchmark:
    input:
        verified="results/data/verified_benchmarks.tsv",
    output:
        "results/data/benchmarks/{benchmark}.parquet",
    params:
        code=DATA_CODE,
        raw=lambda wc: f"benchmarks/{wc.benchmark}.csv.gz",
    log:
        "logs/data/benchmark_{benchmark}.log",
    benchmark:
        "benchmarks/data/benchmark_{benchmark}.tsv"
    priority: 100
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_benchmark.py"
