"""Weighted correlation clustering by an LP relaxation and pivot rounding.

:class:`CorrelationClustering` validates the signed graph, builds its
problem (:class:`~metric_estimators._problems.correlation_clustering.DenseSignedGraph`
or :class:`~metric_estimators._problems.sparse_correlation_clustering.SparseSignedGraph`,
the LP state
:class:`~metric_estimators._problems.correlation_clustering.WeightedCorrelationLP`
with a :class:`~metric_estimators.solvers.active_sets.CycleConstraints`
active set, and the oracle of its cycle inequalities), and hands it to
:func:`metric_estimators.solvers.cc_solve.solve_and_round`: the LP by
Project and Forget (Sonthalia & Gilbert, JMLR 23, 2022), its lower bound
by weak duality, and its rounding by pivoting and local search
(:mod:`metric_estimators.solvers.cc_rounding`).
:func:`correlation_clustering_cost` and :func:`pivot_rounding` are
re-exported from the layers that define them.
"""

import functools
import numbers

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state

from . import _backend
from ._problems.correlation_clustering import (
    DenseSignedGraph,
    clustering_cost,
    correlation_clustering_cost,
)
from ._problems.sparse_correlation_clustering import SparseSignedGraph
from ._reporting import Column, FitReport, convergence_warning
from ._sklearn_private import HasMethods, Interval, StrOptions, _fit_context
from ._validation.matrices import (
    check_signed_graph_has_negative,
    check_sparse_signed_graph,
    check_symmetric_matrix,
)
from .base import DaskClientMixin, DocLinkMixin, PrecomputedMixin
from .solvers.active_sets import CycleConstraints
from .solvers.cc_rounding import ClusteringPool, pivot_rounding
from .solvers.cc_solve import solve_and_round
from .solvers.continuation import gamma_stages
from .solvers.oracles import ShortEdgeTriangleOracle, SparseShortestPathOracle

#: the verbose table, one row per oracle call: the driver's values under
#: this estimator's words (the ``verbose`` parameter says what each means),
#: then the stage's gamma, the relative gap of the regularised problem ("-"
#: until the constraints are within 10 tol) and which search the oracle ran
CC_COLUMNS = (Column("Iteration", "d"), Column("LP-objective", ".6e", 14),
              Column("Violation", ".3e"), Column("Residual", ".3e"),
              Column("Constraints", "d", 11), Column("New", "d", 8),
              Column("Passes", "d", 6), Column("Gamma", ".3g", 8),
              Column("Gap", ".2e", 9), Column("Search", "s", 13))

#: nodes settled per source by the sparse oracle's first capped searches,
#: the factor by which the cap grows when a capped call finds little, and
#: "little" as a fraction of the edges or the active set (see
#: :class:`~metric_estimators.solvers.oracles.SparseShortestPathOracle`)
SEARCH_CAP = 256
SEARCH_GROWTH = 4
SEARCH_SWITCH = 0.02
#: relative change of the LP objective over five capped calls below which
#: the cap grows too (the searches then keep refinding what was forgotten)
SEARCH_STALL = 1e-3

__all__ = ["CorrelationClustering", "correlation_clustering_cost",
           "pivot_rounding"]


