"""Bytes per node pair of one dense correlation-clustering fit.

    python benchmarks/cc_memory.py planted 2000
    python benchmarks/cc_memory.py power --data-dir ../shared/data
    python benchmarks/cc_memory.py collab 11000
    python benchmarks/cc_memory.py --report

One fit per process (run it under the benchmark lock): a warm-up fit on a
300-node planted graph (loads the numba cache), the instance, then the peak
RSS counter is reset (``/proc/self/clear_refs``, Linux) and the fit runs.
Reported per instance: the process's RSS before the fit, the fit's peak
(``VmHWM``), the bytes per pair the fit adds (``(peak - before) / pairs``),
the process's peak per pair (``ru_maxrss / pairs``, what the issue's budget
counts), the LP objective and bound (which a change of storage must not
move), and the largest memory the active set held (its ``active_bytes``
history).  Instances: ``planted`` = the planted-partition graph of
``benchmarks/workers/correlation_clustering.py`` (gamma 10), ``power`` =
Wang et al.'s power-grid instance (gamma 1), ``collab`` = Wang et al.'s
construction on ``cc_instances.collab_like(n, seed=0)``, a synthetic
power-law collaboration-like graph (gamma 1).  ``CorrelationClustering(gamma,
tol=1e-2, random_state=0, max_iter=1000)``.  Rows merge into
``benchmarks/results/cc_memory.json`` keyed by (instance, n, label);
``--report`` re-renders ``cc_memory.md``.  Needs networkx.
"""

import argparse
import json
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"


def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def measure(kind, n, data_dir=None):
    """One fit; returns the row (see the module docstring)."""
    from benchmarks.workers.correlation_clustering import graph
    from metric_estimators import CorrelationClustering

    A0, _, _ = graph("planted", 300, 0)
    CorrelationClustering(gamma=10.0, tol=1e-2, random_state=0).fit(A0)
    del A0
    if kind == "power":
        from benchmarks.cc_instances import load_power_grid, wang_instance

        path = None if data_dir is None else str(Path(data_dir) / "power.mat")
        A = wang_instance(load_power_grid(path))
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
        loadavg=open("/proc/loadavg").read().split()[:3],
        date=time.strftime("%Y-%m-%d"))


def render(rows):
    head = ("| instance | n | label | fit adds (B/pair) | process peak (B/pair) "
            "| process peak (MB) | active set max (B/pair) | triangles kept "
            "| LP objective | lower bound | converged | fit (s) | load | date |")
    lines = ["# Bytes per node pair of dense correlation clustering", "",
             __doc__.split("\n\n", 2)[2].strip(), "", head,
             "|" + "---|" * 14]
    for r in sorted(rows, key=lambda r: (r["instance"], r["n"], r["label"])):
        lines.append(
            f"| {r['instance']} | {r['n']} | {r['label']} | "
            f"{r['fit_added_bytes_per_pair']:.0f} | "
            f"{r['process_bytes_per_pair']:.0f} | {r['process_peak_mb']:.0f} | "
            f"{r['active_set_bytes_per_pair']:.0f} | {r['n_active']} | "
            f"{r['lp_objective']!r} | {r['lower_bound']:.6f} | "
            f"{r.get('converged', '-')} | "
            f"{r['fit_time']:.1f} | {r['loadavg'][0]} | {r['date']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("instance", nargs="?", choices=["planted", "power", "collab"])
    p.add_argument("n", nargs="?", type=int, default=0)
    p.add_argument("--label", default="default")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--report", action="store_true")
    args = p.parse_args(argv)
    path = RESULTS / "cc_memory.json"
    rows = json.loads(path.read_text()) if path.exists() else []
    if not args.report:
        row = measure(args.instance, args.n, args.data_dir)
        row["label"] = args.label
        print(json.dumps(row))
        key = (row["instance"], row["n"], row["label"])
        rows = [r for r in rows
                if (r["instance"], r["n"], r["label"]) != key] + [row]
        path.write_text(json.dumps(rows, indent=1) + "\n")
    (RESULTS / "cc_memory.md").write_text(render(rows))


if __name__ == "__main__":
    main()
