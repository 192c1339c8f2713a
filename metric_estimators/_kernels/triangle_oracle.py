"""numba kernels for the triangle oracle (Project and Forget).

A tiled min-plus square ``X (x) X`` with its argmin on the upper triangle
(:func:`triangle_argmin`), then one scan per violated edge for its most
violated triangle (:func:`violated_triangles`): cycle constraints with paths
of two edges, in the CSR form of :mod:`metric_estimators._kernels.edges`.
"""

import numpy as np
from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import TRIANGLE_PARALLEL_MIN_NODES
from .edges import edge_id, edge_row_offset

__all__ = ["PARALLEL_MIN_NODES", "triangle_argmin", "triangle_argmin_serial",
           "violated_apexes", "violated_triangles"]

#: From this many nodes on, the tiled parallel kernels run; below, their
#: serial counterparts (same results; the size lives in :mod:`._constants`).
PARALLEL_MIN_NODES = TRIANGLE_PARALLEL_MIN_NODES

_TRI_BI = 16   # rows of a tile (reuse of every loaded X[k, j0:j1])
_TRI_BJ = 128  # columns of a tile
_TRI_BK = 32   # k-steps of a block: the minimum only, the argmin per block


@njit(cache=True, nogil=True, inline="always")
def _minplus4_row(dst, a0, a1, a2, a3, x0, x1, x2, x3, L):
    # dst[j] = min(dst[j], a0 + x0[j], ..., a3 + x3[j]): four k-steps per
    # load and store of dst, no index tracking (min and add only, which
    # LLVM vectorises); a minimum is exact, so the order does not matter
    for jj in range(L):
        s0 = a0 + x0[jj]
        s1 = a1 + x1[jj]
        s2 = a2 + x2[jj]
        s3 = a3 + x3[jj]
        s0 = s0 if s0 < s1 else s1
        s2 = s2 if s2 < s3 else s3
        s0 = s0 if s0 < s2 else s2
        d = dst[jj]
        dst[jj] = s0 if s0 < d else d


@njit(cache=True, nogil=True, inline="always")
def _minplus1_row(dst, a, xk, L):
    # dst[j] = min(dst[j], a + xk[j])
    for jj in range(L):
        s = a + xk[jj]
        d = dst[jj]
        dst[jj] = s if s < d else d


@njit(cache=True, nogil=True, inline="always")
def _block_min(T, X, k0, k1, i0, i1, j0, j1):
    # T[ii, jj] = min over k0 <= k < k1 of X[k, i0 + ii] + X[k, j0 + jj]
    L = j1 - j0
    for ii in range(i1 - i0):
        for jj in range(L):
            T[ii, jj] = np.inf
    k = k0
    while k + 4 <= k1:
        x0 = X[k, j0:j1]
        x1 = X[k + 1, j0:j1]
        x2 = X[k + 2, j0:j1]
        x3 = X[k + 3, j0:j1]
        for ii in range(i1 - i0):
            i = i0 + ii
            _minplus4_row(T[ii], X[k, i], X[k + 1, i], X[k + 2, i],
                          X[k + 3, i], x0, x1, x2, x3, L)
        k += 4
    while k < k1:
        xk = X[k, j0:j1]
        for ii in range(i1 - i0):
            _minplus1_row(T[ii], X[k, i0 + ii], xk, L)
        k += 1


@njit(cache=True, nogil=True, inline="always")
def _merge_block(A, G, T, kb, rows, L):
    # A = min(A, T), G = kb where T is strictly smaller (the earlier block
    # keeps a tie), as unconditional stores (vector compare/blend)
    for ii in range(rows):
        Ar = A[ii]
        Tr = T[ii]
        Gr = G[ii]
        for jj in range(L):
            t = Tr[jj]
            a = Ar[jj]
            c = t < a
            Ar[jj] = t if c else a
            g = Gr[jj]
            Gr[jj] = g + (kb - g) * c


@njit(cache=True, nogil=True, inline="always")
def _first_minimiser(X, i, j, k0, k1, value):
    # the first k in [k0, k1) with X[k, i] + X[k, j] == value (rows i and j
    # of the symmetric X, contiguous; columns if X is not exactly symmetric)
    xi = X[i]
    xj = X[j]
    for k in range(k0, k1):
        if xi[k] + xj[k] == value:
            return k
    for k in range(k0, k1):
        if X[k, i] + X[k, j] == value:
            return k
    return k0


