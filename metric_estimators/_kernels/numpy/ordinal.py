"""numpy twin of :mod:`metric_estimators._kernels.ordinal`: LODML's triplet hinge.

Same function, arguments and outputs (``loss``, ``active`` as uint8), by
chunks of :data:`CHUNK` triplets.  Equal to rounding: the squared
distances and the loss are summed in another order.
"""

import numpy as np

__all__ = ["triplet_hinge"]

#: triplets per chunk (memory: a few (chunk, c) arrays)
CHUNK = 1 << 15


def triplet_hinge(Z, ti, tj, tl, margin):
    """Sum of ``[margin + ||z_i - z_j||^2 - ||z_i - z_l||^2]_+`` and the active set.

    See :func:`metric_estimators._kernels.ordinal.triplet_hinge`.
    """
    m = ti.shape[0]
    active = np.zeros(m, dtype=np.uint8)
    loss = 0.0
    for a in range(0, m, CHUNK):
        b = min(m, a + CHUNK)
        zi = np.take(Z, ti[a:b], axis=0)
        u = zi - np.take(Z, tj[a:b], axis=0)
        zi -= np.take(Z, tl[a:b], axis=0)
        h = margin + np.einsum("ij,ij->i", u, u) - np.einsum("ij,ij->i", zi, zi)
        pos = h > 0.0
        loss += float(h[pos].sum())
        active[a:b] = pos
    return loss, active
