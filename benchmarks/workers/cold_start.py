"""Cold start of LMNN: this fresh process's imports and first fit on iris.

Job: ``{"dataset": "iris", "impl": "ours" | "nca", "params": {}}``. Times,
from the start of the job in a fresh interpreter: importing scikit-learn's
dataset loader, importing the learner (metric_estimators' LMNN, or
scikit-learn's NeighborhoodComponentsAnalysis for ``impl="nca"``, the
reference the overhead is measured against), the first
``LMNN(random_state=0)`` (or ``NeighborhoodComponentsAnalysis(random_state=0)``)
fit on iris (numba's start-up and kernel cache load included), and their
total.
"""

from __future__ import annotations

import sys
import time

from benchmarks.workers import _protocol


def run(job: dict) -> dict:
    """Import and fit once, timing each step."""
    c0 = time.process_time()
    t0 = time.perf_counter()
    from sklearn.datasets import load_iris
    t1 = time.perf_counter()
    if job.get("impl", "ours") == "nca":
        from sklearn.neighbors import NeighborhoodComponentsAnalysis as Learner
    else:
        from metric_estimators import LMNN as Learner
    t2 = time.perf_counter()
    X, y = load_iris(return_X_y=True)
    import warnings

    warnings.simplefilter("ignore")
    Learner(random_state=0).fit(X, y)
    t3 = time.perf_counter()
    return {"sklearn_import": t1 - t0, "package_import": t2 - t1, "first_fit": t3 - t2,
            "total_after_start": t3 - t0,
            # CPU seconds of the same span: less sensitive to a loaded machine
            "cpu_after_start": time.process_time() - c0}


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
