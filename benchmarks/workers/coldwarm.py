"""One learner of ours in this fresh process: first fit, numba start-up, warm fits.

Job: ``{"dataset": "digits", "impl": "ours", "params": {"algo": "lmnn" |
"itml_supervised", "numba_first": bool}}``. Same data, split, learner and
parameters as the classification worker (70/30 stratified split,
``random_state=0``, StandardScaler, ``LMNN(n_neighbors=3, random_state=0)``
or ``ITML_Supervised(random_state=0)``, 3-NN accuracy). With
``numba_first`` numba's own start-up is timed alone first (the first call of
a trivial compiled function), so the first fit after it is kernel cache load
plus fit. Then the best of 5 further fits (warm).
"""

from __future__ import annotations

import sys
import time
import warnings

from benchmarks.workers import _protocol
from benchmarks.workers.classification import build_ours, knn_accuracy, load_dataset, split_scaled

WARM_FITS = 5


def run(job: dict) -> dict:
    """Time the first fit (after numba's start-up if asked), then warm fits."""
    X_train, X_test, y_train, y_test = split_scaled(*load_dataset(job["dataset"]))
    algo = job["params"]["algo"]
    build_ours(algo, {})  # import the package outside the timings
    warnings.simplefilter("ignore")  # e.g. ConvergenceWarning on tiny data sets
    out = {}
    if job["params"].get("numba_first"):
        from numba import njit

        @njit
        def _one(x):
            return x + 1

        start = time.perf_counter()
        _one(1.0)
        out["numba_startup"] = time.perf_counter() - start
    start = time.perf_counter()
    model = build_ours(algo, {})[1].fit(X_train, y_train)
    out["first_fit"] = time.perf_counter() - start
    times = []
    for _ in range(WARM_FITS):
        start = time.perf_counter()
        model = build_ours(algo, {})[1].fit(X_train, y_train)
        times.append(time.perf_counter() - start)
    out["warm_fit"] = min(times)
    out["n_iter"] = int(model.n_iter_)
    out["accuracy"] = knn_accuracy(model.transform(X_train), y_train,
                                   model.transform(X_test), y_test)
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