@njit(cache=True, nogil=True)
def triangle_argmin_serial(X, out, arg):
    """:func:`triangle_argmin` in one plain loop, for small ``n``.

    The same values and argmins (for ``i < j``): ``k`` ascends and the
    minimum moves only on a strictly smaller sum, as in the tiled kernel;
    only the strict upper triangle of ``out`` and ``arg`` is written.  It
    compiles in a fraction of the tiled parallel kernel's time, which pays
    only for large ``n`` (see :data:`PARALLEL_MIN_NODES`).
    """
    n = X.shape[0]
    for i in range(n):
        o = out[i]
        g = arg[i]
        for j in range(i + 1, n):
            o[j] = np.inf
            g[j] = 0
        for k in range(n):
            a = X[k, i]
            xk = X[k]
            for j in range(i + 1, n):
                s = a + xk[j]
                if s < o[j]:
                    o[j] = s
                    g[j] = k


@njit(cache=True, nogil=True, parallel=True)
def triangle_argmin(X, out, arg):
    """``out[i, j] = min_k X[i, k] + X[k, j]`` and its argmin, for ``i < j``.

    ``X`` is symmetric (float32 or float64, zero diagonal); only tiles that
    meet the strict upper triangle are computed (the entries of ``out`` and
    ``arg`` below the diagonal of those tiles are computed too, the others
    are left untouched).  Each tile of ``_TRI_BI x _TRI_BJ`` entries runs
    over ``k`` in blocks of ``_TRI_BK``: within a block only the minimum is
    accumulated (adds and mins, four ``k`` per load and store of the
    accumulator, vectorised), and after the block the running minimum
    records the block where it strictly decreased; at the end the argmin is
    the first ``k`` of that block attaining the minimum (an exact
    comparison: the sums are recomputed from the same operands).  That is
    the first minimiser over all ``k``, as a plain loop with ``k``
    ascending and strict improvements finds (:func:`triangle_argmin_serial`).
    The tiles are independent and run in parallel, so the result does not
    depend on the thread count.  With a zero diagonal the terms ``k = i``
    and ``k = j`` equal ``X[i, j]``, so ``X[i, j] - out[i, j] > 0`` exactly
    when the triangle ``(i, arg[i, j], j)`` is violated, and it is the most
    violated one through ``ij``.
    """
    n = X.shape[0]
    BI = _TRI_BI
    BJ = _TRI_BJ
    BK = _TRI_BK
    nbi = (n + BI - 1) // BI
    nbj = (n + BJ - 1) // BJ
    tasks = np.empty((nbi * nbj, 2), dtype=np.int64)
    ntask = 0
    for ib in range(nbi):
        for jb in range(nbj):
            if min(n, (jb + 1) * BJ) - 1 > ib * BI:
                tasks[ntask, 0] = ib
                tasks[ntask, 1] = jb
                ntask += 1
    for t in prange(ntask):
        i0 = tasks[t, 0] * BI
        i1 = min(n, i0 + BI)
        j0 = tasks[t, 1] * BJ
        j1 = min(n, j0 + BJ)
        L = j1 - j0
        A = np.full((BI, BJ), np.inf, dtype=X.dtype)
        T = np.empty((BI, BJ), dtype=X.dtype)
        G = np.zeros((BI, BJ), dtype=np.int32)
        for k0 in range(0, n, BK):
            _block_min(T, X, k0, min(n, k0 + BK), i0, i1, j0, j1)
            _merge_block(A, G, T, np.int32(k0), i1 - i0, L)
        for ii in range(i1 - i0):
            i = i0 + ii
            for jj in range(L):
                j = j0 + jj
                k0 = G[ii, jj]
                out[i, j] = A[ii, jj]
                arg[i, j] = _first_minimiser(X, i, j, k0, min(n, k0 + BK),
                                             A[ii, jj])


@njit(cache=True, nogil=True)
def _hop_rows(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax, t, nt):
    # hop[e] = the apex w of the most violated triangle of edge e = uv, or -1,
    # for the rows u = t, t + nt, ...; the violation is recomputed in float64
    # from X (M and W may come from a float32 min-plus square).
    for u in range(t, n, nt):
        base = edge_row_offset(u, n)
        best = 0.0
        xu = X[u]
        for v in range(u + 1, n):
            e = base + v
            hop[e] = -1
            if not edge_mask[e]:
                continue
            viol = xu[v] - mscale * M[u, v]
            if viol > 0.5 * threshold:
                w = W[u, v]
                viol = xu[v] - xu[w] - X[w, v]
                if viol > threshold:
                    hop[e] = w
            if viol > best:
                best = viol
        rowmax[u] = best


@njit(cache=True, nogil=True, parallel=True)
def _triangle_hops_parallel(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax):
    # _hop_rows over all rows, dealt out cyclically over the threads (row u
    # has n - u - 1 edges); rows are independent, the result is that of the
    # serial call _hop_rows(..., 0, 1)
    nt = 64
    for t in prange(nt):
        _hop_rows(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax, t, nt)


