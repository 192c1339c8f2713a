"""Small weighted correlation-clustering instances: the W-weighted Project and
Forget prototype (benchmarks/cc_power_prototype.py) against cvxpy's exact LP
and regularised QP (issue 18).

Instances (n = 20-30): lognormal weights (sigma 1), half the pairs at zero
weight, extreme weight ratios (log-uniform 1e-3 .. 1e3); signs at random
around a planted partition.

Usage::

    python benchmarks/cc_small_cvxpy.py [--n 25] [--seeds 0 1 2]
"""

import argparse
import itertools
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from cc_power_prototype import WeightedCC, solve, max_triangle_violation  # noqa: E402
from metric_estimators._kernels.metric_nearness import matrix_to_edges  # noqa: E402


def make_instance(kind, n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, max(2, n // 6), n)
    same = labels[:, None] == labels[None, :]
    sign = np.where(same, 1.0, -1.0)
    flip = rng.random((n, n)) < 0.2
    sign = np.where(flip, -sign, sign)
    if kind == "lognormal":
        mag = rng.lognormal(0.0, 1.0, (n, n))
    elif kind == "half_zero":
        mag = rng.lognormal(0.0, 1.0, (n, n)) * (rng.random((n, n)) < 0.5)
    elif kind == "extreme":
        mag = 10.0 ** rng.uniform(-3, 3, (n, n))
    else:
        raise ValueError(kind)
    A = np.triu(sign * mag, 1)
    return A + A.T


def triangles(n):
    # every (pair e=ij, apex k): x_ij <= x_ik + x_kj
    E = {}
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            E[i, j] = E[j, i] = e
            e += 1
    rows = []
    for i, j in itertools.combinations(range(n), 2):
        for k in range(n):
            if k != i and k != j:
                rows.append((E[i, j], E[i, k], E[k, j]))
    return np.array(rows)


def cvxpy_solve(A, gamma=None, floor=None):
    """Exact LP (gamma None) or the W-weighted QP with the same floor."""
    import cvxpy as cp
    from scipy import sparse

    n = A.shape[0]
    a = matrix_to_edges(A)
    w = np.abs(a)
    d = (a < 0).astype(float)
    m = a.size
    T = triangles(n)
    rows = np.repeat(np.arange(len(T)), 3)
    cols = T.ravel()
    vals = np.tile([1.0, -1.0, -1.0], len(T))
    G = sparse.csr_matrix((vals, (rows, cols)), shape=(len(T), m))
    x = cp.Variable(m)
    f = cp.Variable(m)
    cons = [G @ x <= 0, f >= x - d, f >= d - x]
    if gamma is None:
        cons += [x >= 0, x <= 1]
        obj = cp.Minimize(w @ f)
    else:
        r = np.where(w > 0, w, floor)
        xbar = (a <= 0).astype(float)
        obj = cp.Minimize(w @ f + (cp.sum(cp.multiply(r, cp.square(x - xbar)))
                                   + cp.sum(cp.multiply(w, cp.square(f))))
                          / (2 * gamma))
    prob = cp.Problem(obj, cons)
    prob.solve(solver=cp.CLARABEL)
    xv = np.asarray(x.value)
    return xv, float(np.sum(w * np.abs(xv - d)))


def run_case(kind, n, seed, gammas, tol=1e-5, gap_tol=1e-7, max_iter=2000,
             continuation=True):
    """Solve at each gamma (ascending), warm-starting each stage from the
    previous one (duals scaled by the gamma ratio) if ``continuation``."""
    A = make_instance(kind, n, seed)
    xs, lp_star = cvxpy_solve(A)
    rows = []
    prob = None
    for gamma in sorted(gammas):
        if prob is None or not continuation:
            prob = WeightedCC(A, gamma)
        else:
            prob.rescale_gamma(gamma)
        t = time.perf_counter()
        res = solve(prob, tol=tol, max_iter=max_iter, verbose=False,
                    oracle="short", gap_tol=gap_tol, pass_tol=tol / 10)
        el = time.perf_counter() - t
        xq, _ = cvxpy_solve(A, gamma, prob.floor) if gamma <= 100 else (None, None)
        x = prob.x
        lpx = prob.lp_objective(np.clip(x, 0, 1))
        rows.append(dict(
            kind=kind, n=n, seed=seed, gamma=gamma, lp_star=lp_star,
            lp=lpx, rel=(lpx - lp_star) / lp_star,
            lb=prob.lp_lower_bound(),
            qp_dx=None if xq is None else float(np.abs(x - xq).max()),
            viol=max_triangle_violation(x, n), conv=res["converged"],
            iters=res["n_iter"], time=el))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=25)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--gammas", type=float, nargs="+",
                    default=[1, 10, 100, 1000])
    ap.add_argument("--kinds", nargs="+",
                    default=["lognormal", "half_zero", "extreme"])
    ap.add_argument("--no-continuation", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'kind':>10} {'seed':>4} {'gamma':>7} {'LP*':>10} {'LP(x)':>10} "
          f"{'rel':>9} {'LB':>10} {'|x-xQP|':>9} {'viol':>8} {'conv':>5} "
          f"{'it':>5} {'s':>6}")
    for kind in args.kinds:
        for seed in args.seeds:
            for r in run_case(kind, args.n, seed, args.gammas,
                              continuation=not args.no_continuation):
                qp = "-" if r["qp_dx"] is None else f"{r['qp_dx']:.1e}"
                print(f"{r['kind']:>10} {r['seed']:>4} {r['gamma']:>7g} "
                      f"{r['lp_star']:>10.4f} {r['lp']:>10.4f} {r['rel']:>9.2e} "
                      f"{r['lb']:>10.4f} {qp:>9} {r['viol']:>8.1e} {str(r['conv']):>5} "
                      f"{r['iters']:>5} {r['time']:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
