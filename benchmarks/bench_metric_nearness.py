"""Benchmark: L2 metric nearness on dense random instances.

Instances (the two kinds of Sonthalia & Gilbert, JMLR 2022, Sec. on metric
nearness, as we construct them here):

* ``normal``: symmetric ``D_ij = |N(0, 1)|`` i.i.d.
* ``dirichlet``: 0/1 dissimilarities from random label sets -- node ``i``
  draws ``p_i ~ Dirichlet(0.3 * 1_K)`` (K = 10) and holds the labels with
  ``p_ik > 1/K``; ``D_ij = 0`` if ``i`` and ``j`` share a label, else 1.

Every solve runs in a fresh subprocess (peak RSS from ``getrusage``), after a
tiny warm-up fit that loads the numba cache.  Methods: ``MetricNearness``
(Project and Forget; ``pf``: triangle oracle, the default; ``pf_sp``: the
shortest-path oracle), the triangle-fixing baseline of Brickell et al. 2008
(``benchmarks/triangle_fixing.py``, n <= --tf-max), cvxpy + Clarabel
(n <= --cvxpy-max).  Tolerance: largest violation <= tol * max(D).

Usage::

    python benchmarks/bench_metric_nearness.py --sizes 100 200 500 1000 \
        --kinds normal dirichlet --tf-max 700 --cvxpy-max 60
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r"""
import json, resource, sys, time, warnings
import numpy as np
sys.path.insert(0, {here!r})
n, kind, method, tol, seed = {n}, {kind!r}, {method!r}, {tol}, {seed}
oracle = "shortest_path" if method == "pf_sp" else "triangle"
divergence = "kl" if method == "pf_kl" else "l2"

def instance(n, kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        A = np.abs(rng.standard_normal((n, n)))
        A = np.triu(A, 1)
        return A + A.T
    K = 10
    P = rng.dirichlet(0.3 * np.ones(K), size=n)
    L = P > 1.0 / K
    share = (L.astype(np.int32) @ L.T.astype(np.int32)) > 0
    D = np.where(share, 0.0, 1.0)
    np.fill_diagonal(D, 0.0)
    return D

D = instance(n, kind, seed)
iu = np.triu_indices(n, 1)
out = {{"n": n, "kind": kind, "method": method}}
if method in ("pf", "pf_sp", "pf_kl"):
    from metric_estimators.metric_nearness import MetricNearness
    # load the numba cache
    MetricNearness(divergence=divergence).fit(instance(20, "normal", 1))
    t = time.perf_counter()
    with warnings.catch_warnings(record=True):
        est = MetricNearness(tol=tol, max_iter=2000, oracle=oracle,
                             divergence=divergence).fit(D)
    out["time"] = time.perf_counter() - t
    M = est.metric_
    out.update(objective=est.objective_, n_iter=est.n_iter_,
               n_active=est.n_active_, converged=bool(est.converged_),
               violation=est.violation_,
               passes=int(sum(est.history_["passes"])))
elif method == "tf":
    from triangle_fixing import triangle_fixing, _sweep
    triangle_fixing(instance(10, kind, 1))
    M, info = triangle_fixing(D, tol=tol)
    out.update(time=info["time"], objective=info["objective"],
               sweeps=info["sweeps"])
elif method == "cvxpy":
    import cvxpy as cp
    from metric_estimators._kernels.edges import edge_id, matrix_to_edges
    d = matrix_to_edges(D)
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    keep = (i < j) & (k != i) & (k != j)
    i, j, k = i[keep], j[keep], k[keep]
    def eid(a, b):
        a2, b2 = np.minimum(a, b), np.maximum(a, b)
        return a2 * n - a2 * (a2 + 1) // 2 + (b2 - a2 - 1)
    t = time.perf_counter()
    x = cp.Variable(d.size)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - d)),
                      [x[eid(i, j)] <= x[eid(i, k)] + x[eid(k, j)]])
    prob.solve(solver="CLARABEL")
    out["time"] = time.perf_counter() - t
    out["objective"] = float(prob.value)
    M = None
