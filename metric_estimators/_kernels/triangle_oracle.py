"""numba kernels for the triangle oracle (Project and Forget).

A tiled min-plus square ``X (x) X`` with its argmin on the upper triangle
(:func:`triangle_argmin`), then one scan per violated edge for its most
violated triangle (:func:`violated_triangles`): cycle constraints with paths
of two edges, in the CSR form of :mod:`metric_estimators._kernels.edges`.
"""

import numpy as np
from numba import njit, prange

from .edges import edge_id, edge_row_offset

__all__ = ["PARALLEL_MIN_NODES", "triangle_argmin", "triangle_argmin_serial",
           "violated_apexes", "violated_triangles"]

#: From this many nodes on, the tiled parallel kernels run; below, their
#: serial counterparts (same results), which compile in a fraction of the
#: time: the parallel ones are compiled only when a problem this large comes.
#: Kept low (one tile of 128 columns) because the serial plain loop falls
#: behind the tiled vectorised kernel as n grows: warm fits must not slow down.
PARALLEL_MIN_NODES = 128

_TRI_BI = 16   # rows of a tile (reuse of every loaded X[k, j0:j1])
_TRI_BJ = 128  # columns of a tile


@njit(cache=True, nogil=True, inline="always")
def _minplus_arg_row(src, gsrc, dst, gdst, a, xk, k, L):
    # dst[j] = min(src[j], a + xk[j]) and gdst[j] = k where the minimum moved.
    # Separate source and destination buffers and an arithmetic select for
    # the index make every store unconditional, so LLVM emits vector
    # compare/blend instead of (slow, on AMD) masked stores.
    for jj in range(L):
        s = a + xk[jj]
        d = src[jj]
        c = s < d
        dst[jj] = s if c else d
        g = gsrc[jj]
        gdst[jj] = g + (k - g) * c


@njit(cache=True, nogil=True, inline="always")
def _minplus_arg_tile(src, gsrc, dst, gdst, X, k, i0, i1, j0, j1):
    # one k-step of a tile: row ii of dst/gdst from row ii of src/gsrc
    xk = X[k, j0:j1]
    xi = X[k, i0:i1]  # = X[i0:i1, k] (X is symmetric), contiguous
    for ii in range(i1 - i0):
        _minplus_arg_row(src[ii], gsrc[ii], dst[ii], gdst[ii], xi[ii], xk,
                         np.int32(k), j1 - j0)


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
    are left untouched).  Tiles of ``_TRI_BI x _TRI_BJ`` entries are
    accumulated over all ``k`` in two ping-pong buffers (vectorised, each
    loaded row segment reused ``_TRI_BI`` times); the tiles are independent
    and run in parallel, so the result does not depend on the thread count.
    With a zero diagonal the terms ``k = i`` and ``k = j`` equal ``X[i, j]``,
    so ``X[i, j] - out[i, j] > 0`` exactly when the triangle
    ``(i, arg[i, j], j)`` is violated, and it is the most violated one
    through ``ij``.
    """
    n = X.shape[0]
    BI = _TRI_BI
    BJ = _TRI_BJ
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
        B = np.empty((BI, BJ), dtype=X.dtype)
        GA = np.zeros((BI, BJ), dtype=np.int32)
        GB = np.zeros((BI, BJ), dtype=np.int32)
        k = 0
        while k + 1 < n:
            _minplus_arg_tile(A, GA, B, GB, X, k, i0, i1, j0, j1)
            _minplus_arg_tile(B, GB, A, GA, X, k + 1, i0, i1, j0, j1)
            k += 2
        if k < n:
            _minplus_arg_tile(A, GA, B, GB, X, k, i0, i1, j0, j1)
            A[:] = B
            GA[:] = GB
        out[i0:i1, j0:j1] = A[:i1 - i0, :L]
        arg[i0:i1, j0:j1] = GA[:i1 - i0, :L]


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
