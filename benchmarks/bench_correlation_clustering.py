"""Benchmark: correlation clustering LP (Veldt et al. 2019 regularised form,
solved by Project and Forget) on networkx-generated graphs.

A graph ``G`` becomes a complete signed graph: ``A_ij = +1`` for an edge,
``-1`` for a non-edge (the standard construction for correlation clustering
of an unsigned graph, e.g. Veldt et al.'s LambdaCC with lambda = 1/2).
Graphs: ``planted``: ``networkx.planted_partition_graph(k, n/k, 0.9, 0.1)`` with
k = n / 100 communities (k >= 2);
``lfr``: ``networkx.LFR_benchmark_graph`` (tau1=2.5, tau2=1.5, mu=0.1,
average degree 20, max degree 50, communities of 50 to 200 nodes).

Reported: time to tolerance (largest triangle / pair violation <= tol on the
[0, 1] scale, duals consistent), LP objective, the dual lower bound, the
rounded clustering's cost, adjusted Rand index against the planted
communities, and cvxpy (Clarabel) on the same LP where n <= --cvxpy-max.
Each solve runs in a fresh subprocess (peak RSS).

Usage::

    python benchmarks/bench_correlation_clustering.py --sizes 1000 2000 \
        --graphs planted lfr --tol 1e-2
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r"""
import json, resource, sys, time, warnings
import numpy as np
import networkx as nx
from sklearn.metrics import adjusted_rand_score
n, graph, method, tol, gamma, seed = {n}, {graph!r}, {method!r}, {tol}, {gamma}, {seed}
if graph == "planted":
    k = max(2, n // 100)
    G = nx.planted_partition_graph(k, n // k, 0.9, 0.1, seed=seed)
    truth = np.repeat(np.arange(k), n // k)
    n = k * (n // k)
else:
    G = nx.LFR_benchmark_graph(n, 2.5, 1.5, 0.1, average_degree=20,
                               max_degree=50, min_community=50,
                               max_community=200, seed=seed)
    truth = np.empty(n, dtype=int)
    comms = {{frozenset(G.nodes[v]["community"]) for v in G}}
    for c, members in enumerate(comms):
        truth[list(members)] = c
Adj = nx.to_numpy_array(G, nodelist=range(n))
A = np.where(Adj > 0, 1.0, -1.0)
np.fill_diagonal(A, 0.0)
out = {{"n": n, "graph": graph, "method": method, "n_edges": G.number_of_edges()}}
if method == "pf":
    from metric_estimators.correlation_clustering import CorrelationClustering
    CorrelationClustering().fit(A[:20, :20])  # load the numba cache
    t = time.perf_counter()
    with warnings.catch_warnings(record=True):
        cc = CorrelationClustering(gamma=gamma, tol=tol, random_state=0,
                                   max_iter=1000).fit(A)
    out["time"] = time.perf_counter() - t
    out.update(lp_objective=cc.lp_objective_, lower_bound=cc.lower_bound_,
               rounded_cost=cc.cost_, n_iter=cc.n_iter_,
               pivot_cost=getattr(cc, "pivot_cost_", cc.cost_),
               local_sweeps=getattr(cc, "n_local_sweeps_", 0),
               n_active=cc.n_active_, converged=bool(cc.converged_),
               violation=cc.violation_, gamma=gamma,
               ari=float(adjusted_rand_score(truth, cc.labels_)),
               n_clusters=int(np.unique(cc.labels_).size))
    iu = np.triu_indices(n, 1)
    same = truth[iu[0]] == truth[iu[1]]
    a = A[iu]
    out["planted_cost"] = float(np.sum(np.where(a > 0, a * ~same, -a * same)))
else:
    import cvxpy as cp
    from metric_estimators._kernels.edges import matrix_to_edges
    a = matrix_to_edges(A)
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    keep = (i < j) & (k != i) & (k != j)
    i, j, k = i[keep], j[keep], k[keep]
    def eid(u, v):
        u2, v2 = np.minimum(u, v), np.maximum(u, v)
        return u2 * n - u2 * (u2 + 1) // 2 + (v2 - u2 - 1)
    t = time.perf_counter()
    x = cp.Variable(a.size)
    w = np.abs(a); d = (a < 0).astype(float)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.abs(x - d)))),
                      [x[eid(i, j)] <= x[eid(i, k)] + x[eid(k, j)], x >= 0, x <= 1])
    prob.solve(solver="CLARABEL")
    out["time"] = time.perf_counter() - t
    out["lp_objective"] = float(prob.value)
out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
print("RESULT" + json.dumps(out))
"""


def run(n, graph, method, tol, gamma, seed, timeout):
    code = WORKER.format(n=n, graph=graph, method=method, tol=tol, gamma=gamma,
                         seed=seed)
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"n": n, "graph": graph, "method": method,
                "error": f"timeout after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[6:])
    return {"n": n, "graph": graph, "method": method,
            "error": (p.stderr or p.stdout)[-400:]}


def report(results):
    """Markdown table of the JSON results, one row per (graph, n)."""
    cvx = {(r["graph"], r["n"]): r for r in results
           if r.get("method") == "cvxpy" and "error" not in r}
    lines = ["| graph | n | edges | time (s) | oracle calls | active set "
             "| LP objective | dual lower bound | pivot cost | after local search "
             "| planted cost | ARI | clusters | converged | peak RSS (GB) "
             "| cvxpy LP (time) | load avg before |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda q: (q["graph"], q["n"])):
        if r.get("method") != "pf":
            continue
        if "error" in r:
            lines.append(f"| {r['graph']} | {r['n']} | | "
                         f"{r['error'][-60:].strip()} | | | | | | | | | | | | | |")
            continue
        c = cvx.get((r["graph"], r["n"]))
        cv = f"{c['lp_objective']:.4f} ({c['time']:.1f} s)" if c else "–"
        lines.append(
            f"| {r['graph']} | {r['n']} | {r['n_edges']} | {r['time']:.2f} "
            f"| {r['n_iter']} | {r['n_active']} | {r['lp_objective']:.2f} "
            f"| {r['lower_bound']:.2f} "
            f"| {r.get('pivot_cost', r['rounded_cost']):.0f} "
            f"| {r['rounded_cost'] if 'pivot_cost' in r else '(not run)'} "
            f"| {r['planted_cost']:.0f} | {r['ari']:.2f} | {r['n_clusters']} "
            f"| {r['converged']} | {r['peak_rss_gb']:.2f} | {cv} "
            f"| {r['loadavg_before'][0]:.1f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--graphs", nargs="+", default=["planted", "lfr"])
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--gamma", type=float, default=10.0)
    ap.add_argument("--cvxpy-max", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "correlation_clustering.json"))
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
    for graph in args.graphs:
        for n in args.sizes:
            methods = ["pf"] + (["cvxpy"] if n <= args.cvxpy_max else [])
            for method in methods:
                load = os.getloadavg()
                r = run(n, graph, method, args.tol, args.gamma, args.seed,
                        args.timeout)
                r["loadavg_before"] = load
                r["loadavg_after"] = os.getloadavg()
                r["tol"] = args.tol
                print(json.dumps(r), flush=True)
                results = [q for q in results if not (
                    q["n"] == n and q["graph"] == graph and q["method"] == method)]
                results.append(r)
                with open(args.out, "w") as fh:
                    json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
