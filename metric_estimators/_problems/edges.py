"""Edge vectors of complete graphs: the variables of the metric problems.

Metric nearness and correlation clustering on a dense matrix work on the
edge vector of the complete graph on ``n`` nodes, numbered row by row
``(0, 1), (0, 2), ..., (0, n-1), (1, 2), ...`` (see
:mod:`metric_estimators._kernels.edges`).  :func:`edge_vector` and
:func:`edge_matrix` convert between a symmetric matrix and that vector.
On a sparse graph the variables are the stored entries, listed by
:func:`sparse_edges`.
"""

import numpy as np
from scipy import sparse

from ..solvers import numpy_kernels as npk

# numba kernels, loaded on first call (small problems run on numpy's)
edges_to_matrix = npk.lazy_kernel("edges", "edges_to_matrix")
matrix_to_edges = npk.lazy_kernel("edges", "matrix_to_edges")

__all__ = ["edge_matrix", "edge_vector", "sparse_edges"]


def edge_vector(M, numpy=False):
    """The upper triangle of the square matrix ``M`` as an edge vector.

    ``numpy=True``: numpy's conversion (the numpy path of small problems,
    :mod:`metric_estimators.solvers.numpy_kernels`; same values).
    """
    return (npk.matrix_to_edges if numpy else matrix_to_edges)(M)


def edge_matrix(x, n, numpy=False):
    """The symmetric ``(n, n)`` matrix (zero diagonal) of the edge vector ``x``.

    ``numpy=True``: numpy's conversion, as in :func:`edge_vector`.
    """
    X = np.empty((n, n))
    (npk.edges_to_matrix if numpy else edges_to_matrix)(x, n, X)
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
