"""numba kernels numbering the edges of a graph (Project and Forget).

Edges of the complete graph on ``n`` nodes are numbered row by row,
``(0, 1), (0, 2), ..., (0, n-1), (1, 2), ...``; :func:`edge_id` gives the
number of the edge ``{i, j}`` and :func:`edges_to_matrix` /
:func:`matrix_to_edges` convert between a symmetric matrix and its edge
vector.  Edges of a sparse graph are given by arrays ``rows[e] < cols[e]``;
a symmetric CSR pattern ``(indptr, indices, eid)`` maps a stored entry to
its edge id (:func:`csr_edge_lookup`).

A *cycle constraint* is an edge ``e = uv`` and a path ``P`` from ``u`` to
``v`` (not using ``e``): ``x_e - sum_{f in P} x_f <= 0`` (Sonthalia &
Gilbert, JMLR 2022).  Every kernel stores a set of them in CSR form:
``cons_edge[c]`` and the path edges ``path[ptr[c]:ptr[c+1]]``.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

__all__ = [
    "csr_edge_lookup",
    "edge_id",
    "edge_row_offset",
    "edges_to_matrix",
    "matrix_to_edges",
]


@njit(cache=True, nogil=True, inline="always")
def edge_row_offset(i, n):
    """``edge_id(i, j, n) - j`` for every ``j > i``: where row ``i`` starts."""
    return i * n - (i * (i + 1)) // 2 - i - 1


@njit(cache=True, nogil=True)
def edge_id(i, j, n):
    """Number of the edge {i, j} (i != j) of the complete graph on n nodes."""
    if i > j:
        i, j = j, i
    return edge_row_offset(i, n) + j


@njit(cache=True, nogil=True)
def edges_to_matrix(x, n, out):
    """Fill the symmetric matrix ``out`` (zero diagonal) from the edge vector."""
    e = 0
    for i in range(n):
        out[i, i] = 0.0
        for j in range(i + 1, n):
            out[i, j] = x[e]
            out[j, i] = x[e]
            e += 1


@njit(cache=True, nogil=True)
def matrix_to_edges(D):
    """Upper triangle of a square matrix as an edge vector."""
    n = D.shape[0]
    out = np.empty(n * (n - 1) // 2, dtype=np.float64)
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            out[e] = D[i, j]
            e += 1
    return out


@njit(cache=True, nogil=True)
def csr_edge_lookup(indptr, indices, eid, a, b):
    """Edge id of the edge {a, b} (binary search in the sorted row ``a``)."""
    lo = indptr[a]
    hi = indptr[a + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < b:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[a + 1] and indices[lo] == b:
        return eid[lo]
    return -1
