"""The W-weighted regularised correlation-clustering LP.

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
needs ``O(gamma)`` passes to unwind the pair duals: the driver
:func:`metric_estimators.solvers.continuation.solve_continuation` runs a
continuation ``gamma_k = 1, 10, 100, ..., gamma``, each stage warm-started
from the previous duals scaled by the gamma ratio (:meth:`rescale_gamma`).
"""

import numpy as np
from scipy import sparse
from scipy.optimize import minimize_scalar

from .. import _backend
from .._linalg import power_of_two_scale
from .edges import edge_matrix, edge_vector

__all__ = ["DenseSignedGraph", "WeightedCorrelationLP", "clustering_cost",
           "correlation_clustering_cost", "correlation_lp",
           "dense_clustering_cost",
           "metric_closure", "sparse_clustering_cost"]


def metric_closure(x, n, *, kernels):
    """Shortest-path closure of ``clip(x, 0, 1)``: the largest metric below it.

    Returns the edge vector of all-pairs shortest-path lengths on the
    complete graph with lengths ``clip(x, 0, 1)`` (a metric with entries in
    [0, 1], at most ``clip(x, 0, 1)`` entrywise, equal to it where no
    triangle inequality is violated), on the ``kernels`` of the fit
    (:mod:`metric_estimators._backend`).
    """
    X = np.empty((n, n))
    kernels.edges.edges_to_matrix(np.clip(x, 0.0, 1.0), n, X)
    np.fill_diagonal(X, 0.0)
    kernels.shortest_paths.apsp(X)
    return X[np.triu_indices(n, 1)]