@njit(cache=True, nogil=True)
def _collect_triangles(n, hop):
    k = 0
    for e in range(hop.shape[0]):
        if hop[e] >= 0:
            k += 1
    ce = np.empty(k, dtype=np.int64)
    ptr = np.empty(k + 1, dtype=np.int64)
    path = np.empty(2 * k, dtype=np.int32)
    ptr[0] = 0
    c = 0
    e = 0
    for u in range(n):
        for v in range(u + 1, n):
            w = hop[e]
            if w >= 0:
                ce[c] = e
                path[2 * c] = edge_id(u, w, n)
                path[2 * c + 1] = edge_id(w, v, n)
                c += 1
                ptr[c] = 2 * c
            e += 1
    return ce, ptr, path


def violated_triangles(X, Xp, M, W, n, threshold, edge_mask, mscale=1.0):
    """Most violated triangle of every edge violated by more than ``threshold``.

    ``X`` is the float64 matrix of the iterate, ``Xp`` the same in the
    precision of the search (``X`` itself or a float32 copy of ``X /
    mscale``, ``mscale`` a power of two that keeps float32 from overflowing
    or underflowing); ``M`` and ``W`` are buffers of ``Xp``'s dtype and of
    int32.  Returns ``(cons_edge, ptr, path, max_violation)`` as
    :func:`~metric_estimators._kernels.shortest_paths.violated_paths`, with
    paths of two edges; the violations are exact float64 ones of the
    returned triangles.
    """
    m = n * (n - 1) // 2
    hop = np.empty(m, dtype=np.int32)
    rowmax = np.zeros(n)
    if n < PARALLEL_MIN_NODES:
        triangle_argmin_serial(Xp, M, W)
        _hop_rows(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax, 0, 1)
    else:
        triangle_argmin(Xp, M, W)
        _triangle_hops_parallel(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax)
    ce, ptr, path = _collect_triangles(n, hop)
    return ce, ptr, path, float(rowmax.max()) if n else 0.0


@njit(cache=True, nogil=True)
def _kth_largest(a, k, hi):
    # the k-th largest (k >= 1) of a[:hi], by in-place quickselect
    # (a[:hi] is reordered)
    target = hi - k  # its index in ascending order
    lo = 0
    hi -= 1
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i = lo
        j = hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                t = a[i]
                a[i] = a[j]
                a[j] = t
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break
    return a[target]


@njit(cache=True, nogil=True, parallel=True)
def _min_plus_violation(X, M, mscale, n, edge_mask):
    # largest x_uv - mscale * M[u, v] over the checked edges (the min-plus
    # estimate of the largest triangle violation)
    rowmax = np.zeros(n)
    for u in prange(n):
        best = 0.0
        for v in range(u + 1, n):
            if edge_mask[edge_row_offset(u, n) + v]:
                viol = X[u, v] - mscale * M[u, v]
                if viol > best:
                    best = viol
        rowmax[u] = best
    return rowmax.max()


@njit(cache=True, nogil=True, parallel=True)
def _apex_counts(X, M, W, mscale, n, threshold, edge_mask, cap, rel, deep,
                 cnt, lim, cut, rowmax):
    # For every edge e = uv whose most violated triangle (min-plus argmin)
    # is violated by more than threshold: one scan of every apex w; cnt[e]
    # = the number of apexes whose triangle is violated by more than lim[e]
    # = max(threshold, rel * best) (best = the edge's largest violation,
    # exact float64), at most cap of them (cap > 0; then cut[e] = the
    # cap-th largest violation, else -inf).  cnt[e] = 0 for the other
    # edges.  Rows are dealt out cyclically over the threads, as in
    # _triangle_hops_parallel.
    nt = 64
    for t in prange(nt):
        buf = np.empty(n, dtype=np.float64)
        for u in range(t, n, nt):
            base = edge_row_offset(u, n)
            best_row = 0.0
            xu = X[u]
            for v in range(u + 1, n):
                e = base + v
                cnt[e] = 0
                if not edge_mask[e]:
                    continue
                xuv = xu[v]
                viol = xuv - mscale * M[u, v]
                if viol > 0.5 * threshold:
                    w = W[u, v]
                    viol = xuv - xu[w] - X[w, v]
                    if viol > threshold and xuv - mscale * M[u, v] <= deep:
                        # a shallow edge: its most violated triangle only
                        cnt[e] = 1
                        lim[e] = np.inf
                    elif viol > threshold:
                        xv = X[v]
                        k = 0
                        for w in range(n):
                            s = xuv - xu[w] - xv[w]
                            buf[k] = s
                            k += s > threshold
                        best = viol
                        for i in range(k):
                            if buf[i] > best:
                                best = buf[i]
                        viol = best
                        lo = max(threshold, rel * best)
                        if lo > threshold:
                            kk = 0
                            for i in range(k):
                                if buf[i] > lo:
                                    buf[kk] = buf[i]
                                    kk += 1
                            k = kk
                        lim[e] = lo
                        cut[e] = -np.inf
                        if cap > 0 and k > cap:
                            cut[e] = _kth_largest(buf, cap, k)
                            k = cap
                        cnt[e] = k
                if viol > best_row:
                    best_row = viol
            rowmax[u] = best_row


