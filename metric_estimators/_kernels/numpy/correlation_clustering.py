"""numpy twin of :mod:`metric_estimators._kernels.correlation_clustering`: local search and cost.

The same results as the kernels, bit for bit: the one-element moves are
the kernels' moves in the kernels' order (a loop over the nodes; the sums
of a node's weights per cluster added in the order the kernels add them:
:func:`numpy.bincount` on a dense row, a dict over a sparse row's few
neighbours), hence the same labels and sweep counts; the sparse cost adds
the same terms in the same order (:func:`numpy.cumsum`).
"""

import numpy as np

__all__ = ["best_one_element_moves", "sparse_cost", "sparse_one_element_moves"]


def _one_element_moves(labels, max_sweeps, eps, cluster_sums):
    """The sweeps of the dense one-element moves.

    ``cluster_sums(i)`` returns ``(S, met)``: the sums of node ``i``'s
    weights per cluster (``S`` of length ``n``, or None when ``i`` has no
    weight) and the clusters of its weights in the order the kernel's scan
    meets them.  A node moves to the first cluster whose sum beats its own
    by more than ``eps``, or to a free (empty) cluster when every sum,
    its own included, is below ``-eps``: the kernels' rule.
    """
    n = labels.shape[0]
    count = np.bincount(labels, minlength=n)
    free = [c for c in range(n - 1, -1, -1) if count[c] == 0]
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        moved = False
        for i in range(n):
            a = int(labels[i])
            best = 0.0
            target = a
            S, met = cluster_sums(i)
            if S is not None:
                best = S[a]
                for c in met:
                    if S[c] > best + eps:
                        best, target = S[c], c
            if count[a] > 1 and 0.0 > best + eps and free:
                target = free.pop()
            if target != a:
                count[a] -= 1
                if count[a] == 0:
                    free.append(a)
                count[target] += 1
                labels[i] = target
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

    def cluster_sums(i):
        others = idx != i
        lab_o = labels[others]
        return (np.bincount(lab_o, weights=A[i, others], minlength=n),
                _in_scan_order(lab_o))

    return _one_element_moves(labels, max_sweeps, eps, cluster_sums)


def sparse_one_element_moves(indptr, indices, data, labels, max_sweeps, eps):
    """Best one-element moves over the stored edges; ``labels`` in place; the sweeps run.

    The kernel's moves in the kernel's order, in plain Python (a node has
    few neighbours, too few for numpy to pay): a node's weights summed per
    neighbouring cluster in a dict, in the stored order as the kernel adds
    them (the same bits), its clusters scanned in order of first
    appearance as the kernel's scan meets them; so the same labels.  The
    best neighbouring cluster of a node is kept until the node or one of
    its neighbours moves (it depends on nothing else); the move to a new
    singleton, which depends on the cluster sizes, is decided afresh at
    every visit, as in the kernel.
    """
    n = labels.shape[0]
    lab = labels.tolist()
    ptr = indptr.tolist()
    nbr = indices.tolist()
    val = data.tolist()
    rows = [(nbr[ptr[i]:ptr[i + 1]], val[ptr[i]:ptr[i + 1]])
            for i in range(n)]
    count = [0] * n
    for c in lab:
        count[c] += 1
    free = [c for c in range(n - 1, -1, -1) if count[c] == 0]
    eps = float(eps)
    # per node: (best sum, its cluster) of the last scan, None when stale
    scan = [None] * n
    sweeps = 0
    for sweep in range(int(max_sweeps)):
        sweeps = sweep + 1
        moved = False
        for i in range(n):
            a = lab[i]
            kept = scan[i]
            if kept is None:
                js, ws = rows[i]
                S = {}
                get = S.get
                for j, v in zip(js, ws):
                    c = lab[j]
                    S[c] = get(c, 0.0) + v
                best = get(a, 0.0)
                target = a
                for c, v in S.items():
                    if v > best + eps:
                        best, target = v, c
                scan[i] = (best, target)
            else:
                best, target = kept
            if count[a] > 1 and 0.0 > best + eps and free:
                target = free.pop()
            if target != a:
                count[a] -= 1
                if count[a] == 0:
                    free.append(a)
                count[target] += 1
                lab[i] = target
                moved = True
                scan[i] = None
                for j in rows[i][0]:
                    scan[j] = None
        if not moved:
            break
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
