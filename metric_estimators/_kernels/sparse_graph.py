"""numba kernels on sparse graphs: bounded shortest-path searches and the ball pivot.

The graph is a symmetric CSR pattern ``(indptr, indices, eid)`` (``eid[k]``
the edge id of stored entry ``k``) over the edges ``rows[e] < cols[e]``, as in
:mod:`metric_estimators._kernels.edges`; edge ``e`` has length ``x[e]``.

* :func:`bounded_violated_cycles` -- the shortest-path oracle of Project and
  Forget (Sonthalia & Gilbert, JMLR 2022) for the cycle inequalities
  ``x_uv <= sum_{f in P} x_f``: one Dijkstra per source ``u`` that stops
  once the targets ``v > u`` that could be violated are settled, or at the
  radius ``x_uv - threshold`` of those left (a violated inequality of ``uv``
  has a path shorter than that), so a call visits only balls of the LP
  metric, with ``O(n + m)`` memory.
* :func:`graph_closure` -- the same searches at threshold 0, writing
  ``min(x_e, dist(u, v))``: the shortest-path closure restricted to the
  edges (a point satisfying every cycle inequality).
* :func:`ball_pivot` -- LP-KwikCluster (Ailon, Charikar & Newman, J. ACM
  2008) on the shortest-path completion of ``x``: the pivot's ball.

The local moves and the clustering cost on sparse signed graphs are in
:mod:`metric_estimators._kernels.correlation_clustering`.
"""

import numpy as np
from numba import njit

__all__ = ["ball_pivot", "bounded_violated_cycles", "graph_closure"]


@njit(cache=True, nogil=True, inline="always")
def _less(hd, hh, hv, i, j):
    # heap order: distance, then hops, then node number
    if hd[i] != hd[j]:
        return hd[i] < hd[j]
    if hh[i] != hh[j]:
        return hh[i] < hh[j]
    return hv[i] < hv[j]


@njit(cache=True, nogil=True, inline="always")
def _swap(hd, hh, hv, i, j):
    hd[i], hd[j] = hd[j], hd[i]
    hh[i], hh[j] = hh[j], hh[i]
    hv[i], hv[j] = hv[j], hv[i]


@njit(cache=True, nogil=True, inline="always")
def _push(hd, hh, hv, size, d, h, v):
    i = size
    hd[i] = d
    hh[i] = h
    hv[i] = v
    while i > 0:
        p = (i - 1) >> 1
        if not _less(hd, hh, hv, i, p):
            break
        _swap(hd, hh, hv, i, p)
        i = p
    return size + 1


@njit(cache=True, nogil=True, inline="always")
def _pop(hd, hh, hv, size):
    # removes the top (read it before); returns the new size
    size -= 1
    hd[0] = hd[size]
    hh[0] = hh[size]
    hv[0] = hv[size]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        c = a
        if a + 1 < size and _less(hd, hh, hv, a + 1, a):
            c = a + 1
        if not _less(hd, hh, hv, c, i):
            break
        _swap(hd, hh, hv, c, i)
        i = c
    return size


