"""numba kernels: an exact triangle oracle that touches only short edges.

A triangle ``(i, k, j)`` violated by more than ``thr`` has ``x_ik + x_kj <
x_ij - thr <= xmax - thr``, so both of its other edges are shorter than
``xmax - thr - xmin``.  Correlation-clustering iterates are close to 1 on
almost every pair of a sparse signed graph, so the short edges form a sparse
graph (:func:`short_edge_graph`) and the oracle
(:func:`short_edge_triangles`) costs
``sum_i sum_{k in S(i)} |{j in S(k): x_ik + x_kj < bound}|`` instead of
``n^3``.  It returns, for every pair ``i < j`` violated by more than ``thr``,
its most violated triangle (as the dense min-plus oracle).  Its passes run
in parallel from :data:`PARALLEL_MIN_NODES` nodes on, serially below (the
same results).
"""

import numpy as np
from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import SHORT_EDGE_PARALLEL_MIN_NODES
from .edges import edge_id

__all__ = ["PARALLEL_MIN_NODES", "short_edge_graph", "short_edge_triangles"]

#: From this many nodes on, the short-edge oracle's passes run in parallel;
#: below, serially (same results; the size lives in :mod:`._constants`).
PARALLEL_MIN_NODES = SHORT_EDGE_PARALLEL_MIN_NODES


@njit(cache=True, nogil=True)
def _short_edge_adjacency(x, n, cut):
    # short_edge_graph before its rows are sorted
    deg = np.zeros(n + 1, dtype=np.int64)
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            if x[e] < cut:
                deg[i + 1] += 1
                deg[j + 1] += 1
            e += 1
    ptr = np.cumsum(deg)
    nbr = np.empty(ptr[n], dtype=np.int32)
    val = np.empty(ptr[n], dtype=np.float64)
    cur = ptr[:n].copy()
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            v = x[e]
            if v < cut:
                nbr[cur[i]] = j
                val[cur[i]] = v
                cur[i] += 1
                nbr[cur[j]] = i
                val[cur[j]] = v
                cur[j] += 1
            e += 1
    return ptr, nbr, val


def short_edge_graph(x, n, cut):
    """Adjacency (CSR) of the edges with ``x_e < cut``, rows sorted by ``x``.

    Returns ``(ptr, nbr, val)``: the neighbours ``nbr[ptr[i]:ptr[i+1]]`` of
    node ``i`` and their ``x`` values ``val``, in increasing ``x`` (stable:
    ties in increasing node number).
    """
    ptr, nbr, val = _short_edge_adjacency(x, n, cut)
    sort_rows = _sort_rows_serial if n < PARALLEL_MIN_NODES else _sort_rows_parallel
    sort_rows(ptr, nbr, val, n)
    return ptr, nbr, val


@njit(cache=True, nogil=True)
def _sort_row(ptr, nbr, val, i):
    a, b = ptr[i], ptr[i + 1]
    if b - a > 1:
        order = np.argsort(val[a:b], kind="mergesort")
        nb = nbr[a:b][order]
        vb = val[a:b][order]
        for q in range(b - a):  # element loop: see _kernels' docstring
            nbr[a + q] = nb[q]
            val[a + q] = vb[q]


@njit(cache=True, nogil=True, parallel=True)
def _sort_rows_parallel(ptr, nbr, val, n):
    for i in prange(n):
        _sort_row(ptr, nbr, val, i)


@njit(cache=True, nogil=True)
def _sort_rows_serial(ptr, nbr, val, n):
    for i in range(n):
        _sort_row(ptr, nbr, val, i)


@njit(cache=True, nogil=True)
def _row_search(i, x, n, ptr, nbr, val, bound, level, thr, best, arg,
                touched):
    # most violated triangle (i, k, j) of every pair (i, j), j > i, violated
    # by more than thr; returns the number of such j (listed in touched)
    nt = 0
    for p in range(ptr[i], ptr[i + 1]):
        k = nbr[p]
        a = val[p]
        # row k is not empty (it holds i) and sorted: its smallest entry
        # decides whether k can be the apex of any violated triangle
        if a + val[ptr[k]] >= bound:
            continue
        for q in range(ptr[k], ptr[k + 1]):
            b = val[q]
            if a + b >= bound:
                break
            j = nbr[q]
            if j <= i:
                continue
            xij = x[edge_id(i, j, n)]
            if xij > level:
                continue  # a long pair: scanned in full by _long_pair
            viol = xij - a - b
            if viol > best[j]:
                if arg[j] < 0:
                    touched[nt] = j
                    nt += 1
                best[j] = viol
                arg[j] = k
    return nt


