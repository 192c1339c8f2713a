"""numpy twin of :mod:`metric_estimators._kernels.scml`: SCML's triplet hinge.

Same functions, arguments and outputs as the numba kernels, in vectorised
numpy over the triplets (by chunks of :data:`CHUNK` for the full hinge).
Equal to rounding: the margin ``1 + w . phi`` is summed in another order
(a matrix-vector product), so a triplet whose margin is zero to rounding
may count as active on one path and not on the other.
"""

import numpy as np

__all__ = ["triplet_batch_gradient", "triplet_hinges", "triplet_hinges_parallel"]

#: triplets per chunk of :func:`triplet_hinges` (memory: a few (chunk, K) arrays)
CHUNK = 4096


def _phi(P, triplets):
    """``phi_k = (P[a, k] - P[b, k])^2 - (P[a, k] - P[c, k])^2`` (one row per triplet)."""
    A = np.take(P, triplets, axis=0)            # (m, 3, K): one gather
    u = A[:, 0] - A[:, 1]
    v = A[:, 0] - A[:, 2]
    u *= u
    v *= v
    u -= v
    return u


def triplet_batch_gradient(P, triplets, batch, w, grad):
    """Mean hinge subgradient over ``triplets[batch]`` into ``grad``; active count.

    See :func:`metric_estimators._kernels.scml.triplet_batch_gradient`.
    """
    phi = _phi(P, np.take(triplets, batch, axis=0))
    # 1 + w . phi > 0 exactly when w . phi > -1 (near -1 the sum with 1 is exact)
    active = phi @ w > -1.0
    np.divide(active @ phi, batch.shape[0], out=grad)
    return int(np.count_nonzero(active))


def triplet_hinges(P, triplets, w):
    """Hinge ``max(0, 1 + w . phi_t)`` of every triplet.

    See :func:`metric_estimators._kernels.scml.triplet_hinges`.
    """
    out = np.empty(triplets.shape[0])
    for s in range(0, triplets.shape[0], CHUNK):
        h = _phi(P, triplets[s:s + CHUNK]) @ w
        h += 1.0
        np.maximum(h, 0.0, out=out[s:s + CHUNK])
    return out


def triplet_hinges_parallel(P, triplets, w):
    """:func:`triplet_hinges` (the kernel's parallel version gives the same values)."""
    return triplet_hinges(P, triplets, w)
