"""Prototype: W-weighted regularised correlation-clustering LP by Project and
Forget, on the power-grid instance of Wang et al. (2013) (issue 18).

Problem (Veldt, Gleich, Wirth & Saunderson, SIAM J. Math. Data Sci. 2019)::

    minimise  sum_e w_e f_e + 1/(2 gamma) sum_e r_e (x_e^2 + f_e^2)
    s.t.      x_ij <= x_ik + x_kj (all triangles),  f_e >= |x_e - d_e|

with ``w_e = |A_e|``, ``d_e = 1`` if ``A_e < 0`` else 0, and regulariser
weights ``r_e = w_e`` (Veldt et al.'s ``x^T W x + f^T W f``) where
``w_e > 0``; a pair of zero weight has no LP term, no ``f`` and the floor
weight ``r_e = floor`` (documented choice, see ``zero_weight_floor``).  It is
the ``r``-weighted L2 projection of ``(x, f) = (0, -gamma)`` onto the
constraints, solved by Hildreth's method with an active set of triangles
(Sonthalia & Gilbert, JMLR 2022) supplied by an exact oracle: the dense
min-plus oracle of the package, or the short-edge oracle of
:mod:`metric_estimators._kernels.cc_weighted`.

Usage::

    python benchmarks/cc_power_prototype.py [--gamma 1] [--tol 1e-2]
"""

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from metric_estimators._kernels.metric_nearness import (  # noqa: E402
    edges_to_matrix, matrix_to_edges, triangle_argmin)
from metric_estimators._kernels.cc_weighted import (  # noqa: E402
    project_pairs_w, project_pairs_w_subset, project_triangles_w,
    short_edge_triangles)
from metric_estimators.solvers.oracles import DenseTriangleOracle  # noqa: E402
from metric_estimators.solvers.project_forget import ActiveSet  # noqa: E402


def max_triangle_violation(x, n, dtype=np.float64):
    """``max_{i,j,k} x_ij - x_ik - x_kj`` over ALL triangles (dense min-plus)."""
    X = np.empty((n, n))
    edges_to_matrix(x, n, X)
    Xp = X.astype(dtype)
    M = np.empty((n, n), dtype=dtype)
    W = np.empty((n, n), dtype=np.int32)
    triangle_argmin(Xp, M, W)
    iu = np.triu_indices(n, 1)
    # recompute the best triangle of every pair exactly in float64
    k = W[iu]
    viol = X[iu] - X[iu[0], k] - X[k, iu[1]]
    return float(max(viol.max(), 0.0))


