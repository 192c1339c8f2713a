"""numpy twin of :mod:`metric_estimators._kernels.triangle_oracle`: the dense triangle oracle.

:func:`violated_triangles` takes the kernel's arguments and returns its
outputs: the most violated triangle ``(u, w, v)`` of every edge ``uv``
(``u < v``, in ``edge_mask``) violated by more than ``threshold``, and the
largest violation.  It searches every apex at once in float64 on ``X``
(an ``(n (n - 1) / 2, n)`` array: ``O(n^3)`` memory, hence small ``n``
only); the buffers ``Xp``, ``M``, ``W`` and ``mscale`` of the kernel's
(possibly float32) min-plus square are not used.  Where it differs: on
ties between apexes it takes the lowest ``w`` (the kernel's tiled search
may take another one of equal violation), and with a float32 search the
kernel's largest violation is accurate to about ``1e-6`` of the largest
entry, this one exactly.  Several triangles per edge
(``violated_apexes``) have no twin.
"""

import numpy as np

from .edges import edge_id

__all__ = ["violated_triangles"]


def _triangle_search(X, n, threshold, edge_mask):
    """``(cons_edge, ptr, path, max_violation)`` of the float64 search on ``X``."""
    i, j = np.triu_indices(n, 1)
    T = X[i] + X[j]                     # T[e, w] = x_uw + x_wv
    W = np.argmin(T, axis=1)
    viol = X[i, j] - T[np.arange(i.size), W]
    viol = np.where(edge_mask, viol, 0.0)
    maxv = float(max(0.0, viol.max())) if viol.size else 0.0
    hit = np.flatnonzero(viol > threshold)
    u, v, w = i[hit], j[hit], W[hit]
    path = np.empty(2 * hit.size, dtype=np.int32)
    path[0::2] = edge_id(u, w, n)
    path[1::2] = edge_id(w, v, n)
    return (hit.astype(np.int64),
            np.arange(hit.size + 1, dtype=np.int64) * 2, path, maxv)


def violated_triangles(X, Xp, M, W, n, threshold, edge_mask, mscale=1.0):
    """Most violated triangle of every edge violated by more than ``threshold``.

    Returns ``(cons_edge, ptr, path, max_violation)`` as the kernel.
    """
    return _triangle_search(X, n, threshold, edge_mask)