if M is not None and n <= 1200:
    # exact largest triangle violation, blockwise
    worst = 0.0
    for s in range(0, n, 64):
        blk = M[s:s + 64]
        worst = max(worst, float(np.max(blk[:, :, None] - blk[:, None, :] - M.T[None, :, :])))
    out["max_triangle_violation_rel"] = worst / D.max()
out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
print("RESULT" + json.dumps(out))
"""


def run(n, kind, method, tol, seed, timeout):
    code = WORKER.format(here=HERE, n=n, kind=kind, method=method, tol=tol,
                         seed=seed)
    t = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"n": n, "kind": kind, "method": method,
                "error": f"timeout after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT"):
            r = json.loads(line[6:])
            r["wall_with_startup"] = time.perf_counter() - t
            return r
    return {"n": n, "kind": kind, "method": method,
            "error": (p.stderr or p.stdout)[-400:]}


def report(results):
    """Markdown table of the JSON results, one row per (kind, n, method)."""
    names = {"pf": "MetricNearness (triangle oracle)",
             "pf_sp": "MetricNearness (shortest-path oracle)",
             "pf_kl": "MetricNearness, KL divergence (triangle oracle)",
             "tf": "triangle fixing (Brickell et al. 2008)",
             "cvxpy": "cvxpy + Clarabel"}
    order = {"pf": 0, "pf_sp": 1, "pf_kl": 1.5, "tf": 2, "cvxpy": 3}
    lines = ["| instance | n | method | time (s) | objective | oracle calls / sweeps "
             "| active set | max triangle violation (rel.) | peak RSS (GB) "
             "| load avg (1 min) before |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda q: (q["kind"], q["n"], order.get(q["method"], 9))):
        if "error" in r:
            lines.append(f"| {r['kind']} | {r['n']} | {names.get(r['method'], r['method'])} "
                         f"| {r['error'][:60]} | | | | | | |")
            continue
        it = r.get("n_iter", r.get("sweeps", ""))
        viol = r.get("max_triangle_violation_rel")
        lines.append(
            f"| {r['kind']} | {r['n']} | {names.get(r['method'], r['method'])} "
            f"| {r['time']:.2f} | {r['objective']:.10g} | {it} "
            f"| {r.get('n_active', '')} "
            f"| {'' if viol is None else f'{viol:.1e}'} "
            f"| {r.get('peak_rss_gb', float('nan')):.2f} "
            f"| {r.get('loadavg_before', [float('nan')])[0]:.1f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 500, 1000])
    ap.add_argument("--kinds", nargs="+", default=["normal", "dirichlet"])
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--tf-max", type=int, default=700)
    ap.add_argument("--cvxpy-max", type=int, default=60)
    ap.add_argument("--sp-max", type=int, default=1000,
                    help="largest n for the shortest-path oracle (pf_sp)")
    ap.add_argument("--kl-max", type=int, default=1000,
                    help="largest n for the KL divergence (pf_kl, normal only)")
    ap.add_argument("--skip", nargs="*", default=[],
                    help="methods to skip (pf, pf_sp, pf_kl, tf, cvxpy)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "metric_nearness.json"))
    ap.add_argument("--report", action="store_true",
                    help="print the markdown table of --out and exit")
    args = ap.parse_args()
    results = []
    if os.path.exists(args.out):
        with open(args.out) as fh:
            results = json.load(fh)
    if args.report:
        print(report(results))
        return
    for kind in args.kinds:
        for n in args.sizes:
            methods = ["pf"]
            if n <= args.sp_max:
                methods.append("pf_sp")
            if n <= args.kl_max and kind == "normal":
                methods.append("pf_kl")  # KL needs D > 0 off the diagonal
            if n <= args.tf_max:
                methods.append("tf")
            if n <= args.cvxpy_max:
                methods.append("cvxpy")
            methods = [m for m in methods if m not in args.skip]
            for method in methods:
                load = os.getloadavg()
                r = run(n, kind, method, args.tol, args.seed, args.timeout)
                r["loadavg_before"] = load
                r["loadavg_after"] = os.getloadavg()
                r["tol"] = args.tol
                print(json.dumps(r), flush=True)
                results = [q for q in results if not (
                    q["n"] == n and q["kind"] == kind and q["method"] == method)]
                results.append(r)
                with open(args.out, "w") as fh:
                    json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
