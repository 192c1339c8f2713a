"""numpy twin of :mod:`metric_estimators._kernels.sparse_graph`: the bounded searches, in Python.

Twins of the kernels that the searches of a sparse graph call: the cycle
oracles per node (:func:`bounded_violated_cycles`) and per component of the
short edges (:func:`component_violated_cycles`, with its forest
:func:`short_edge_forest`), the closure on the edges (:func:`graph_closure`)
and the rounding's ball pivot (:func:`ball_pivot`).  A Dijkstra does not
vectorise, so these are plain Python over lists; on a graph of a few
hundred nodes a call takes milliseconds in the interpreter.

They return the kernels' results bit for bit: the same Dijkstra (one search
per source over Python lists, a :mod:`heapq` of ``(distance, hops, node)``
tuples with lazy deletion, each node's stored entries read as ``(neighbour,
length, entry)`` triples built once per call), the same floating-point additions in the same
order, the same stopping rules.  The heap order is the kernels' (distance,
then hops, then node number) and no entry is pushed twice (a node is pushed
only on a strict improvement), so the nodes settle in the same order even
though the two heaps are built differently.  The probabilistic ball pivot
draws from :class:`numpy.random.RandomState` seeded as numba's generator is
(the same Mersenne Twister, seeded from one integer, and the same doubles).
"""

import heapq

import numpy as np

__all__ = ["ball_pivot", "bounded_violated_cycles", "component_violated_cycles",
           "graph_closure", "short_edge_forest"]

_INF = float("inf")


def _relax(edges, d, h, radius, dist, hops, pred, heap, touched):
    """Relax the ``(v, length, edge)`` of a settled node at distance ``d`` and ``h`` hops.

    The kernels' step: a shorter path, or as short with fewer hops, below
    ``radius`` replaces ``v``'s and is pushed; ``touched`` gets every node
    reached for the first time.
    """
    h1 = h + 1
    for v, w, k in edges:
        nd = d + w
        if nd >= radius:
            continue
        dv = dist[v]
        if nd < dv or (nd == dv and h1 < hops[v]):
            if dv == _INF:
                touched.append(v)
            dist[v] = nd
            hops[v] = h1
            pred[v] = k
            heapq.heappush(heap, (nd, h1, v))


class _Search:
    """One graph's lists and the buffers of its searches (reset after each)."""

    def __init__(self, indptr, indices, eid):
        self.n = indptr.shape[0] - 1
        self.indptr = indptr.tolist()
        self.indices = indices.tolist()
        self.eid = eid.tolist()
        self._ind = indices
        self._eid = eid
        self.dist = [_INF] * self.n
        self.pred = [0] * self.n
        self.hops = [0] * self.n
        self.done = [0] * self.n

    def adjacency(self, length):
        """Per node, its stored entries ``(neighbour, length, entry)`` in stored order.

        ``length`` an array over the edges: each entry's length is read
        once here instead of at every relaxation.
        """
        ptr = self.indptr
        triples = list(zip(self.indices, length[self._eid].tolist(),
                           range(len(self.indices))))
        return [triples[ptr[u]:ptr[u + 1]] for u in range(self.n)]

    def run(self, s, x, threshold, ball, adj, cap):
        """The kernels' search from one source (:func:`metric_estimators._kernels.sparse_graph._dijkstra`).

        ``ball > 0``: the nodes at distance ``< ball``; else the targets
        are the neighbours ``v > s`` with ``r = x_sv - threshold > 0``, as
        in :func:`bounded_violated_cycles`.  ``adj`` is
        :meth:`adjacency` of the lengths.  Returns ``(touched, front)``:
        the nodes reached (reset their ``dist`` to ``inf`` afterwards) and
        the search's frontier (every node not settled is at distance
        ``>= front``).
        """
        dist, pred, hops, done = self.dist, self.pred, self.hops, self.done
        stamp = s + 1
        targets = not ball > 0.0
        remaining = 0
        radius = ball
        if targets:
            indptr, indices, eid = self.indptr, self.indices, self.eid
            own = range(indptr[s], indptr[s + 1])
            # the first stored entry of each neighbour v > s: its r
            first = {}
            radius = 0.0
            for k in own:
                v = indices[k]
                if v > s:
                    r = x[eid[k]] - threshold
                    if v not in first:
                        first[v] = r
                    if r > 0.0:
                        remaining += 1
                        if r > radius:
                            radius = r
            if remaining == 0:
                return [], 0.0
        dist[s] = 0.0
        pred[s] = -1
        hops[s] = 0
        touched = [s]
        settled = 0
        heap = [(0.0, 0, s)]
        pop = heapq.heappop
        while heap:
            d, h, u = heap[0]
            if done[u] == stamp or d > dist[u] or (d == dist[u] and h > hops[u]):
                pop(heap)
                continue
            if cap > 0 and settled >= cap:
                return touched, min(d, radius)
            pop(heap)
            settled += 1
            done[u] = stamp
            if targets and u > s:
                r = first.get(u, 0.0)
                if r > 0.0:
                    remaining -= 1
                    if remaining == 0:
                        return touched, min(d, radius)
                    if r >= radius:
                        radius = 0.0
                        for k in own:
                            v = indices[k]
                            if v > s and done[v] != stamp:
                                r = x[eid[k]] - threshold
                                if r > radius:
                                    radius = r
            _relax(adj[u], d, h, radius, dist, hops, pred, heap, touched)
        return touched, radius

    def reset(self, touched):
        dist = self.dist
        for v in touched:
            dist[v] = _INF


