"""LMNN side by side: ours, PyLMNN, metric-learn, mlpack and Euclidean 3-NN.

    python benchmarks/bench_lmnn.py            # full table -> results/lmnn.{md,json}
    python benchmarks/bench_lmnn.py --datasets iris,digits --impls pylmnn,mlpack

See ``python benchmarks/bench_lmnn.py --help`` and benchmarks/README.md.
"""

import sys

import harness

if __name__ == "__main__":
    sys.exit(harness.cli(
        "lmnn",
        datasets="iris,wine,breast_cancer,digits,synth-10000-50,synth-30000-100,synth-60000-100",
        impls="ours,pylmnn,metric_learn,mlpack,euclidean",
        stem="lmnn",
        title="LMNN: fit time and 3-NN accuracy",
    ))
