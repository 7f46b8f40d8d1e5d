# compare, stage 2: AU-ARC per split (and AURC, E-AURC, AUGRC, AUROC_f beside it), the
# declared comparisons, paper 000's rule, the headline, the paper's score against each
# comparator family and the hybrid (compare_evaluate), the figures, the claim against the papers, and
# the topic's benchmark. Constants in compare.smk.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).


rule compare_evaluate:
    input:
        COMPARE_PREDICTIONS,
    output:
        auarc="results/compare/auarc.parquet",
        auarc_md="results/compare/auarc.md",
        auarc_html=compare_report(
            "results/compare/auarc.html",
            "compare_auarc",
            "Scores",
            name="AU-ARC of every score per data set and case, mean over splits, and the declared comparisons",
        ),
        contrast="results/compare/contrast.parquet",
        declared="results/compare/declared.parquet",
        headline="results/compare/headline.parquet",
        hybrid="results/compare/hybrid.parquet",
        hybrid_md="results/compare/hybrid.md",
        hybrid_html=compare_report(
            "results/compare/hybrid.html",
            "compare_hybrid",
            "Hybrid",
            name="Hybrid of robustness and uncertainty over splits: gain and importance",
        ),
        families="results/compare/families.parquet",
        families_md="results/compare/families.md",
        families_html=compare_report(
            "results/compare/families.html",
            "compare_families",
            "Claim",
            name="The paper's score against the best of each comparator family, Holm",
        ),
        curves="results/compare/curves.parquet",
        noise="results/compare/noise.parquet",
    params:
        code=COMPARE_CODE,
        evaluation=COMPARE["evaluation"],
        comparisons=COMPARE["comparisons"],
        # paper 000's rule with the nbc topic's threshold, so the two topics cannot disagree
        z=config["nbc"]["paper"]["z"],
    log:
        "logs/compare/evaluate.log",
    benchmark:
        "benchmarks/compare/evaluate.tsv"
    priority: 15
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_evaluate.py"


rule compare_figures:
    input:
        curves="results/compare/curves.parquet",
        noise="results/compare/noise.parquet",
        declared="results/compare/declared.parquet",
        headline="results/compare/headline.parquet",
        families="results/compare/families.parquet",
    output:
        curves_png=compare_report(
            f"{COMPARE_FIGS}/rejection_curves.png",
            "compare_rejection_curves",
            "Scores",
            name="Accuracy-rejection curves under shift, a panel per data set",
        ),
        curves_pdf=f"{COMPARE_FIGS}/rejection_curves.pdf",
        heatmap=compare_report(
            f"{COMPARE_FIGS}/difference_heatmap.png",
            "compare_difference_heatmap",
            "Scores",
            name="Every paper score minus every uncertainty score: mean over splits, Holm",
        ),
        forest_png=compare_report(
            f"{COMPARE_FIGS}/forest.png",
            "compare_forest",
            "Claim",
            name="Paper score minus comparator per data set and condition, t-intervals",
        ),
        forest_pdf=f"{COMPARE_FIGS}/forest.pdf",
        noise=compare_report(
            f"{COMPARE_FIGS}/noise_scale.png",
            "compare_noise_scale",
            "Scores",
            name="AU-ARC of the Monte Carlo robustness against its noise scale",
        ),
    params:
        code=COMPARE_CODE,
    log:
        "logs/compare/figures.log",
    benchmark:
        "benchmarks/compare/figures.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_figures.py"


rule compare_paper:
    input:
        headline="results/compare/headline.parquet",
    output:
        comparison="results/compare/paper_comparison.parquet",
        claims="results/compare/paper_claims.parquet",
        notes="results/compare/paper_notes.md",
        md="results/compare/claims.md",
        html=compare_report(
            "results/compare/claims.html",
            "compare_claims",
            "Claim",
            name="Robustness against uncertainty under shift: the claim per data set",
        ),
    params:
        code=COMPARE_CODE,
        evaluation=COMPARE["evaluation"],
    log:
        "logs/compare/paper.log",
    benchmark:
        "benchmarks/compare/paper.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_paper.py"


# compare_scores' bootstrap timed, and the last run's compare jobs' job time against the
# topic's budget (bench/compare.py; rule bench collects its headline rows). No input: it
# reads benchmarks/compare/*.tsv as the last run left them (named targets: benchmarks/named/)
# (`snakemake --cores 2 --forcerun bench_compare bench` after a run). Its own record goes to
# benchmarks/report/, so that it never counts itself.
rule bench_compare:
    output:
        "results/bench/compare.md",
    params:
        code=COMPARE_CODE,
    log:
        "logs/compare/bench.log",
    benchmark:
        "benchmarks/report/bench_compare.tsv"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=10,
    conda:
        ENV_CORE
    script:
        "../../bench/compare.py"
