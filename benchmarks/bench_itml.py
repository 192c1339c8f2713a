"""ITML_Supervised side by side: ours, metric-learn and Euclidean 3-NN.

    python benchmarks/bench_itml.py            # full table -> results/itml.{md,json}

See ``python benchmarks/bench_itml.py --help`` and benchmarks/README.md.
"""

import sys

import harness

if __name__ == "__main__":
    sys.exit(harness.cli(
        "itml_supervised",
        datasets="iris,wine,breast_cancer,digits",
        impls="ours,metric_learn,euclidean",
        stem="itml",
        title="ITML_Supervised: fit time and 3-NN accuracy",
    ))
