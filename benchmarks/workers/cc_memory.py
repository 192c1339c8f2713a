"""Bytes per node pair of one dense correlation-clustering fit (one fit per process).

Job: ``{"dataset": "planted" | "power" | "collab", "impl": "ours", "params":
{"n": int, "label": str}}`` (``n`` ignored for ``power``; ``label`` only
names a variant of the code measured, default ``"default"``).  A warm-up
fit on a 300-node planted graph (loads the numba cache), the instance, then
the peak RSS counter is reset (``/proc/self/clear_refs``, Linux) and the fit
runs.  Reported: the process's RSS before the fit (``rss_before_fit_mb``),
the fit's peak (``VmHWM``, ``fit_peak_mb``), the bytes per pair the fit adds
(``fit_added_bytes_per_pair``: ``(peak - before) / pairs``), the process's
peak per pair (``process_bytes_per_pair``: ``ru_maxrss / pairs``, what the
memory budget counts), the LP objective and bound (which a change of
storage must not move), and the largest memory the active set held (its
``active_bytes`` history).  Instances: ``planted`` = the planted-partition
graph of ``benchmarks/workers/correlation_clustering.py`` (gamma 10),
``power`` = Wang et al.'s power-grid instance (gamma 1; ``power.mat`` in
``$BENCH_DATA_DIR``), ``collab`` = Wang et al.'s construction on
``cc_instances.collab_like(n, seed=0)``, a synthetic power-law
collaboration-like graph (gamma 1).  ``CorrelationClustering(gamma,
tol=1e-2, random_state=0, max_iter=1000)``.  Needs networkx.
"""

from __future__ import annotations

import resource
import sys
import time
import warnings

import numpy as np

from benchmarks.workers import _protocol


def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def measure(kind, n):
    """One fit; returns the row (see the module docstring)."""
    from benchmarks.workers.correlation_clustering import graph
    from metric_estimators import CorrelationClustering

    A0, _, _ = graph("planted", 300, 0)
    CorrelationClustering(gamma=10.0, tol=1e-2, random_state=0).fit(A0)
    del A0
    if kind == "power":
        from benchmarks.cc_instances import load_power_grid, wang_instance

        A = wang_instance(load_power_grid())  # $BENCH_DATA_DIR/power.mat
        gamma = 1.0
    elif kind == "collab":
        from benchmarks.cc_instances import collab_like, wang_instance

        A = wang_instance(collab_like(n, seed=0))
        gamma = 1.0
    else:
        A, _, _ = graph("planted", n, 0)
        gamma = 10.0
    n = A.shape[0]
    pairs = n * (n - 1) // 2
    positive = int(np.count_nonzero(A > 0)) // 2  # zero diagonal
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    before = _status_kb("VmRSS:")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = CorrelationClustering(gamma=gamma, tol=1e-2, random_state=0,
                                    max_iter=1000).fit(A)
    fit_time = time.perf_counter() - t0
    peak = _status_kb("VmHWM:")
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return dict(
        instance=kind, n=n, pairs=pairs, fit_time=round(fit_time, 2),
        rss_before_fit_mb=before / 1e3, fit_peak_mb=peak / 1e3,
        process_peak_mb=maxrss / 1e3,
        fit_added_bytes_per_pair=round((peak - before) * 1024 / pairs, 1),
        process_bytes_per_pair=round(maxrss * 1024 / pairs, 1),
        active_set_mb=max(est.history_["active_bytes"]) / 1e6,
        active_set_bytes_per_pair=round(
            max(est.history_["active_bytes"]) / pairs, 1),
        n_active=int(est.n_active_), n_iter=int(est.n_iter_),
        converged=bool(est.converged_), positive_pairs=positive,
        lp_objective=float(est.lp_objective_),
        lower_bound=float(est.lower_bound_), cost=float(est.cost_),
    )


def run(job: dict) -> dict:
    """The job's instance, measured."""
    return measure(job["dataset"], int(job["params"].get("n", 0)))


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