class WeightedCorrelationLP:
    """State of the regularised problem (module docstring) on edge vectors.

    Parameters
    ----------
    a : ndarray of shape (m,)
        Signed weights of the pairs ``i < j`` (edge vector).
    gamma : float
        Regularisation parameter of the first stage.
    active_factory : callable
        ``active_factory(x, winv)`` returns the empty active set (e.g.
        :class:`~metric_estimators.solvers.active_sets.CycleConstraints`
        on the same kernels) on the iterate ``x`` with inverse weights
        ``winv``; stored as ``active``.
    kernels : Kernels
        The kernels of the fit (:mod:`metric_estimators._backend`) that
        project the pair constraints.

    Attributes
    ----------
    x, f, z_above, z_below : ndarray of shape (m,)
        Iterate and pair duals (``z_above`` of ``x - f <= d``, ``z_below`` of
        ``d - x <= f``), in the units of the projection.
    w, d, winv : ndarray of shape (m,)
        LP weights, targets (= regulariser centre) and ``1 / r``.
    floor : float
        Regulariser weight of the zero-weight pairs.
    """

    def __init__(self, a, gamma, active_factory, *, kernels):
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
        self.z_above = np.zeros(a.size)
        self.z_below = np.zeros(a.size)
        self.active = active_factory(self.x, self.winv)
        self._touched = np.empty(0, dtype=np.int64)
        self._full_next = True
        self.rel_gap = np.nan
        self.pair_violation = np.inf
        self.kernels = kernels

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

    def _dual_combination(self):
        """``G^T z``: the constraint rows weighted by their duals, on x and on f.

        Triangles (or cycles) and pairs; returns ``(dual_x, dual_f)``.
        """
        dual_x = self.z_above - self.z_below + self._cycle_combination()
        return dual_x, -(self.z_above + self.z_below)

    def _cycle_combination(self):
        """``A^T z`` of the triangle (or cycle) rows alone, on x."""
        m = self.x.size
        act = self.active
        if not len(act):
            return np.zeros(m)
        if act.triangles:
            return (np.bincount(act.edge, act.z, minlength=m)
                    - np.bincount(act.path[0::2], act.z, minlength=m)
                    - np.bincount(act.path[1::2], act.z, minlength=m))
        # cycle constraints with paths of any length (sparse graphs)
        zp = np.repeat(act.z, np.diff(act.ptr))
        return (np.bincount(act.edge, act.z, minlength=m)
                - np.bincount(act.path, zp, minlength=m))

    def dual_gap(self):
        """Return ``(P, g)``: the QP value at ``(x, f)`` and the dual value.

        ``g`` is a lower bound on the QP optimum for any duals ``z >= 0``
        (weak duality): with ``v0 = (d, -gamma)``,
        ``g = (z^T (G v0 - h) - 1/2 |G^T z|^2_{R^-1}) / gamma - gamma/2 sum w``.
        """
        gam = self.gamma
        dual_x, dual_f = self._dual_combination()
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
        lin = tri + gam * float(np.sum(self.z_above + self.z_below))
        fp = self.fpos
        quad = float(np.sum(dual_x ** 2 * self.winv)
                     + np.sum(dual_f[fp] ** 2 / self.w[fp]))
        g = (lin - 0.5 * quad) / gam - 0.5 * gam * float(np.sum(self.w))
        return self.qp_objective(), g

    def lp_lower_bound(self):
        """Weak-duality lower bound on the LP optimum from the duals.

        The larger of two Lagrangian bounds, each maximised over a scale
        ``t`` of the duals in [0, 4] (:func:`scipy.optimize.minimize_scalar`),
        and each computed from the duals themselves, so that it holds
        whatever the accuracy of the solve:

        * over ``(x, f)``, every constraint priced (:meth:`_pair_form_bound`);
        * over ``x`` alone (:meth:`_edge_form_bound`), the cycle rows priced
          and ``|x - d|`` taken exactly on the box: the tighter of the two
          wherever the pair duals are far from the LP's (a stopped or
          weakly regularised solve).

        A solver may raise the second from :meth:`box_form` (the solve of
        :mod:`metric_estimators.solvers.cc_solve` does on sparse graphs).
        """
        return max(self._pair_form_bound(), self._edge_form_bound()[0])

    def box_form(self):
        """``(c, k, A, y0)``: the LP on the box over the active cycle rows, and multipliers.

        ``k + c^T x`` is the LP objective on the box (:meth:`_box_objective`),
        ``A x <= 0`` the active cycle rows (a CSR matrix) and ``y0`` their
        duals at the scale of :meth:`_edge_form_bound`, whose bound
        ``k + sum_e min(0, (c + A^T y0)_e)`` is that of the edge form: the
        start of :func:`~metric_estimators.solvers.dual_bounds.refine_box_duals`,
        which raises it towards the optimum of the LP restricted to the
        active set.
        """
        _, t = self._edge_form_bound()
        act = self.active
        c, k = self._box_objective()
        rows = act.edge.size
        A = sparse.csr_matrix(
            (np.concatenate((np.ones(rows), -np.ones(act.path.size))),
             (np.concatenate((np.arange(rows),
                              np.repeat(np.arange(rows), np.diff(act.ptr)))),
              np.concatenate((act.edge, act.path)))),
            shape=(rows, self.x.size))
        return c, k, A, t * act.z / self.gamma

    @staticmethod
    def _best_scale(bound):
        r = minimize_scalar(lambda t: -bound(t), bounds=(0.0, 4.0),
                            method="bounded", options={"xatol": 1e-10})
        return max((bound(0.0), 0.0), (bound(1.0), 1.0),
                   (-r.fun, float(r.x)))

    def _box_objective(self):
        """``(c, k)``: ``sum_e w_e |x_e - d_e| = k + c^T x`` on the box."""
        neg = self.d > 0.5
        return (np.where(neg, -self.w, self.w),
                float(np.sum(self.w[neg])))

    def _edge_form_bound(self):
        """The Lagrangian bound of the LP over ``x`` with the cycle duals.

        On the box ``0 <= x <= 1``, which holds an LP optimum, the objective
        is linear: ``sum_e w_e |x_e - d_e| = k + c^T x`` with ``c_e = w_e``
        where ``d_e = 0``, ``-w_e`` where ``d_e = 1`` and ``k = sum_{d_e = 1}
        w_e``.  For duals ``y >= 0`` of the rows ``A x <= 0``, weak duality
        gives ``LP >= k + sum_e min(0, c_e + (A^T y)_e)`` (the minimum of a
        linear function over the box); here ``y = t z / gamma``.  Returns
        ``(bound, t)``.
        """
        c, k = self._box_objective()
        g = self._cycle_combination() / self.gamma

        def bound(t):
            return k + float(np.minimum(c + t * g, 0.0).sum())

        value, t = self._best_scale(bound)
        return float(value), t

    def _pair_form_bound(self):
        """The Lagrangian bound over ``(x, f)`` with every dual.

        With ``y = t z / gamma`` (any ``t >= 0``) and the box ``0 <= x, f <=
        1``, which holds an LP optimum, the LP value is at least ``-t h^T z /
        gamma + sum_i min(0, (c + t G^T z / gamma)_i)``.
        """
        dual_x, dual_f = self._dual_combination()
        fp = self.fpos
        bound_dot_duals = float(np.sum(self.d * (self.z_above - self.z_below)))
        gam = self.gamma
        w = self.w[fp]
        dual_f = dual_f[fp]

        def bound(t):
            return (-t * bound_dot_duals / gam
                    + np.minimum(t * dual_x / gam, 0).sum()
                    + np.minimum(w + t * dual_f / gam, 0).sum())

        return float(self._best_scale(bound)[0])

    def rescale_gamma(self, gamma_new):
        """Warm start at ``gamma_new``: every dual times the gamma ratio.

        ``(x, f)`` are then recomputed from the duals by Hildreth's
        primal-dual relation ``v = v0 - R^-1 G^T z``, ``v0 = (d, -gamma_new)``.
        """
        t = gamma_new / self.gamma
        self.z_above *= t
        self.z_below *= t
        self.active.z *= t
        self.gamma = float(gamma_new)
        dual_x, dual_f = self._dual_combination()
        self.x[:] = self.d - self.winv * dual_x
        self.f[:] = np.where(self.fpos, -self.gamma
                             - dual_f / np.where(self.fpos, self.w, 1.0), 0.0)

    # -- pieces for the driver ---------------------------------------------
    def pair_pass(self):
        """One Hildreth pass over the pair constraints alone; returns its residual.

        The continuation
        (:func:`metric_estimators.solvers.continuation.solve_continuation`)
        repeats it before each stage, before any triangle is known.
        """
        return self.kernels.cc_pair_projections.project_pairs_w(
            self.x, self.f, self.d, self.w, self.z_above, self.z_below)

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
            # numpy >= 2.3's hash-based np.unique is far slower on a million
            # constraints (measured: benchmarks/README.md, *Measurements
            # behind choices in the code*).
            if len(act):
                mask = np.zeros(x.shape[0], dtype=bool)
                mask[act.edge] = True
                mask[act.path.ravel()] = True
                # int32 ids (half the bytes; pair ids fit, as the active
                # set's)
                self._touched = np.flatnonzero(mask).astype(np.int32)
            else:
                self._touched = np.empty(0, dtype=np.int64)
            return self.kernels.cc_pair_projections.project_pairs_w(
                x, self.f, self.d, self.w, self.z_above, self.z_below)
        return self.kernels.cc_pair_projections.project_pairs_w_subset(
            x, self.f, self.d, self.w, self.z_above, self.z_below,
            self._touched)

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


