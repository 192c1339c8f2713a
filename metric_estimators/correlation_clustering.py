"""Weighted correlation clustering by an LP relaxation and pivot rounding.

:class:`CorrelationClustering` solves the LP relaxation in Veldt et al.'s
quadratically regularised form by Project and Forget (Sonthalia & Gilbert,
JMLR 23, 2022: the driver
:func:`metric_estimators.solvers.bregman.bregman_project_forget` with a
:class:`~metric_estimators.solvers.active_sets.CycleConstraints` active set
and a triangle oracle), bounds the LP optimum from
below by weak duality, and rounds the LP solution by pivoting
(:func:`pivot_rounding`), keeping the cheapest clustering by
:func:`correlation_clustering_cost`.
"""

import functools
import numbers
import time

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from . import _backend
from ._linalg import power_of_two_scale
from ._problems.cc_local_search import (
    local_search,
    local_search_from_singletons,
    recombine,
)
from ._problems.correlation_clustering import (
    WeightedCorrelationLP,
    dense_clustering_cost,
    dense_pivot_rounding,
    metric_closure,
)
from ._problems.edges import edge_matrix, edge_vector
from ._problems.sparse_correlation_clustering import (
    SparseSignedGraph,
    closure_on_edges,
    sparse_clustering_cost,
    sparse_pivot_rounding,
)
from ._reporting import Column, FitReport, convergence_warning
from ._validation.matrices import (
    check_signed_graph_has_negative,
    check_sparse_signed_graph,
    check_symmetric_matrix,
)
from .base import DaskClientMixin, DocLinkMixin
from .solvers.active_sets import CycleConstraints
from .solvers.bregman import TABLE_COLUMNS, bregman_project_forget
from .solvers.certificates import CertificateStop, CheckResult
from .solvers.continuation import gamma_stages, solve_continuation
from .solvers.dual_bounds import refine_box_duals
from .solvers.oracles import ShortEdgeTriangleOracle, SparseShortestPathOracle

#: the driver's columns, then the stage's gamma, the relative QP gap (once
#: the constraints are within 10 tol) and which triangle search ran
CC_COLUMNS = TABLE_COLUMNS + (Column("Gamma", ".3g"), Column("RelGap", ".2e"),
                              Column("Oracle", "s", 6))

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

#: local optima found without the LP (local search from singletons, nodes in
#: random orders) recombined on their own at the first rounding of a sparse
#: graph, and offered to the pool beside the LP's roundings
N_LP_FREE_STARTS = 4
#: clusterings a sparse rounding keeps and crosses (every pair once)
RECOMBINE_SIZE = 16
#: share of the time left to ``max_time`` that a check or the final
#: rounding leaves to the refinement of the bound after it
BOUND_SHARE = 0.25

__all__ = ["CorrelationClustering", "correlation_clustering_cost",
           "pivot_rounding"]


def correlation_clustering_cost(A, labels, kernels=None):
    """Cost of a clustering of the signed graph ``A``.

    ``sum of A_ij > 0 over pairs split`` plus ``sum of |A_ij|, A_ij < 0, over
    pairs placed together`` (each unordered pair counted once).

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n, n)
        Symmetric signed weights; for a sparse ``A`` only the stored edges
        count (``O(|E|)``, never densified).
    labels : array-like of shape (n,)
        Cluster label of each node.
    kernels : Kernels or None, default=None
        The kernels a fit runs on (:mod:`metric_estimators._backend`; the
        estimator passes its own), for a sparse ``A``: None chooses them
        by the graph's size (both give the same bits).

    Returns
    -------
    cost : float
    """
    if sparse.issparse(A):
        if kernels is None:
            kernels = _backend.choose("sparse_correlation_clustering",
                                      A.shape[0])
        return sparse_clustering_cost(A, labels, kernels)
    return dense_clustering_cost(A, labels)


