"""Project and Forget's two hot kernels alone: the triangle oracle and a projection pass.

Jobs, on the ``normal-<n>`` instance of :mod:`.metric_nearness` (seed 0):

* ``impl = "triangle_argmin"``, ``params = {"dtype": "float32" | "float64"}``:
  seconds per call of the tiled min-plus-with-argmin oracle kernel (best of
  ``repeat`` calls after a warm-up call).
* ``impl = "project_triangles_unit"`` | ``"project_paths_l2"``, ``params = {}``:
  nanoseconds per constraint of one Hildreth pass of the unit-weight triangle
  kernel and of the general (CSR, weighted) kernel over the *same* active
  set: the most violated triangle of every violated edge of the instance, as
  the oracle's first call finds them (best pass of ``repeat``, each from the
  same starting point).

A kernel micro-benchmark: unlike the other workers it calls private kernels.
They are looked up by name anywhere under ``metric_estimators._kernels``, so
the benchmark survives the kernels moving between files (not a change of
their signatures).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

from benchmarks.workers import _protocol
from benchmarks.workers.metric_nearness import instance, parse_dataset, upper_edge_index

REPEAT = 5


def find_kernel(name: str):
    """The function ``name`` from whichever ``metric_estimators._kernels`` module has it."""
    package = importlib.import_module("metric_estimators._kernels")
    if hasattr(package, name):
        return getattr(package, name)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        if hasattr(module, name):
            return getattr(module, name)
    raise LookupError(f"no kernel {name!r} under metric_estimators._kernels")


def _best(fn, repeat=REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def oracle_seconds(X, dtype: str) -> dict:
    """Seconds per ``triangle_argmin`` call on ``X`` in ``dtype``."""
    import numpy as np

    triangle_argmin = find_kernel("triangle_argmin")
    n = X.shape[0]
    Xd = X.astype(dtype)
    out, arg = np.empty((n, n), dtype=dtype), np.empty((n, n), dtype=np.int32)
    triangle_argmin(Xd, out, arg)  # compile / load the cache
    return {"seconds_per_call": _best(lambda: triangle_argmin(Xd, out, arg))}


def active_set(X):
    """Most violated triangle of each violated edge: (x, cons_edge, path, ptr)."""
    import numpy as np

    triangle_argmin = find_kernel("triangle_argmin")
    n = X.shape[0]
    out, arg = np.empty((n, n)), np.empty((n, n), dtype=np.int32)
    triangle_argmin(X, out, arg)
    i, j = np.triu_indices(n, 1)
    violated = X[i, j] - out[i, j] > 1e-12
    i, j = i[violated], j[violated]
    k = arg[i, j].astype(np.int64)
    cons_edge = upper_edge_index(n, i, j).astype(np.int64)
    path = np.stack([upper_edge_index(n, i, k), upper_edge_index(n, k, j)], axis=1)
    path = np.ascontiguousarray(path.ravel(), dtype=np.int64)
    ptr = np.arange(0, 2 * len(cons_edge) + 1, 2, dtype=np.int64)
    x = X[np.triu_indices(n, 1)].astype(np.float64)
    return x, cons_edge, path, ptr


def projection_ns(X, kernel: str) -> dict:
    """Nanoseconds per constraint of one pass of ``kernel`` over the active set."""
    import numpy as np

    x0, cons_edge, path, ptr = active_set(X)
    m = len(cons_edge)
    if kernel == "project_triangles_unit":
        project = find_kernel(kernel)

        def one_pass(x, z):
            project(x, 1.0, cons_edge, path, z, 0, m)
    elif kernel == "project_paths_l2":
        project = find_kernel(kernel)
        winv = np.ones_like(x0)

        def one_pass(x, z):
            project(x, winv, cons_edge, ptr, path, z, 0, m)
    else:
        raise ValueError(f"unknown kernel {kernel!r}")
    one_pass(x0.copy(), np.zeros(m))  # compile / load the cache
    best = float("inf")
    for _ in range(REPEAT):
        x, z = x0.copy(), np.zeros(m)
        start = time.perf_counter()
        one_pass(x, z)
        best = min(best, time.perf_counter() - start)
    return {"n_constraints": m, "seconds_per_pass": best, "ns_per_constraint": 1e9 * best / m}


def run(job: dict) -> dict:
    kind, n = parse_dataset(job["dataset"])
    X = instance(kind, n, job["params"].get("seed", 0))
    if job["impl"] == "triangle_argmin":
        return oracle_seconds(X, job["params"]["dtype"])
    return projection_ns(X, job["impl"])


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
