"""The W-weighted regularised correlation-clustering LP (no scikit-learn here).

The LP relaxation of weighted correlation clustering (Charikar, Guruswami &
Wirth 2005) on a signed graph ``A`` (``w_e = |A_e|``, ``d_e = 0`` where
``A_e > 0`` and ``1`` otherwise) ::

    minimise  sum_e w_e |x_e - d_e|   over x metric (triangle inequalities)

is solved through the quadratically regularised problem of Veldt, Gleich,
Wirth & Saunderson ("Metric-constrained optimization for graph clustering
algorithms", SIAM J. Math. Data Sci. 2019), written in their error
variables ``x - d`` ::

    minimise  w^T f + 1/(2 gamma) [ (x - d)^T R (x - d) + f^T W f ]
    s.t.      x_ij <= x_ik + x_kj  (all triangles),
              f_e >= x_e - d_e,  f_e >= d_e - x_e   (pairs with w_e > 0)

with ``W = diag(w)`` and ``R = diag(r)``, ``r_e = w_e``: the
``(R, W)``-weighted L2 projection of ``(x, f) = (d, -gamma)`` onto the
constraints, i.e. Hildreth's method from ``x = d, f = -gamma`` with all duals
zero.  The regulariser is centred at ``d`` (Veldt et al.'s Dykstra starts at
``E = x - d = 0``); centred at 0 the same weights give a different QP whose
LP value on the power-grid instance is 35 % too high.

Zero weights (``A_e = 0``, "no information"): no LP term, no ``f_e`` and no
pair constraint, centre ``d_e = 1`` (as a negative pair), and regulariser
weight ``r_e`` = the smallest positive weight (the projection needs
``r_e > 0``; the floor keeps every weight inside the data's own range).  The
LP is unchanged by this choice; the QP is exactly the one written above.

For large ``gamma`` the regularised solution solves the LP (exact
regularisation, Mangasarian 1984), but Hildreth started at ``f = -gamma``
needs ``O(gamma)`` passes to unwind the pair duals: :meth:`solve` runs a
continuation ``gamma_k = 1, 10, 100, ..., gamma``, each stage warm-started
from the previous duals scaled by the gamma ratio (:meth:`rescale_gamma`).
"""

import numpy as np
from scipy.optimize import minimize_scalar

from ..solvers import numpy_kernels as npk

# numba kernels, loaded on first call (small problems run on numpy's)
project_pairs_w = npk.lazy_kernel("cc_weighted", "project_pairs_w")
project_pairs_w_subset = npk.lazy_kernel("cc_weighted", "project_pairs_w_subset")
edges_to_matrix = npk.lazy_kernel("edges", "edges_to_matrix")
apsp = npk.lazy_kernel("shortest_paths", "apsp")

__all__ = ["WeightedCorrelationLP", "gamma_stages", "metric_closure",
           "solve_continuation"]

#: relative QP gap at which a continuation stage before the last one stops
INTERMEDIATE_GAP_TOL = 1e-4


def gamma_stages(gamma):
    """Continuation stages ``1, 10, 100, ..., gamma`` (``[gamma]`` if ``gamma <= 10``)."""
    gamma = float(gamma)
    if gamma <= 10.0:
        return [gamma]
    stages = []
    g = 1.0
    while g < gamma:
        stages.append(g)
        g *= 10.0
    stages.append(gamma)
    return stages


def metric_closure(x, n, numpy=False):
    """Shortest-path closure of ``clip(x, 0, 1)``: the largest metric below it.

    Returns the edge vector of all-pairs shortest-path lengths on the
    complete graph with lengths ``clip(x, 0, 1)`` (a metric with entries in
    [0, 1], at most ``clip(x, 0, 1)`` entrywise, equal to it where no
    triangle inequality is violated).  ``numpy``: the numpy path of small
    problems (:mod:`metric_estimators.solvers.numpy_kernels`).
    """
    X = np.empty((n, n))
    kernels = npk if numpy else None
    (edges_to_matrix if kernels is None else npk.edges_to_matrix)(
        np.clip(x, 0.0, 1.0), n, X)
    np.fill_diagonal(X, 0.0)
    (apsp if kernels is None else npk.apsp)(X)
    return X[np.triu_indices(n, 1)]


