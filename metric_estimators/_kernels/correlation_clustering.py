"""numba kernels for correlation clustering: local moves and clustering costs.

* The W-weighted pair and triangle projections of the LP relaxation are in
  :mod:`metric_estimators._kernels.cc_pair_projections` and
  :mod:`metric_estimators._kernels.short_edge_triangles`.
* :func:`best_one_element_moves`: the local search of Elsner & Schudy,
  "Bounding and comparing methods for correlation clustering beyond ILP",
  NAACL-HLT Workshop on Integer Linear Programming for NLP (2009): "BOEM"
  moves one node at a time to the cluster (or a new singleton) that lowers
  the clustering cost most, until no move helps.
* :func:`sparse_one_element_moves` -- the same moves on a sparse signed
  graph, with the gains summed over the stored edges only.
* :func:`sparse_cost` -- the clustering cost over the stored edges.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

__all__ = ["best_one_element_moves", "sparse_cost", "sparse_one_element_moves"]


@njit(cache=True, nogil=True, inline="always")
def cluster_sizes_and_free_ids(labels):
    """Cluster sizes and a stack of the unused ids in ``[0, n)`` (smallest on top).

    The local searches take a new singleton's id from the top of the stack
    and push the id of a cluster that a move empties.
    """
    n = labels.shape[0]
    count = np.zeros(n, dtype=np.int64)
    for i in range(n):
        count[labels[i]] += 1
    free = np.empty(n, dtype=np.int64)
    nfree = 0
    for c in range(n - 1, -1, -1):
        if count[c] == 0:
            free[nfree] = c
            nfree += 1
    return count, free, nfree


@njit(cache=True, nogil=True, inline="always")
def move_node(i, a, target, labels, count, free, nfree):
    """Move node ``i`` from cluster ``a`` to ``target``; return ``(nfree, moved)``."""
    if target == a:
        return nfree, False
    count[a] -= 1
    if count[a] == 0:
        free[nfree] = a
        nfree += 1
    count[target] += 1
    labels[i] = target
    return nfree, True


@njit(cache=True, nogil=True)
def best_one_element_moves(A, labels, max_sweeps, eps):
    """Improve ``labels`` in place by single-node moves; return the sweeps run.

    ``A`` is the dense symmetric signed weight matrix (zero diagonal),
    ``labels`` integer cluster ids in ``[0, n)``.  For node ``i`` with
    ``S[c] = sum_{j != i, label_j = c} A_ij``, moving ``i`` from cluster ``a``
    to cluster ``b`` changes the cost (positive weights split plus negative
    weights joined) by ``S[a] - S[b]``, and to a new singleton by ``S[a]``.
    Nodes are visited in index order; a move is made only if it lowers the
    cost by more than ``eps``, so the cost strictly decreases and the search
    ends (deterministically) within ``max_sweeps`` sweeps of ``O(n^2)``.
    """
    n = labels.shape[0]
    count, free, nfree = cluster_sizes_and_free_ids(labels)
    S = np.zeros(n)
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        moved = False
        for i in range(n):
            Ai = A[i]
            for j in range(n):
                if j != i:
                    S[labels[j]] += Ai[j]
            a = labels[i]
            best = S[a]
            target = a
            for j in range(n):
                if j != i:
                    c = labels[j]
                    if S[c] > best + eps:
                        best = S[c]
                        target = c
            if count[a] > 1 and 0.0 > best + eps and nfree > 0:
                # a new singleton (S = 0) beats staying and every other
                # existing cluster
                nfree -= 1
                target = free[nfree]
            for j in range(n):
                if j != i:
                    S[labels[j]] = 0.0
            S[a] = 0.0
            nfree, did_move = move_node(i, a, target, labels, count, free, nfree)
            moved = moved or did_move
        if not moved:
            break
    return sweeps


@njit(cache=True, nogil=True)
def sparse_one_element_moves(indptr, indices, data, labels, max_sweeps, eps):
    """Best one-element moves over the stored edges; ``labels`` in place.

    As :func:`~metric_estimators._kernels.correlation_clustering.best_one_element_moves`
    with ``S[c] = sum_{j in N(i), label_j = c} A_ij`` over the neighbours
    only (a cluster without a neighbour of ``i`` has ``S = 0``, like a new
    singleton): a move to the neighbouring cluster with the largest ``S``,
    or to a new singleton, when it lowers the cost by more than ``eps``.
    ``O(m)`` per sweep.  Returns the sweeps run.
    """
    n = labels.shape[0]
    count, free, nfree = cluster_sizes_and_free_ids(labels)
    S = np.zeros(n)
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        moved = False
        for i in range(n):
            for k in range(indptr[i], indptr[i + 1]):
                S[labels[indices[k]]] += data[k]
            a = labels[i]
            best = S[a]
            target = a
            for k in range(indptr[i], indptr[i + 1]):
                c = labels[indices[k]]
                if S[c] > best + eps:
                    best = S[c]
                    target = c
            if count[a] > 1 and 0.0 > best + eps and nfree > 0:
                nfree -= 1
                target = free[nfree]
            for k in range(indptr[i], indptr[i + 1]):
                S[labels[indices[k]]] = 0.0
            S[a] = 0.0
            nfree, did_move = move_node(i, a, target, labels, count, free, nfree)
            moved = moved or did_move
        if not moved:
            break
    return sweeps


@njit(cache=True, nogil=True)
def sparse_cost(rows, cols, a, labels):
    """``sum a_e [split] over a_e > 0`` plus ``sum |a_e| [together] over a_e < 0``."""
    cost = 0.0
    for e in range(a.shape[0]):
        same = labels[rows[e]] == labels[cols[e]]
        if a[e] > 0.0:
            if not same:
                cost += a[e]
        elif same:
            cost -= a[e]
    return cost
