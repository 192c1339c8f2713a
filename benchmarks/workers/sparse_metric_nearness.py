"""L2 metric nearness on one sparse random graph (the sparse path of ``MetricNearness``).

Job: ``{"dataset": "random-<n>-<m>", "impl": "ours", "params": {"tol": 1e-3,
"seed": 0}}``.  The graph (:func:`random_graph`): ``m`` distinct node pairs
drawn uniformly (an Erdos-Renyi-like graph of average degree ``2 m / n``),
lengths ``D_e ~ uniform(0, 1)``, as a ``scipy.sparse`` matrix.  Ours:
``MetricNearness(tol=tol, max_iter=200)`` on it: the edge problem with cycle
inequalities found by the bounded shortest-path oracle; ``fit_time`` is the
fit alone, after a tiny warm-up fit that loads numba's cache.

Reported: oracle calls, their mean time, active-set size, the objective
``sum (M_e - D_e)^2``, and an independent check of the result: scipy's
Dijkstra on the lengths ``metric_`` from ``--check-sources`` random sources,
the largest ``M_uv - dist(u, v)`` over those sources' edges relative to
``max D`` (0 for an exact metric on the graph); ``peak_rss_gb`` =
``ru_maxrss`` KiB / 1e6 at the end.
"""

from __future__ import annotations

import resource
import sys
import time
import warnings

from benchmarks.workers import _protocol

CHECK_SOURCES = 200


def random_graph(n: int, m: int, seed: int):
    """``m`` distinct uniform random pairs of ``n`` nodes, lengths uniform(0, 1): CSR."""
    import numpy as np
    from scipy import sparse

    rng = np.random.default_rng(seed)
    keys = np.empty(0, dtype=np.int64)
    while keys.size < m:  # draw until m distinct pairs
        u = rng.integers(0, n, 2 * m)
        v = rng.integers(0, n, 2 * m)
        keep = u != v
        k = np.minimum(u, v)[keep].astype(np.int64) * n + np.maximum(u, v)[keep]
        keys = np.unique(np.concatenate((keys, k)))
    keys = np.sort(rng.choice(keys, m, replace=False))
    lo, hi = keys // n, keys % n
    d = rng.uniform(0.0, 1.0, m)
    return sparse.csr_matrix((np.concatenate((d, d)), (np.concatenate((lo, hi)),
                                                       np.concatenate((hi, lo)))),
                             shape=(n, n))


def check(M, n_sources: int, seed: int) -> float:
    """Largest ``M_uv - dist_M(u, v)`` over the edges of random sources (scipy Dijkstra)."""
    import numpy as np
    from scipy.sparse import csgraph

    rng = np.random.default_rng(seed + 1)
    src = rng.choice(M.shape[0], min(n_sources, M.shape[0]), replace=False)
    L = M.copy()
    L.data = np.maximum(L.data, 1e-300)  # keep zero-length edges
    dist = csgraph.dijkstra(L, directed=False, indices=src)
    worst = 0.0
    for row, s in enumerate(src):
        lo, hi = M.indptr[s], M.indptr[s + 1]
        if hi > lo:
            worst = max(worst, float(np.max(M.data[lo:hi] - dist[row, M.indices[lo:hi]])))
    return worst


def run(job: dict) -> dict:
    import numpy as np

    from metric_estimators import MetricNearness

    _, n, m = job["dataset"].split("-")
    params = job["params"]
    D = random_graph(int(n), int(m), params.get("seed", 0))
    MetricNearness().fit(random_graph(50, 200, 1))  # load numba's cache
    start = time.perf_counter()
    with warnings.catch_warnings(record=True):
        mn = MetricNearness(tol=params["tol"], max_iter=200).fit(D)
    fit_time = time.perf_counter() - start
    M = mn.metric_.tocsr()
    M.sort_indices()
    D.sort_indices()
    calls = mn.history_["oracle_time"]
    scale = float(D.data.max())
    return {"fit_time": fit_time, "n": int(n), "n_edges": int(m),
            "n_iter": mn.n_iter_, "converged": bool(mn.converged_),
            "oracle_time_per_call": float(np.mean(calls)) if calls else None,
            "n_active": mn.n_active_,
            "objective": float(np.sum((M.data - D.data) ** 2) / 2),
            "violation": mn.violation_,
            "check_violation": check(M, CHECK_SOURCES, params.get("seed", 0)) / scale,
            "check_sources": CHECK_SOURCES,
            "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6}


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
