# Data: verify the vendored raw files against their digests, convert each source once
# to parquet. Nothing downstream reads data/raw directly.


rule data_verify:
    input:
        manifest=config["data"]["manifest"],
        raw=present_raw_files,
    output:
        "results/data/verified.tsv",
    params:
        allow_download=config["data"]["allow_download"],
    log:
        "logs/data/verify.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_verify.py"


rule data_mnist:
    input:
        verified="results/data/verified.tsv",
    output:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    log:
        "logs/data/mnist.log",
    benchmark:
        "benchmarks/data/mnist.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_mnist.py"


rule data_pima:
    input:
        verified="results/data/verified.tsv",
    output:
        "results/data/pima.parquet",
    log:
        "logs/data/pima.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_pima.py"


rule data_iris:
    output:
        "results/data/iris.parquet",
    log:
        "logs/data/iris.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/data/data_iris.py"