class WeightedCC:
    """State of the W-weighted regularised CC problem (edge vectors).

    ``center="d"`` (default): the regulariser is ``(x - d)^T R (x - d)``,
    Veldt et al.'s ``e^T W e`` in the error variables ``e = x - d`` (their
    code starts from ``E = 0, F = -gamma``); ``center="0"``: ``x^T R x``.
    Pairs of zero weight have ``d = 1`` (as non-edges) and regulariser
    weight ``floor``.
    """

    def __init__(self, A, gamma, zero_weight_floor=None, center="d"):
        n = A.shape[0]
        self.n = n
        a = matrix_to_edges(np.ascontiguousarray(A, dtype=np.float64))
        self.w = np.abs(a)
        self.d = (a <= 0).astype(np.float64)
        pos = self.w[self.w > 0]
        if zero_weight_floor is None:
            # default floor: the smallest positive weight (no regulariser
            # weight outside the range of the data's own weights)
            zero_weight_floor = float(pos.min()) if pos.size else 1.0
        self.floor = float(zero_weight_floor)
        r = np.where(self.w > 0, self.w, self.floor)
        self.winv = 1.0 / r
        self.gamma = float(gamma)
        self.xbar = self.d.copy() if center == "d" else np.zeros(a.size)
        m = a.size
        self.x = self.xbar.copy()
        self.f = np.where(self.w > 0, -self.gamma, 0.0)
        self.zA = np.zeros(m)
        self.zB = np.zeros(m)
        self.active = ActiveSet()

    def lp_objective(self, x=None):
        x = self.x if x is None else x
        return float(np.sum(self.w * np.abs(x - self.d)))

    def qp_objective(self):
        r = 1.0 / self.winv
        fpos = self.w > 0
        return float(np.sum(self.w * self.f)
                     + np.sum(r * (self.x - self.xbar) ** 2) / (2 * self.gamma)
                     + np.sum((r * self.f ** 2)[fpos]) / (2 * self.gamma))

    def _atz(self):
        m = self.x.size
        act = self.active
        ux = self.zA - self.zB
        if len(act):
            ux = (ux + np.bincount(act.edge, act.z, minlength=m)
                  - np.bincount(act.path[0::2], act.z, minlength=m)
                  - np.bincount(act.path[1::2], act.z, minlength=m))
        uf = -(self.zA + self.zB)
        return ux, uf

    def dual_gap(self):
        """``(P, g, gap)``: QP value at ``(x, f)``, dual value at the duals.

        ``g`` is a valid lower bound on the QP optimum (weak duality, any
        ``z >= 0``): with ``v0 = (xbar, -gamma)`` the projected point,
        ``g = (z^T (G v0 - h) - 1/2 |G^T z|^2_{R^-1}) / gamma - gamma/2 sum w``.
        """
        gam = self.gamma
        ux, uf = self._atz()
        fpos = self.w > 0
        act = self.active
        tri = 0.0
        if len(act):
            xb = self.xbar
            tri = float(np.sum(act.z * (xb[act.edge] - xb[act.path[0::2]]
                                        - xb[act.path[1::2]])))
        lin = tri + gam * float(np.sum(self.zA + self.zB))
        quad = float(np.sum(ux ** 2 * self.winv)
                     + np.sum(uf[fpos] ** 2 / self.w[fpos]))
        g = (lin - 0.5 * quad) / gam - 0.5 * gam * float(np.sum(self.w))
        P = self.qp_objective()
        return P, g, P - g

    def lp_lower_bound(self):
        """Weak-duality lower bound on the LP from the duals ``y = t z / gamma``.

        For any ``y >= 0`` the LP value is at least ``-t h^T z / gamma +
        sum min(0, (c + t G^T z / gamma)_i)`` over the box ``0 <= x, f <= 1``
        (which holds an LP optimum); maximised over ``t`` in [0, 4].
        """
        from scipy.optimize import minimize_scalar

        ux, uf = self._atz()
        fpos = self.w > 0
        hz = float(np.sum(self.d * (self.zA - self.zB)))
        gam = self.gamma

        def bound(t):
            return (-t * hz / gam + np.minimum(t * ux / gam, 0).sum()
                    + np.minimum(self.w[fpos] + t * uf[fpos] / gam, 0).sum())

        r = minimize_scalar(lambda t: -bound(t), bounds=(0.0, 4.0),
                            method="bounded", options={"xatol": 1e-9})
        return float(max(bound(0.0), bound(1.0), -r.fun))

    def rescale_gamma(self, gamma_new, mode="scale"):
        """Continuation to ``gamma_new``, warm-starting Hildreth's duals.

        ``mode="scale"``: every dual times ``t = gamma_new / gamma`` and
        ``(x, f)`` recomputed from them (the displacement ``x - d`` is then
        ``t`` times too large).  ``mode="keep_primal"``: triangle duals times
        ``t``, pair duals chosen so that ``(x, f)`` do not move (``zA + zB``
        grows by ``(gamma_new - gamma) w``, ``zA - zB`` absorbs the change
        of the triangles' ``G^T z`` on ``x``), clamped at 0 where that is
        impossible; Hildreth's primal-dual relation ``v = v0 - R^-1 G^T z``
        is then restored exactly by recomputing ``(x, f)``.
        """
        t = gamma_new / self.gamma
        if mode == "scale":
            self.zA *= t
            self.zB *= t
            self.active.z *= t
        else:
            m = self.x.size
            act = self.active
            gt_old = np.zeros(m)
            if len(act):
                gt_old = (np.bincount(act.edge, act.z, minlength=m)
                          - np.bincount(act.path[0::2], act.z, minlength=m)
                          - np.bincount(act.path[1::2], act.z, minlength=m))
            S = self.zA + self.zB + (gamma_new - self.gamma) * self.w
            D = self.zA - self.zB - (t - 1.0) * gt_old
            fpos = self.w > 0
            self.zA = np.where(fpos, np.maximum(0.5 * (S + D), 0.0), 0.0)
            self.zB = np.where(fpos, np.maximum(0.5 * (S - D), 0.0), 0.0)
            act.z *= t
        self.gamma = float(gamma_new)
        ux, uf = self._atz()
        self.x = self.xbar - self.winv * ux
        fpos = self.w > 0
        self.f = np.where(fpos, -self.gamma - uf / np.where(fpos, self.w, 1.0),
                          0.0)


