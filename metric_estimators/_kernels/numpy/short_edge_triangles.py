"""numpy twin of :mod:`metric_estimators._kernels.short_edge_triangles`.

:func:`short_edge_triangles` returns what the kernel returns -- the most
violated triangle of every pair violated by more than ``thr``, the largest
violation and the number of short edges -- from the dense float64 search of
:func:`metric_estimators._kernels.numpy.triangle_oracle.violated_triangles` on
``max(x, 0)`` (every apex of every pair at once; ``O(n^3)`` memory, hence
small ``n`` only).  Where it differs: on ties between apexes it takes the
lowest one, and its largest violation is the exact one (the kernel's is
exact above ``thr``, a bound below it).  The number of short edges is
counted as the kernel's short graph would hold them.
"""

import numpy as np

from .triangle_oracle import _triangle_search

__all__ = ["short_edge_triangles"]


def short_edge_triangles(x, n, thr, level=None):
    """Most violated triangle of every pair violated by more than ``thr``.

    Returns ``(cons_edge, ptr, path, max_violation, n_short)`` as the kernel.
    """
    if n < 3:
        return (np.empty(0, np.int64), np.zeros(1, np.int64),
                np.empty(0, np.int32), 0.0, 0)
    xp = np.maximum(x, 0.0)
    xmax = float(xp.max())
    if level is None:
        level = min(xmax, 1.0)
    cut = max(level - thr, 0.5 * (xmax - thr))
    X = np.zeros((n, n))
    i, j = np.triu_indices(n, 1)
    X[i, j] = xp
    X[j, i] = xp
    ce, ptr, path, maxv = _triangle_search(X, n, thr,
                                          np.ones(xp.size, dtype=bool))
    return ce, ptr, path, maxv, int(np.count_nonzero(xp < cut))
