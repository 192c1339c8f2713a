"""ITML_Supervised side by side: ours, metric-learn and Euclidean 3-NN.

    python benchmarks/bench_itml.py                 # -> benchmarks/results/itml.{json,md}
    python benchmarks/bench_itml.py --report        # re-render the markdown

See ``--help`` and benchmarks/README.md.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _peer_table  # noqa: E402

if __name__ == "__main__":
    sys.exit(_peer_table.cli(
        "itml_supervised",
        datasets="iris,wine,breast_cancer,digits",
        impls="ours,metric_learn,euclidean",
        stem="itml",
        title="ITML_Supervised: fit time and 3-NN accuracy",
    ))
