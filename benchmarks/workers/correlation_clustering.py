"""Correlation clustering LP of one networkx graph: ours (Project and Forget) or cvxpy.

Job: ``{"dataset": "<graph>-<n>", "impl": "ours" | "ours-dask-<k>" | "cvxpy", "params":
{"gamma": 10.0, "tol": 1e-2, "seed": 0}}``. Graphs: ``signed``: a sparse planted-partition signed graph
(:func:`benchmarks.cc_instances.signed_planted`: communities of 50-200,
average degree 10, 10 % sign noise, lognormal weights), fitted as a
``scipy.sparse`` matrix (the sparse path); ``planted``:
``networkx.planted_partition_graph(k, n // k, 0.9, 0.1)`` with
``k = max(2, n // 100)`` communities; ``lfr``: ``networkx.LFR_benchmark_graph(n,
2.5, 1.5, 0.1, average_degree=20, max_degree=50, min_community=50,
max_community=200)``. The graph becomes a complete signed graph: +1 for an
edge, -1 for a non-edge.

``ours``: ``CorrelationClustering(gamma, tol, random_state=0, max_iter=1000)``
after a warm-up fit that loads the numba cache; ``fit_time`` is the whole
``fit`` (LP, rounding, local search). Reported: LP objective, the dual lower
bound, the pivot and final costs, the planted partition's cost, adjusted Rand
index against the planted communities, peak RSS (``ru_maxrss`` KiB / 1e6 =
"GB", as published). ``ours-dask-<k>``: the same fit with ``client`` a
``distributed.LocalCluster`` of ``k`` single-threaded worker processes,
started (and warmed by a 600-node fit) before the timer; its oracle
searches run on the workers, everything else in this process, whose peak
RSS is the one reported (the workers' is not). ``call_times``: the
cumulative solve time at each oracle call (the in-process and cluster fits
make the same calls, bit for bit, so these compare call by call).
``cvxpy``: the unregularised LP with every triangle inequality, Clarabel.
"""

from __future__ import annotations

import contextlib
import resource
import sys
import time
import warnings

from benchmarks.workers import _protocol
from benchmarks.workers.dask_oracle import local_cluster
from benchmarks.workers.metric_nearness import triangles

MAX_ITER = 1000