class CorrelationClustering(DaskClientMixin, DocLinkMixin, ClusterMixin,
                            BaseEstimator):
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
    (``rounding="threshold"``, the deterministic threshold variant); the best
    of ``n_rounding_trials`` clusterings (by the correlation clustering cost)
    is kept.  With ``local_search=True`` it is then improved by best
    one-element moves (Elsner & Schudy 2009, "BOEM": each node moves to the
    cluster, or a new singleton, that lowers the cost most) alternated with
    merges of clusters joined by a positive total weight, until neither
    helps (:func:`~metric_estimators._problems.cc_local_search.local_search`),
    which never increases the cost.  On a sparse ``A`` every trial is
    improved so (a sweep costs ``O(|E|)``; the trial that rounds cheapest is
    rarely the one that improves best), and the cheapest ones are then
    recombined: the local search restarted from the common refinement of
    every pair of the 16 cheapest, for as long as that finds a cheaper
    clustering (:func:`~metric_estimators._problems.cc_local_search.recombine`;
    the core groups of Ovelgönne & Geyer-Schulz 2012).  The first rounding
    also recombines, apart, a few local optima found without the LP and
    offers their best to the pool.  On a dense ``A`` only the cheapest
    trial is improved.  On loose LPs (many communities,
    LP values far below the best clustering) pivoting alone can be worse than
    putting every node apart.

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
        one of a sparse graph) leaves :data:`BOUND_SHARE` of the time left
        to the bound: after the first pivot trial it starts a trial only if
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
        Threshold pivoting measured far better on our planted-partition
        benchmarks, whose LP solutions are largely half-integral (x = 1/2),
        where probabilistic pivoting joins pairs at random: n = 1000, 10
        communities: cost 61125 (ARI 0.81) against 94951 (ARI 0.16).
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
        Print the LP solve's table: oracle call, LP objective, largest
        violation, duals residual, active-set size, added, passes, the
        stage's gamma, the relative QP gap (once the constraints are within
        ``10 tol``), which search ran (short / dense triangles; sparse
        input: ``capped`` / ``paths``, the shortest-path oracle with or
        without its cap), time.
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
        Whether the solve stopped on the certificate of ``certify_tol``
        (``cost_ <= (1 + certify_tol) lower_bound_``); ``converged_`` is
        then False (the LP itself did not converge).
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
        self._validate_params()
        if sparse.issparse(A):
            return self._fit_sparse(A, report)
        A = check_symmetric_matrix(A, "A", zero_diagonal=True)
        check_signed_graph_has_negative(A, self)
        n = A.shape[0]
        # The LP is invariant under a positive scaling of the weights, its
        # regularisation is not: weights of extreme scale (largest |A_ij|
        # outside [2**-20, 2**20], e.g. 1e150 or 1e-150) are divided by a
        # power of two (exact), so that they neither overflow nor vanish
        # against the regulariser; A * 2**k then gives exactly the result of A.
        w_scale = power_of_two_scale(A, center=False)
        A_in, A = A, (A / w_scale if w_scale != 1.0 else A)
        # the kernels of the whole fit (numba's or their numpy twins)
        kernels = _backend.choose("correlation_clustering", n)
        oracle = ShortEdgeTriangleOracle(n, kernels=kernels)
        a = edge_vector(A, kernels)
        m = a.size
        gamma = float(self.gamma)
        tol = float(self.tol)
        problem = WeightedCorrelationLP(
            a, gamma_stages(gamma)[0],
            functools.partial(CycleConstraints, kernels=kernels), kernels)
        del a  # the problem holds what it needs (|a| and the signs)

        def extra_row():
            return (problem.gamma, problem.rel_gap,
                    "dense" if oracle.n_short_ < 0 else "short")

        rng = check_random_state(self.random_state)
        rounded = _Rounded(kernels)

        certificate = self._certificate(
            problem, report, A_in, lambda x: edge_matrix(x, n, kernels),
            rng, rounded, w_scale, refine=False)
        report.phase(f"{m} pairs, {int(problem.fpos.sum())} signed, gamma "
                     f"{gamma:.3g}, stages "
                     f"{', '.join(f'{g:.3g}' for g in gamma_stages(gamma))}")
        results, stages = solve_continuation(
            problem, oracle, bregman_project_forget, gamma=gamma, tol=tol,
            gap_tol=float(self.gap_tol), max_iter=self.max_iter,
            max_passes=self.max_passes, report=report, extra_row=extra_row,
            certificate=certificate)
        res = results[-1]
        oracle = None  # its n x n buffers, before the n x n solution
        stopped = certificate is not None and certificate.stopped_
        # stopped right after a check: it bounded and rounded the point
        final = certificate is not None and certificate.final_check_
        converged = (res.converged and len(results) == len(stages)
                     and not stopped)
        x = np.clip(problem.x, 0.0, 1.0)
        lower = (certificate.best_bound_ if final
                 else problem.lp_lower_bound() * w_scale)
        if certificate is not None:
            lower = max(lower, certificate.best_bound_)
        n_calls = sum(r.n_iter for r in results)
        if converged:
            report.finish(f"LP converged after {n_calls} oracle calls "
                          f"(gamma {problem.gamma:.3g})")
        elif stopped:
            report.finish(self._stop_message(certificate, n_calls))
        else:
            # never return a non-metric: the shortest-path closure of the
            # clipped iterate is a feasible point, its LP value an upper bound
            x = metric_closure(problem.x, n, kernels)
            report.finish(self._stop_message(certificate, n_calls))
        X = edge_matrix(x, n, kernels)
        self._store(problem, results, stages, X, x, lower, w_scale, converged,
                    certificate, stacklevel=4)
        # the per-pair arrays and the active set, before the rounding
        problem = results = res = x = None
        if not final:
            self._round(A_in, X, rng, rounded)
        self._set_rounding(rounded.pool, rounded.pivot_cost)
        self.n_features_in_ = n
        return self

    def _fit_sparse(self, A, report):
        """The sparse path: the LP over the edges, cycle inequalities by shortest paths."""
        graph = SparseSignedGraph(check_sparse_signed_graph(A))
        check_signed_graph_has_negative(graph.csr, self)
        n, m = graph.n, graph.a.size
        w_scale = power_of_two_scale(graph.a, center=False)
        a = graph.a / w_scale if w_scale != 1.0 else graph.a
        gamma = float(self.gamma)
        # the kernels of the whole fit (numba's or their numpy twins)
        kernels = _backend.choose("sparse_correlation_clustering", n)
        problem = WeightedCorrelationLP(
            a, gamma_stages(gamma)[0],
            functools.partial(CycleConstraints, kernels=kernels), kernels)
        # one search per component of the zero-length edges, blocks of them
        # on threads or Dask workers; it has no numpy twin: on the twins
        # (small graphs), one search per node, in Python
        oracle = SparseShortestPathOracle(n, graph.rows, graph.cols,
                                          client=self.client,
                                          search=("bounded" if kernels.numpy
                                                  else "components"),
                                          cap=SEARCH_CAP,
                                          growth=SEARCH_GROWTH,
                                          switch=SEARCH_SWITCH,
                                          stall_objective=problem.lp_objective,
                                          stall_rtol=SEARCH_STALL,
                                          kernels=kernels)
        rng = check_random_state(self.random_state)
        rounded = _Rounded(kernels)
        certificate = self._certificate(problem, report, graph.csr,
                                        graph.edge_matrix, rng, rounded,
                                        w_scale, refine=True)
        report.phase(f"sparse graph: {n} nodes, {m} edges, gamma "
                     f"{gamma:.3g}, stages "
                     f"{', '.join(f'{g:.3g}' for g in gamma_stages(gamma))}")
        results, stages = solve_continuation(
            problem, oracle, bregman_project_forget, gamma=gamma,
            tol=float(self.tol), gap_tol=float(self.gap_tol),
            max_iter=self.max_iter, max_passes=self.max_passes, report=report,
            extra_row=lambda: (problem.gamma, problem.rel_gap,
                               (f"c{oracle.cap_}" if oracle.last_capped_
                                else "paths")),
            min_passes=self.max_passes, certificate=certificate)
        stopped = certificate is not None and certificate.stopped_
        converged = (results[-1].converged and len(results) == len(stages)
                     and not stopped)
        n_calls = sum(r.n_iter for r in results)
        # stopped right after a check: it rounded and bounded the point
        final = certificate is not None and certificate.final_check_
        if converged or stopped:
            # a stopped solve (certify_tol, max_time) keeps the iterate: its
            # closure can cost more than the whole solve on a large graph
            x = np.clip(problem.x, 0.0, 1.0)
            message = (f"LP converged after {n_calls} oracle calls "
                       f"(gamma {problem.gamma:.3g})" if converged
                       else self._stop_message(certificate, n_calls))
        else:
            # every cycle inequality holds at the closure on the edges (one
            # search per node: on a large graph, as long as an exact call)
            report.phase("not converged: the closure of the iterate on the "
                         "edges (one shortest-path search per node)")
            x = closure_on_edges(problem.x, oracle)
            message = self._stop_message(certificate, n_calls)
        X = graph.edge_matrix(x)
        if final:
            lower = certificate.best_bound_
        else:
            report.phase("rounding, then the certified lower bound (duals "
                         "refined by L-BFGS-B)")
            lower, detail, _ = self._round_then_bound(
                problem, graph.csr, X, rng, rounded, w_scale, True,
                None if certificate is None else certificate.deadline)
            report.phase(detail)
            if certificate is not None:
                lower = max(lower, certificate.best_bound_)
        report.finish(message)
        self._store(problem, results, stages, X, x, lower, w_scale,
                    converged, certificate, stacklevel=5)
        self._set_rounding(rounded.pool, rounded.pivot_cost)
        self.n_features_in_ = n
        return self

    def _certificate(self, problem, report, A, as_matrix, rng, rounded,
                     w_scale, refine):
        """The checks of ``certify_tol`` and the deadline of ``max_time``.

        A check rounds the clipped iterate (``as_matrix`` turns the edge
        vector into the matrix :meth:`_round` reads) into the pool
        ``rounded``, then bounds the LP from the current duals (``refine``:
        raised by L-BFGS-B, affordable on the edges of a sparse graph), as
        :meth:`_round_then_bound`; its report line gives the time of each.
        None if neither option is set.
        """
        if self.certify_tol is None and self.max_time is None:
            return None

        def check(deadline):
            bound, detail, once = self._round_then_bound(
                problem, A, as_matrix(np.clip(problem.x, 0.0, 1.0)), rng,
                rounded, w_scale, refine, deadline)
            return CheckResult(rounded.pool[0][1], bound, detail, once)

        return CertificateStop(check, problem.lp_objective, self.certify_tol,
                               report=report, max_time=self.max_time)

    def _round_then_bound(self, problem, A, X, rng, rounded, w_scale, refine,
                          deadline):
        """Round ``X`` into ``rounded``, then bound the LP; return ``(bound, detail, once)``.

        With a ``deadline``, the rounding's crossings stop early enough to
        leave :data:`BOUND_SHARE` of the time left to the bound's
        refinement, which stops at the deadline.  The rounding goes first:
        on large sparse graphs near the deadline, its crossings lower the
        cost by more than the refinement raises the bound.  ``detail``
        gives the time of each; ``once`` is the seconds of the LP-free
        optima, made by the first rounding only (see :meth:`_round`).
        """
        start = time.perf_counter()
        cross_by = (None if deadline is None else
                    deadline - BOUND_SHARE * max(deadline - start, 0.0))
        once = self._round(A, X, rng, rounded, cross_by)
        mid = time.perf_counter()
        bound = problem.lp_lower_bound(refine=(refine_box_duals if refine
                                               else None),
                                       deadline=deadline) * w_scale
        free = f" (LP-free optima {once:.2f} s)" if once else ""
        return bound, (f"rounding {mid - start:.2f} s{free}, bound "
                       f"{time.perf_counter() - mid:.2f} s"), once

    @staticmethod
    def _stop_message(certificate, n_calls):
        if certificate is not None and certificate.certified_:
            return (f"LP stopped after {n_calls} oracle calls: clustering "
                    f"certified within {1.0 + certificate.tol:.4g} of the "
                    f"lower bound")
        if certificate is not None and certificate.timed_out_:
            return (f"LP stopped by max_time after {n_calls} oracle calls")
        return f"LP stopped after {n_calls} oracle calls"

    def _store(self, problem, results, stages, X, x, lower, w_scale,
               converged, certificate, stacklevel):
        """Set the LP's fitted attributes (and warn if it did not converge).

        A fit stopped on the certificate (``certify_tol``) did what was
        asked: no warning.
        """
        res = results[-1]
        lp = problem.lp_objective(x) * w_scale
        certified = certificate is not None and certificate.certified_
        timed_out = certificate is not None and certificate.timed_out_
        self.certified_ = certified
        self.n_certificate_checks_ = (0 if certificate is None
                                      else certificate.n_checks_)
        if timed_out:
            convergence_warning(
                self, max_iter=self.max_time, unit="seconds",
                param="max_time", tol=float(self.tol),
                history=[v for r in results for v in r.history["objective"]],
                detail=(f"{res.detail()} after {sum(r.n_iter for r in results)} "
                        f"oracle calls; lp_solution_ is the clipped iterate "
                        f"(not feasible), LP optimum >= {lower:.6g}"),
                stacklevel=stacklevel)
        elif not converged and not certified:
            convergence_warning(
                self, max_iter=self.max_iter, unit="oracle calls",
                tol=float(self.tol),
                history=[v for r in results for v in r.history["objective"]],
                detail=(f"{res.detail()}, relative gap {problem.rel_gap:.3g} at "
                        f"gamma {problem.gamma:.3g}; lp_solution_ is the "
                        f"metric closure of the iterate, LP optimum in "
                        f"[{lower:.6g}, {lp:.6g}]"), stacklevel=stacklevel)
        viol = max(res.max_violation, problem.pair_violation)
        self.lp_solution_ = X
        self.lp_objective_ = lp
        self.lower_bound_ = lower
        self.gamma_stages_ = np.asarray(stages[:len(results)])
        self.n_iter_ = sum(r.n_iter for r in results)
        self.converged_ = converged
        self.violation_ = viol
        self.relative_gap_ = problem.rel_gap
        self.n_active_ = len(problem.active)
        self.history_ = {k: [v for r in results for v in r.history[k]]
                         for k in results[0].history}
        self.history_["gamma"] = [g for r, g in zip(results, stages)
                                  for _ in r.history["objective"]]
        self.loss_curve_ = np.asarray(self.history_["objective"]) * w_scale

    def _round(self, A, X, rng, rounded, deadline=None):
        """Round ``X`` ``n_rounding_trials`` times into ``rounded`` (a :class:`_Rounded`).

        ``rounded.pool`` holds ``(labels, cost, sweeps)``, cheapest first:
        the clusterings of earlier checks, merged in.  A sparse graph
        polishes every trial (a sweep is ``O(|E|)``: the pivot that rounds
        cheapest is rarely the one that polishes best) and recombines the
        trials among themselves
        (:func:`~metric_estimators._problems.cc_local_search.recombine`,
        the :data:`RECOMBINE_SIZE` cheapest).  The first time it also
        recombines, on their own, :data:`N_LP_FREE_STARTS` local optima
        found without the LP
        (:func:`~metric_estimators._problems.cc_local_search.local_search_from_singletons`).
        It then recombines the pool, this rounding's clusterings and the
        best LP-free one together, crossing only the pairs not crossed
        before.  A dense graph polishes the cheapest trial only (a sweep
        is ``O(n^2)``).  Return the seconds spent on the LP-free optima
        (0 but the first time).

        With a ``deadline`` (a ``time.perf_counter()`` value), the first
        trial and the first LP-free start are always made; a later trial
        starts only if it (timed as the mean trial so far) and the LP-free
        starts still to make (each timed as the mean polish of a trial)
        would end by ``deadline``, a later LP-free start only if it (timed
        as the mean one so far) would, and no crossing starts after it.
        So a rounding short of time keeps the LP-free starts, which on an
        early iterate of a large graph are both cheaper and far better
        than the trials (n = 100,000 after 53 oracle calls: about 2.5 s
        and a cost of 65,500 each, against about 12 s and 159,000 for a
        polished trial).
        """
        n = X.shape[0]
        if n == 0:
            rounded.update([(np.empty(0, dtype=np.int64), 0.0, 0)], 0.0)
            return 0.0
        kernels = rounded.kernels
        cost_of = functools.partial(correlation_clustering_cost,
                                    kernels=kernels)
        polish = self.local_search and n > 1
        each = polish and sparse.issparse(A)
        n_free = N_LP_FREE_STARTS if each and not rounded.pool else 0
        trials, pivot_cost = [], np.inf
        started, polishing = time.perf_counter(), 0.0
        for k in range(self.n_rounding_trials):
            # the next trial and the LP-free starts still to make (each
            # timed as a polish: both are a local search) must end by then
            if k and _late(deadline, (time.perf_counter() - started) / k
                           + n_free * polishing / k):
                break
            labels = pivot_rounding(X, rng, self.rounding, kernels)
            cost = cost_of(A, labels)
            pivot_cost = min(pivot_cost, cost)
            if each:
                since = time.perf_counter()
                trials.append(self._polish(A, labels, cost, kernels))
                polishing += time.perf_counter() - since
            else:
                trials.append((labels, cost, 0))
        once = 0.0
        if each:
            free = []
            if n_free:
                since = time.perf_counter()
                for k in range(n_free):
                    if k and _late(deadline,
                                   (time.perf_counter() - since) / k):
                        break
                    labels, sweeps = local_search_from_singletons(
                        A, self.max_local_sweeps, rng, kernels)
                    free.append((labels, cost_of(A, labels), sweeps))
                free = recombine(A, free, cost_of,
                                 self.max_local_sweeps, size=RECOMBINE_SIZE,
                                 crossed=rounded.crossed, deadline=deadline,
                                 kernels=kernels)
                once = time.perf_counter() - since
            # each lineage is crossed apart first (this iterate's roundings,
            # the LP-free optima), then the cheapest of all of them together
            # (of the LP-free ones, the best only): in one pool from the
            # start, the cheapest lineage crowds out the others' parents
            fresh = recombine(A, trials, cost_of,
                              self.max_local_sweeps, size=RECOMBINE_SIZE,
                              crossed=rounded.crossed, deadline=deadline,
                              kernels=kernels)
            pool = recombine(A, rounded.pool + fresh + free[:1], cost_of,
                             self.max_local_sweeps, size=RECOMBINE_SIZE,
                             crossed=rounded.crossed, deadline=deadline,
                             kernels=kernels)
        else:
            best = min(trials, key=lambda t: t[1])
            if polish:
                best = self._polish(A, best[0], best[1], kernels)
            pool = sorted([best, *rounded.pool], key=lambda t: t[1])[:1]
        rounded.update(pool, pivot_cost)
        return once

    def _set_rounding(self, pool, pivot_cost):
        """Store the cheapest clustering of ``pool``."""
        labels, cost, sweeps = pool[0]
        self.labels_ = labels
        self.cost_ = float(cost)
        self.pivot_cost_ = float(pivot_cost)
        self.n_local_sweeps_ = int(sweeps)

    def _polish(self, A, labels, cost, kernels=_backend.NUMBA):
        """Moves and merges (over the stored edges only for a sparse ``A``), on ``kernels``."""
        moved, sweeps = local_search(A, labels, self.max_local_sweeps, kernels)
        moved_cost = correlation_clustering_cost(A, moved, kernels)
        if moved_cost <= cost:
            return moved, moved_cost, sweeps
        return labels, cost, sweeps

    def fit_predict(self, A, y=None):
        """Fit and return ``labels_``."""
        return self.fit(A).labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        tags.input_tags.sparse = True
        return tags


