"""numba kernels of SCML's triplet hinge over a basis of rank-one matrices.

The metric is ``M = sum_k w_k b_k b_k^T`` (``w >= 0``), so the squared
distance of a pair is linear in ``w``: ``d_w(x, y) = sum_k w_k (b_k^T (x -
y))^2``.  With ``P = X @ B.T`` the projections of the points on the basis,
a triplet ``(a, b, c)`` has the feature vector

    phi_k = (P[a, k] - P[b, k])^2 - (P[a, k] - P[c, k])^2

and the hinge ``max(0, 1 + w . phi)``.  The kernels take ``P`` (rows indexed
by the triplets) and know nothing about the optimiser.
"""

import numpy as np
from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

_OPTS = dict(cache=True, nogil=True)
_FAST = dict(_OPTS, fastmath={"reassoc", "contract"})


@njit(**_FAST)
def triplet_batch_gradient(P, triplets, batch, w, grad):
    """Mean hinge subgradient over the triplets ``triplets[batch]``.

    Writes ``grad = (1 / len(batch)) sum_{t active} phi_t`` (a triplet is
    active when ``1 + w . phi_t > 0``) and returns the number of active
    triplets.  ``triplets`` holds row indices into ``P``.
    """
    K = P.shape[1]
    grad[:] = 0.0
    phi = np.empty(K)
    n_active = 0
    for s in range(batch.shape[0]):
        t = batch[s]
        a = triplets[t, 0]
        b = triplets[t, 1]
        c = triplets[t, 2]
        margin = 1.0
        for k in range(K):
            pa = P[a, k]
            u = pa - P[b, k]
            v = pa - P[c, k]
            phi[k] = u * u - v * v
            margin += w[k] * phi[k]
        if margin > 0.0:
            n_active += 1
            for k in range(K):
                grad[k] += phi[k]
    inv = 1.0 / batch.shape[0]
    for k in range(K):
        grad[k] *= inv
    return n_active


@njit(**_FAST)
def _hinge(P, a, b, c, w):
    """``max(0, 1 + w . phi)`` of the triplet ``(a, b, c)`` (rows of ``P``)."""
    margin = 1.0
    for k in range(P.shape[1]):
        pa = P[a, k]
        u = pa - P[b, k]
        v = pa - P[c, k]
        margin += w[k] * (u * u - v * v)
    return margin if margin > 0.0 else 0.0


@njit(**_FAST)
def triplet_hinges(P, triplets, w):
    """Hinge ``max(0, 1 + w . phi_t)`` of every triplet (serial)."""
    n = triplets.shape[0]
    out = np.empty(n)
    for t in range(n):
        out[t] = _hinge(P, triplets[t, 0], triplets[t, 1], triplets[t, 2], w)
    return out


@njit(parallel=True, **_FAST)
def triplet_hinges_parallel(P, triplets, w):
    """Hinge ``max(0, 1 + w . phi_t)`` of every triplet (parallel over triplets).

    Each triplet's value is computed by one thread in a fixed order, so the
    result equals :func:`triplet_hinges`' whatever the number of threads.
    Worth its thread-pool start-up only for large problems.
    """
    n = triplets.shape[0]
    out = np.empty(n)
    for t in prange(n):
        out[t] = _hinge(P, triplets[t, 0], triplets[t, 1], triplets[t, 2], w)
    return out