def bounded_violated_cycles(x, indptr, indices, eid, s0, s1, threshold, cap=0):
    """Violated cycle inequalities of the edges ``(u, v)``, ``s0 <= u < v``.

    Same arguments and returns ``(cons_edge, ptr, path, max_violation)``
    (int64, int64, int32 arrays and a float), the same bits.
    """
    g = _Search(indptr, indices, eid)
    xs = x.tolist()
    adj = g.adjacency(np.maximum(x, 0.0))   # max(x, 0) is exact: same values
    # the row of each stored entry (the kernel's binary search in indptr)
    row_of = np.repeat(np.arange(g.n), np.diff(indptr)).tolist()
    ind, ids, dist, pred, done = g.indices, g.eid, g.dist, g.pred, g.done
    cons, ptr, path = [], [0], []
    maxv = 0.0
    threshold = float(threshold)
    for s in range(int(s0), int(s1)):
        touched, front = g.run(s, xs, threshold, 0.0, adj, int(cap))
        stamp = s + 1
        for k in range(g.indptr[s], g.indptr[s + 1]):
            v = ind[k]
            if v <= s:
                continue
            e = ids[k]
            viol = xs[e] - dist[v]
            bound = viol if done[v] == stamp else xs[e] - front
            if bound > maxv:
                maxv = bound
            if viol > threshold:
                a = v
                while a != s:
                    kk = pred[a]
                    path.append(ids[kk])
                    a = row_of[kk]
                cons.append(e)
                ptr.append(len(path))
        g.reset(touched)
    return (np.array(cons, dtype=np.int64), np.array(ptr, dtype=np.int64),
            np.array(path, dtype=np.int32), maxv)


def graph_closure(x, indptr, indices, eid, s0, s1, y):
    """``y_e = min(x_e, dist(u, v))`` for the edges ``(u, v)``, ``s0 <= u < v``.

    ``x >= 0`` (the lengths) and ``y`` holding ``x`` on entry, as the
    kernel; the searches of :func:`bounded_violated_cycles` at threshold 0.
    """
    g = _Search(indptr, indices, eid)
    xs = x.tolist()
    adj = g.adjacency(np.asarray(x, dtype=np.float64))
    ind, ids, dist, done = g.indices, g.eid, g.dist, g.done
    for s in range(int(s0), int(s1)):
        touched, _ = g.run(s, xs, 0.0, 0.0, adj, 0)
        stamp = s + 1
        for k in range(g.indptr[s], g.indptr[s + 1]):
            v = ind[k]
            if v > s and done[v] == stamp and dist[v] < y[ids[k]]:
                y[ids[k]] = dist[v]
        g.reset(touched)