@njit(cache=True, nogil=True)
def _search(s, x, threshold, ball, length, indptr, indices, eid, dist, pred,
            touched, heap, done, cap):
    """Dijkstra from ``s``: over a ball, or until the targets that could be violated are settled.

    One kernel serves both uses, so that one specialisation compiles (the
    callers pass ``cap`` as ``np.int64``, never a literal, for the same
    reason):

    * ``ball > 0``: the search covers the nodes at distance ``< ball``
      (``x`` and ``threshold`` unused).
    * ``ball <= 0``: the targets are the neighbours ``v > s``; target ``v``
      needs a search only to the radius ``x_sv - threshold`` (a path at
      least that long violates nothing beyond ``threshold``).  The search
      stops when every target with a positive radius is settled, or at the
      largest radius of the targets not yet settled (shrinking as they
      settle).

    ``dist`` must be ``inf`` everywhere on entry; the nodes reached are
    listed in ``touched[:count]`` (reset them afterwards), ``pred[v]`` the
    stored entry through which ``v`` was reached (``-1`` for ``s``), and
    ``done[v] == s + 1`` marks the settled nodes.  Lexicographic: among
    shortest paths, one with the fewest edges (zero lengths are common in
    correlation clustering, and short cycles are deeper cuts and cheaper
    projections); remaining ties by node number (deterministic).  With
    ``cap > 0`` the search stops after settling ``cap`` nodes.  Returns
    ``(count, front)``: every node not settled is at distance ``>= front``
    (the distances of the settled nodes are exact).
    """
    hd, hh, hv, hops = heap
    stamp = s + 1
    targets = not ball > 0.0
    remaining = 0
    radius = ball
    if targets:
        radius = 0.0
        for k in range(indptr[s], indptr[s + 1]):
            if indices[k] > s:
                r = x[eid[k]] - threshold
                if r > 0.0:
                    remaining += 1
                    if r > radius:
                        radius = r
        if remaining == 0:
            return 0, 0.0
    dist[s] = 0.0
    pred[s] = -1
    hops[s] = 0
    touched[0] = s
    count = 1
    settled = 0
    size = _push(hd, hh, hv, 0, 0.0, 0, s)
    while size > 0:
        d = hd[0]
        h = hh[0]
        u = hv[0]
        if done[u] == stamp or d > dist[u] or (d == dist[u] and h > hops[u]):
            size = _pop(hd, hh, hv, size)
            continue
        if cap > 0 and settled >= cap:
            return count, d
        size = _pop(hd, hh, hv, size)
        settled += 1
        done[u] = stamp
        if targets and u > s:
            # a target of s? (its edge is among s's entries)
            hit = False
            top = False
            for k in range(indptr[s], indptr[s + 1]):
                if indices[k] == u:
                    r = x[eid[k]] - threshold
                    if r > 0.0:
                        hit = True
                        top = r >= radius
                    break
            if hit:
                remaining -= 1
                if remaining == 0:
                    return count, d
                if top:
                    radius = 0.0
                    for k in range(indptr[s], indptr[s + 1]):
                        v = indices[k]
                        if v > s and done[v] != stamp:
                            r = x[eid[k]] - threshold
                            if r > radius:
                                radius = r
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            nd = d + length[eid[k]]
            if nd >= radius:
                continue
            if nd < dist[v] or (nd == dist[v] and h + 1 < hops[v]):
                if dist[v] == np.inf:
                    touched[count] = v
                    count += 1
                dist[v] = nd
                hops[v] = h + 1
                pred[v] = k
                size = _push(hd, hh, hv, size, nd, h + 1, v)
    return count, radius


