"""numpy twin of :mod:`metric_estimators._kernels.correlation_clustering`: local search and cost.

The same results as the kernels, bit for bit: the one-element moves are
the kernels' moves in the kernels' order, hence the same labels and sweep
counts.  The sums of a node's weights per cluster are added in the order
the kernels add them: :func:`numpy.bincount` on a dense row; on a sparse
graph :func:`numpy.bincount` over every stored entry at once (it adds in
the input order), then a dict over a row's few neighbours for the nodes
whose neighbours moved since.  The sparse cost adds the same terms in the
same order (:func:`numpy.cumsum`).
"""

import heapq

import numpy as np

__all__ = ["best_one_element_moves", "sparse_cost", "sparse_one_element_moves"]


def _cluster_counts(lab):
    """``(count, free)``: the size of each cluster id ``0..n-1`` and the empty ones.

    ``free`` is a stack (the lowest empty id on top), as the kernels keep it.
    """
    n = len(lab)
    count = [0] * n
    for c in lab:
        count[c] += 1
    return count, [c for c in range(n - 1, -1, -1) if count[c] == 0]


def _visit(lab, count, free, i, a, best, target, eps):
    """The kernels' decision at node ``i`` (in cluster ``a``); the cluster it ends in.

    ``(best, target)`` is the node's scan: the best sum of its weights to
    one cluster and that cluster.  A node moves to ``target``, or to a free
    (empty) cluster when every sum, its own included, is below ``-eps``
    and its cluster has other members.  ``lab``, ``count`` and ``free`` are
    updated in place.
    """
    if count[a] > 1 and 0.0 > best + eps and free:
        target = free.pop()
    if target != a:
        count[a] -= 1
        if count[a] == 0:
            free.append(a)
        count[target] += 1
        lab[i] = target
    return target


def _best_cluster(own, sums, a, eps):
    """``(best, target)``: the kernels' scan of ``(cluster, sum)`` pairs from ``a``'s sum ``own``.

    The first cluster whose sum beats the running best by more than
    ``eps``, in the order of ``sums``.
    """
    best = own
    target = a
    for c, v in sums:
        if v > best + eps:
            best, target = v, c
    return best, target


def _one_element_moves(lab, max_sweeps, eps, scan):
    """The sweeps of the one-element moves, every node visited in index order.

    ``scan(i, a)`` returns node ``i``'s ``(best, target)`` at the labels of
    the moment (:func:`_best_cluster`); ``lab`` (a list or an array) is
    updated in place; returns the sweeps run.
    """
    count, free = _cluster_counts(lab)
    sweeps = 0
    for sweep in range(int(max_sweeps)):
        sweeps = sweep + 1
        moved = False
        for i in range(len(lab)):
            a = int(lab[i])
            best, target = scan(i, a)
            if _visit(lab, count, free, i, a, best, target, eps) != a:
                moved = True
        if not moved:
            break
    return sweeps


def _in_scan_order(lab):
    """The distinct values of ``lab`` in order of first appearance."""
    _, first = np.unique(lab, return_index=True)
    return lab[np.sort(first)].tolist()


def best_one_element_moves(A, labels, max_sweeps, eps):
    """:func:`metric_estimators._kernels.correlation_clustering.best_one_element_moves` in numpy.

    The same moves in the same order (a loop over the nodes; the sums of a
    node's weights per cluster by ``np.bincount``), so the same labels.
    """
    n = labels.shape[0]
    idx = np.arange(n)

    def scan(i, a):
        others = idx != i
        lab_o = labels[others]
        S = np.bincount(lab_o, weights=A[i, others], minlength=n)
        return _best_cluster(S[a], ((c, S[c]) for c in _in_scan_order(lab_o)),
                             a, eps)

    return _one_element_moves(labels, max_sweeps, eps, scan)


def _node_scan(js, ws, lab, a, eps):
    """The kernel's scan of one node: ``(best, target)`` over its stored row.

    The node's weights summed per neighbouring cluster in a dict, in the
    stored order as the kernel adds them (the same bits), the clusters
    scanned in order of first appearance as the kernel's scan meets them.
    """
    S = {}
    get = S.get
    for j, v in zip(js, ws):
        c = lab[j]
        S[c] = get(c, 0.0) + v
    return _best_cluster(get(a, 0.0), S.items(), a, eps)


def _group_of_keys(key, size):
    """For each ``key``, the index of its first occurrence (``size``: keys are ``< size``)."""
    nnz = key.shape[0]
    if size <= max(1 << 20, 16 * nnz):
        table = np.empty(size, dtype=np.int64)    # read only where written
        table[key[::-1]] = np.arange(nnz - 1, -1, -1, dtype=np.int64)
        return table[key], table
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return first[inv], (uniq, first)


def _lookup(table, key, keys):
    """The first index of each of ``keys`` in ``key`` (-1 where absent)."""
    if isinstance(table, tuple):
        uniq, first = table
        pos = np.minimum(np.searchsorted(uniq, keys), uniq.size - 1)
        return np.where(uniq[pos] == keys, first[pos], -1)
    g = table[keys]
    ok = (g >= 0) & (g < key.shape[0])
    g = np.where(ok, g, 0)
    return np.where(ok & (key[g] == keys), g, -1)