@njit(cache=True, nogil=True)
def _count_chunk(x, n, ptr, nbr, val, bound, level, thr, counts, rowmax, t, nth):
    # rows t, t + nth, ... of the count pass, with buffers of their own
    best = np.full(n, thr)
    arg = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    for i in range(t, n, nth):
        nt = _row_search(i, x, n, ptr, nbr, val, bound, level, thr, best,
                         arg, touched)
        mx = 0.0
        for q in range(nt):
            j = touched[q]
            if best[j] > mx:
                mx = best[j]
            best[j] = thr
            arg[j] = -1
        counts[i] = nt
        rowmax[i] = mx


@njit(cache=True, nogil=True, parallel=True)
def _count_rows_parallel(x, n, ptr, nbr, val, bound, level, thr, counts, rowmax):
    nth = 64
    for t in prange(nth):
        _count_chunk(x, n, ptr, nbr, val, bound, level, thr, counts, rowmax, t, nth)


@njit(cache=True, nogil=True)
def _count_rows_serial(x, n, ptr, nbr, val, bound, level, thr, counts, rowmax):
    _count_chunk(x, n, ptr, nbr, val, bound, level, thr, counts, rowmax, 0, 1)


@njit(cache=True, nogil=True)
def _fill_chunk(x, n, ptr, nbr, val, bound, level, thr, offs, cons_edge, path, t, nth):
    # rows t, t + nth, ... of the fill pass, with buffers of their own
    best = np.full(n, thr)
    arg = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    for i in range(t, n, nth):
        nt = _row_search(i, x, n, ptr, nbr, val, bound, level, thr, best,
                         arg, touched)
        # in increasing j (deterministic order)
        tj = np.sort(touched[:nt])
        o = offs[i]
        for q in range(nt):
            j = tj[q]
            k = arg[j]
            cons_edge[o + q] = edge_id(i, j, n)
            path[2 * (o + q)] = edge_id(i, k, n)
            path[2 * (o + q) + 1] = edge_id(k, j, n)
        for q in range(nt):
            j = touched[q]
            best[j] = thr
            arg[j] = -1


@njit(cache=True, nogil=True, parallel=True)
def _fill_rows_parallel(x, n, ptr, nbr, val, bound, level, thr, offs, cons_edge, path):
    nth = 64
    for t in prange(nth):
        _fill_chunk(x, n, ptr, nbr, val, bound, level, thr, offs, cons_edge, path, t, nth)


@njit(cache=True, nogil=True)
def _fill_rows_serial(x, n, ptr, nbr, val, bound, level, thr, offs, cons_edge, path):
    _fill_chunk(x, n, ptr, nbr, val, bound, level, thr, offs, cons_edge, path, 0, 1)


@njit(cache=True, nogil=True)
def _long_pair(x, n, li, lj, thr, ptr, nbr, val, apex, viol_out, q):
    # most violated apex k of the long pair q = ij: a violated triangle has
    # min(x_ik, x_kj) < (x_ij - thr) / 2, so k is a short neighbour of i or
    # of j below that value (rows sorted by value: scan a prefix)
    i = li[q]
    j = lj[q]
    xij = x[edge_id(i, j, n)]
    half = 0.5 * (xij - thr)
    best = thr
    arg = -1
    for side in range(2):
        u = i if side == 0 else j
        o = j if side == 0 else i
        for p in range(ptr[u], ptr[u + 1]):
            a = val[p]
            if a >= half:
                break
            k = nbr[p]
            if k == o:
                continue
            v = xij - a - x[edge_id(k, o, n)]
            if v > best:
                best = v
                arg = k
    apex[q] = arg
    viol_out[q] = best if arg >= 0 else 0.0


@njit(cache=True, nogil=True, parallel=True)
def _long_pairs_parallel(x, n, li, lj, thr, ptr, nbr, val, apex, viol_out):
    for q in prange(li.shape[0]):
        _long_pair(x, n, li, lj, thr, ptr, nbr, val, apex, viol_out, q)


@njit(cache=True, nogil=True)
def _long_pairs_serial(x, n, li, lj, thr, ptr, nbr, val, apex, viol_out):
    for q in range(li.shape[0]):
        _long_pair(x, n, li, lj, thr, ptr, nbr, val, apex, viol_out, q)


