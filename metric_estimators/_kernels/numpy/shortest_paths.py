"""numpy twin of :mod:`metric_estimators._kernels.shortest_paths`: all-pairs shortest paths.

:func:`apsp` is Floyd-Warshall with one vectorised min-plus step per
intermediate node, in place, as the kernel's (blocked) one: the same
distances to rounding (the same paths, their lengths summed in another
order).  The oracle's path
recovery (``violated_paths``) has no twin: the dense shortest-path oracle
runs on the numba kernels.
"""

import numpy as np

__all__ = ["apsp"]


def apsp(D):
    """All-pairs shortest paths of the square matrix ``D``, in place."""
    n = D.shape[0]
    for k in range(n):
        np.minimum(D, D[:, k, None] + D[None, k, :], out=D)
