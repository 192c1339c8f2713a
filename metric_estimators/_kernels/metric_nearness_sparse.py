"""numba kernels for cycle constraints on sparse graphs (Project and Forget).

Edges are given by arrays ``rows[e] < cols[e]``; a symmetric CSR pattern
``(indptr, indices, eid)`` maps a stored entry to its edge id.
"""

import numpy as np
from numba import njit

from .bregman import hildreth_correction

__all__ = ["paths_from_predecessors", "csr_edge_lookup", "project_nonnegative"]


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


@njit(cache=True, nogil=True)
def paths_from_predecessors(x, rows, cols, src, dist, pred, indptr, indices,
                            eid, threshold):
    """Violated cycle constraints for the edges whose first node is a source.

    ``dist[s, v]`` and ``pred[s, v]`` are Dijkstra's output for the sources
    ``src`` (consecutive node numbers).  For each edge ``e = (u, v)`` with
    ``u`` among the sources and ``x_e - dist(u, v) > threshold``, the path
    from the predecessor tree gives the constraint.

    Returns ``(cons_edge, ptr, path, max_violation)`` as
    :func:`metric_estimators._kernels.metric_nearness.violated_paths`.
    """
    s0 = src[0]
    s1 = src[src.shape[0] - 1] + 1
    m = rows.shape[0]
    n = dist.shape[1]
    count = 0
    total = 0
    maxv = 0.0
    for e in range(m):
        u = rows[e]
        if u < s0 or u >= s1:
            continue
        v = cols[e]
        viol = x[e] - dist[u - s0, v]
        if viol > maxv:
            maxv = viol
        if viol > threshold:
            a = v
            length = 0
            while a != u and a >= 0 and length <= n:
                a = pred[u - s0, a]
                length += 1
            if a == u:
                count += 1
                total += length
    cons_edge = np.empty(count, dtype=np.int64)
    ptr = np.empty(count + 1, dtype=np.int64)
    path = np.empty(total, dtype=np.int32)
    ptr[0] = 0
    c = 0
    p = 0
    for e in range(m):
        u = rows[e]
        if u < s0 or u >= s1:
            continue
        v = cols[e]
        viol = x[e] - dist[u - s0, v]
        if viol > threshold:
            a = v
            length = 0
            while a != u and a >= 0 and length <= n:
                a = pred[u - s0, a]
                length += 1
            if a != u:
                continue
            a = v
            ok = True
            start = p
            while a != u:
                b = pred[u - s0, a]
                f = csr_edge_lookup(indptr, indices, eid, b, a)
                if f < 0:
                    ok = False
                    break
                path[p] = f
                p += 1
                a = b
            if ok:
                cons_edge[c] = e
                c += 1
                ptr[c] = p
            else:
                p = start
    return cons_edge[:c], ptr[:c + 1], path[:p], maxv


@njit(cache=True, nogil=True)
def project_nonnegative(x, winv, z):
    """Hildreth pass over ``-x_e <= 0`` for every edge; returns the residual."""
    resid = 0.0
    for e in range(x.shape[0]):
        s = -x[e]
        zc = z[e]
        r = abs(s) if zc > 0.0 else max(s, 0.0)
        if r > resid:
            resid = r
        step, z[e] = hildreth_correction(zc, -s / winv[e])
        x[e] -= step * winv[e]
    return resid
