"""LMNN side by side: ours, PyLMNN, metric-learn, mlpack and Euclidean 3-NN.

    python benchmarks/bench_lmnn.py --datasets iris,digits --impls ours,pylmnn --output lmnn
    python benchmarks/bench_lmnn.py --output lmnn_small --report   # re-render the markdown

Results merge into ``benchmarks/results/<output>.json`` keyed by (dataset,
impl, params); see ``--help`` and benchmarks/README.md for the commands behind
every published number.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _peer_table  # noqa: E402

if __name__ == "__main__":
    sys.exit(_peer_table.cli(
        "lmnn",
        datasets="iris,wine,breast_cancer,digits,synth-10000-50,synth-30000-100,synth-60000-100",
        impls="ours,pylmnn,metric_learn,mlpack,euclidean",
        stem="lmnn",
        title="LMNN: fit time and 3-NN accuracy",
    ))
