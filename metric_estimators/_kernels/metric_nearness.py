"""numba kernels for metric-constrained problems on graphs (Project and Forget).

Edges of the complete graph on ``n`` nodes are numbered row by row,
``(0, 1), (0, 2), ..., (0, n-1), (1, 2), ...``; :func:`edge_id` gives the
number of the edge ``{i, j}``.  A *cycle constraint* is an edge ``e = uv``
and a path ``P`` from ``u`` to ``v`` (not using ``e``):
``x_e - sum_{f in P} x_f <= 0`` (Sonthalia & Gilbert, JMLR 2022).  The active
set of such constraints is stored in CSR form: ``cons_edge[c]`` and the path
edges ``path[ptr[c]:ptr[c+1]]``.

Kernels here take plain arrays and scalars; the solver logic lives in
:mod:`metric_estimators.solvers.project_forget`.
"""

import numpy as np
from numba import njit, prange

from .bregman import hildreth_correction

__all__ = [
    "edge_id",
    "edges_to_matrix",
    "matrix_to_edges",
    "apsp",
    "violated_paths",
    "project_paths_l2",
    "project_triangles_unit",
    "project_paths_kl",
    "project_pairs_cc",
    "constraint_hashes",
    "build_hash_table",
    "filter_new",
    "compact_constraints",
    "triangle_argmin",
    "violated_triangles",
]

_BLOCK = 128


@njit(cache=True, nogil=True)
def edge_id(i, j, n):
    """Number of the edge {i, j} (i != j) of the complete graph on n nodes."""
    if i > j:
        i, j = j, i
    return i * n - (i * (i + 1)) // 2 + (j - i - 1)


@njit(cache=True, nogil=True)
def edges_to_matrix(x, n, out):
    """Fill the symmetric matrix ``out`` (zero diagonal) from the edge vector."""
    e = 0
    for i in range(n):
        out[i, i] = 0.0
        for j in range(i + 1, n):
            out[i, j] = x[e]
            out[j, i] = x[e]
            e += 1


