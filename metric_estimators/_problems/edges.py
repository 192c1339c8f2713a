"""Edge vectors of complete graphs: the variables of the metric problems.

Metric nearness and correlation clustering on a dense matrix work on the
edge vector of the complete graph on ``n`` nodes, numbered row by row
``(0, 1), (0, 2), ..., (0, n-1), (1, 2), ...`` (see
:mod:`metric_estimators._kernels.edges`).  :func:`edge_vector` and
:func:`edge_matrix` convert between a symmetric matrix and that vector.
On a sparse graph the variables are the stored entries, listed by
:func:`sparse_edges`.  :class:`CompleteGraphEdges` and
:class:`SparseGraphEdges` give both kinds of graph one interface: the edge
values of the input, and the matrix of an edge vector.
"""

import numpy as np
from scipy import sparse

__all__ = ["CompleteGraphEdges", "SparseGraphEdges", "edge_matrix",
           "edge_vector", "sparse_edges"]


def edge_vector(M, *, kernels):
    """The upper triangle of the square matrix ``M`` as an edge vector.

    ``kernels``: those of the fit (:mod:`metric_estimators._backend`; both
    give the same values).
    """
    return kernels.edges.matrix_to_edges(M)


def edge_matrix(x, n, *, kernels):
    """The symmetric ``(n, n)`` matrix (zero diagonal) of the edge vector ``x``.

    ``kernels``: as in :func:`edge_vector`.
    """
    X = np.empty((n, n))
    kernels.edges.edges_to_matrix(x, n, X)
    return X


def sparse_edges(D):
    """The edges of the sparse symmetric ``D``: ``(rows, cols, d)``.

    ``rows[e] < cols[e]``, sorted by ``(row, col)``, and ``d[e]`` the stored
    value; a stored zero is an edge of length 0.
    """
    U = sparse.triu(D, k=1).tocoo()
    # stored zeros are edges of length 0
    rows = U.row.astype(np.int64)
    cols = U.col.astype(np.int64)
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    d = np.asarray(U.data, dtype=np.float64)[order]
    return rows, cols, d


class CompleteGraphEdges:
    """The pairs ``i < j`` of a dense symmetric ``(n, n)`` matrix as edges.

    Parameters
    ----------
    M : ndarray of shape (n, n)
        A validated symmetric matrix; its upper triangle gives ``values``.
    kernels : Kernels
        Those of the fit (:mod:`metric_estimators._backend`), for the
        conversions.

    Attributes
    ----------
    n : int
    values : ndarray of shape (n (n - 1) / 2,)
        ``M``'s edge vector.
    """

    def __init__(self, M, *, kernels):
        self.n = int(M.shape[0])
        self.kernels = kernels
        self.values = edge_vector(M, kernels=kernels)

    def vector(self, M):
        """The edge vector of another ``(n, n)`` matrix (e.g. weights)."""
        return edge_vector(M, kernels=self.kernels)

    def matrix(self, x):
        """The symmetric ``(n, n)`` matrix holding ``x`` on the edges."""
        return edge_matrix(x, self.n, kernels=self.kernels)


class SparseGraphEdges:
    """The stored entries of a sparse symmetric ``(n, n)`` matrix as edges.

    Parameters
    ----------
    M : scipy.sparse matrix of shape (n, n)
        A validated symmetric matrix; a stored zero is an edge.

    Attributes
    ----------
    n : int
    rows, cols : int64 ndarray of shape (m,)
        The edges ``rows[e] < cols[e]``, sorted (:func:`sparse_edges`).
    values : float64 ndarray of shape (m,)
        The stored value of each edge.
    """

    def __init__(self, M):
        self.n = int(M.shape[0])
        self.rows, self.cols, self.values = sparse_edges(M)

    def matrix(self, x):
        """Symmetric CSR matrix on the edges holding ``x`` per edge.

        Zeros among ``x`` stay stored (an edge of length 0 is an edge).
        """
        n = self.n
        M = sparse.csr_matrix(
            (np.concatenate((x, x)), (np.concatenate((self.rows, self.cols)),
                                      np.concatenate((self.cols, self.rows)))),
            shape=(n, n))
        M.sort_indices()
        return M
