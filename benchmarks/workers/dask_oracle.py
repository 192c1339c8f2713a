"""Sparse MetricNearness with the shortest-path oracle in-process or on a Dask LocalCluster.

Job: ``{"dataset": "ring-<n>-<degree>" | "signed-<n>", "impl": "in_process" |
"dask-<k>", "params": {"max_iter": t, "tol": tol, "seed": s}}``.

``signed-<n>``: sparse correlation clustering's oracle alone, on the signed
planted graph of the correlation-clustering benchmark
(``benchmarks/cc_instances.py:signed_planted``): the
estimator's first oracle call (bounded searches capped at its first cap,
lengths ``x = d``, threshold ``tol``), repeated ``max_iter`` times after an
untimed call on a 600-node graph that loads the kernel in every process; the
"solution" hashed is the constraints it returns.  A whole fit is not timed
(at 10^5 nodes it does not finish within the hour); the first calls are the
capped ones that dominate a fit's early phase.

The graph: a ring over ``n`` nodes plus ``n (degree - 2) / 2`` random chords
(seeded), lengths ``Exp(1)^2`` (far from a metric: many violated cycles).
``MetricNearness(tol, max_iter, client=...)`` on it; ``dask-<k>`` starts a
``distributed.LocalCluster(n_workers=k, threads_per_worker=1,
processes=True)`` (one BLAS/numba thread per worker) and warms it (a tiny fit
that imports the package and loads the numba kernels on every worker) before
the timed fit.  Per run: fit time, time in the oracle per call (the
driver's ``history_["oracle_time"]``), the active set's memory, and the bytes
an oracle call moves (graph pattern scattered once; edge lengths per call
and worker; violated cycles returned, measured on the first call), and a
sha256 of the solution, equal across implementations when the Dask path is
bit for bit the in-process one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import time

from benchmarks.workers import _protocol

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "NUMBA_NUM_THREADS": "1"}


def make_graph(n: int, degree: int, seed: int):
    """Ring plus random chords; returns ``(D csr, rows, cols, lengths)``."""
    import numpy as np
    from scipy import sparse

    rng = np.random.default_rng(seed)
    i = np.arange(n)
    k = n * (degree - 2) // 2
    r = np.concatenate((i, rng.integers(0, n, k)))
    c = np.concatenate(((i + 1) % n, rng.integers(0, n, k)))
    keep = r != c
    r, c = np.minimum(r[keep], c[keep]), np.maximum(r[keep], c[keep])
    rc = np.unique(np.column_stack((r, c)), axis=0)
    w = rng.exponential(1.0, rc.shape[0]) ** 2
    rows, cols = rc[:, 0].astype(np.int64), rc[:, 1].astype(np.int64)
    D = sparse.coo_matrix((np.concatenate((w, w)), (np.concatenate((rows, cols)),
                                                     np.concatenate((cols, rows)))),
                          shape=(n, n)).tocsr()
    return D, rows, cols, w


def run(job: dict) -> dict:
    import warnings

    import numpy as np

    from metric_estimators import MetricNearness
    from metric_estimators._backend import NUMBA
    from metric_estimators.solvers.oracles import SparseShortestPathOracle

    if job["dataset"].startswith("signed-"):
        return run_signed(job)
    _, n, degree = job["dataset"].split("-")
    n, degree = int(n), int(degree)
    p = job["params"]
    D, rows, cols, w = make_graph(n, degree, int(p.get("seed", 0)))
    impl = job["impl"]
    client = cluster = None
    out = {"n": n, "n_edges": int(rows.size)}
    if impl.startswith("dask-"):
        client, cluster, out["cluster_start_s"] = _cluster(impl)
    try:
        # the first oracle call alone: what it returns, in bytes
        oracle = SparseShortestPathOracle(n, rows, cols, client=client, kernels=NUMBA)
        t0 = time.perf_counter()
        ce, ptr, path, maxv = oracle(w, 0.0)
        out["first_call_s"] = time.perf_counter() - t0
        out["first_call_constraints"] = int(ce.size)
        out["first_call_bytes_returned"] = int(ce.nbytes + ptr.nbytes + path.nbytes)
        out["graph_bytes"] = int(oracle.graph.nbytes)
        out["lengths_bytes_per_worker"] = int(w.nbytes)
        est = MetricNearness(tol=float(p.get("tol", 1e-4)), max_iter=int(p.get("max_iter", 3)),
                             client=client)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(D)
        out["fit_time"] = time.perf_counter() - t0
        h = est.history_
        out.update(n_iter=int(est.n_iter_), n_active=int(est.n_active_),
                   oracle_time_mean=float(np.mean(h["oracle_time"])),
                   oracle_time=[float(t) for t in h["oracle_time"]],
                   oracle_share=float(np.sum(h["oracle_time"]) / out["fit_time"]),
                   active_bytes_peak=int(max(h["active_bytes"])),
                   solution_sha256=hashlib.sha256(
                       np.ascontiguousarray(est.metric_.data).tobytes()).hexdigest()[:16])
    finally:
        if client is not None:
            client.close()
            cluster.close()
    out["peak_rss_gb"] = _protocol.peak_rss_mb() / 1024.0
    return out


def local_cluster(workers: int):
    """``(client, cluster, start-up seconds)``: ``workers`` single-threaded worker processes.

    One BLAS/numba thread per worker (set in the environment the workers
    inherit; a process already running keeps its own threads).
    """
    import distributed

    os.environ.update(THREAD_ENV)
    t0 = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR)
    return distributed.Client(cluster), cluster, time.perf_counter() - t0


def _cluster(impl):
    """``(client, cluster, start-up seconds)`` for ``dask-<k>``, warmed on a tiny graph."""
    import warnings

    from metric_estimators import MetricNearness

    t0 = time.perf_counter()
    client, cluster, _ = local_cluster(int(impl.split("-")[1]))
    small, *_ = make_graph(300, 4, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MetricNearness(max_iter=1, client=client).fit(small)
    return client, cluster, time.perf_counter() - t0


def run_signed(job: dict) -> dict:
    """Correlation clustering's sparse oracle: its first call, ``max_iter`` times."""
    import numpy as np

    from benchmarks.cc_instances import signed_planted
    from metric_estimators import correlation_clustering as cc
    from metric_estimators._backend import NUMBA
    from metric_estimators._problems.sparse_correlation_clustering import (
        SparseSignedGraph,
    )
    from metric_estimators.solvers.oracles import SparseShortestPathOracle

    n = int(job["dataset"].split("-")[1])
    p = job["params"]
    A, _ = signed_planted(n, int(p.get("seed", 0)))
    g = SparseSignedGraph(A)
    x = (g.a <= 0).astype(np.float64)
    impl = job["impl"]
    client = cluster = None
    out = {"n": n, "n_edges": int(g.a.size)}
    if impl.startswith("dask-"):
        client, cluster, out["cluster_start_s"] = _cluster(impl)
    try:
        # untimed: load the bounded-search kernel here or on every worker
        w = SparseSignedGraph(signed_planted(600, 1)[0])
        SparseShortestPathOracle(600, w.rows, w.cols, client=client, search="bounded",
                                 cap=cc.SEARCH_CAP, kernels=NUMBA)((w.a <= 0).astype(np.float64), 0.01)
        times = []
        digest = hashlib.sha256()
        for _ in range(int(p.get("max_iter", 3))):
            # a fresh oracle per call: every call is the estimator's first
            oracle = SparseShortestPathOracle(n, g.rows, g.cols, client=client,
                                              search="bounded", cap=cc.SEARCH_CAP,
                                              growth=cc.SEARCH_GROWTH,
                                              switch=cc.SEARCH_SWITCH, kernels=NUMBA)
            t0 = time.perf_counter()
            ce, ptr, path, maxv = oracle(x, float(p.get("tol", 1e-2)))
            times.append(time.perf_counter() - t0)
            digest.update(ce.tobytes() + ptr.tobytes() + path.tobytes())
        out.update(first_call_constraints=int(ce.size),
                   first_call_bytes_returned=int(ce.nbytes + ptr.nbytes + path.nbytes),
                   graph_bytes=int(oracle.graph.nbytes),
                   lengths_bytes_per_worker=int(x.nbytes),
                   n_iter=len(times), fit_time=float(np.sum(times)),
                   oracle_time_mean=float(np.mean(times)),
                   oracle_time=[float(t) for t in times], oracle_share=1.0,
                   solution_sha256=digest.hexdigest()[:16])
    finally:
        if client is not None:
            client.close()
            cluster.close()
    out["peak_rss_gb"] = _protocol.peak_rss_mb() / 1024.0
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