@njit(cache=True, nogil=True)
def matrix_to_edges(D):
    """Upper triangle of a square matrix as an edge vector."""
    n = D.shape[0]
    out = np.empty(n * (n - 1) // 2, dtype=np.float64)
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            out[e] = D[i, j]
            e += 1
    return out


# ---------------------------------------------------------------------------
# All-pairs shortest paths: blocked Floyd-Warshall with a next-hop matrix
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _minplus_row(src, dk, dik, dst):
    # dst[j] = min(src[j], dik + dk[j]) with dst a different buffer than src:
    # an unconditional store, so LLVM emits vector min instructions instead
    # of (slow, on AMD) masked stores.
    for j in range(src.shape[0]):
        t = dik + dk[j]
        d = src[j]
        dst[j] = t if t < d else d


@njit(cache=True, nogil=True)
def _fw_kouter(D, i0, i1, j0, j1, k0, k1, tmp):
    # Floyd-Warshall relaxations in the true FW order (k outermost); used for
    # blocks that depend on themselves (diagonal, row and column blocks).
    L = j1 - j0
    t = tmp[:L]
    for k in range(k0, k1):
        dk = D[k, j0:j1]
        for i in range(i0, i1):
            di = D[i, j0:j1]
            _minplus_row(di, dk, D[i, k], t)
            di[:] = t


@njit(cache=True, nogil=True)
def _fw_independent(D, i0, i1, j0, j1, k0, k1, tmp_a, tmp_b):
    # min-plus update of block (I, J) from final blocks (I, K) and (K, J):
    # independent of the order of k, so the cache-friendly i-k-j order is
    # used, ping-ponging between two row buffers.
    L = j1 - j0
    a = tmp_a[:L]
    b = tmp_b[:L]
    for i in range(i0, i1):
        a[:] = D[i, j0:j1]
        k = k0
        while k + 1 < k1:
            _minplus_row(a, D[k, j0:j1], D[i, k], b)
            _minplus_row(b, D[k + 1, j0:j1], D[i, k + 1], a)
            k += 2
        if k < k1:
            _minplus_row(a, D[k, j0:j1], D[i, k], b)
            a[:] = b
        D[i, j0:j1] = a


@njit(cache=True, nogil=True, parallel=True)
def apsp(D):
    """All-pairs shortest-path lengths in place (blocked Floyd-Warshall).

    Parameters
    ----------
    D : ndarray (n, n), float32 or float64
        Non-negative edge lengths on entry (``inf`` for a missing edge, 0 on
        the diagonal), shortest-path lengths on exit.

    The blocked order (Venkataraman, Sahni & Mukhopadhyaya 2003) keeps the
    working blocks in cache; the independent blocks of each round run in
    parallel (the result does not depend on the number of threads).  Paths
    are recovered afterwards by :func:`violated_paths` (only for the few
    edges that need them), which keeps this kernel a pure vectorised
    min-plus update.
    """
    n = D.shape[0]
    B = _BLOCK
    nb = (n + B - 1) // B
    for kb in range(nb):
        k0 = kb * B
        k1 = min(n, k0 + B)
        tmp = np.empty(B, dtype=D.dtype)
        _fw_kouter(D, k0, k1, k0, k1, k0, k1, tmp)
        # row and column blocks of round kb
        for t in prange(2 * nb):
            bb = t // 2
            if bb == kb:
                continue
            b0 = bb * B
            b1 = min(n, b0 + B)
            tmp2 = np.empty(B, dtype=D.dtype)
            if t % 2 == 0:
                _fw_kouter(D, k0, k1, b0, b1, k0, k1, tmp2)
            else:
                _fw_kouter(D, b0, b1, k0, k1, k0, k1, tmp2)
        # all other blocks
        for ib in prange(nb):
            if ib == kb:
                continue
            i0 = ib * B
            i1 = min(n, i0 + B)
            ta = np.empty(B, dtype=D.dtype)
            tb = np.empty(B, dtype=D.dtype)
            for jb in range(nb):
                if jb == kb:
                    continue
                j0 = jb * B
                j1 = min(n, j0 + B)
                _fw_independent(D, i0, i1, j0, j1, k0, k1, ta, tb)


@njit(cache=True, nogil=True, inline="always")
def _next_hop(X, D, a, v, skip, mark, stamp, eps):
    # A node b != a on a shortest a-v path: minimises X[a, b] + D[v, b]
    # (b == skip and nodes already on the path, mark[b] == stamp, excluded).
    # Among the (near-)minimisers, within the rounding ``eps``, one whose
    # direct edge to v is a shortest path wins (the path then ends at the
    # next hop), else the one closest to v, so that zero-length edges do not
    # send the walk sideways.  D is symmetric; its row v is read contiguously.
    n = X.shape[0]
    best = np.inf
    xa = X[a]
    dv = D[v]
    for b in range(n):
        if b == a or b == skip or mark[b] == stamp:
            continue
        t = xa[b] + dv[b]
        if t < best:
            best = t
    if best == np.inf:
        return -1
    limit = best + eps * abs(best)
    arg = -1
    bestd = np.inf
    xv = X[v]
    for b in range(n):
        if b == a or b == skip or mark[b] == stamp:
            continue
        if xa[b] + dv[b] <= limit:
            if xv[b] <= dv[b] + eps * dv[b]:
                # b's direct edge to v is a shortest path: the walk ends in
                # one more hop (the shortest such walk is preferred)
                return b
            if dv[b] < bestd:
                bestd = dv[b]
                arg = b
    return arg


@njit(cache=True, nogil=True)
def _walk(X, D, u, v, n, buf, first, mark, stamp, eps):
    # Shortest u-v path avoiding the direct edge, following the argmin of
    # X[a, b] + D[b, v] from the first hop ``first``, never revisiting a node
    # (zero-length edges would otherwise allow cycles); returns its length in
    # nodes after u (0 on failure) and writes the nodes to buf.
    mark[u] = stamp
    length = 0
    b = first
    rounded = np.empty(1, dtype=D.dtype)
    while length < n:
        if b < 0:
            return 0
        buf[length] = b
        length += 1
        if b == v:
            return length
        mark[b] = stamp
        a = b
        # the direct edge a-v is a shortest path (the usual last hop): no scan
        rounded[0] = max(X[a, v], 0.0)
        if rounded[0] <= D[v, a]:
            b = v
        else:
            b = _next_hop(X, D, a, v, -1, mark, stamp, eps)
    return 0


@njit(cache=True, nogil=True, parallel=True)
def _first_hops(X, D, n, threshold, edge_mask, hop1, rowmax, eps):
    # For every edge u < v violated by more than threshold (compared in D's
    # precision, so that an edge that is its own shortest path has violation
    # exactly 0), the first node of a shortest u-v path avoiding the edge;
    # -1 for the other edges.  The O(n) scans run in parallel over u.
    nomark = np.zeros(n, dtype=np.int64)  # read-only: no node excluded
    for u in prange(n):
        rounded = np.empty(1, dtype=D.dtype)
        base = u * n - (u * (u + 1)) // 2 - u - 1
        best = 0.0
        for v in range(u + 1, n):
            e = base + v
            hop1[e] = -1
            if edge_mask[e]:
                rounded[0] = max(X[u, v], 0.0)
                viol = rounded[0] - D[u, v]
                if viol > best:
                    best = viol
                if viol > threshold:
                    hop1[e] = _next_hop(X, D, u, v, v, nomark, -1, eps)
        rowmax[u] = best


def violated_paths(X, D, n, threshold, edge_mask):
    """Cycle constraints violated by more than ``threshold``.

    ``X`` holds the current edge lengths (float64, symmetric) and ``D`` the
    shortest-path lengths computed from them by :func:`apsp` (float32 or
    float64).  For every edge ``uv`` (``u < v``, ``edge_mask[e]`` true) with
    ``X[u, v] - D[u, v] > threshold`` (compared in ``D``'s precision) a
    shortest ``u``-``v`` path that does not use the edge itself is recovered
    hop by hop, and its exact (float64) violation ``X[u, v] - sum_P X``
    decides whether it is returned.

    Returns
    -------
    cons_edge : int64 (k,)
    ptr : int64 (k + 1,)
    path : int32 (ptr[-1],)  edge ids of the paths, from u to v
    max_violation : float  largest ``X[u, v] - D[u, v]`` over masked edges
    """
    m = n * (n - 1) // 2
    hop1 = np.empty(m, dtype=np.int32)
    rowmax = np.zeros(n, dtype=np.float64)
    eps = 8.0 * float(np.finfo(D.dtype).eps)
    _first_hops(X, D, n, threshold, edge_mask, hop1, rowmax, eps)
    maxv = float(rowmax.max()) if n > 0 else 0.0
    ce, ptr, path = _collect_paths(X, D, n, threshold, hop1, eps)
    return ce, ptr, path, maxv


@njit(cache=True, nogil=True)
def _collect_paths(X, D, n, threshold, hop1, eps):
    # serial part of violated_paths: walk from the first hops, keep paths
    # whose exact violation exceeds the threshold (CSR output, in edge order)
    cap = 1024
    cons_edge = np.empty(cap, dtype=np.int64)
    ptr = np.zeros(cap + 1, dtype=np.int64)
    pcap = 4096
    path = np.empty(pcap, dtype=np.int32)
    buf = np.empty(n + 1, dtype=np.int64)
    mark = np.zeros(n, dtype=np.int64)
    c = 0
    p = 0
    e = 0
    for u in range(n):
        for v in range(u + 1, n):
            if hop1[e] >= 0:
                if True:
                    length = _walk(X, D, u, v, n, buf, hop1[e], mark, e + 1, eps)
                    if length > 0:
                        s = X[u, v]
                        a = u
                        for q in range(length):
                            s -= X[a, buf[q]]
                            a = buf[q]
                        if s > threshold:
                            if c == cap:
                                cap *= 2
                                ce2 = np.empty(cap, dtype=np.int64)
                                ce2[:c] = cons_edge[:c]
                                cons_edge = ce2
                                pt2 = np.zeros(cap + 1, dtype=np.int64)
                                pt2[:c + 1] = ptr[:c + 1]
                                ptr = pt2
                            while p + length > pcap:
                                pcap *= 2
                                pa2 = np.empty(pcap, dtype=np.int32)
                                pa2[:p] = path[:p]
                                path = pa2
                            a = u
                            for q in range(length):
                                path[p] = edge_id(a, buf[q], n)
                                p += 1
                                a = buf[q]
                            cons_edge[c] = e
                            c += 1
                            ptr[c] = p
            e += 1
    return cons_edge[:c].copy(), ptr[:c + 1].copy(), path[:p].copy()


# ---------------------------------------------------------------------------
# Hildreth projections (squared / weighted squared L2)
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def project_paths_l2(x, winv, cons_edge, ptr, path, z, start, stop):
    """One Hildreth pass over cycle constraints ``start <= c < stop``.

    Weighted squared L2 (``f(x) = 1/2 sum_e w_e x_e^2``): the projection of
    ``x`` onto ``x_e - sum_P x_f <= 0`` moves ``x_e`` by ``-delta / w_e`` and
    every path edge by ``+delta / w_f``, with Hildreth's correction
    (:func:`metric_estimators._kernels.bregman.hildreth_correction`)
    ``delta = max(theta, -z_c)``, ``theta = (x_e - sum_P x_f) /
    (1/w_e + sum_P 1/w_f)``; the dual becomes ``z_c + delta >= 0``.

    Returns
    -------
    residual : float
        Largest complementary-slackness residual met during the pass:
        ``|x_e - sum_P x_f|`` for constraints with a positive dual, the
        violation ``max(0, x_e - sum_P x_f)`` for the others.
    """
    resid = 0.0
    for c in range(start, stop):
        e = cons_edge[c]
        s = x[e]
        den = winv[e]
        for p in range(ptr[c], ptr[c + 1]):
            f = path[p]
            s -= x[f]
            den += winv[f]
        zc = z[c]
        r = abs(s) if zc > 0.0 else max(s, 0.0)
        if r > resid:
            resid = r
        # Hildreth: step c = min(z, -theta) towards the half-space's
        # interior, i.e. the primal moves by delta = -c along -W^-1 a
        step, z[c] = hildreth_correction(zc, -s / den)
        delta = -step
        if delta != 0.0:
            x[e] -= delta * winv[e]
            for p in range(ptr[c], ptr[c + 1]):
                f = path[p]
                x[f] += delta * winv[f]
    return resid


@njit(cache=True, nogil=True)
def project_triangles_unit(x, winv, cons_edge, path, z, start, stop):
    """:func:`project_paths_l2` for triangles under a uniform weight.

    Every constraint is ``x_e - x_f - x_g <= 0`` with ``f = path[2c]``,
    ``g = path[2c + 1]``, and every variable has the same inverse weight
    ``winv``: the projection moves the three entries by the same amount and
    needs no weight loads and no division -- three times fewer random memory
    accesses per constraint than the general kernel, and the same iterates
    (up to rounding).
    """
    resid = 0.0
    third = 1.0 / (3.0 * winv)
    for c in range(start, stop):
        e = cons_edge[c]
        f = path[2 * c]
        g = path[2 * c + 1]
        s = x[e] - x[f] - x[g]
        zc = z[c]
        r = abs(s) if zc > 0.0 else max(s, 0.0)
        if r > resid:
            resid = r
        step, z[c] = hildreth_correction(zc, -s * third)
        d = step * winv
        x[e] += d
        x[f] -= d
        x[g] -= d
    return resid


@njit(cache=True, nogil=True)
def project_paths_kl(x, cons_edge, ptr, path, z, start, stop):
    """One Hildreth-Bregman pass for the KL divergence over cycle constraints.

    ``f(x) = sum_e x_e log x_e - x_e`` (so ``D_f(x, d)`` is the generalised
    Kullback-Leibler divergence ``sum x log(x / d) - x + d``, ``x > 0``).
    The Bregman projection of ``x`` onto ``x_e - S <= 0``, ``S = sum_P x_f``,
    moves ``log x`` along the constraint normal: ``x_e <- x_e exp(c)``,
    ``x_f <- x_f exp(-c)``; it is tight for ``c = theta = log(S / x_e) / 2``
    (closed form because every coefficient is +-1).  With the dual ``z_c``
    the step is Hildreth's ``c = min(z_c, theta)`` and ``z_c <- z_c - c``
    (Bregman 1967; Censor & Zenios, *Parallel Optimization*, 1997, ch. 6).
    Iterates stay positive.

    Returns the complementary-slackness residual as :func:`project_paths_l2`
    (in the units of ``x``).
    """
    resid = 0.0
    for c in range(start, stop):
        e = cons_edge[c]
        xe = x[e]
        S = 0.0
        for p in range(ptr[c], ptr[c + 1]):
            S += x[path[p]]
        sres = xe - S
        zc = z[c]
        r = abs(sres) if zc > 0.0 else max(sres, 0.0)
        if r > resid:
            resid = r
        theta = 0.5 * np.log(S / xe)
        step, z[c] = hildreth_correction(zc, theta)
        if step != 0.0:
            x[e] = xe * np.exp(step)
            q = np.exp(-step)
            for p in range(ptr[c], ptr[c + 1]):
                f = path[p]
                x[f] *= q
    return resid


@njit(cache=True, nogil=True)
def project_pairs_cc(x, f, d, w, pair_edge, zA, zB):
    """Hildreth pass over the pair constraints of the correlation-clustering LP.

    For each weighted pair ``k`` (edge ``e = pair_edge[k]``, target ``d_k`` in
    {0, 1}, weight ``w_k > 0``): ``x_e - f_k <= d_k`` and ``-x_e - f_k <= -d_k``
    (so ``f_k >= |x_e - d_k|``), with metric ``x`` of weight 1 and ``f`` of
    weight ``w_k`` in the regulariser (Veldt et al. 2019).

    Returns the largest complementary-slackness residual (as
    :func:`project_paths_l2`).
    """
    resid = 0.0
    for k in range(pair_edge.shape[0]):
        e = pair_edge[k]
        wi = 1.0 / w[k]
        den = 1.0 + wi
        # x_e - f_k <= d_k
        s = x[e] - f[k] - d[k]
        zc = zA[k]
        r = abs(s) if zc > 0.0 else max(s, 0.0)
        if r > resid:
            resid = r
        step, zA[k] = hildreth_correction(zc, -s / den)
        delta = -step
        x[e] -= delta
        f[k] += delta * wi
        # -x_e - f_k <= -d_k
        s = d[k] - x[e] - f[k]
        zc = zB[k]
        r = abs(s) if zc > 0.0 else max(s, 0.0)
        if r > resid:
            resid = r
        step, zB[k] = hildreth_correction(zc, -s / den)
        delta = -step
        x[e] += delta
        f[k] += delta * wi
    return resid


# ---------------------------------------------------------------------------
# Active-set bookkeeping: de-duplication by hashing, forgetting
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def constraint_hashes(cons_edge, ptr, path):
    """64-bit hash of each constraint (its edge and ordered path); never 0."""
    k = cons_edge.shape[0]
    out = np.empty(k, dtype=np.uint64)
    for c in range(k):
        h = np.uint64(cons_edge[c]) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
        for p in range(ptr[c], ptr[c + 1]):
            h ^= np.uint64(path[p]) + np.uint64(0x632BE59BD9B4E019)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(29)
        if h == np.uint64(0):
            h = np.uint64(1)
        out[c] = h
    return out


@njit(cache=True, nogil=True)
def build_hash_table(hashes):
    """Open-addressing table (power-of-two size >= 2 len) holding ``hashes``."""
    size = 16
    while size < 2 * hashes.shape[0] + 1:
        size *= 2
    table = np.zeros(size, dtype=np.uint64)
    mask = np.uint64(size - 1)
    for c in range(hashes.shape[0]):
        h = hashes[c]
        slot = h & mask
        while table[slot] != np.uint64(0) and table[slot] != h:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = h
    return table


@njit(cache=True, nogil=True)
def filter_new(table, hashes):
    """Boolean mask of the ``hashes`` not in ``table`` (first occurrence only)."""
    size = table.shape[0]
    mask = np.uint64(size - 1)
    keep = np.zeros(hashes.shape[0], dtype=np.bool_)
    for c in range(hashes.shape[0]):
        h = hashes[c]
        slot = h & mask
        found = False
        while table[slot] != np.uint64(0):
            if table[slot] == h:
                found = True
                break
            slot = (slot + np.uint64(1)) & mask
        keep[c] = not found
    # duplicates within the new batch itself
    seen = build_hash_table(hashes[keep])
    # (a new batch rarely holds duplicates: one path per edge)
    ssize = seen.shape[0]
    smask = np.uint64(ssize - 1)
    used = np.zeros(ssize, dtype=np.bool_)
    for c in range(hashes.shape[0]):
        if not keep[c]:
            continue
        h = hashes[c]
        slot = h & smask
        while seen[slot] != h:
            slot = (slot + np.uint64(1)) & smask
        if used[slot]:
            keep[c] = False
        else:
            used[slot] = True
    return keep


@njit(cache=True, nogil=True)
def compact_constraints(cons_edge, ptr, path, z, hashes, keep):
    """Keep the constraints with ``keep[c]`` (the forget step), in order."""
    k = 0
    plen = 0
    for c in range(cons_edge.shape[0]):
        if keep[c]:
            k += 1
            plen += ptr[c + 1] - ptr[c]
    ce = np.empty(k, dtype=np.int64)
    pt = np.empty(k + 1, dtype=np.int64)
    pa = np.empty(plen, dtype=np.int32)
    zz = np.empty(k, dtype=np.float64)
    hh = np.empty(k, dtype=np.uint64)
    pt[0] = 0
    q = 0
    p = 0
    for c in range(cons_edge.shape[0]):
        if keep[c]:
            ce[q] = cons_edge[c]
            zz[q] = z[c]
            hh[q] = hashes[c]
            for r in range(ptr[c], ptr[c + 1]):
                pa[p] = path[r]
                p += 1
            q += 1
            pt[q] = p
    return ce, pt, pa, zz, hh


# ---------------------------------------------------------------------------
# Triangle oracle: min-plus square X (x) X, then one argmin scan per violated
# edge (paths of two edges only)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Triangle oracle: min-plus square with argmin, upper triangle only
# ---------------------------------------------------------------------------

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


@njit(cache=True, nogil=True, parallel=True)
def _triangle_hops(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax):
    # hop[e] = the apex w of the most violated triangle of edge e = uv, or -1;
    # the violation is recomputed in float64 from X (M and W may come from a
    # float32 min-plus square).  Rows are dealt out cyclically over the
    # threads (row u has n - u - 1 edges).
    nt = 64
    for t in prange(nt):
        for u in range(t, n, nt):
            base = u * n - (u * (u + 1)) // 2 - u - 1
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
    int32.  Returns ``(cons_edge, ptr,
    path, max_violation)`` as :func:`violated_paths`, with paths of two
    edges; the violations are exact float64 ones of the returned triangles.
    """
    m = n * (n - 1) // 2
    triangle_argmin(Xp, M, W)
    hop = np.empty(m, dtype=np.int32)
    rowmax = np.zeros(n)
    _triangle_hops(X, M, W, mscale, n, threshold, edge_mask, hop, rowmax)
    ce, ptr, path = _collect_triangles(n, hop)
    return ce, ptr, path, float(rowmax.max()) if n else 0.0
