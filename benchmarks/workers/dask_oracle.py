"""Sparse MetricNearness with the shortest-path oracle in-process or on a Dask LocalCluster.

Job: ``{"dataset": "ring-<n>-<degree>", "impl": "in_process" | "dask-<k>",
"params": {"max_iter": t, "tol": tol, "seed": s}}``.

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
    from metric_estimators.solvers.oracles import SparseShortestPathOracle

    _, n, degree = job["dataset"].split("-")
    n, degree = int(n), int(degree)
    p = job["params"]
    D, rows, cols, w = make_graph(n, degree, int(p.get("seed", 0)))
    impl = job["impl"]
    client = cluster = None
    out = {"n": n, "n_edges": int(rows.size)}
    if impl.startswith("dask-"):
        import distributed

        os.environ.update(THREAD_ENV)
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=int(impl.split("-")[1]),
                                           threads_per_worker=1, processes=True,
                                           dashboard_address=None,
                                           silence_logs=logging.ERROR)
        client = distributed.Client(cluster)
        small, *_ = make_graph(300, 4, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            MetricNearness(max_iter=1, client=client).fit(small)
        out["cluster_start_s"] = time.perf_counter() - t0
    try:
        # the first oracle call alone: what it returns, in bytes
        oracle = SparseShortestPathOracle(n, rows, cols, client=client)
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


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