def ball_pivot(x, indptr, indices, eid, order, probabilistic, seed):
    """LP-KwikCluster on the shortest-path completion of ``x``: the pivot's ball (the kernel's labels)."""
    g = _Search(indptr, indices, eid)
    length = np.minimum(np.maximum(x, 0.0), 1.0)
    adj = g.adjacency(length)
    length = length.tolist()
    random = np.random.RandomState(seed).random_sample if probabilistic else None
    radius = 1.0 if probabilistic else 0.5
    labels = [-1] * g.n
    dist = g.dist
    k = 0
    for p in order.tolist():
        if labels[p] >= 0:
            continue
        touched, _ = g.run(p, length, 0.0, radius, adj, 0)
        labels[p] = k
        for j in touched[1:]:
            if labels[j] < 0:
                if random is None or random() < 1.0 - dist[j]:
                    labels[j] = k
        g.reset(touched)
        k += 1
    return np.array(labels, dtype=np.int64)


def short_edge_forest(x, indptr, indices, eid, eps):
    """Components of the edges of length ``max(x_e, 0) <= eps`` and a BFS spanning forest.

    Same arguments and returns ``(comp, order, cptr, tparent, tedge,
    depth)`` as the kernel, the same values: the same breadth-first search
    from each smallest node not yet reached.
    """
    n = indptr.shape[0] - 1
    ptr, ind, ids = indptr.tolist(), indices.tolist(), eid.tolist()
    short = [v <= eps for v in np.where(x > 0.0, x, 0.0).tolist()]
    comp, tparent, tedge, depth = [-1] * n, [-1] * n, [-1] * n, [0] * n
    order, cptr = [], [0]
    for r in range(n):
        if comp[r] >= 0:
            continue
        c = len(cptr) - 1
        comp[r] = c
        head = len(order)
        order.append(r)
        while head < len(order):
            u = order[head]
            head += 1
            for k in range(ptr[u], ptr[u + 1]):
                v = ind[k]
                e = ids[k]
                if comp[v] < 0 and short[e]:
                    comp[v] = c
                    tparent[v] = u
                    tedge[v] = e
                    depth[v] = depth[u] + 1
                    order.append(v)
        cptr.append(len(order))
    as64 = lambda a: np.array(a, dtype=np.int64)  # noqa: E731
    return (as64(comp), as64(order), as64(cptr), as64(tparent), as64(tedge),
            as64(depth))


def _tree_path(a, b, tparent, tedge, depth, length, path):
    """Append the forest path ``a -> b`` to ``path``; its length, added in the kernel's order."""
    tot = 0.0
    tail = []
    while depth[a] > depth[b]:
        path.append(tedge[a])
        tot += length[tedge[a]]
        a = tparent[a]
    while depth[b] > depth[a]:
        tail.append(tedge[b])
        b = tparent[b]
    while a != b:
        path.append(tedge[a])
        tot += length[tedge[a]]
        a = tparent[a]
        tail.append(tedge[b])
        b = tparent[b]
    for f in reversed(tail):
        path.append(f)
        tot += length[f]
    return tot


