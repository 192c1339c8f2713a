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
only within balls (pivot rounding); the local search
(:mod:`~metric_estimators._problems.cc_local_search`) sums over edges.
"""

import numpy as np
from scipy import sparse

from .._backend import NUMBA
from .edges import sparse_edges

__all__ = ["SparseSignedGraph", "sparse_clustering_cost",
           "sparse_pivot_rounding"]


class SparseSignedGraph:
    """A validated sparse signed graph as an edge list.

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
    csr : scipy.sparse.csr_matrix
        The validated matrix (duplicates summed).
    rows, cols : int64 ndarray of shape (m,)
        The edges ``rows[e] < cols[e]``, sorted.
    a : float64 ndarray of shape (m,)
        Signed weight of each edge.
    """

    def __init__(self, M):
        self.n = int(M.shape[0])
        self.csr = M
        self.rows, self.cols, self.a = sparse_edges(M)

    def edge_matrix(self, values):
        """Symmetric CSR matrix on the graph's pattern holding ``values`` per edge.

        Zeros among ``values`` stay stored (an edge of length 0 is an edge).
        """
        n = self.n
        r = np.concatenate((self.rows, self.cols))
        c = np.concatenate((self.cols, self.rows))
        v = np.concatenate((values, values))
        M = sparse.csr_matrix((v, (r, c)), shape=(n, n))
        M.sort_indices()
        return M


def _pattern(X):
    """``(indptr, indices, lengths per stored entry)`` of a symmetric CSR ``X``."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    return (X.indptr.astype(np.int64), X.indices.astype(np.int64),
            np.ascontiguousarray(X.data, dtype=np.float64))


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


def sparse_pivot_rounding(X, rng, rounding="probabilistic", kernels=NUMBA):
    """LP-KwikCluster on a sparse LP solution ``X`` (edges: LP lengths).

    The LP distance of two nodes is their shortest-path distance in the
    graph with lengths ``clip(X, 0, 1)`` (the completion of the edge
    solution, a metric); a pivot takes the unclustered nodes of its ball:
    distance ``< 1/2`` (``"threshold"``) or with probability ``1 -
    distance`` (``"probabilistic"``).  With ``"threshold"`` the labels are
    those of the dense rounding of the completed metric for the same
    ``rng``.  ``O(n + |E|)`` memory.  The ball pivot runs on ``kernels``,
    those of the fit (:mod:`metric_estimators._backend`; the same labels).
    """
    n = X.shape[0]
    indptr, indices, lengths = _pattern(X)
    order = rng.permutation(n).astype(np.int64)
    seed = 0
    if rounding != "threshold":
        draw = getattr(rng, "integers", None) or rng.randint
        seed = int(draw(0, 2**31 - 1))
    return kernels.sparse_graph.ball_pivot(
        lengths, indptr, indices, np.arange(lengths.size, dtype=np.int64),
        order, rounding != "threshold", seed)


def sparse_clustering_cost(A, labels, kernels=NUMBA):
    """Cost of ``labels`` counted over the stored edges of a sparse ``A`` (each once).

    On ``kernels``, those of the fit (the same bits on both).
    """
    U = sparse.triu(sparse.csr_matrix(A, dtype=np.float64), k=1).tocoo()
    labels = np.ascontiguousarray(labels).astype(np.int64)
    return float(kernels.correlation_clustering.sparse_cost(U.row.astype(np.int64), U.col.astype(np.int64),
                      np.asarray(U.data, dtype=np.float64), labels))
