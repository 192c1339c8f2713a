"""The bounded searches of small sparse graphs in plain Python, without numba.

Twins of the two kernels of :mod:`metric_estimators._kernels.sparse_graph`
that a sparse correlation-clustering fit calls on every problem size: the
cycle oracle (:func:`bounded_violated_cycles`) and the rounding's ball pivot
(:func:`ball_pivot`).  On a graph of a few hundred nodes they take
milliseconds per call in the interpreter, against seconds of CPU to compile
the kernels on an empty numba cache, so graphs of at most
:data:`~metric_estimators.solvers.numpy_kernels.CC_SPARSE_NUMPY_MAX_NODES`
nodes use them (see there for the measurements).

They return the kernels' results bit for bit: the same Dijkstra (one search
per source over Python lists, a :mod:`heapq` of ``(distance, hops, node)``
tuples with lazy deletion), the same floating-point additions in the same
order, the same stopping rules.  The heap order is the kernels' (distance,
then hops, then node number) and no entry is pushed twice (a node is pushed
only on a strict improvement), so the nodes settle in the same order even
though the two heaps are built differently.  The probabilistic ball pivot
draws from :class:`numpy.random.RandomState` seeded as numba's generator is
(the same Mersenne Twister, seeded from one integer, and the same doubles).
"""

import heapq

import numpy as np

__all__ = ["ball_pivot", "bounded_violated_cycles"]

_INF = float("inf")


class _Search:
    """One graph's lists and the buffers of its searches (reset after each)."""

    def __init__(self, indptr, indices, eid):
        self.n = indptr.shape[0] - 1
        self.indptr = indptr.tolist()
        self.indices = indices.tolist()
        self.eid = eid.tolist()
        self.dist = [_INF] * self.n
        self.pred = [0] * self.n
        self.hops = [0] * self.n
        self.done = [0] * self.n

    def run(self, s, x, threshold, ball, length, cap):
        """The kernels' search from one source (:func:`metric_estimators._kernels.sparse_graph._dijkstra`).

        ``ball > 0``: the nodes at distance ``< ball``; else the targets
        are the neighbours ``v > s`` with ``r = x_sv - threshold > 0``, as
        in :func:`bounded_violated_cycles`.  Returns ``(touched, front)``:
        the nodes reached (reset their ``dist`` to ``inf`` afterwards) and
        the search's frontier (every node not settled is at distance
        ``>= front``).
        """
        indptr, indices, eid = self.indptr, self.indices, self.eid
        dist, pred, hops, done = self.dist, self.pred, self.hops, self.done
        stamp = s + 1
        targets = not ball > 0.0
        remaining = 0
        radius = ball
        own = range(indptr[s], indptr[s + 1])
        if targets:
            radius = 0.0
            for k in own:
                if indices[k] > s:
                    r = x[eid[k]] - threshold
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
        push, pop = heapq.heappush, heapq.heappop
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
                hit = top = False
                for k in own:
                    if indices[k] == u:
                        r = x[eid[k]] - threshold
                        if r > 0.0:
                            hit = True
                            top = r >= radius
                        break
                if hit:
                    remaining -= 1
                    if remaining == 0:
                        return touched, min(d, radius)
                    if top:
                        radius = 0.0
                        for k in own:
                            v = indices[k]
                            if v > s and done[v] != stamp:
                                r = x[eid[k]] - threshold
                                if r > radius:
                                    radius = r
            h1 = h + 1
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                nd = d + length[eid[k]]
                if nd >= radius:
                    continue
                dv = dist[v]
                if nd < dv or (nd == dv and h1 < hops[v]):
                    if dv == _INF:
                        touched.append(v)
                    dist[v] = nd
                    hops[v] = h1
                    pred[v] = k
                    push(heap, (nd, h1, v))
        return touched, radius

    def reset(self, touched):
        dist = self.dist
        for v in touched:
            dist[v] = _INF


def bounded_violated_cycles(x, indptr, indices, eid, s0, s1, threshold, cap=0):
    """:func:`metric_estimators._kernels.sparse_graph.bounded_violated_cycles` in Python.

    Same arguments and returns ``(cons_edge, ptr, path, max_violation)``
    (int64, int64, int32 arrays and a float), the same bits.
    """
    g = _Search(indptr, indices, eid)
    xs = x.tolist()
    length = np.maximum(x, 0.0).tolist()   # max(x, 0) is exact: same values
    # the row of each stored entry (the kernel's binary search in indptr)
    row_of = np.repeat(np.arange(g.n), np.diff(indptr)).tolist()
    ind, ids, dist, pred, done = g.indices, g.eid, g.dist, g.pred, g.done
    cons, ptr, path = [], [0], []
    maxv = 0.0
    threshold = float(threshold)
    for s in range(int(s0), int(s1)):
        touched, front = g.run(s, xs, threshold, 0.0, length, int(cap))
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


def ball_pivot(x, indptr, indices, eid, order, probabilistic, seed):
    """:func:`metric_estimators._kernels.sparse_graph.ball_pivot` in Python (the same labels)."""
    g = _Search(indptr, indices, eid)
    length = np.minimum(np.maximum(x, 0.0), 1.0).tolist()
    random = np.random.RandomState(seed).random_sample if probabilistic else None
    radius = 1.0 if probabilistic else 0.5
    labels = [-1] * g.n
    dist = g.dist
    k = 0
    for p in order.tolist():
        if labels[p] >= 0:
            continue
        touched, _ = g.run(p, length, 0.0, radius, length, 0)
        labels[p] = k
        for j in touched[1:]:
            if labels[j] < 0:
                if random is None or random() < 1.0 - dist[j]:
                    labels[j] = k
        g.reset(touched)
        k += 1
    return np.array(labels, dtype=np.int64)