class CorrelationClustering(PrecomputedMixin, DaskClientMixin, DocLinkMixin,
                            ClusterMixin, BaseEstimator):
    """Weighted correlation clustering by an LP relaxation and pivot rounding.

    The graph is signed: ``A_ij > 0`` is the weight of an edge asking ``i``
    and ``j`` to share a cluster, ``A_ij < 0`` (weight ``|A_ij|``) asks them
    apart, ``0`` says nothing.  The LP relaxation (Charikar, Guruswami & Wirth
    2005) ::

        minimise    sum_{ij} w_ij |x_ij - d_ij|,   d_ij = 0 if A_ij > 0 else 1
        subject to  x is a (pseudo-)metric (triangle inequalities)

    is solved in the quadratically regularised form of Veldt, Gleich, Wirth &
    Saunderson ("Metric-constrained optimization for graph clustering
    algorithms", SIAM J. Math. Data Sci. 2019), in their error variables
    ``x - d`` ::

        minimise  w^T f + 1/(2 gamma) [(x - d)^T R (x - d) + f^T W f]
        s.t.      x metric,  f_ij >= x_ij - d_ij,  f_ij >= d_ij - x_ij

    with ``W = diag(w)``, ``R = diag(r)``, ``r = w``: the ``(R, W)``-weighted
    projection of ``(x, f) = (d, -gamma)``, solved by Project and Forget
    (Sonthalia & Gilbert, JMLR 2022) on the driver of :class:`MetricNearness`
    with an exact short-edge triangle oracle
    (:class:`~metric_estimators.solvers.oracles.ShortEdgeTriangleOracle`,
    dense min-plus when the short graph gets dense); the pair constraints
    are projected every pass.  A pair of zero weight (``A_ij = 0``) has no LP
    term and no pair constraint; in the regulariser it has centre
    ``d_ij = 1`` and weight ``r_ij`` = the smallest positive ``|A_kl|``
    (documented choice: the LP does not depend on it, the regularised
    solution does).  The run stops when every triangle and pair constraint
    holds within ``tol`` and the relative primal-dual gap of the regularised
    problem is at most ``gap_tol`` (Veldt et al.'s rule).  For large
    ``gamma`` the regularised solution solves the LP (exact regularisation);
    ``gamma > 10`` is reached by continuation ``1, 10, 100, ..., gamma``,
    each stage warm-started from the previous duals.

    Dense or sparse input (chosen by the input's type): a dense array takes
    the path above, every pair a variable (``A_ij = 0``: zero weight).  A
    ``scipy.sparse`` ``A`` is a graph: its stored entries are the edges
    (non-zero signed weights), absent entries mean no information, and the
    LP lives on the edges only, with the cycle inequalities ``x_e <= sum_{f
    in P} x_f`` (``e = uv``, ``P`` a ``u``-``v`` path) found by a
    shortest-path oracle
    (:class:`~metric_estimators.solvers.oracles.SparseShortestPathOracle`,
    ``search="components"``: one multi-source search per component of the
    zero-length edges, so that a capped search spans communities rather
    than nodes; blocks of components on numba's threads, or on the workers
    of a Dask ``client``) -- the complete-graph LP with zero weights off the
    graph, since the shortest-path completion of a feasible edge solution
    is a metric.  Same regularisation, ``gamma`` and stopping rule; memory
    ``O(n + |E|)`` plus the active set throughout (rounding over balls of
    the LP metric, local search and cost over the edges).

    Rounding: LP-KwikCluster pivoting (Ailon, Charikar & Newman, "Aggregating
    inconsistent information: ranking and clustering", J. ACM 2008): a random
    unclustered pivot ``p`` takes every unclustered ``j`` with probability
    ``1 - x_pj`` (``rounding="probabilistic"``), or with ``x_pj < 1/2``
    (``rounding="threshold"``); the best of ``n_rounding_trials``
    clusterings (by the correlation clustering cost) is kept.  With
    ``local_search=True`` it is then improved by best one-element moves
    (Elsner & Schudy 2009, "BOEM") alternated with merges of clusters joined
    by a positive total weight, which never increases the cost
    (:func:`~metric_estimators.solvers.cc_local_search.local_search`).  On a
    sparse ``A`` every trial is improved so, and the cheapest ones are then
    recombined from the common refinements of their pairs (the core groups
    of Ovelgönne & Geyer-Schulz 2012), together with a few local optima
    found without the LP; on a dense ``A`` only the cheapest trial is
    improved (:mod:`metric_estimators.solvers.cc_rounding` gives the
    details).  On loose LPs (many communities, LP values far below the best
    clustering) pivoting alone can be worse than putting every node apart.

    Parameters
    ----------
    gamma : float, default=10.0
        Regularisation parameter (larger: closer to the LP, slower), for
        weights of order 1: weights of extreme scale (``max |A_ij|`` outside
        ``[2**-20, 2**20]``) are first divided by a power of two (the LP does
        not change), so that ``A * 1e150`` is solved like ``A``.
    tol : float, default=1e-3
        Largest allowed violation of a triangle or pair constraint (``x`` is
        on the scale [0, 1]).
    gap_tol : float, default=1e-4
        Largest allowed relative primal-dual gap ``(P - D) / |D|`` of the
        regularised problem at the final ``gamma``.
    max_iter : int, default=500
        Maximum number of oracle calls, over all continuation stages.  A
        fit stopped by it returns the metric closure of the iterate (on a
        sparse graph: one shortest-path search per node, as costly as an
        exact oracle call), whose LP value is an upper bound; the dual
        ``lower_bound_`` stays valid, but an early iterate rounds poorly.
    max_passes : int, default=50
        Maximum number of passes between two oracle calls.
    certify_tol : float or None, default=None
        Stop the LP solve as soon as a clustering is *certified* within a
        factor ``1 + certify_tol`` of the optimum: its cost at most ``1 +
        certify_tol`` times the lower bound, whether or not the LP has
        converged.  The solve is then interrupted by checks, each the
        rounding (with its local search) of the current iterate and the
        lower bound of ``lower_bound_``: the first once the LP objective
        has stalled (changed by less than 1 % over 5 oracle calls), the
        next ones spaced so that they take at most about a quarter of the
        time (:class:`~metric_estimators.solvers.certificates.CertificateStop`).
        The cheapest clustering and the largest bound of all checks are
        kept.  The ratio certifies the clustering against the clustering
        optimum too (the bound is below it).  ``None``: solve the LP to
        ``tol`` / ``gap_tol``, then round.  A fit stopped so sets
        ``certified_`` and does not warn; ``lp_solution_`` is then the
        clipped iterate, not its metric closure (on a large graph that
        closure can cost more than the solve).
    max_time : float or None, default=None
        Wall-clock seconds for the whole fit.  The solve stops, with a
        ``ConvergenceWarning``, as soon as one more oracle call and its
        projections (timed as the last ones) and then the final rounding
        and bound (timed as the last ``certify_tol`` check, less the
        LP-free optima that only the first rounding makes; a quarter of
        ``max_time`` before the first check) would end after ``max_time``; the
        rounding and the bound follow as for a fit stopped by
        ``max_iter``, unless that moment comes right after a check, which
        then stands as the final rounding and bound (a check is not run
        twice).  A rounding with a deadline (a check's, or the final
        one of a sparse graph) leaves :data:`~metric_estimators.solvers.cc_solve.BOUND_SHARE` of
        the time left to the bound: after the first pivot trial it starts a trial only if
        the trial (and, on a sparse graph, the LP-free starts still to
        make; the first rounding makes at least one) would end before that
        share begins, and on a sparse graph it starts no recombination
        crossing after then.  The refinement of the bound (L-BFGS-B,
        sparse graphs) stops at ``max_time`` with the best multipliers
        found, so a bound computed then is certified but may be looser.
        These are estimates: the
        fit can end somewhat before or after ``max_time``, and its result
        depends on the machine's speed.  ``None``: no limit.
    rounding : {"threshold", "probabilistic"}, default="threshold"
        How a node joins a pivot.  Threshold pivoting is the default because
        LP solutions are often largely half-integral (``x = 1/2``, as on the
        planted-partition graphs of ``benchmarks/bench_correlation_clustering.py``),
        and probabilistic pivoting joins such pairs at random, which costs
        far more there.
    n_rounding_trials : int, default=20
        Number of pivot orders tried; the cheapest clustering is kept.
    local_search : bool, default=True
        Improve the rounded clustering by best one-element moves and
        cluster merges.
    max_local_sweeps : int, default=100
        Maximum number of one-element sweeps (each ``O(n^2)``; ``O(|E|)``
        for a sparse ``A``), over all merge rounds.
    random_state : int, RandomState instance or None, default=None
        Seeds the pivot orders of the rounding.
    verbose : int, default=0
        Print the LP solve's table, one row per oracle call (1 throttles
        it, 2 prints every row): ``Iteration`` (oracle calls so far, over
        all stages), ``LP-objective`` (the LP value of the
        current iterate, ``sum |A_ij| |x_ij - d_ij|``; about 0 at the start,
        where every ``x_ij`` is its target ``d_ij``), ``Violation`` (the
        largest violation of a triangle or pair constraint, to bring below
        ``tol``), ``Residual`` (how far the remembered constraints are from
        consistent: a positive dual on a constraint that is not tight),
        ``Constraints`` (remembered), ``New`` (found by this oracle call),
        ``Passes`` (projection passes since the last call), ``Gamma`` (the
        continuation stage), ``Gap`` (relative primal-dual gap of the
        regularised problem, to bring below ``gap_tol``; ``-`` until the
        constraints are within ``10 tol``), ``Search`` (what the oracle
        searched: ``short-edges`` or ``all-triangles`` on a dense ``A``;
        on a sparse ``A``, ``nearest-<k>``, shortest paths through the ``k``
        nodes nearest each source, or ``all-paths``) and ``Time(s)``.
    client : distributed.Client or None, default=None
        Sparse ``A`` only (ignored for dense input): run the shortest-path
        oracle's searches on this Dask cluster -- the graph is scattered to
        the workers once, each oracle call searches per block of sources
        there and merges the violated cycles here, so the LP solution is
        bit for bit the in-process one (``docs/dask.rst``).  The closure of
        a stopped fit, the rounding and the local search run in this
        process.  ``clone`` shares the client; pickling drops it.

    Attributes
    ----------
    labels_ : ndarray of shape (n,)
    lp_solution_ : ndarray of shape (n, n), or sparse matrix for sparse ``A``
        The solution ``x`` of the regularised problem at the final ``gamma``,
        clipped to [0, 1]; triangle inequalities hold within ``tol``.  If
        the run did not converge: the shortest-path metric closure of that
        clipped iterate (a metric, never a silently infeasible point).  For
        a sparse ``A``: a symmetric CSR matrix on ``A``'s pattern holding
        the edges' LP values (zeros stored), cycle inequalities within
        ``tol`` (if not converged: ``min(x_e, dist(u, v))``, every cycle
        inequality exact); the LP distance of two nodes is then the
        shortest-path distance in this graph.  A solve stopped by
        ``certify_tol`` or ``max_time`` keeps the clipped iterate instead,
        whose constraints may be violated (``violation_``).
    lp_objective_ : float
        LP value ``sum_{i<j} |A_ij| |x_ij - d_ij|`` of ``lp_solution_``: the
        LP objective of the regularised solution (an LP optimum only for
        large ``gamma``), or, if not converged, of the metric closure (an
        upper bound on the LP optimum).
    lower_bound_ : float
        A lower bound on the LP optimum (hence on the best clustering's cost)
        from the Hildreth duals by weak LP duality (box ``0 <= x, f <= 1``),
        maximised over a scaling of the duals; valid whether or not the run
        converged.  For a sparse ``A`` the cycle duals are then refined by
        L-BFGS-B on the smoothed Lagrangian
        (:func:`~metric_estimators.solvers.dual_bounds.refine_box_duals`),
        towards the LP restricted to the active cycles; only the exact
        Lagrangian at the multipliers found is reported.
    relative_gap_ : float
        Relative primal-dual gap of the regularised problem at the last
        check (``nan`` if the constraints never got within ``10 tol``).
    gamma_stages_ : ndarray
        The continuation stages run (the last one is ``gamma`` if all ran).
    cost_ : float
        Correlation clustering cost of ``labels_`` (over the stored edges
        for a sparse ``A``).
    pivot_cost_ : float
        Cost of the best pivot rounding, before the local search.
    n_local_sweeps_ : int
        Local-search sweeps run on the kept clustering (0 without local
        search).
    certified_ : bool
        Whether ``labels_`` is proven within a factor ``1 + certify_tol``
        of the best clustering: ``cost_ <= (1 + certify_tol) lower_bound_``
        (``certify_tol=None`` counts as 0: ``labels_`` is proven optimal),
        however the fit ended -- LP converged, solve stopped by the
        certificate (then ``converged_`` is False), ``max_iter`` or
        ``max_time``.
    n_certificate_checks_ : int
        Checks run for ``certify_tol`` (0 if it is None).
    n_iter_, converged_, violation_, n_active_, history_, loss_curve_
        As in :class:`MetricNearness`, over all stages (``loss_curve_`` is the
        LP objective; ``history_["gamma"]`` the stage of each row).
    """


    _parameter_constraints = {
        "gamma": [Interval(numbers.Real, 0, None, closed="neither")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "gap_tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_passes": [Interval(numbers.Integral, 1, None, closed="left")],
        "certify_tol": [None, Interval(numbers.Real, 0, None,
                                       closed="left")],
        "max_time": [None, Interval(numbers.Real, 0, None,
                                    closed="neither")],
        "rounding": [StrOptions({"probabilistic", "threshold"})],
        "n_rounding_trials": [Interval(numbers.Integral, 1, None, closed="left")],
        "local_search": ["boolean"],
        "max_local_sweeps": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "client": [None, HasMethods(["scatter", "submit", "gather"])],
    }

    def __init__(self, gamma=10.0, tol=1e-3, gap_tol=1e-4, max_iter=500,
                 max_passes=50, certify_tol=None, max_time=None,
                 rounding="threshold", n_rounding_trials=20,
                 local_search=True, max_local_sweeps=100,
                 random_state=None, verbose=0, client=None):
        self.gamma = gamma
        self.tol = tol
        self.gap_tol = gap_tol
        self.max_iter = max_iter
        self.max_passes = max_passes
        self.certify_tol = certify_tol
        self.max_time = max_time
        self.rounding = rounding
        self.n_rounding_trials = n_rounding_trials
        self.local_search = local_search
        self.max_local_sweeps = max_local_sweeps
        self.random_state = random_state
        self.verbose = verbose
        self.client = client

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, A, y=None):
        """Solve the LP relaxation for the signed graph ``A`` and round it.

        Parameters
        ----------
        A : array-like or sparse matrix of shape (n, n)
            Symmetric signed weights, zero diagonal.
        y : ignored

        Returns
        -------
        self
        """
        report = FitReport(self, CC_COLUMNS, verbose=self.verbose)
        is_sparse = sparse.issparse(A)
        A = (check_sparse_signed_graph(A) if is_sparse else
             check_symmetric_matrix(A, "A", zero_diagonal=True))
        check_signed_graph_has_negative(A, self)
        n = A.shape[0]
        # the kernels of the whole fit (numba's or their numpy twins)
        kernels = _backend.choose("sparse_correlation_clustering" if is_sparse
                                  else "correlation_clustering", n)
        graph = SparseSignedGraph(A) if is_sparse else DenseSignedGraph(A, kernels=kernels)
        lp, w_scale = graph.correlation_lp(
            gamma_stages(self.gamma)[0],
            functools.partial(CycleConstraints, kernels=kernels), kernels)
        pool = ClusteringPool(
            graph.A, functools.partial(clustering_cost, kernels=kernels),
            check_random_state(self.random_state), rounding=self.rounding,
            n_trials=self.n_rounding_trials, local_search=self.local_search,
            max_sweeps=self.max_local_sweeps, kernels=kernels)
        solution = solve_and_round(
            lp, self._oracle(graph, lp, kernels), graph, pool,
            w_scale=w_scale, gamma=float(self.gamma), tol=float(self.tol),
            gap_tol=float(self.gap_tol), max_iter=self.max_iter,
            max_passes=self.max_passes, certify_tol=self.certify_tol,
            max_time=self.max_time, report=report, search_label=_search_label)
        self._store(solution, pool, w_scale)
        self.n_features_in_ = n
        return self

    def _oracle(self, graph, lp, kernels):
        """The oracle of the LP's cycle inequalities on ``graph``.

        Dense: the exact short-edge triangle search.  Sparse: one
        shortest-path search per component of the zero-length edges, blocks
        of them on threads or Dask workers (on the twins, small graphs: the
        same searches in Python, the same bits).
        """
        if isinstance(graph, DenseSignedGraph):
            return ShortEdgeTriangleOracle(graph.n, kernels=kernels)
        return SparseShortestPathOracle(
            graph.n, graph.rows, graph.cols, client=self.client,
            search="components",
            cap=SEARCH_CAP, growth=SEARCH_GROWTH, switch=SEARCH_SWITCH,
            stall_objective=lp.lp_objective, stall_rtol=SEARCH_STALL,
            kernels=kernels)

    def _store(self, solution, pool, w_scale):
        """Set the fitted attributes; warn if the LP neither converged nor was certified.

        A fit stopped on the certificate (``certify_tol``) did what was
        asked: no warning.
        """
        s = solution
        objective = s.history["objective"]
        if s.timed_out:
            convergence_warning(
                self, max_iter=self.max_time, unit="seconds",
                param="max_time", tol=float(self.tol), history=objective,
                detail=(f"{s.detail} after {s.n_iter} oracle calls; "
                        f"lp_solution_ is the clipped iterate (not feasible), "
                        f"LP optimum >= {s.lower_bound:.6g}"), stacklevel=4)
        elif not s.converged and not s.certified:
            convergence_warning(
                self, max_iter=self.max_iter, unit="oracle calls",
                tol=float(self.tol), history=objective,
                detail=(f"{s.detail}, relative gap {s.relative_gap:.3g} at "
                        f"gamma {s.gamma:.3g}; lp_solution_ is the metric "
                        f"closure of the iterate, LP optimum in "
                        f"[{s.lower_bound:.6g}, {s.lp_objective:.6g}]"),
                stacklevel=4)
        self.n_certificate_checks_ = s.n_checks
        self.lp_solution_ = s.lp_solution
        self.lp_objective_ = s.lp_objective
        self.lower_bound_ = s.lower_bound
        self.gamma_stages_ = s.stages
        self.n_iter_ = s.n_iter
        self.converged_ = s.converged
        self.violation_ = s.violation
        self.relative_gap_ = s.relative_gap
        self.n_active_ = s.n_active
        self.history_ = s.history
        self.loss_curve_ = np.asarray(objective) * w_scale
        self.labels_, cost, sweeps = pool.best
        self.cost_ = float(cost)
        self.pivot_cost_ = float(pool.pivot_cost)
        self.n_local_sweeps_ = int(sweeps)
        # proven, however the fit ended: the bound is below every clustering
        ratio = 0.0 if self.certify_tol is None else float(self.certify_tol)
        self.certified_ = bool(self.cost_ <= (1.0 + ratio) * self.lower_bound_)

    def fit_predict(self, A, y=None):
        """Fit and return ``labels_``."""
        return self.fit(A).labels_


def _search_label(oracle):
    """Which search the oracle's last call ran: the table's last column."""
    if isinstance(oracle, ShortEdgeTriangleOracle):
        return "all-triangles" if oracle.n_short_ < 0 else "short-edges"
    return f"nearest-{oracle.cap_}" if oracle.last_capped_ else "all-paths"