class WeightedCorrelationLP:
    """State of the regularised problem (module docstring) on edge vectors.

    Parameters
    ----------
    a : ndarray of shape (m,)
        Signed weights of the pairs ``i < j`` (edge vector).
    gamma : float
        Regularisation parameter of the first stage.
    active : CycleConstraints
        Empty active set; its iterate and inverse weights are set here.

    Attributes
    ----------
    x, f, zA, zB : ndarray of shape (m,)
        Iterate and pair duals (``zA`` of ``x - f <= d``, ``zB`` of
        ``d - x <= f``), in the units of the projection.
    w, d, winv : ndarray of shape (m,)
        LP weights, targets (= regulariser centre) and ``1 / r``.
    floor : float
        Regulariser weight of the zero-weight pairs.
    """

    def __init__(self, a, gamma, active_factory):
        self.w = np.abs(a)
        self.d = (a <= 0).astype(np.float64)
        self.fpos = self.w > 0
        self._wsum = float(np.sum(self.w))
        pos = self.w[self.fpos]
        self.floor = float(pos.min()) if pos.size else 1.0
        self.winv = 1.0 / np.where(self.fpos, self.w, self.floor)
        self.gamma = float(gamma)
        self.x = self.d.copy()
        self.f = np.where(self.fpos, -self.gamma, 0.0)
        self.zA = np.zeros(a.size)
        self.zB = np.zeros(a.size)
        self.active = active_factory(self.x, self.winv)
        self._touched = np.empty(0, dtype=np.int64)
        self._full_next = True
        self.rel_gap = np.nan
        self.pair_violation = np.inf
        #: the numpy path of small problems (set by the estimator, as the
        #: driver sets its active set's)
        self.numpy = False

    # -- objectives and bounds ---------------------------------------------
    def lp_objective(self, x=None):
        """``sum_e w_e |x_e - d_e|``."""
        x = self.x if x is None else x
        return float(np.sum(self.w * np.abs(x - self.d)))

    def qp_objective(self):
        """Value of the regularised objective at ``(x, f)``."""
        r = 1.0 / self.winv
        fp = self.fpos
        return float(np.sum(self.w * self.f)
                     + (np.sum(r * (self.x - self.d) ** 2)
                        + np.sum(self.w[fp] * self.f[fp] ** 2))
                     / (2.0 * self.gamma))

    def _atz(self):
        # G^T z on x and on f (triangles and pairs)
        m = self.x.size
        act = self.active
        ux = self.zA - self.zB
        if len(act) and act.triangles:
            ux = (ux + np.bincount(act.edge, act.z, minlength=m)
                  - np.bincount(act.path[0::2], act.z, minlength=m)
                  - np.bincount(act.path[1::2], act.z, minlength=m))
        elif len(act):
            # cycle constraints with paths of any length (sparse graphs)
            zp = np.repeat(act.z, np.diff(act.ptr))
            ux = (ux + np.bincount(act.edge, act.z, minlength=m)
                  - np.bincount(act.path, zp, minlength=m))
        return ux, -(self.zA + self.zB)

    def dual_gap(self):
        """Return ``(P, g)``: the QP value at ``(x, f)`` and the dual value.

        ``g`` is a lower bound on the QP optimum for any duals ``z >= 0``
        (weak duality): with ``v0 = (d, -gamma)``,
        ``g = (z^T (G v0 - h) - 1/2 |G^T z|^2_{R^-1}) / gamma - gamma/2 sum w``.
        """
        gam = self.gamma
        ux, uf = self._atz()
        act = self.active
        tri = 0.0
        if len(act) and act.triangles:
            d = self.d
            tri = float(np.sum(act.z * (d[act.edge] - d[act.path[0::2]]
                                        - d[act.path[1::2]])))
        elif len(act):
            d = self.d
            dp = np.add.reduceat(d[act.path], act.ptr[:-1]) if act.path.size \
                else np.zeros(len(act))
            tri = float(np.sum(act.z * (d[act.edge] - dp)))
        lin = tri + gam * float(np.sum(self.zA + self.zB))
        fp = self.fpos
        quad = float(np.sum(ux ** 2 * self.winv)
                     + np.sum(uf[fp] ** 2 / self.w[fp]))
        g = (lin - 0.5 * quad) / gam - 0.5 * gam * float(np.sum(self.w))
        return self.qp_objective(), g

    def lp_lower_bound(self):
        """Weak-duality lower bound on the LP optimum from the duals.

        With ``y = t z / gamma`` (any ``t >= 0``) and the box ``0 <= x, f <=
        1``, which holds an LP optimum, the LP value is at least ``-t h^T z /
        gamma + sum_i min(0, (c + t G^T z / gamma)_i)``; maximised over ``t``
        in [0, 4].  ``G^T z`` is computed from the duals themselves, so the
        bound holds whatever the accuracy of the solve.
        """
        ux, uf = self._atz()
        fp = self.fpos
        hz = float(np.sum(self.d * (self.zA - self.zB)))
        gam = self.gamma
        w = self.w[fp]
        uf = uf[fp]

        def bound(t):
            return (-t * hz / gam + np.minimum(t * ux / gam, 0).sum()
                    + np.minimum(w + t * uf / gam, 0).sum())

        r = minimize_scalar(lambda t: -bound(t), bounds=(0.0, 4.0),
                            method="bounded", options={"xatol": 1e-10})
        return float(max(bound(0.0), bound(1.0), -r.fun))

    def rescale_gamma(self, gamma_new):
        """Warm start at ``gamma_new``: every dual times the gamma ratio.

        ``(x, f)`` are then recomputed from the duals by Hildreth's
        primal-dual relation ``v = v0 - R^-1 G^T z``, ``v0 = (d, -gamma_new)``.
        """
        t = gamma_new / self.gamma
        self.zA *= t
        self.zB *= t
        self.active.z *= t
        self.gamma = float(gamma_new)
        ux, uf = self._atz()
        self.x[:] = self.d - self.winv * ux
        self.f[:] = np.where(self.fpos, -self.gamma
                             - uf / np.where(self.fpos, self.w, 1.0), 0.0)

    # -- pieces for the driver ---------------------------------------------
    def settle_pairs(self, tol, max_passes=50):
        """Passes over the pair constraints alone (before any triangle)."""
        pairs = npk.project_pairs_w if self.numpy else project_pairs_w
        for _ in range(max_passes):
            if pairs(self.x, self.f, self.d, self.w, self.zA, self.zB) <= tol:
                break

    def fixed_pass(self, x):
        """Hildreth pass over the pair constraints, the driver's fixed pass.

        The first pass after an oracle call covers every pair (its residual
        belongs to the stopping rule); the following ones only the pairs
        touched by a remembered triangle -- the others cannot move.
        """
        if self._full_next:
            self._full_next = False
            act = self.active
            # The sorted distinct pair indices, by a mask over the pairs:
            # numpy >= 2.3's hash-based np.unique took ~1.5 s per call on
            # the ~10^6 constraints of n = 1000 (the mask: ~10 ms).
            if len(act):
                mask = np.zeros(x.shape[0], dtype=bool)
                mask[act.edge] = True
                mask[act.path.ravel()] = True
                self._touched = np.flatnonzero(mask)
            else:
                self._touched = np.empty(0, dtype=np.int64)
            if self.numpy:
                return npk.project_pairs_w(x, self.f, self.d, self.w,
                                           self.zA, self.zB)
            return project_pairs_w(x, self.f, self.d, self.w, self.zA, self.zB)
        if self.numpy:
            return npk.project_pairs_w(x, self.f, self.d, self.w, self.zA,
                                       self.zB, self._touched)
        return project_pairs_w_subset(x, self.f, self.d, self.w, self.zA,
                                      self.zB, self._touched)

    def make_stop_rule(self, tol, gap_tol):
        """Veldt et al.'s rule: constraints within ``tol``, relative gap within ``gap_tol``.

        Every triangle inequality (the oracle's largest violation) and every
        pair constraint within ``tol``, and ``(P - g) / |g| <= gap_tol``
        (:meth:`dual_gap`, computed once the constraints are within
        ``10 tol``).
        """
        def stop(point, max_violation, residual):
            self._full_next = True
            fp = self.fpos
            self.pair_violation = float(np.max(
                np.abs(point - self.d)[fp] - self.f[fp], initial=0.0))
            viol = max(max_violation, self.pair_violation)
            self.rel_gap = np.nan
            if viol <= 10.0 * tol:
                P, g = self.dual_gap()
                # an LP optimum of 0 (no conflicting cycle) has g = 0, the
                # difference of terms of size gamma sum(w): the gap is then
                # relative to 1e-9 gamma sum(w)
                self.rel_gap = (P - g) / max(
                    abs(g), 1e-9 * max(self.gamma, 1.0) * self._wsum, 1e-300)
            return viol <= tol and self.rel_gap <= gap_tol
        return stop