def graph(kind: str, n: int, seed: int):
    """``(signed matrix A, planted labels, number of edges)``."""
    import networkx as nx
    import numpy as np

    from benchmarks.cc_instances import signed_planted

    if kind == "signed":
        A, truth = signed_planted(n, seed)
        return A, truth, A.nnz // 2
    if kind == "planted":
        k = max(2, n // 100)
        G = nx.planted_partition_graph(k, n // k, 0.9, 0.1, seed=seed)
        truth = np.repeat(np.arange(k), n // k)
        n = k * (n // k)
    elif kind == "lfr":
        G = nx.LFR_benchmark_graph(n, 2.5, 1.5, 0.1, average_degree=20, max_degree=50,
                                   min_community=50, max_community=200, seed=seed)
        truth = np.empty(n, dtype=int)
        communities = {frozenset(G.nodes[v]["community"]) for v in G}
        for c, members in enumerate(communities):
            truth[list(members)] = c
    else:
        raise ValueError(f"unknown graph {kind!r}")
    adjacency = nx.to_numpy_array(G, nodelist=range(n))
    A = np.where(adjacency > 0, 1.0, -1.0)
    np.fill_diagonal(A, 0.0)
    return A, truth, G.number_of_edges()


def planted_cost(A, truth) -> float:
    """Disagreements of the planted partition."""
    import numpy as np
    from scipy import sparse

    if sparse.issparse(A):
        from metric_estimators.correlation_clustering import correlation_clustering_cost

        return correlation_clustering_cost(A, truth)

    iu = np.triu_indices(A.shape[0], 1)
    same = truth[iu[0]] == truth[iu[1]]
    a = A[iu]
    return float(np.sum(np.where(a > 0, a * ~same, -a * same)))


def planted_references(A, truth) -> dict:
    """Cost and ARI of the planted partition polished by local search.

    ``moves``: best one-element moves from the planted partition (a local
    optimum next to it); ``merges``: moves and cluster merges alternated
    (the library's local search, started from the planted partition).  Any
    clustering cheaper than these is further from the planted one than a
    local polish; if they cost less than the planted partition while their
    ARI drops, the correlation-clustering optimum is not the planted
    partition.
    """
    import numpy as np
    from scipy import sparse
    from sklearn.metrics import adjusted_rand_score

    from metric_estimators._backend import NUMBA
    from metric_estimators._kernels.correlation_clustering import sparse_one_element_moves
    from metric_estimators.solvers.cc_local_search import local_search

    if not sparse.issparse(A):
        return {}
    M = sparse.csr_matrix(A, dtype=np.float64)
    M.sort_indices()
    moves = np.unique(truth, return_inverse=True)[1].astype(np.int64)
    sparse_one_element_moves(M.indptr.astype(np.int64), M.indices.astype(np.int64),
                             np.ascontiguousarray(M.data), moves, 100,
                             1e-12 * float(np.abs(M.data).max()))
    merged, _ = local_search(M, truth, 100, kernels=NUMBA)
    return {"planted_moves_cost": planted_cost(A, moves),
            "planted_moves_ari": float(adjusted_rand_score(truth, moves)),
            "planted_merges_cost": planted_cost(A, merged),
            "planted_merges_ari": float(adjusted_rand_score(truth, merged))}


def solve_ours(A, truth, params, workers=0) -> dict:
    """CorrelationClustering (public API) on ``A``, on a local Dask cluster if ``workers``."""
    import numpy as np
    from sklearn.metrics import adjusted_rand_score

    from benchmarks.cc_instances import signed_planted
    from metric_estimators import CorrelationClustering

    CorrelationClustering().fit(A[:20, :20])  # load numba's cache
    client = cluster = None
    extra_out = {}
    if hasattr(A, "tocsr"):  # and the sparse path's (its numba kernels
        # from 501 nodes)
        warm, _ = signed_planted(600, 1)
        CorrelationClustering().fit(warm)
        if workers:
            client, cluster, extra_out["cluster_start_s"] = local_cluster(workers)
            CorrelationClustering(client=client).fit(warm)  # the workers' cache
    # sparse runs print their progress table (at most a line a second) to
    # stderr, so that a timeout row's stderr_tail says how far the LP got
    verbose = 1 if hasattr(A, "tocsr") else 0
    start = time.perf_counter()
    with warnings.catch_warnings(record=True), contextlib.redirect_stdout(sys.stderr):
        extra = {k: params[k] for k in ("gap_tol", "certify_tol", "max_time")
                 if k in params}
        try:
            cc = CorrelationClustering(gamma=params["gamma"], tol=params["tol"],
                                       random_state=0,
                                       max_iter=params.get("max_iter", MAX_ITER),
                                       verbose=verbose, client=client, **extra).fit(A)
        finally:
            fit_time = time.perf_counter() - start
            if client is not None:
                client.close()
                cluster.close()
    calls = cc.history_["oracle_time"]
    extra_out["call_times"] = [round(float(t), 2) for t in cc.history_["time"]]
    return {"fit_time": fit_time, "lp_objective": cc.lp_objective_,
            "oracle_time_per_call": float(np.mean(calls)) if calls else None,
            "oracle_time_total": float(np.sum(calls)),
            "lower_bound": cc.lower_bound_, "rounded_cost": cc.cost_,
            "pivot_cost": getattr(cc, "pivot_cost_", cc.cost_),
            "local_sweeps": getattr(cc, "n_local_sweeps_", 0), "n_iter": cc.n_iter_,
            "n_active": cc.n_active_, "converged": bool(cc.converged_),
            "certified": bool(getattr(cc, "certified_", False)),
            "cost_bound_ratio": (float(cc.cost_ / cc.lower_bound_)
                                 if cc.lower_bound_ > 0 else None),
            "certificate_checks": int(getattr(cc, "n_certificate_checks_", 0)),
            "violation": cc.violation_,
            "ari": float(adjusted_rand_score(truth, cc.labels_)),
            "n_clusters": int(np.unique(cc.labels_).size),
            "planted_cost": planted_cost(A, truth), **planted_references(A, truth),
            **extra_out}


def solve_cvxpy(A) -> dict:
    """The exact LP, every triangle inequality, cvxpy + Clarabel."""
    import cvxpy as cp
    import numpy as np

    n = A.shape[0]
    a = A[np.triu_indices(n, 1)]
    ij, ik, kj = triangles(n)
    start = time.perf_counter()
    x = cp.Variable(a.size)
    w, d = np.abs(a), (a < 0).astype(float)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.abs(x - d)))),
                      [x[ij] <= x[ik] + x[kj], x >= 0, x <= 1])
    prob.solve(solver="CLARABEL")
    return {"fit_time": time.perf_counter() - start, "lp_objective": float(prob.value)}


def run(job: dict) -> dict:
    """Solve one graph's LP with one method."""
    kind, _, n = job["dataset"].rpartition("-")
    params = job["params"]
    A, truth, n_edges = graph(kind, int(n), params.get("seed", 0))
    if job["impl"] == "ours":
        out = solve_ours(A, truth, params)
    elif job["impl"].startswith("ours-dask-"):
        out = solve_ours(A, truth, params, workers=int(job["impl"].rsplit("-", 1)[1]))
    elif job["impl"] == "cvxpy":
        out = solve_cvxpy(A)
    else:
        raise ValueError(f"unknown impl {job['impl']!r}")
    out.update(n=int(A.shape[0]), n_edges=n_edges,
               peak_rss_gb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
