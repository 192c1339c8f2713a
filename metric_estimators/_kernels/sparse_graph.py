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
* :func:`component_violated_cycles` -- the same inequalities from one
  multi-source search per component of the short edges (length ``<= eps``),
  paths inside a component along a BFS spanning forest
  (:func:`short_edge_forest`): the searches leave the components, which
  the per-source balls capped at a few hundred nodes barely do.
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

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

__all__ = ["ball_pivot", "bounded_violated_cycles", "component_violated_cycles",
           "graph_closure", "short_edge_forest"]


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


@njit(cache=True, nogil=True, inline="always")
def _stale(u, d, h, dist, hops, done, stamp):
    # a heap entry superseded by a shorter (or fewer-edge) path, or settled
    return done[u] == stamp or d > dist[u] or (d == dist[u] and h > hops[u])


@njit(cache=True, nogil=True, inline="always")
def _relax(u, d, h, radius, length, indptr, indices, eid, dist, hops, pred,
           touched, count, hd, hh, hv, size):
    """Relax the edges of the settled node ``u`` (at ``(d, h)``) below ``radius``.

    The one relaxation step of every search here: lexicographic on
    (distance, edges), ``pred[v]`` the stored entry through which ``v`` is
    reached, first reaches listed in ``touched``.  Returns ``(count,
    size)``.
    """
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
    return count, size


