"""Cold start of LMNN: this fresh process's imports and first fit on iris.

Job: ``{"dataset": "iris", "impl": "ours", "params": {}}``. Times, from the
start of the job in a fresh interpreter: importing scikit-learn's dataset
loader, importing metric_estimators, the first ``LMNN(random_state=0)`` fit on
iris (numba's start-up and kernel cache load included), and their total.
"""

from __future__ import annotations

import sys
import time

from benchmarks.workers import _protocol


def run(job: dict) -> dict:
    """Import and fit once, timing each step."""
    t0 = time.perf_counter()
    from sklearn.datasets import load_iris
    t1 = time.perf_counter()
    from metric_estimators import LMNN
    t2 = time.perf_counter()
    X, y = load_iris(return_X_y=True)
    import warnings

    warnings.simplefilter("ignore")
    LMNN(random_state=0).fit(X, y)
    t3 = time.perf_counter()
    return {"sklearn_import": t1 - t0, "package_import": t2 - t1, "first_fit": t3 - t2,
            "total_after_start": t3 - t0}


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
