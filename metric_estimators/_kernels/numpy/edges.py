"""numpy twin of :mod:`metric_estimators._kernels.edges`: edge numbering and conversions.

Same functions, arguments and outputs; the same values bit for bit (copies
and integer arithmetic only).  :func:`edge_id` also takes arrays of nodes.
"""

import numpy as np

__all__ = ["edge_id", "edge_row_offset", "edges_to_matrix", "matrix_to_edges"]


def edge_row_offset(i, n):
    """``edge_id(i, j, n) - j`` for every ``j > i``: where row ``i`` starts."""
    return i * n - (i * (i + 1)) // 2 - i - 1


def edge_id(i, j, n):
    """Number of the edge ``{i, j}`` (``i != j``; scalars or arrays)."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return edge_row_offset(lo, n) + hi


def edges_to_matrix(x, n, out):
    """Fill the symmetric matrix ``out`` (zero diagonal) from the edge vector."""
    i, j = np.triu_indices(n, 1)
    out[i, j] = x
    out[j, i] = x
    out[np.arange(n), np.arange(n)] = 0.0


def matrix_to_edges(D):
    """Upper triangle of a square matrix as an edge vector."""
    n = D.shape[0]
    return np.ascontiguousarray(D[np.triu_indices(n, 1)], dtype=np.float64)