def component_violated_cycles(x, indptr, indices, eid, eps, threshold, cap=0,
                              r0=0, r1=-1):
    """Violated cycle inequalities from one multi-source search per short-edge component.

    Same arguments and returns ``(cons_edge, ptr, path, max_violation)`` as
    the kernel, the same bits: the same forest (:func:`short_edge_forest`),
    the same multi-source search (targets by decreasing radius, the largest
    radius left as the bound, ``cap * |C|`` settled nodes at most), the same
    paths, lengths added in the same order.
    """
    n = indptr.shape[0] - 1
    xs = x.tolist()
    length = [v if v > 0.0 else 0.0 for v in xs]
    comp, order, cptr, tparent, tedge, depth = (
        a.tolist() for a in short_edge_forest(x, indptr, indices, eid, eps))
    ptr, ind, ids = indptr.tolist(), indices.tolist(), eid.tolist()
    row_of = np.repeat(np.arange(n), np.diff(indptr)).tolist()
    adj = [list(zip(ind[ptr[u]:ptr[u + 1]],
                    [length[e] for e in ids[ptr[u]:ptr[u + 1]]],
                    range(ptr[u], ptr[u + 1]))) for u in range(n)]
    dist, hops, pred, done = [_INF] * n, [0] * n, [-1] * n, [0] * n
    cons, cptr_out, path = [], [0], []
    maxv = 0.0
    threshold = float(threshold)
    r1 = n if r1 < 0 else int(r1)
    push, pop = heapq.heappush, heapq.heappop
    for c in range(len(cptr) - 1):
        members = order[cptr[c]:cptr[c + 1]]
        if members[0] < r0:
            continue
        if members[0] >= r1:
            break
        stamp = c + 1
        # the targets: ends outside C of the edges C owns, their largest radius
        need = {}
        radius = 0.0
        for u in members:
            for k in range(ptr[u], ptr[u + 1]):
                v = ind[k]
                if comp[v] > c:
                    r = xs[ids[k]] - threshold
                    if r > 0.0:
                        if r > need.get(v, 0.0):
                            need[v] = r
                        radius = max(radius, r)
        touched = []
        front = 0.0
        if need:
            # the kernel's search (_dijkstra) from every node of C
            targets = sorted(need, key=lambda v: -need[v])   # stable, as the kernel
            heap = []
            for s in members:
                dist[s] = 0.0
                hops[s] = 0
                pred[s] = -1
                touched.append(s)
                push(heap, (0.0, 0, s))
            limit = cap * len(members) if cap > 0 else 0
            remaining = len(targets)
            top = 0
            settled = 0
            front = None
            while heap:
                d, h, u = heap[0]
                if done[u] == stamp or d > dist[u] or (d == dist[u] and h > hops[u]):
                    pop(heap)
                    continue
                if limit > 0 and settled >= limit:
                    front = min(d, radius)
                    break
                pop(heap)
                settled += 1
                done[u] = stamp
                r = need.get(u, 0.0)
                if r > 0.0:
                    remaining -= 1
                    if remaining == 0:
                        front = min(d, radius)
                        break
                    if r >= radius:
                        while done[targets[top]] == stamp:
                            top += 1
                        radius = need[targets[top]]
                _relax(adj[u], d, h, radius, dist, hops, pred, heap, touched)
            if front is None:
                front = radius
        # the constraints of the edges C owns
        for u in members:
            for k in range(ptr[u], ptr[u + 1]):
                v = ind[k]
                if comp[v] <= c:
                    continue
                e = ids[k]
                bound = xs[e] - dist[v] if done[v] == stamp else xs[e] - front
                if bound > maxv:
                    maxv = bound
                if not xs[e] - dist[v] > threshold:
                    continue
                start = len(path)
                tot = 0.0
                a = v
                while pred[a] >= 0:
                    f = ids[pred[a]]
                    path.append(f)
                    tot += length[f]
                    a = row_of[pred[a]]
                tot += _tree_path(a, u, tparent, tedge, depth, length, path)
                if xs[e] - tot > threshold:
                    cons.append(e)
                    cptr_out.append(len(path))
                else:
                    del path[start:]
        for v in touched:
            dist[v] = _INF
        # the edges inside C: their forest paths
        for u in members:
            for k in range(ptr[u], ptr[u + 1]):
                v = ind[k]
                if v <= u or comp[v] != c:
                    continue
                e = ids[k]
                if xs[e] > maxv:
                    maxv = xs[e]
                if not xs[e] > threshold:
                    continue
                if tedge[u] == e or tedge[v] == e:
                    continue  # the forest path is e itself
                start = len(path)
                tot = _tree_path(v, u, tparent, tedge, depth, length, path)
                if xs[e] - tot > threshold:
                    cons.append(e)
                    cptr_out.append(len(path))
                else:
                    del path[start:]
    return (np.array(cons, dtype=np.int64), np.array(cptr_out, dtype=np.int64),
            np.array(path, dtype=np.int32), maxv)
