"""numba kernels for shortest-path oracles (Project and Forget).

* Dense graphs: all-pairs shortest paths by a blocked Floyd-Warshall
  (:func:`apsp`), then one shortest path recovered hop by hop for every
  violated edge (:func:`violated_paths`).
* Sparse graphs: the violated cycle constraints read off Dijkstra's
  predecessor trees (:func:`paths_from_predecessors`).

Both return cycle constraints in the CSR form of
:mod:`metric_estimators._kernels.edges`.
"""

import numpy as np
from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import APSP_PARALLEL_MIN_NODES
from .edges import csr_edge_lookup, edge_id, edge_row_offset

__all__ = ["PARALLEL_MIN_NODES", "apsp", "apsp_parallel", "apsp_serial",
           "paths_from_predecessors", "violated_paths"]

_BLOCK = 128

#: From this many nodes on, the parallel kernels run; below, their serial
#: counterparts (same results; the size lives in :mod:`._constants`).
PARALLEL_MIN_NODES = APSP_PARALLEL_MIN_NODES


# ---------------------------------------------------------------------------
# Dense graphs: blocked Floyd-Warshall, then paths recovered hop by hop
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


@njit(cache=True, nogil=True)
def _apsp_edge_block(D, kb, t, nb):
    # task t of round kb's row and column blocks (t // 2: the block, t % 2:
    # row or column); independent of the other tasks of the round
    B = _BLOCK
    n = D.shape[0]
    bb = t // 2
    if bb == kb:
        return
    k0 = kb * B
    k1 = min(n, k0 + B)
    b0 = bb * B
    b1 = min(n, b0 + B)
    tmp = np.empty(B, dtype=D.dtype)
    if t % 2 == 0:
        _fw_kouter(D, k0, k1, b0, b1, k0, k1, tmp)
    else:
        _fw_kouter(D, b0, b1, k0, k1, k0, k1, tmp)


@njit(cache=True, nogil=True)
def _apsp_block_row(D, kb, ib, nb):
    # the blocks (ib, jb), jb != kb, of round kb (ib != kb); independent of
    # the other block rows of the round
    B = _BLOCK
    n = D.shape[0]
    if ib == kb:
        return
    k0 = kb * B
    k1 = min(n, k0 + B)
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


@njit(cache=True, nogil=True)
def _apsp_diagonal(D, kb):
    B = _BLOCK
    k0 = kb * B
    k1 = min(D.shape[0], k0 + B)
    tmp = np.empty(B, dtype=D.dtype)
    _fw_kouter(D, k0, k1, k0, k1, k0, k1, tmp)


@njit(cache=True, nogil=True, parallel=True)
def apsp_parallel(D):
    """:func:`apsp` with the independent blocks of each round in parallel."""
    n = D.shape[0]
    nb = (n + _BLOCK - 1) // _BLOCK
    for kb in range(nb):
        _apsp_diagonal(D, kb)
        for t in prange(2 * nb):
            _apsp_edge_block(D, kb, t, nb)
        for ib in prange(nb):
            _apsp_block_row(D, kb, ib, nb)


@njit(cache=True, nogil=True)
def apsp_serial(D):
    """:func:`apsp` in one thread (the same result; compiles much faster)."""
    n = D.shape[0]
    nb = (n + _BLOCK - 1) // _BLOCK
    for kb in range(nb):
        _apsp_diagonal(D, kb)
        for t in range(2 * nb):
            _apsp_edge_block(D, kb, t, nb)
        for ib in range(nb):
            _apsp_block_row(D, kb, ib, nb)


def apsp(D):
    """All-pairs shortest-path lengths in place (blocked Floyd-Warshall).

    Parameters
    ----------
    D : ndarray (n, n), float32 or float64
        Non-negative edge lengths on entry (``inf`` for a missing edge, 0 on
        the diagonal), shortest-path lengths on exit.

    The blocked order (Venkataraman, Sahni & Mukhopadhyaya 2003) keeps the
    working blocks in cache; the independent blocks of each round run in
    parallel from :data:`PARALLEL_MIN_NODES` nodes on (the result does not
    depend on the number of threads, nor on the cutoff).  Paths
    are recovered afterwards by :func:`violated_paths` (only for the few
    edges that need them), which keeps this kernel a pure vectorised
    min-plus update.
    """
    if D.shape[0] < PARALLEL_MIN_NODES:
        apsp_serial(D)
    else:
        apsp_parallel(D)


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


@njit(cache=True, nogil=True)
def _first_hop_row(X, D, n, threshold, edge_mask, hop1, rowmax, eps, u, nomark):
    # For every edge u < v of row u violated by more than threshold (compared
    # in D's precision, so that an edge that is its own shortest path has
    # violation exactly 0), the first node of a shortest u-v path avoiding
    # the edge; -1 for the other edges.
    rounded = np.empty(1, dtype=D.dtype)
    base = edge_row_offset(u, n)
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


@njit(cache=True, nogil=True, parallel=True)
def _first_hops_parallel(X, D, n, threshold, edge_mask, hop1, rowmax, eps):
    # _first_hop_row for every row; the O(n) scans run in parallel over u
    nomark = np.zeros(n, dtype=np.int64)  # read-only: no node excluded
    for u in prange(n):
        _first_hop_row(X, D, n, threshold, edge_mask, hop1, rowmax, eps, u, nomark)


@njit(cache=True, nogil=True)
def _first_hops_serial(X, D, n, threshold, edge_mask, hop1, rowmax, eps):
    nomark = np.zeros(n, dtype=np.int64)
    for u in range(n):
        _first_hop_row(X, D, n, threshold, edge_mask, hop1, rowmax, eps, u, nomark)


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
    first_hops = _first_hops_serial if n < PARALLEL_MIN_NODES else _first_hops_parallel
    first_hops(X, D, n, threshold, edge_mask, hop1, rowmax, eps)
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
                            # element loops, not slice copies (see the
                            # package docstring of _kernels)
                            for q in range(c):
                                ce2[q] = cons_edge[q]
                            cons_edge = ce2
                            pt2 = np.zeros(cap + 1, dtype=np.int64)
                            for q in range(c + 1):
                                pt2[q] = ptr[q]
                            ptr = pt2
                        while p + length > pcap:
                            pcap *= 2
                            pa2 = np.empty(pcap, dtype=np.int32)
                            for q in range(p):
                                pa2[q] = path[q]
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
# Sparse graphs: paths from Dijkstra's predecessor trees
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _tree_path_length(pred_u, u, v, n):
    # number of edges of the tree path from v back to u (pred_u: the
    # predecessor row of source u), or -1 if v is not reached from u
    a = v
    length = 0
    while a != u and a >= 0 and length <= n:
        a = pred_u[a]
        length += 1
    return length if a == u else -1


@njit(cache=True, nogil=True)
def paths_from_predecessors(x, rows, cols, src, dist, pred, indptr, indices,
                            eid, threshold):
    """Violated cycle constraints for the edges whose first node is a source.

    ``dist[s, v]`` and ``pred[s, v]`` are Dijkstra's output for the sources
    ``src`` (consecutive node numbers).  For each edge ``e = (u, v)`` with
    ``u`` among the sources and ``x_e - dist(u, v) > threshold``, the path
    from the predecessor tree gives the constraint.

    Returns ``(cons_edge, ptr, path, max_violation)`` as
    :func:`violated_paths`.
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
            length = _tree_path_length(pred[u - s0], u, v, n)
            if length >= 0:
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
            if _tree_path_length(pred[u - s0], u, v, n) < 0:
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
