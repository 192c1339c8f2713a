"""L2 metric nearness on one sparse random graph (the sparse path of ``MetricNearness``).

Job: ``{"dataset": "random-<n>-<m>" or "geo-<n>-<k>", "impl": "ours",
"params": {"tol": 1e-3, "seed": 0}}``.  Two graph families, as ``scipy.sparse``
matrices:

- ``random-<n>-<m>`` (:func:`random_graph`): ``m`` distinct node pairs drawn
  uniformly (an Erdos-Renyi-like graph of average degree ``2 m / n``), lengths
  ``D_e ~ uniform(0, 1)``.  Its shortest paths are short (about
  ``ln n / degree`` against edge lengths up to 1), so the ball of every node
  under the current lengths is most of the graph: each oracle call costs
  nearly an all-pairs shortest-path computation.
- ``geo-<n>-<k>`` (:func:`geometric_graph`): ``n`` uniform points of the unit
  square, the symmetrised ``k``-nearest-neighbour graph (scikit-learn's
  ``kneighbors_graph``), lengths = Euclidean length times an independent
  ``lognormal(0, 0.3)`` noise factor per edge: a noisy road-network-like
  metric whose violated cycles are local, so the bounded searches stay small.
  Ours:
``MetricNearness(tol=tol, max_iter=200)`` on it: the edge problem with cycle
inequalities found by the bounded shortest-path oracle; ``fit_time`` is the
fit alone, after a tiny warm-up fit that loads numba's cache.

Reported: oracle calls, their mean time, active-set size, the objective
``sum (M_e - D_e)^2``, and an independent check of the result: scipy's
Dijkstra on the lengths ``metric_`` from ``--check-sources`` random sources,
the largest ``M_uv - dist(u, v)`` over those sources' edges relative to
``max D`` (0 for an exact metric on the graph); ``peak_rss_gb`` =
``ru_maxrss`` KiB / 1e6 at the end.

Before the fit, a probe of the oracle's cost (:func:`probe`): the bounded
search of the first call (lengths ``D``) timed from ``probe_sources`` (job key,
default 500) sources, the nodes ``0 .. probe_sources - 1`` (random nodes, since
both generators number nodes at random), extrapolated to all ``n`` sources
(``probe_call_estimate``; the threshold is ``tol * max D``), with the number
of violated cycles those sources found (``probe_violated``).  With ``"fit": false`` in ``params`` only the probe runs:
for graphs whose fit cannot finish, it shows what one oracle call costs.
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


def geometric_graph(n: int, k: int, seed: int):
    """Noisy symmetrised ``k``-NN graph of ``n`` uniform points of the unit square: CSR."""
    import numpy as np
    from scipy import sparse
    from sklearn.neighbors import kneighbors_graph

    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, 2))
    G = kneighbors_graph(X, k, mode="distance")
    G = sparse.triu(G.maximum(G.T), k=1).tocoo()  # each undirected edge once
    d = G.data * rng.lognormal(0.0, 0.3, G.nnz)
    return sparse.csr_matrix((np.concatenate((d, d)), (np.concatenate((G.row, G.col)),
                                                       np.concatenate((G.col, G.row)))),
                             shape=(n, n))


def make_graph(dataset: str, seed: int):
    """The graph named ``random-<n>-<m>`` or ``geo-<n>-<k>``."""
    family, n, size = dataset.split("-")
    if family == "random":
        return random_graph(int(n), int(size), seed)
    if family == "geo":
        return geometric_graph(int(n), int(size), seed)
    raise ValueError(f"unknown graph family {family!r} in {dataset!r}")


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


def probe(D, n_sources: int, threshold: float) -> dict:
    """Time the first oracle call's bounded searches from ``n_sources`` sources."""
    import numpy as np
    from scipy import sparse

    from metric_estimators._backend import NUMBA
    from metric_estimators._kernels.sparse_graph import bounded_violated_cycles
    from metric_estimators.solvers.oracles.sparse import _SparseGraph

    U = sparse.triu(D, k=1).tocoo()
    g = _SparseGraph(D.shape[0], U.row, U.col, search="bounded", kernels=NUMBA)
    x = np.ascontiguousarray(U.data, dtype=float)
    k = min(n_sources, D.shape[0])
    bounded_violated_cycles(x, g.indptr, g.indices, g.eid, 0, 2, threshold)  # compile
    start = time.perf_counter()
    ce, _, _, _ = bounded_violated_cycles(x, g.indptr, g.indices, g.eid, 0, k, threshold)
    elapsed = time.perf_counter() - start
    return {"probe_sources": k, "probe_time": elapsed,
            "probe_call_estimate": elapsed * D.shape[0] / k,
            "probe_violated": int(ce.size)}


def run(job: dict) -> dict:
    import numpy as np

    from metric_estimators import MetricNearness

    params = job["params"]
    D = make_graph(job["dataset"], params.get("seed", 0))
    D.sort_indices()
    out = {"n": int(D.shape[0]), "n_edges": int(D.nnz // 2)}
    out.update(probe(D, int(job.get("probe_sources", 500)),
                     params["tol"] * float(D.data.max())))
    if not params.get("fit", True):
        out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        return out
    MetricNearness().fit(random_graph(50, 200, 1))  # load numba's cache
    start = time.perf_counter()
    with warnings.catch_warnings(record=True):
        mn = MetricNearness(tol=params["tol"], max_iter=200).fit(D)
    fit_time = time.perf_counter() - start
    M = mn.metric_.tocsr()
    M.sort_indices()
    calls = mn.history_["oracle_time"]
    scale = float(D.data.max())
    return {**out, "fit_time": fit_time,
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