@njit(cache=True, nogil=True, parallel=True)
def _apex_fill(X, W, n, cnt, lim, cut, offset, ce, path):
    # the triangles counted by _apex_counts: those of edge e from offset[e],
    # apexes above the cut in increasing order, then ties at the cut
    nt = 64
    for t in prange(nt):
        for u in range(t, n, nt):
            base = edge_row_offset(u, n)
            xu = X[u]
            for v in range(u + 1, n):
                e = base + v
                k = cnt[e]
                if k == 0:
                    continue
                c = offset[e]
                if lim[e] == np.inf:
                    w = W[u, v]
                    ce[c] = e
                    path[2 * c] = edge_id(u, w, n)
                    path[2 * c + 1] = edge_id(w, v, n)
                    continue
                xuv = xu[v]
                xv = X[v]
                lo = max(lim[e], cut[e])
                stop = c + k
                for w in range(n):
                    s = xuv - xu[w] - xv[w]
                    if s > lo:
                        ce[c] = e
                        path[2 * c] = edge_id(u, w, n)
                        path[2 * c + 1] = edge_id(w, v, n)
                        c += 1
                lo = cut[e]
                for w in range(n):
                    if c == stop:
                        break
                    s = xuv - xu[w] - xv[w]
                    if s == lo:
                        ce[c] = e
                        path[2 * c] = edge_id(u, w, n)
                        path[2 * c + 1] = edge_id(w, v, n)
                        c += 1


def violated_apexes(X, Xp, M, W, n, threshold, edge_mask, mscale=1.0,
                    cap=0, rel=0.0, depth=0.0):
    """Several violated triangles of every edge violated by more than ``threshold``.

    As :func:`violated_triangles`, but an edge ``uv`` whose most violated
    triangle is violated by more than ``threshold`` contributes every apex
    ``w`` with ``x_uv - x_uw - x_wv > max(threshold, rel * best_uv)``
    (``best_uv`` its largest violation), the ``cap`` most violated of them
    if ``cap > 0`` (ties at the cut broken by the lower apex).  On instances where one far pair is violated
    through most apexes at once (Sonthalia & Gilbert's type 2: a pair with
    disjoint label sets is violated by every node close to both), one call
    supplies what one triangle per edge and call would supply in ``O(n)``
    calls.  After the min-plus square (``O(n^3 / 2)``) it costs two scans
    of ``O(n)`` per violated edge (count, then fill).  Returns ``(cons_edge, ptr, path,
    max_violation)`` as :func:`violated_triangles` (exact float64
    violations).

    With ``depth > 0`` only the *deep* edges, whose min-plus violation
    ``x_uv - min_w (x_uw + x_wv)`` exceeds ``depth`` times the largest one
    of the call, are scanned; the others contribute their most violated
    triangle, as in :func:`violated_triangles`.  That confines the scans
    (and the added triangles) to the far pairs of a type 2 instance
    instead of every edge the projections pushed over its bound.
    """
    m = n * (n - 1) // 2
    if n < PARALLEL_MIN_NODES:
        triangle_argmin_serial(Xp, M, W)
    else:
        triangle_argmin(Xp, M, W)
    deep = -np.inf
    if depth > 0.0:
        deep = depth * _min_plus_violation(X, M, mscale, n, edge_mask)
    cnt = np.empty(m, dtype=np.int64)
    lim = np.empty(m, dtype=np.float64)
    cut = np.empty(m, dtype=np.float64)
    rowmax = np.zeros(n)
    _apex_counts(X, M, W, mscale, n, threshold, edge_mask, int(cap),
                 float(rel), deep, cnt, lim, cut, rowmax)
    offset = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(cnt, out=offset[1:])
    k = int(offset[-1])
    ce = np.empty(k, dtype=np.int64)
    path = np.empty(2 * k, dtype=np.int32)
    _apex_fill(X, W, n, cnt, lim, cut, offset, ce, path)
    ptr = np.arange(0, 2 * k + 1, 2, dtype=np.int64)
    return ce, ptr, path, float(rowmax.max()) if n else 0.0