def short_edge_triangles(x, n, thr, level=None):
    """Most violated triangle of every pair violated by more than ``thr``.

    Exact on ``max(x, 0)`` (every pair with a triangle violated by more
    than ``thr`` is found; the caller reports ``-min(x)`` separately, as
    the dense oracle does) and independent of the thread count.  The pairs are split at a
    level ``L`` (default ``min(max x, 1)``): for a pair with ``x_ij <= L`` a
    violated triangle has ``x_ik + x_kj < L - thr``, so it is found from the
    graph ``S`` of short edges ``x < L - thr`` (rows sorted by
    value, scans cut off by the bound); a *long* pair ``x_ij > L`` has
    ``min(x_ik, x_kj) < (x_ij - thr) / 2``, so its apexes are among the
    short neighbours of ``i`` and ``j`` below that value.  Returns
    ``(cons_edge, ptr, path, max_violation, n_short)``: CSR triangles as the
    dense oracle (paths of two edges), the largest violation found (any
    violation not found is at most ``thr``) and the number of short edges.
    """
    if n < 3:
        return (np.empty(0, np.int64), np.zeros(1, np.int64),
                np.empty(0, np.int32), 0.0, 0)
    xmax = float(x.max())
    if float(x.min()) < 0.0:
        # as the dense oracle: the search runs on max(x, 0) (negative
        # entries are reported by the caller as violations of x >= 0, which
        # the triangle inequalities imply); this keeps the short graph
        # sparse when a few entries overshoot below 0
        x = np.maximum(x, 0.0)
    xmin = 0.0
    if level is None:
        # correlation-clustering targets are 0 / 1: pairs above 1 are
        # transient overshoots, few, and scanned through the short graph
        level = min(xmax, 1.0)
    bound = level - thr         # a + b must be below this (x_ij <= level)
    cut = max(bound - xmin, 0.5 * (xmax - thr))
    ptr, nbr, val = short_edge_graph(x, n, cut)
    counts = np.zeros(n, dtype=np.int64)
    rowmax = np.zeros(n)
    serial = n < PARALLEL_MIN_NODES
    count_rows = _count_rows_serial if serial else _count_rows_parallel
    count_rows(x, n, ptr, nbr, val, bound, level, thr, counts, rowmax)
    offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offs[1:])
    k = int(offs[-1])
    cons_edge = np.empty(k, dtype=np.int64)
    path = np.empty(2 * k, dtype=np.int32)
    if k:
        fill_rows = _fill_rows_serial if serial else _fill_rows_parallel
        fill_rows(x, n, ptr, nbr, val, bound, level, thr, offs, cons_edge, path)
    maxv = float(rowmax.max())
    # long pairs: a full scan over the apex
    le = np.flatnonzero(x > level).astype(np.int64)
    if le.size:
        li, lj = _edge_ends(le, n)
        apex = np.empty(le.size, dtype=np.int64)
        lv = np.empty(le.size)
        long_pairs = _long_pairs_serial if serial else _long_pairs_parallel
        long_pairs(x, n, li, lj, thr, ptr, nbr, val, apex, lv)
        hit = apex >= 0
        if hit.any():
            maxv = max(maxv, float(lv.max()))
            ke = le[hit]
            ki, kj, kk = li[hit], lj[hit], apex[hit]
            e1 = _edge_ids(ki, kk, n)
            e2 = _edge_ids(kk, kj, n)
            kp = np.empty(2 * ke.size, dtype=np.int32)
            kp[0::2] = e1
            kp[1::2] = e2
            cons_edge = np.concatenate((cons_edge, ke))
            path = np.concatenate((path, kp))
            order = np.argsort(cons_edge, kind="stable")
            cons_edge = cons_edge[order]
            path = path.reshape(-1, 2)[order].ravel()
    cptr = 2 * np.arange(cons_edge.size + 1, dtype=np.int64)
    return cons_edge, cptr, path, maxv, int(nbr.size // 2)


def _edge_ends(e, n):
    """(i, j), i < j, of the edge ids ``e`` (inverse of ``edge_id``)."""
    e = np.asarray(e, dtype=np.int64)
    # row i starts at s(i) = i n - i (i + 1) / 2; solve s(i) <= e
    b = 2 * n - 1
    i = np.floor((b - np.sqrt(b * b - 8.0 * e)) / 2).astype(np.int64)
    s = i * n - i * (i + 1) // 2
    i = np.where(s > e, i - 1, i)
    s = i * n - i * (i + 1) // 2
    s2 = (i + 1) * n - (i + 1) * (i + 2) // 2
    i = np.where(s2 <= e, i + 1, i)
    s = i * n - i * (i + 1) // 2
    j = e - s + i + 1
    return i, j


def _edge_ids(i, j, n):
    a = np.minimum(i, j).astype(np.int64)
    b = np.maximum(i, j).astype(np.int64)
    return a * n - a * (a + 1) // 2 + (b - a - 1)
