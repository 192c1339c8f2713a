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

from .._backend import NUMBA

__all__ = ["edge_matrix", "edge_vector", "sparse_edges"]


def edge_vector(M, kernels=NUMBA):
    """The upper triangle of the square matrix ``M`` as an edge vector.

    ``kernels``: those of the fit (:mod:`metric_estimators._backend`; both
    give the same values).
    """
    return kernels.edges.matrix_to_edges(M)


def edge_matrix(x, n, kernels=NUMBA):
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