@njit(cache=True, nogil=True)
def _heap(n, nnz):
    """Buffers of a lazy-deletion heap for one search at a time (and hop counts)."""
    cap = nnz + 2
    return (np.empty(cap), np.empty(cap, dtype=np.int64),
            np.empty(cap, dtype=np.int64), np.zeros(n, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def _source_of(k, indptr):
    # the row of stored entry k (binary search in indptr)
    lo = 0
    hi = indptr.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if indptr[mid] <= k:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def bounded_violated_cycles(x, indptr, indices, eid, s0, s1, threshold,
                            cap=0):
    """Violated cycle inequalities of the edges ``(u, v)``, ``s0 <= u < v``.

    For each source ``u`` in ``[s0, s1)``, a Dijkstra on the lengths
    ``max(x, 0)`` that stops once every target ``v > u`` with ``x_uv >
    threshold`` is settled, or at the radius ``x_uv - threshold`` of the
    targets not yet settled (:func:`_search`); an edge ``uv`` with
    ``x_uv - dist(u, v) > threshold`` gives the constraint ``x_uv <= sum_P
    x_f`` for the shortest path ``P``.  Returns ``(cons_edge, ptr, path,
    max_violation)`` (CSR constraints, and the largest ``x_uv - dist(u,
    v)`` over every edge of the sources, at least 0: exact when it exceeds
    ``threshold``, else an upper bound at most ``threshold``), in source
    order.

    With ``cap > 0`` each search settles at most ``cap`` nodes: a target
    reached but not settled gives the constraint of its tentative path if
    that is violated beyond ``threshold`` (a valid, maybe not the deepest,
    cut), and ``max_violation`` is then an upper bound (``x_uv`` minus the
    search's frontier for an unsettled target), never an underestimate.
    """
    n = indptr.shape[0] - 1
    m = x.shape[0]
    length = np.empty(m)
    for e in range(m):
        length[e] = x[e] if x[e] > 0.0 else 0.0
    dist = np.full(n, np.inf)
    pred = np.empty(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    heap = _heap(n, indptr[n])
    done = np.zeros(n, dtype=np.int64)
    ce = np.empty(16, dtype=np.int64)
    ptr = np.zeros(17, dtype=np.int64)
    path = np.empty(64, dtype=np.int32)
    nc = 0
    npth = 0
    maxv = 0.0
    for s in range(s0, s1):
        count, front = _search(s, x, threshold, 0.0, length, indptr,
                               indices, eid, dist, pred, touched, heap, done,
                               cap)
        for k in range(indptr[s], indptr[s + 1]):
            v = indices[k]
            if v <= s:
                continue
            e = eid[k]
            viol = x[e] - dist[v]
            # a target not settled is at distance >= front
            bound = viol if done[v] == s + 1 else x[e] - front
            if bound > maxv:
                maxv = bound
            if viol > threshold:
                # walk the predecessor entries back from v to s
                if nc == ce.shape[0]:
                    ce2 = np.empty(2 * nc, dtype=np.int64)
                    for z in range(nc):  # element loops: see _kernels' docstring
                        ce2[z] = ce[z]
                    ce = ce2
                    p2 = np.zeros(2 * nc + 1, dtype=np.int64)
                    for z in range(nc + 1):
                        p2[z] = ptr[z]
                    ptr = p2
                a = v
                while a != s:
                    kk = pred[a]
                    if npth == path.shape[0]:
                        q = np.empty(2 * npth, dtype=np.int32)
                        for z in range(npth):
                            q[z] = path[z]
                        path = q
                    path[npth] = eid[kk]
                    npth += 1
                    a = _source_of(kk, indptr)
                ce[nc] = e
                nc += 1
                ptr[nc] = npth
        for i in range(count):
            dist[touched[i]] = np.inf
    return ce[:nc].copy(), ptr[:nc + 1].copy(), path[:npth].copy(), maxv


@njit(cache=True, nogil=True)
def graph_closure(x, indptr, indices, eid, s0, s1, y):
    """``y_e = min(x_e, dist(u, v))`` for the edges ``(u, v)``, ``s0 <= u < v``.

    ``x`` must be ``>= 0`` (the lengths; ``dist`` is the shortest-path
    distance with them) and ``y`` hold ``x`` on entry; only the entries of
    the edges owned by the sources ``[s0, s1)`` are written, so blocks of
    sources can run in parallel on one ``y``.  Each search is that of the
    oracle at threshold 0 (:func:`_search`): it stops once the
    targets ``v > u`` with ``x_uv > 0`` are settled or out of reach.  Over
    all the sources, ``y`` satisfies every cycle inequality of the graph
    (``y_e`` is the shortest-path distance between the ends of ``e`` in the
    graph with lengths ``y``), and ``y = x`` where none is violated.
    """
    n = indptr.shape[0] - 1
    dist = np.full(n, np.inf)
    pred = np.empty(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    heap = _heap(n, indptr[n])
    done = np.zeros(n, dtype=np.int64)
    for s in range(s0, s1):
        count, _ = _search(s, x, 0.0, 0.0, x, indptr, indices, eid, dist,
                           pred, touched, heap, done, np.int64(0))
        for k in range(indptr[s], indptr[s + 1]):
            v = indices[k]
            if v > s and done[v] == s + 1 and dist[v] < y[eid[k]]:
                y[eid[k]] = dist[v]
        for i in range(count):
            dist[touched[i]] = np.inf


@njit(cache=True, nogil=True)
def ball_pivot(x, indptr, indices, eid, order, probabilistic, seed):
    """LP-KwikCluster on the shortest-path completion of ``clip(x, 0, 1)``.

    Pivots in ``order``; an unclustered node ``j`` joins pivot ``p`` when
    ``dist(p, j) < 1/2`` (threshold) or with probability ``1 - dist(p,
    j)`` (``probabilistic``, numba's generator seeded by ``seed``), ``dist``
    the shortest-path distance in the graph with lengths ``clip(x, 0, 1)``
    -- exactly the dense rounding of the completed metric.  Each pivot
    searches only its ball (radius 1/2, or 1).  Returns the labels, cluster
    ids ``0, 1, ...`` in pivot order.
    """
    n = indptr.shape[0] - 1
    m = x.shape[0]
    length = np.empty(m)
    for e in range(m):
        length[e] = min(max(x[e], 0.0), 1.0)
    if probabilistic:
        np.random.seed(seed)
    radius = 1.0 if probabilistic else 0.5
    labels = np.full(n, -1, dtype=np.int64)
    dist = np.full(n, np.inf)
    pred = np.empty(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    heap = _heap(n, indptr[n])
    done = np.zeros(n, dtype=np.int64)
    k = 0
    for p in order:
        if labels[p] >= 0:
            continue
        count, _ = _search(p, length, 0.0, radius, length, indptr, indices,
                           eid, dist, pred, touched, heap, done, np.int64(0))
        labels[p] = k
        for i in range(1, count):
            j = touched[i]
            if labels[j] < 0:
                if probabilistic:
                    if np.random.random() < 1.0 - dist[j]:
                        labels[j] = k
                else:
                    labels[j] = k
        for i in range(count):
            dist[touched[i]] = np.inf
        k += 1
    return labels
