"""numba kernel of NCA's objective: softmax rows and gradient weights in place.

Conventions: ``G`` holds the Gram matrix ``Z Z^T`` of the embedded points on
entry and the gradient weights ``W`` on exit; ``sq`` is ``diag(G)``;
``y`` the class index of every point.  Row ``i`` of ``W`` is
``p_ij ([y_j = y_i] - p_i)`` with ``p_ij`` the softmax of
``-||z_i - z_j||^2`` over ``j != i`` and ``p_i = sum_{j: y_j = y_i} p_ij``.
Rows are independent; each row's sums run in index order, so
the result does not depend on the number of threads.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def softmax_weights(G, sq, y):
    """Overwrite ``G`` with the weights ``W``; return ``p`` (one per row)."""
    n = G.shape[0]
    p = np.zeros(n)
    for i in range(n):
        row = G[i]
        m = np.inf
        for j in range(n):
            if j == i:
                continue
            d = sq[i] + sq[j] - 2.0 * row[j]
            if d < 0.0:
                d = 0.0
            row[j] = d
            if d < m:
                m = d
        s = 0.0
        for j in range(n):
            if j == i:
                row[j] = 0.0
                continue
            e = np.exp(m - row[j])
            row[j] = e
            s += e
        pi = 0.0
        for j in range(n):
            row[j] /= s
            if y[j] == y[i]:
                pi += row[j]
        for j in range(n):
            if y[j] == y[i]:
                row[j] = row[j] * (1.0 - pi)
            else:
                row[j] = -row[j] * pi
        p[i] = pi
    return p