def dense_clustering_cost(A, labels):
    """Cost of ``labels`` on the dense signed graph ``A`` (each pair ``i < j`` once).

    The weight of every positive pair split plus ``|A_ij|`` of every negative
    pair placed together; the dense twin of :func:`sparse_clustering_cost`.
    """
    A = np.asarray(A, dtype=np.float64)
    labels = np.asarray(labels)
    n = A.shape[0]
    # half the sum over the whole symmetric matrix (zero diagonal), by
    # blocks of about 2^20 entries: no n^2 temporaries
    rows = max(1, (1 << 20) // max(n, 1))
    total = 0.0
    for s in range(0, n, rows):
        a = A[s:s + rows]
        same = labels[s:s + rows, None] == labels[None, :]
        total += float(np.sum(np.where(same, np.maximum(-a, 0.0),
                                       np.maximum(a, 0.0))))
    return 0.5 * total


def sparse_clustering_cost(A, labels, *, kernels):
    """Cost of ``labels`` counted over the stored edges of a sparse ``A`` (each once).

    On ``kernels``, those of the fit (the same bits on both).
    """
    U = sparse.triu(sparse.csr_matrix(A, dtype=np.float64), k=1).tocoo()
    labels = np.ascontiguousarray(labels).astype(np.int64)
    return float(kernels.correlation_clustering.sparse_cost(
        U.row.astype(np.int64), U.col.astype(np.int64),
        np.asarray(U.data, dtype=np.float64), labels))


def correlation_clustering_cost(A, labels):
    """Cost of a clustering of the signed graph ``A``.

    ``sum of A_ij > 0 over pairs split`` plus ``sum of |A_ij|, A_ij < 0, over
    pairs placed together`` (each unordered pair counted once).

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n, n)
        Symmetric signed weights; for a sparse ``A`` only the stored edges
        count (``O(|E|)``, never densified: :func:`sparse_clustering_cost`,
        on the kernels :func:`metric_estimators._backend.choose` gives a
        graph of this size, both give the same bits; dense:
        :func:`dense_clustering_cost`).
    labels : array-like of shape (n,)
        Cluster label of each node.

    Returns
    -------
    cost : float
    """
    if sparse.issparse(A):
        kernels = _backend.choose("sparse_correlation_clustering", A.shape[0])
        return sparse_clustering_cost(A, labels, kernels=kernels)
    return dense_clustering_cost(A, labels)


def clustering_cost(A, labels, *, kernels):
    """:func:`correlation_clustering_cost` on the kernels of a fit (those of a sparse ``A``)."""
    if sparse.issparse(A):
        return sparse_clustering_cost(A, labels, kernels=kernels)
    return dense_clustering_cost(A, labels)


def correlation_lp(a, gamma, active_factory, *, kernels):
    """``(lp, w_scale)``: the :class:`WeightedCorrelationLP` of the signed weights ``a``.

    The LP is invariant under a positive scaling of the weights, its
    regularisation is not: weights of extreme scale (largest ``|a_e|``
    outside ``[2**-20, 2**20]``) are divided by the power of two
    ``w_scale`` (exact), so that ``a * 2**k`` gives exactly the result of
    ``a``.
    """
    w_scale = power_of_two_scale(a, center=False)
    lp = WeightedCorrelationLP(a / w_scale if w_scale != 1.0 else a, gamma,
                               active_factory, kernels=kernels)
    return lp, w_scale


class DenseSignedGraph:
    """A validated dense signed graph: every pair ``i < j`` an edge; the dense problem.

    The same interface as
    :class:`~metric_estimators._problems.sparse_correlation_clustering.SparseSignedGraph`,
    which lets one fit and one solve
    (:func:`~metric_estimators.solvers.cc_solve.solve_and_round`) serve both.

    Parameters
    ----------
    A : ndarray of shape (n, n)
        Symmetric signed weights, zero diagonal, validated by the estimator.
    kernels : Kernels
        Those of the fit (:mod:`metric_estimators._backend`).

    Attributes
    ----------
    n : int
    A : ndarray of shape (n, n)
        The validated matrix, which the rounding and the cost read.
    refine_bound : bool
        False: on a dense problem's millions of triangles the refinement
        of the bound by L-BFGS-B costs more than the solve's last stage.
    bound_before_rounding : bool
        True: the final bound, unrefined, is made before the ``(n, n)``
        solution matrix (its ``O(n^2)`` temporaries then do not add to that
        matrix), and the final rounding after it.
    """

    refine_bound = False
    bound_before_rounding = True
    closure_note = ("not converged: the metric closure of the iterate "
                    "(all-pairs shortest paths)")

    def __init__(self, A, *, kernels):
        self.n = int(A.shape[0])
        self.A = A
        self.kernels = kernels

    def correlation_lp(self, gamma, active_factory, kernels):
        """``(lp, w_scale)`` of the pairs' weights (:func:`correlation_lp`).

        The edge vector of the weights is not kept: the LP holds what it
        needs (``|a|`` and the signs).
        """
        return correlation_lp(edge_vector(self.A, kernels=kernels), gamma,
                              active_factory, kernels=kernels)

    def edge_matrix(self, x):
        """The symmetric ``(n, n)`` matrix of the edge vector ``x``."""
        return edge_matrix(x, self.n, kernels=self.kernels)

    def describe(self, lp):
        """The first words of the solve's phase line."""
        return f"{lp.w.size} pairs, {int(lp.fpos.sum())} signed"

    def min_passes(self, max_passes):
        """Passes after an oracle call that added more than 5 % of the active set."""
        return 5

    def closure(self, x, oracle):
        """The metric closure of ``x`` (:func:`metric_closure`; ``oracle`` unused)."""
        return metric_closure(x, self.n, kernels=self.kernels)