@njit(cache=True, nogil=True)
def _buffers(n, nnz):
    """The arrays of one search at a time (every search of a kernel call reuses them).

    ``(dist, hops, pred, touched, done, need, tlist, hd, hh, hv)``: ``dist``
    ``inf`` and ``need`` 0 everywhere between searches (each caller resets
    the entries it used), the heap's distance, hops and node columns large
    enough for every push of a multi-source search (at most one per source
    and one per relaxation of a stored entry).
    """
    hcap = n + nnz + 2
    return (np.full(n, np.inf), np.zeros(n, dtype=np.int64),
            np.full(n, -1, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.zeros(n),
            np.empty(n, dtype=np.int64), np.empty(hcap),
            np.empty(hcap, dtype=np.int64), np.empty(hcap, dtype=np.int64))


@njit(cache=True, nogil=True)
def _sort_targets(tlist, nt, need):
    """Order ``tlist[:nt]`` by decreasing ``need`` (stable)."""
    if nt <= 16:
        for i in range(1, nt):
            v = tlist[i]
            j = i
            while j > 0 and need[tlist[j - 1]] < need[v]:
                tlist[j] = tlist[j - 1]
                j -= 1
            tlist[j] = v
    else:
        srt = tlist[:nt][np.argsort(-need[tlist[:nt]], kind="mergesort")]
        tlist[:nt] = srt


@njit(cache=True, nogil=True)
def _dijkstra(sources, nt, radius, limit, stamp, length, indptr, indices,
              eid, buf):
    """Dijkstra from every node of ``sources`` at distance 0; the one search of this module.

    Lexicographic on (distance, edges): among shortest paths, one with the
    fewest edges (zero lengths are common in correlation clustering, and
    short cycles are deeper cuts and cheaper projections); remaining ties
    by node number (deterministic).  ``buf`` is :func:`_buffers`'; on
    return ``touched[:count]`` lists the nodes reached (reset their
    ``dist`` to ``inf`` afterwards), ``pred[v]`` is the stored entry
    through which ``v`` was reached (``-1`` for a source) and ``done[v] ==
    stamp`` marks the settled nodes, whose distances are exact.

    * ``nt > 0`` *targets* ``tlist[:nt]``, with radii ``need[v] > 0``: only
      paths shorter than the largest radius of the targets not yet settled
      are followed (it shrinks as they settle), and the search stops once
      every target is settled.
    * ``nt == 0``: a ball, the nodes at distance ``< radius``.
    * ``limit > 0``: the search stops after settling ``limit`` nodes.

    Returns ``(count, front)``: every node not settled is at distance
    ``>= front``.
    """
    dist, hops, pred, touched, done, need, tlist, hd, hh, hv = buf
    if nt > 1:
        _sort_targets(tlist, nt, need)
    count = 0
    size = 0
    for i in range(sources.shape[0]):
        s = sources[i]
        dist[s] = 0.0
        hops[s] = 0
        pred[s] = -1
        touched[count] = s
        count += 1
        size = _push(hd, hh, hv, size, 0.0, 0, s)
    remaining = nt
    top = 0
    settled = 0
    while size > 0:
        d = hd[0]
        h = hh[0]
        u = hv[0]
        if _stale(u, d, h, dist, hops, done, stamp):
            size = _pop(hd, hh, hv, size)
            continue
        if limit > 0 and settled >= limit:
            return count, min(d, radius)
        size = _pop(hd, hh, hv, size)
        settled += 1
        done[u] = stamp
        if need[u] > 0.0:
            remaining -= 1
            if remaining == 0:
                return count, min(d, radius)
            if need[u] >= radius:
                # the largest radius left: the first target not settled
                # (amortised O(1) per settled target)
                while done[tlist[top]] == stamp:
                    top += 1
                radius = need[tlist[top]]
        count, size = _relax(u, d, h, radius, length, indptr, indices, eid,
                             dist, hops, pred, touched, count, hd, hh, hv,
                             size)
    return count, radius


@njit(cache=True, nogil=True)
def _edge_targets(s, x, threshold, indptr, indices, eid, need, tlist):
    """The targets of source ``s``: its neighbours ``v > s`` with ``r = x_sv - threshold > 0``.

    Sets ``need[v] = r`` and lists them in ``tlist``; returns ``(nt, the
    largest r)`` (a violated inequality of ``sv`` has a path shorter than
    ``r``).
    """
    nt = 0
    radius = 0.0
    for k in range(indptr[s], indptr[s + 1]):
        v = indices[k]
        if v > s:
            r = x[eid[k]] - threshold
            if r > 0.0:
                need[v] = r
                tlist[nt] = v
                nt += 1
                if r > radius:
                    radius = r
    return nt, radius


@njit(cache=True, nogil=True)
def _reset(buf, count, nt):
    # dist back to inf on the nodes reached, need back to 0 on the targets
    dist, need, touched, tlist = buf[0], buf[5], buf[3], buf[6]
    for i in range(count):
        dist[touched[i]] = np.inf
    for j in range(nt):
        need[tlist[j]] = 0.0


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


@njit(cache=True, nogil=True, inline="always")
def _put(buf, i, val):
    # buf[i] = val, doubling buf when full; returns buf
    if i == buf.shape[0]:
        b2 = np.empty(2 * i + 1, dtype=buf.dtype)
        for z in range(i):
            b2[z] = buf[z]
        buf = b2
    buf[i] = val
    return buf


@njit(cache=True, nogil=True)
def _walk_back(v, pred, indptr, eid, length, path, npth):
    """Append the predecessor chain from ``v`` back to its search's source to ``path``.

    Returns ``(path, npth, the source, the chain's length)``.
    """
    tot = 0.0
    while pred[v] >= 0:
        f = eid[pred[v]]
        path = _put(path, npth, np.int32(f))
        npth += 1
        tot += length[f]
        v = _source_of(pred[v], indptr)
    return path, npth, v, tot


@njit(cache=True, nogil=True)
def bounded_violated_cycles(x, indptr, indices, eid, s0, s1, threshold,
                            cap=0):
    """Violated cycle inequalities of the edges ``(u, v)``, ``s0 <= u < v``.

    For each source ``u`` in ``[s0, s1)``, a Dijkstra on the lengths
    ``max(x, 0)`` that stops once every target ``v > u`` with ``x_uv >
    threshold`` is settled, or at the radius ``x_uv - threshold`` of the
    targets not yet settled (:func:`_dijkstra`); an edge ``uv`` with
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
    buf = _buffers(n, indptr[n])
    dist, pred, done, need, tlist = buf[0], buf[2], buf[4], buf[5], buf[6]
    src = np.empty(1, dtype=np.int64)
    ce = np.empty(16, dtype=np.int64)
    ptr = np.zeros(17, dtype=np.int64)
    path = np.empty(64, dtype=np.int32)
    nc = 0
    npth = 0
    maxv = 0.0
    for s in range(s0, s1):
        nt, radius = _edge_targets(s, x, threshold, indptr, indices, eid,
                                   need, tlist)
        count = 0
        front = 0.0
        if nt > 0:
            src[0] = s
            count, front = _dijkstra(src, nt, radius, cap, s + 1, length,
                                     indptr, indices, eid, buf)
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
                path, npth, _, _ = _walk_back(v, pred, indptr, eid, length,
                                              path, npth)
                ce = _put(ce, nc, e)
                nc += 1
                ptr = _put(ptr, nc, npth)
        _reset(buf, count, nt)
    return ce[:nc].copy(), ptr[:nc + 1].copy(), path[:npth].copy(), maxv


@njit(cache=True, nogil=True)
def graph_closure(x, indptr, indices, eid, s0, s1, y):
    """``y_e = min(x_e, dist(u, v))`` for the edges ``(u, v)``, ``s0 <= u < v``.

    ``x`` must be ``>= 0`` (the lengths; ``dist`` is the shortest-path
    distance with them) and ``y`` hold ``x`` on entry; only the entries of
    the edges owned by the sources ``[s0, s1)`` are written, so blocks of
    sources can run in parallel on one ``y``.  Each search is that of the
    oracle at threshold 0 (:func:`_dijkstra`): it stops once the
    targets ``v > u`` with ``x_uv > 0`` are settled or out of reach.  Over
    all the sources, ``y`` satisfies every cycle inequality of the graph
    (``y_e`` is the shortest-path distance between the ends of ``e`` in the
    graph with lengths ``y``), and ``y = x`` where none is violated.
    """
    n = indptr.shape[0] - 1
    buf = _buffers(n, indptr[n])
    dist, done, need, tlist = buf[0], buf[4], buf[5], buf[6]
    src = np.empty(1, dtype=np.int64)
    for s in range(s0, s1):
        nt, radius = _edge_targets(s, x, 0.0, indptr, indices, eid, need,
                                   tlist)
        if nt == 0:
            continue
        src[0] = s
        count, _ = _dijkstra(src, nt, radius, 0, s + 1, x, indptr, indices,
                             eid, buf)
        for k in range(indptr[s], indptr[s + 1]):
            v = indices[k]
            if v > s and done[v] == s + 1 and dist[v] < y[eid[k]]:
                y[eid[k]] = dist[v]
        _reset(buf, count, nt)


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
    buf = _buffers(n, indptr[n])
    dist, touched = buf[0], buf[3]
    src = np.empty(1, dtype=np.int64)
    k = 0
    for p in order:
        if labels[p] >= 0:
            continue
        src[0] = p
        count, _ = _dijkstra(src, 0, radius, 0, k + 1, length, indptr,
                             indices, eid, buf)
        labels[p] = k
        for i in range(1, count):
            j = touched[i]
            if labels[j] < 0:
                if probabilistic:
                    if np.random.random() < 1.0 - dist[j]:
                        labels[j] = k
                else:
                    labels[j] = k
        _reset(buf, count, 0)
        k += 1
    return labels


@njit(cache=True, nogil=True)
def short_edge_forest(x, indptr, indices, eid, eps):
    """Components of the edges of length ``max(x_e, 0) <= eps`` and a BFS spanning forest.

    Returns ``(comp, order, cptr, tparent, tedge, depth)``: ``comp[v]`` the
    component id of node ``v`` (ids ``0, 1, ...`` in the order of their
    smallest node), ``order[cptr[c]:cptr[c + 1]]`` the nodes of component
    ``c`` in BFS order from its smallest node (the root), ``tparent[v]``
    and ``tedge[v]`` the parent node and the edge id to it in the forest
    (``-1`` at a root), ``depth[v]`` the number of forest edges to the root.
    """
    n = indptr.shape[0] - 1
    comp = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    cptr = np.zeros(n + 1, dtype=np.int64)
    tparent = np.full(n, -1, dtype=np.int64)
    tedge = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    nc = 0
    tail = 0
    for r in range(n):
        if comp[r] >= 0:
            continue
        comp[r] = nc
        order[tail] = r
        head = tail
        tail += 1
        while head < tail:
            u = order[head]
            head += 1
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                e = eid[k]
                if comp[v] < 0 and max(x[e], 0.0) <= eps:
                    comp[v] = nc
                    tparent[v] = u
                    tedge[v] = e
                    depth[v] = depth[u] + 1
                    order[tail] = v
                    tail += 1
        nc += 1
        cptr[nc] = tail
    return comp, order, cptr[:nc + 1].copy(), tparent, tedge, depth


@njit(cache=True, nogil=True)
def _tree_path(a, b, tparent, tedge, depth, length, path, npth, tmp):
    """Append the forest path ``a -> b`` (one component) to ``path``; return ``(path, npth, its length)``."""
    tot = 0.0
    nt = 0
    while depth[a] > depth[b]:
        path = _put(path, npth, np.int32(tedge[a]))
        npth += 1
        tot += length[tedge[a]]
        a = tparent[a]
    while depth[b] > depth[a]:
        tmp[nt] = tedge[b]
        nt += 1
        b = tparent[b]
    while a != b:
        path = _put(path, npth, np.int32(tedge[a]))
        npth += 1
        tot += length[tedge[a]]
        a = tparent[a]
        tmp[nt] = tedge[b]
        nt += 1
        b = tparent[b]
    for i in range(nt - 1, -1, -1):
        path = _put(path, npth, np.int32(tmp[i]))
        npth += 1
        tot += length[tmp[i]]
    return path, npth, tot


@njit(cache=True, nogil=True)
def component_violated_cycles(x, indptr, indices, eid, eps, threshold,
                              cap=0, r0=0, r1=-1):
    """Violated cycle inequalities from one multi-source search per short-edge component.

    The edges of length ``max(x_e, 0) <= eps`` join the nodes into
    components ``C`` with a BFS spanning forest (:func:`short_edge_forest`).

    * An edge ``e = (u, v)`` with ``u`` in ``C`` and ``v`` in a component of
      larger id (so each edge between components is checked once, by the
      smaller id) is a *target* of ``C`` with radius ``x_e - threshold``.
      One Dijkstra per component on the lengths ``max(x, 0)`` starts from
      every node of ``C`` at distance 0 (ties: fewer edges, then node
      number: :func:`_dijkstra`) and stops when every target end with
      a positive radius is settled, or at the largest radius of those left,
      or (``cap > 0``) after settling ``cap * |C|`` nodes -- the work of
      ``|C|`` capped per-node searches spent on one ball.  A target ``v``
      reached (settled, or tentatively under the cap) from the source ``s``
      gives the path: the predecessor chain ``v -> s`` (outside ``C``
      except ``s``), then the forest path ``s -> u`` inside ``C``.
    * An edge with both ends in ``C`` and ``x_e > threshold`` gives the
      forest path ``v -> u`` (unless that path is ``e`` itself).

    A path ``P`` is emitted when its true violation ``x_e - sum_{f in P}
    max(x_f, 0)`` exceeds ``threshold`` (the forest part has length 0 when
    ``eps == 0``, up to ``eps`` per edge otherwise).  Paths are simple and
    listed from ``v`` to ``u``.  With ``eps == 0`` and ``cap == 0``, the
    constraint of every edge violated beyond ``threshold`` is found, with a
    shortest path (``dist(u, v) = dist(C, v)``, the forest being free).

    Only the components whose root (smallest node) is in ``[r0, r1)``
    (``r1 < 0``: every node) are searched: the blocks of a split of the
    nodes cover every edge once, each block is independent of the others
    (one per thread or Dask task), and their results concatenated in block
    order are those of one call over every node.

    Returns ``(cons_edge, ptr, path, max_violation)`` (CSR; component by
    component, the edges leaving it, then those inside it).
    ``max_violation`` is an upper bound on ``max(0, max_e x_e - dist(u,
    v))``, never an underestimate: ``x_e - dist(C, v)`` for a settled
    target end (``dist(C, v) <= dist(u, v)``; exact with ``eps == 0``),
    ``x_e`` minus the search's frontier for one not settled, and ``x_e``
    for an edge inside a component (exact with ``eps == 0``, where the
    forest path is free; with ``eps > 0`` it is only the trivial bound, so
    a stopping rule on it may never fire: use ``eps == 0`` for that).
    """
    n = indptr.shape[0] - 1
    m = x.shape[0]
    length = np.empty(m)
    for e in range(m):
        length[e] = x[e] if x[e] > 0.0 else 0.0
    comp, order, cptr, tparent, tedge, depth = short_edge_forest(
        x, indptr, indices, eid, eps)
    ncomp = cptr.shape[0] - 1
    buf = _buffers(n, indptr[n])
    dist, pred, done, need, tlist = buf[0], buf[2], buf[4], buf[5], buf[6]
    tmp = np.empty(n + 1, dtype=np.int64)
    ce = np.empty(16, dtype=np.int64)
    ptr = np.zeros(17, dtype=np.int64)
    path = np.empty(64, dtype=np.int32)
    nc = 0
    npth = 0
    maxv = 0.0
    if r1 < 0:
        r1 = n
    c0 = 0
    while c0 < ncomp and order[cptr[c0]] < r0:
        c0 += 1
    c1 = c0
    while c1 < ncomp and order[cptr[c1]] < r1:
        c1 += 1
    for c in range(c0, c1):
        a0 = cptr[c]
        a1 = cptr[c + 1]
        stamp = c + 1
        # the targets: ends outside C of the edges C owns
        radius = 0.0
        nt = 0
        for i in range(a0, a1):
            u = order[i]
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if comp[v] > c:
                    r = x[eid[k]] - threshold
                    if r > 0.0:
                        if need[v] == 0.0:
                            tlist[nt] = v
                            nt += 1
                        if r > need[v]:
                            need[v] = r
                        if r > radius:
                            radius = r
        count = 0
        front = 0.0
        if nt > 0:
            count, front = _dijkstra(order[a0:a1], nt, radius,
                                     cap * (a1 - a0) if cap > 0 else 0,
                                     stamp, length, indptr, indices, eid,
                                     buf)
        # the constraints of the edges C owns
        for i in range(a0, a1):
            u = order[i]
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if comp[v] <= c:
                    continue
                e = eid[k]
                bound = x[e] - dist[v] if done[v] == stamp else x[e] - front
                if bound > maxv:
                    maxv = bound
                if not x[e] - dist[v] > threshold:
                    continue
                start = npth
                path, npth, a, tot = _walk_back(v, pred, indptr, eid, length,
                                                path, npth)
                path, npth, t2 = _tree_path(a, u, tparent, tedge, depth,
                                            length, path, npth, tmp)
                tot += t2
                if x[e] - tot > threshold:
                    ce = _put(ce, nc, e)
                    nc += 1
                    ptr = _put(ptr, nc, npth)
                else:
                    npth = start
        _reset(buf, count, nt)
        # the edges inside C: their forest paths
        for i in range(a0, a1):
            u = order[i]
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if v <= u or comp[v] != c:
                    continue
                e = eid[k]
                if x[e] > maxv:
                    maxv = x[e]
                if not x[e] > threshold:
                    continue
                if tedge[u] == e or tedge[v] == e:
                    continue  # the forest path is e itself
                start = npth
                path, npth, tot = _tree_path(v, u, tparent, tedge, depth,
                                             length, path, npth, tmp)
                if x[e] - tot > threshold:
                    ce = _put(ce, nc, e)
                    nc += 1
                    ptr = _put(ptr, nc, npth)
                else:
                    npth = start
    return ce[:nc].copy(), ptr[:nc + 1].copy(), path[:npth].copy(), maxv