def solve(prob, *, tol=1e-2, add_threshold=None, max_iter=500,
          passes=(5, 50), oracle="short", verbose=True, time_limit=np.inf,
          subset_pairs=True, gap_tol=None, pass_tol=None):
    """Project and Forget on ``prob`` (a :class:`WeightedCC`)."""
    n = prob.n
    thr = tol / 10 if add_threshold is None else add_threshold
    act = prob.active
    hist = []
    t0 = time.perf_counter()
    # pairs alone first (the start of every pair is its own fixed point
    # after a few passes; no triangle is known yet)
    for _ in range(50):
        r = project_pairs_w(prob.x, prob.f, prob.d, prob.w, prob.zA, prob.zB)
        if r <= tol / 10:
            break
    dense = DenseTriangleOracle(n) if oracle == "dense" else None
    resid = np.inf
    converged = False
    touched = np.empty(0, dtype=np.int64)
    for it in range(1, max_iter + 1):
        to = time.perf_counter()
        if oracle == "short":
            ce, ptr, path, maxv, nshort = short_edge_triangles(prob.x, n, thr)
        else:
            ce, ptr, path, maxv = dense(prob.x, thr, precision="float64"
                                        if it > 3 else "float32")
            nshort = -1
        maxv = max(float(maxv), float(-prob.x.min()))
        t_or = time.perf_counter() - to
        # full pair pass: residual of all pair constraints
        rp = project_pairs_w(prob.x, prob.f, prob.d, prob.w, prob.zA, prob.zB)
        rel = np.nan
        if gap_tol is not None and maxv <= 10 * tol:
            P, g, gap = prob.dual_gap()
            rel = gap / max(abs(g), 1e-300)
        if gap_tol is None:
            done = maxv <= tol and max(resid, rp) <= tol
        else:
            # Veldt et al.'s rule: constraints within tol and a relative
            # primal-dual gap within gap_tol (the gap is the duals-weighted
            # complementary slackness, so it replaces the residual test)
            fpos = prob.w > 0
            pv = float(np.max(np.abs(prob.x - prob.d)[fpos] - prob.f[fpos],
                              initial=0.0))
            done = max(maxv, pv) <= tol and rel <= gap_tol
        if done:
            converged = True
            break
        start = len(act)
        added = act.add(ce, ptr, path)
        if added:
            project_triangles_w(prob.x, prob.winv, act.edge, act.path, act.z,
                                start, len(act))
        if subset_pairs:
            touched = np.unique(np.concatenate((act.edge, act.path)))
        npass = passes[0] if added > 0.05 * len(act) else passes[1]
        tp = time.perf_counter()
        for p in range(1, npass + 1):
            rt = project_triangles_w(prob.x, prob.winv, act.edge, act.path,
                                     act.z, 0, len(act))
            if subset_pairs:
                rp = project_pairs_w_subset(prob.x, prob.f, prob.d, prob.w,
                                            prob.zA, prob.zB, touched)
            else:
                rp = project_pairs_w(prob.x, prob.f, prob.d, prob.w, prob.zA,
                                     prob.zB)
            resid = max(rt, rp)
            if resid <= (tol if pass_tol is None else pass_tol):
                break
        t_pass = time.perf_counter() - tp
        forgotten = act.forget()
        row = dict(it=it, lp=prob.lp_objective(), maxv=maxv, resid=resid,
                   active=len(act), added=added, forgotten=forgotten,
                   passes=p, nshort=nshort, t_oracle=t_or, t_passes=t_pass,
                   time=time.perf_counter() - t0, bytes=act.nbytes,
                   rel_gap=rel if gap_tol is not None else None)
        hist.append(row)
        if verbose:
            print(f"{it:4d} lp {row['lp']:12.4f} viol {maxv:9.3e} res {resid:9.3e}"
                  f" act {len(act):9d} +{added:8d} -{forgotten:8d} p {p:3d}"
                  f" short {nshort:9d} tor {t_or:6.2f} tp {t_pass:6.2f}"
                  f" t {row['time']:7.1f}"
                  + (f" gap {rel:9.2e}" if gap_tol is not None else ""),
                  flush=True)
        if row["time"] > time_limit:
            break
    return dict(converged=converged, n_iter=it, history=hist,
                time=time.perf_counter() - t0, max_violation=maxv,
                residual=resid)


