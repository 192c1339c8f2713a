"""numba kernel for the ordinal triplet hinge of the LODML baseline.

Conventions: ``Z = X @ L.T`` is the data in the current embedding; a triplet
``(i, j, l)`` says that ``j`` must be closer to the anchor ``i`` than ``l``
is, by ``margin`` in squared distance.  The kernel knows nothing about the
optimiser.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def triplet_hinge(Z, ti, tj, tl, margin):
    """Sum of ``[margin + ||z_i - z_j||^2 - ||z_i - z_l||^2]_+`` and the active set.

    Returns
    -------
    loss : float
        The sum of the hinge over all triplets.
    active : ndarray of uint8, shape (n_triplets,)
        1 where the hinge is strictly positive (the triplet contributes to
        the subgradient), else 0.
    """
    m = ti.shape[0]
    c = Z.shape[1]
    active = np.zeros(m, dtype=np.uint8)
    loss = 0.0
    for t in range(m):
        i = ti[t]
        j = tj[t]
        l = tl[t]
        dij = 0.0
        dil = 0.0
        for f in range(c):
            a = Z[i, f] - Z[j, f]
            b = Z[i, f] - Z[l, f]
            dij += a * a
            dil += b * b
        h = margin + dij - dil
        if h > 0.0:
            loss += h
            active[t] = 1
    return loss, active