def solve_continuation(problem, oracle, driver, *, gamma, tol, gap_tol,
                       max_iter, max_passes, report=None, extra_row=None,
                       min_passes=5):
    """Solve ``problem`` at ``gamma`` through the stages of :func:`gamma_stages`.

    ``driver`` is :func:`metric_estimators.solvers.bregman.bregman_project_forget`;
    every stage runs it with the gap rule (:meth:`WeightedCorrelationLP.make_stop_rule`;
    the stages before the last only warm-start the next one and stop at a
    relative gap of ``max(gap_tol, INTERMEDIATE_GAP_TOL)``)
    and the pair pass as the fixed pass, on the remaining oracle-call budget,
    with at least ``min_passes`` passes after an oracle call that added more
    than 5 % of the active set (``max_passes`` otherwise; the sparse path,
    whose oracle calls cost many passes, asks for ``max_passes`` always).
    Returns ``(results, stages)``: one driver result per stage run.
    """
    results = []
    stages = gamma_stages(gamma)
    used = 0
    for k, g in enumerate(stages):
        if k:
            problem.rescale_gamma(g)
        problem.settle_pairs(tol / 10.0)
        if report is not None and len(stages) > 1:
            report.phase(f"stage {k + 1}/{len(stages)}: gamma {g:.3g}")
        res = driver(
            problem.active, oracle, objective=problem.lp_objective, tol=tol,
            max_iter=max(max_iter - used, 1),
            max_passes=max_passes, pass_budget=0.0,
            min_passes=min(min_passes, max_passes), settle_fraction=0.05,
            fixed_pass=problem.fixed_pass, add_threshold=tol / 10.0,
            report=report, stop_rule=problem.make_stop_rule(
                tol, gap_tol if k == len(stages) - 1
                else max(gap_tol, INTERMEDIATE_GAP_TOL)),
            pass_tol=tol / 100.0, extra_row=extra_row,
        )
        used += res.n_iter
        results.append(res)
        if used >= max_iter and k < len(stages) - 1:
            break
    return results, stages