def main():
    from cc_instances import load_power_grid, wang_instance
    from cc_instances import POWER_GRID_ANCHOR as anchor

    ap = argparse.ArgumentParser()
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--oracle", default="short")
    ap.add_argument("--max-iter", type=int, default=500)
    ap.add_argument("--passes", type=int, nargs=2, default=(5, 50))
    ap.add_argument("--out", default=None)
    ap.add_argument("--center", default="d")
    ap.add_argument("--eps-all", action="store_true",
                    help="subtract eps from pairs without common neighbours "
                         "too (as Veldt et al.'s construction code)")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--gap-tol", type=float, default=None)
    ap.add_argument("--pass-tol", type=float, default=None)
    ap.add_argument("--time-limit", type=float, default=np.inf)
    ap.add_argument("--continuation", type=float, nargs="*", default=[],
                    help="further gammas, each warm-started from the last")
    ap.add_argument("--graph", default="power",
                    help="power | plc (networkx powerlaw_cluster_graph(n, 2, "
                         "0.3), collaboration-like) | ws (connected Watts-"
                         "Strogatz(n, 4, 0.1), infrastructure-like)")
    ap.add_argument("--n", type=int, default=9000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--round", action="store_true",
                    help="pivot rounding + local search of each solution")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.graph == "power":
        G = load_power_grid()
    else:
        import networkx as nx
        from scipy import sparse as sp
        if args.graph == "plc":
            g = nx.powerlaw_cluster_graph(args.n, 2, 0.3, seed=args.seed)
        else:
            g = nx.connected_watts_strogatz_graph(args.n, 4, 0.1,
                                                  seed=args.seed)
        G = sp.csr_matrix(nx.to_scipy_sparse_array(g, format="csr"))
    C = wang_instance(G, eps_all=args.eps_all)
    if args.graph != "power":
        anchor = float("nan")  # no published value
    t_build = time.perf_counter() - t0
    prob = WeightedCC(C, args.gamma, center=args.center)
    t_setup = time.perf_counter() - t0
    print(f"instance {t_build:.2f} s, setup {t_setup:.2f} s, load {os.getloadavg()}")
    stages = []
    for k, gam in enumerate([args.gamma] + list(args.continuation)):
        if k:
            prob.rescale_gamma(gam)
        ts = time.perf_counter()
        res = solve(prob, tol=args.tol, max_iter=args.max_iter,
                    passes=tuple(args.passes), oracle=args.oracle,
                    gap_tol=args.gap_tol, pass_tol=args.pass_tol,
                    time_limit=args.time_limit)
        t_stage = time.perf_counter() - ts
        x = np.clip(prob.x, 0.0, 1.0)
        lp = prob.lp_objective(x)
        st = dict(gamma=gam, converged=res["converged"], n_iter=res["n_iter"],
                  lp_objective=lp, lp_objective_unclipped=prob.lp_objective(),
                  lp_lower_bound=prob.lp_lower_bound(),
                  anchor=anchor, ratio=lp / anchor, graph=args.graph,
                  n=int(prob.n),
                  time_stage=t_stage, time_total=time.perf_counter() - t0,
                  loadavg=os.getloadavg(),
                  max_violation_oracle=res["max_violation"],
                  residual=res["residual"], n_active=len(prob.active),
                  active_bytes=prob.active.nbytes,
                  peak_rss_gb=resource.getrusage(
                      resource.RUSAGE_SELF).ru_maxrss / 1e6)
        if not args.no_check:
            tc = time.perf_counter()
            st["max_violation_all_triangles"] = max_triangle_violation(x, prob.n)
            st["check_time"] = time.perf_counter() - tc
        if args.round:
            tr = time.perf_counter()
            st.update(round_solution(C, x, prob.n))
            st["round_time"] = time.perf_counter() - tr
        print(json.dumps(st, indent=1), flush=True)
        st["history"] = res["history"]
        stages.append(st)
    out = dict(tol=args.tol, oracle=args.oracle, gap_tol=args.gap_tol,
               eps_all=args.eps_all, center=args.center, stages=stages,
               command=" ".join(sys.argv))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)


def round_solution(C, x, n, trials=20, seed=0):
    """Threshold pivot rounding (best of ``trials``) + one-element moves."""
    from metric_estimators.nearness import (correlation_clustering_cost,
                                            pivot_rounding)
    from metric_estimators._kernels.correlation_clustering import (
        best_one_element_moves)

    X = np.empty((n, n))
    edges_to_matrix(x, n, X)
    rng = np.random.default_rng(seed)
    best, best_cost = None, np.inf
    for _ in range(trials):
        lab = pivot_rounding(X, rng, "threshold")
        c = correlation_clustering_cost(C, lab)
        if c < best_cost:
            best, best_cost = lab, c
    lab = best.astype(np.int64).copy()
    best_one_element_moves(C, lab, 100, 1e-12 * float(np.abs(C).max()))
    return dict(pivot_cost=best_cost,
                local_search_cost=correlation_clustering_cost(C, lab),
                n_clusters=int(np.unique(lab).size))


if __name__ == "__main__":
    main()