def _late(deadline, seconds):
    """Would work of ``seconds`` started now end after ``deadline``?"""
    return deadline is not None and time.perf_counter() + seconds > deadline


class _Rounded:
    """The clusterings kept over the checks and the final rounding of a fit.

    ``kernels``: those of the fit, which the rounding and its local search
    run on.
    """

    def __init__(self, kernels=_backend.NUMBA):
        self.kernels = kernels
        self.pool = []
        self.pivot_cost = np.inf
        self.crossed = set()

    def update(self, pool, pivot_cost):
        self.pool = pool
        self.pivot_cost = min(self.pivot_cost, pivot_cost)


def pivot_rounding(X, rng, rounding="probabilistic", kernels=None):
    """LP-KwikCluster (Ailon, Charikar & Newman 2008) on the LP solution ``X``.

    Pivots are taken in a random order; an unclustered ``j`` joins pivot
    ``p`` with probability ``1 - X[p, j]`` (``"probabilistic"``) or when
    ``X[p, j] < 1/2`` (``"threshold"``).

    A sparse ``X`` (the ``lp_solution_`` of a sparse graph, LP values on
    its edges) is read as its shortest-path completion: the pivot takes the
    unclustered nodes of its ball in the graph with lengths ``X``
    (:func:`~metric_estimators._problems.sparse_correlation_clustering.sparse_pivot_rounding`,
    ``O(n + |E|)`` memory).

    Parameters
    ----------
    X : ndarray of shape (n, n) or sparse matrix
        Fractional (pseudo-)metric solution with entries in [0, 1].
    rng : numpy.random.RandomState or numpy.random.Generator
        Source of the pivot order (and of the joins, if probabilistic).
    rounding : {"probabilistic", "threshold"}, default="probabilistic"
        How an unclustered node decides to join a pivot.
    kernels : Kernels or None, default=None
        The kernels a fit runs on (:mod:`metric_estimators._backend`; the
        estimator passes its own), for a sparse ``X``: None chooses them
        by the graph's size (both give the same labels).

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Cluster ids ``0, 1, ...`` in the order the pivots were taken.
    """
    if sparse.issparse(X):
        if kernels is None:
            kernels = _backend.choose("sparse_correlation_clustering",
                                      X.shape[0])
        return sparse_pivot_rounding(X, rng, rounding, kernels)
    return dense_pivot_rounding(X, rng, rounding)


