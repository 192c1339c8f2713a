"""Correlation clustering on a sparse signed graph: the edge LP's pieces.

On a sparse signed graph (stored entries are edges with signed weights
``a_e``, absent entries mean "no information") the LP relaxation of
correlation clustering lives on the edges only ::

    minimise  sum_e |a_e| |x_e - d_e|   (d_e = 0 if a_e > 0 else 1)
    s.t.      x_e <= sum_{f in P} x_f   for every edge e = uv and u-v path P

(cycle inequalities, found by the shortest-path oracle
:class:`~metric_estimators.solvers.oracles.SparseShortestPathOracle`), solved in Veldt et al.'s W-weighted regularised form
by the same problem state as the dense path
(:class:`~metric_estimators._problems.correlation_clustering.WeightedCorrelationLP`,
on the edge vector) and the one driver.  It is the complete-graph LP with
zero weights off the graph: the shortest-path completion of a feasible edge
solution (clipped to [0, 1]) is a metric with the same objective, and the
restriction of a metric to the edges is feasible (Sonthalia & Gilbert, JMLR
2022; Veldt et al. 2019).  The box ``0 <= x <= 1`` is not needed as a
constraint: clipping a feasible point to it keeps it feasible and does not
raise the objective, which is what the weak-duality lower bound uses.

Everything here is ``O(n + |E|)`` memory: the LP distance between two nodes
is the shortest-path distance in the graph with lengths ``x``, searched
only within balls (the pivot rounding of
:mod:`~metric_estimators.solvers.cc_rounding`); the local search
(:mod:`~metric_estimators.solvers.cc_local_search`) and the cost
(:func:`~metric_estimators._problems.correlation_clustering.correlation_clustering_cost`)
sum over edges.
"""

import numpy as np

from .correlation_clustering import correlation_lp
from .edges import SparseGraphEdges

__all__ = ["SparseSignedGraph", "closure_on_edges"]


class SparseSignedGraph(SparseGraphEdges):
    """A validated sparse signed graph as an edge list: the sparse problem.

    The same interface as
    :class:`~metric_estimators._problems.correlation_clustering.DenseSignedGraph`,
    which lets one fit and one solve
    (:func:`~metric_estimators.solvers.cc_solve.solve_and_round`) serve both.

    Parameters
    ----------
    M : scipy.sparse.csr_matrix of shape (n, n)
        Validated by the estimator
        (:func:`~metric_estimators._validation.check_sparse_signed_graph`):
        symmetric (values and pattern), finite, no self-loop and no explicit
        stored zero (a stored entry is an edge and needs a non-zero weight).

    Attributes
    ----------
    n : int
    A, csr : scipy.sparse.csr_matrix
        The validated matrix, which the rounding and the cost read.
    rows, cols : int64 ndarray of shape (m,)
        The edges ``rows[e] < cols[e]``, sorted.
    a : float64 ndarray of shape (m,)
        Signed weight of each edge.
    refine_bound : bool
        True: the LP's lower bound is worth refining by L-BFGS-B
        (:func:`~metric_estimators.solvers.dual_bounds.refine_box_duals`),
        about ``O(nnz)`` per iteration on the active cycles.
    bound_before_rounding : bool
        False: the final rounding goes first, its crossings leaving a share
        of the time to the deadline to the bound's refinement.
    """

    refine_bound = True
    bound_before_rounding = False
    closure_note = ("not converged: the closure of the iterate on the edges "
                    "(one shortest-path search per node)")

    def __init__(self, M):
        super().__init__(M)
        self.A = self.csr = M
        self.a = self.values

    def correlation_lp(self, gamma, active_factory, kernels):
        """``(lp, w_scale)`` of the edges' weights
        (:func:`~metric_estimators._problems.correlation_clustering.correlation_lp`)."""
        return correlation_lp(self.a, gamma, active_factory, kernels=kernels)

    def edge_matrix(self, values):
        """Symmetric CSR matrix on the graph's pattern holding ``values`` per edge."""
        return self.matrix(values)

    def describe(self, lp):
        """The first words of the solve's phase line."""
        return f"sparse graph: {self.n} nodes, {self.a.size} edges"

    def min_passes(self, max_passes):
        """Passes after every oracle call: all of them (a call costs many)."""
        return max_passes

    def closure(self, x, oracle):
        """A point of the edge LP from ``x``: :func:`closure_on_edges`."""
        return closure_on_edges(x, oracle)


def closure_on_edges(x, oracle):
    """``min(x_e, dist(u, v))``: a point of the edge LP from any ``x``.

    ``oracle`` is the problem's
    :class:`~metric_estimators.solvers.oracles.SparseShortestPathOracle`;
    ``dist`` is the shortest-path distance on the lengths ``clip(x, 0, 1)``.
    Every cycle inequality holds at the result (its shortest-path completion
    is a metric): the sparse counterpart of
    :func:`~metric_estimators._problems.correlation_clustering.metric_closure`.
    """
    return oracle.closure(np.clip(x, 0.0, 1.0))