def _all_scans(indptr, indices, data, row, starts, lab, eps):
    """``(best, target, exact)`` of every node's scan at the labels ``lab``.

    The sums per (node, neighbouring cluster) by :func:`numpy.bincount`,
    which adds in the stored order from 0.0 as the kernel does.  The
    kernel's scan moves to a cluster whose sum beats the running best by
    more than ``eps``: to the first stored cluster of the largest sum ``M``
    whenever ``M`` beats every smaller sum of the row (its own cluster's
    included) by more than ``eps``.  The rows where it does not (near
    ties, non-finite sums) have ``exact`` False: the caller scans those one
    by one.
    """
    n = lab.shape[0]
    nnz = indices.shape[0]
    target = lab.copy()
    if nnz == 0:
        return np.zeros(n), target, np.ones(n, dtype=bool)
    c = lab[indices]
    key = row * n + c
    group, table = _group_of_keys(key, n * n)
    sums = np.bincount(group, weights=data, minlength=nnz)
    v = sums[group]
    # the sum of each node's own cluster (0.0 without such a neighbour)
    g0 = _lookup(table, key, np.arange(n, dtype=np.int64) * n + lab)
    b0 = np.where(g0 >= 0, sums[np.maximum(g0, 0)], 0.0)
    nonempty = indptr[1:] > indptr[:-1]
    M = np.full(n, -np.inf)
    M[nonempty] = np.maximum.reduceat(v, starts)
    Mr = M[row]
    near = ((v < Mr) & (v + eps >= Mr)) | ~np.isfinite(v)
    bad = np.zeros(n, dtype=bool)
    bad[row[near]] = True
    up = M > b0
    bad = (bad & up) | (up & (b0 + eps >= M)) | ~np.isfinite(b0)
    first = np.where(v == Mr, np.arange(nnz), nnz)
    k = np.full(n, nnz)
    k[nonempty] = np.minimum.reduceat(first, starts)
    go = up & ~bad
    best = b0
    best[go] = M[go]
    target[go] = c[k[go]]
    return best, target, ~bad


def sparse_one_element_moves(indptr, indices, data, labels, max_sweeps, eps):
    """Best one-element moves over the stored edges; ``labels`` in place; the sweeps run.

    The kernel's moves in the kernel's order, so the same labels and
    sweeps.  Every node's scan is made at once at the start
    (:func:`_all_scans`, the kernel's sums bit for bit).  A node's scan
    depends only on its neighbours' labels, so it holds until a neighbour
    moves; then it is made again, one node at a time (:func:`_node_scan`),
    at the node's next visit.  Only the nodes whose scan is stale or asks
    for a move or a new singleton (decided at the visit on the cluster
    sizes of the moment, as in the kernel) are visited, in index order.
    """
    n = labels.shape[0]
    eps = float(eps)
    if not eps >= 0.0:
        return _scalar_moves(indptr, indices, data, labels, max_sweeps, eps)
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    data = np.asarray(data, dtype=np.float64)
    deg = np.diff(indptr)
    row = np.repeat(np.arange(n, dtype=np.int64), deg)
    starts = indptr[:-1][deg > 0]
    lab_arr = np.asarray(labels, dtype=np.int64)
    best_a, target_a, fresh_a = _all_scans(indptr, indices, data, row,
                                           starts, lab_arr, eps)
    cand = set(np.flatnonzero((target_a != lab_arr) | (0.0 > best_a + eps)
                              | ~fresh_a).tolist())
    if not cand:
        return 1 if max_sweeps > 0 else 0
    ptr = indptr.tolist()
    nbr = indices.tolist()
    val = data.tolist()
    lab = lab_arr.tolist()
    best_l = best_a.tolist()
    target_l = target_a.tolist()
    fresh = fresh_a.tolist()
    count, free = _cluster_counts(lab)
    sweeps = 0
    for sweep in range(int(max_sweeps)):
        sweeps = sweep + 1
        heap = sorted(cand)
        queued = set(heap)
        moved = False
        while heap:
            i = heapq.heappop(heap)
            a = lab[i]
            if not fresh[i]:
                best_l[i], target_l[i] = _node_scan(
                    nbr[ptr[i]:ptr[i + 1]], val[ptr[i]:ptr[i + 1]], lab, a,
                    eps)
                fresh[i] = True
            best = best_l[i]
            if _visit(lab, count, free, i, a, best, target_l[i], eps) == a:
                if not 0.0 > best + eps:
                    cand.discard(i)
                continue
            moved = True
            fresh[i] = False
            for j in nbr[ptr[i]:ptr[i + 1]]:
                fresh[j] = False
                cand.add(j)
                if j > i and j not in queued:
                    queued.add(j)
                    heapq.heappush(heap, j)
        if not moved:
            break
    labels[:] = lab
    return sweeps


def _scalar_moves(indptr, indices, data, labels, max_sweeps, eps):
    """The kernel's sweeps one node at a time (any ``eps``)."""
    lab = labels.tolist()
    ptr = indptr.tolist()
    nbr = indices.tolist()
    val = data.tolist()

    def scan(i, a):
        return _node_scan(nbr[ptr[i]:ptr[i + 1]], val[ptr[i]:ptr[i + 1]],
                          lab, a, eps)

    sweeps = _one_element_moves(lab, max_sweeps, eps, scan)
    labels[:] = lab
    return sweeps


def sparse_cost(rows, cols, a, labels):
    """:func:`metric_estimators._kernels.correlation_clustering.sparse_cost` in numpy.

    The same terms added in the same order (``np.cumsum`` adds one after
    the other; a term of an edge that costs nothing is ``0``), so the same
    bits.
    """
    same = labels[rows] == labels[cols]
    terms = np.where(a > 0.0, np.where(same, 0.0, a), np.where(same, -a, 0.0))
    return float(np.cumsum(terms)[-1]) if terms.size else 0.0
