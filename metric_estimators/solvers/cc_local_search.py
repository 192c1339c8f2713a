"""Local search for correlation clustering: one-element moves and cluster merges.

Both moves never raise the cost of a clustering of the signed graph ``A``
(positive weights split plus negative weights joined):

* *best one-element moves* (Elsner & Schudy, "Bounding and comparing methods
  for correlation clustering beyond ILP", 2009): each node moves to the
  cluster, or a new singleton, that lowers the cost most;
* *cluster merges*: joining clusters ``p`` and ``q`` changes the cost by
  ``-W_pq``, ``W_pq = sum_{i in p, j in q} A_ij``, so every pair with
  ``W_pq > 0`` is worth merging.  One-element moves cannot find these: on
  sparse graphs two clusters joined by one positive edge and no negative
  one cost less merged, but moving their nodes one at a time only raises
  the cost.  The merges of a round are a greedy matching of the cluster
  pairs by decreasing ``W_pq`` (``O(|E|)`` per round with scipy.sparse),
  so each cluster merges at most once per round and every merge of the
  round lowers the cost by its own ``W_pq``.

:func:`local_search` alternates the two until neither helps.

:func:`recombine` improves a pool of such local optima by crossing them:
the *common refinement* of two clusterings (``i`` and ``j`` together iff
together in both) keeps what they agree on -- the "core groups" of
Ovelgönne & Geyer-Schulz ("An ensemble learning strategy for graph
clustering", DIMACS Implementation Challenge, 2012), the overlay of
partitions used as a crossover by Sanders & Schulz ("Distributed
evolutionary graph partitioning", ALENEX 2012) -- and the local search
started there reassembles it, often below both parents: the moves and merges
escape the local optimum of either parent.
"""

import hashlib
import itertools
import time

import numpy as np
from scipy import sparse

__all__ = ["cheapest_distinct", "common_refinement", "local_search",
           "local_search_from_singletons",
           "merge_clusters", "recombine"]


def _indicator(labels):
    """The sparse n x k cluster indicator of labels ``0 .. k-1``."""
    n = labels.size
    return sparse.csr_matrix((np.ones(n), (np.arange(n), labels)),
                             shape=(n, int(labels.max()) + 1 if n else 0))


def merge_clusters(A, labels, eps):
    """One round of greedy merges; return ``(labels 0 .. k-1, merges made)``.

    ``A`` is dense or sparse (symmetric, zero diagonal); a pair of
    clusters is merged if the total weight between them exceeds ``eps``.
    """
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    if labels.size == 0:
        return labels, 0
    P = _indicator(labels)
    if sparse.issparse(A):
        W = (P.T @ (A @ P)).tocoo()
    else:
        W = sparse.coo_matrix(P.T @ np.asarray(A @ P))
    keep = (W.row < W.col) & (W.data > eps)
    r, c, w = W.row[keep], W.col[keep], W.data[keep]
    order = np.lexsort((c, r, -w))  # heaviest first, ties by ids
    used = np.zeros(P.shape[1], dtype=bool)
    target = np.arange(P.shape[1])
    merges = 0
    for i in order:
        p, q = r[i], c[i]
        if not (used[p] or used[q]):
            used[p] = used[q] = True
            target[q] = p
            merges += 1
    return np.unique(target[labels], return_inverse=True)[1].astype(np.int64), merges


def local_search(A, labels, max_sweeps, *, kernels):
    """Alternate best one-element moves and merge rounds until neither helps.

    Returns ``(labels, sweeps)``: labels relabelled ``0, 1, ...`` and the
    one-element sweeps run (at most ``max_sweeps`` in all; a sweep is
    ``O(n^2)`` for a dense ``A``, ``O(|E|)`` for a sparse one).  The moves
    run on ``kernels``, those of the fit (:mod:`metric_estimators._backend`;
    both give the same labels).
    """
    moves = kernels.correlation_clustering
    is_sparse = sparse.issparse(A)
    if is_sparse:
        A = sparse.csr_matrix(A, dtype=np.float64)
        A.sort_indices()
        scale = float(np.abs(A.data).max(initial=0.0))
    else:
        A = np.ascontiguousarray(A, dtype=np.float64)
        scale = float(np.abs(A).max(initial=0.0))
    eps = 1e-12 * max(scale, np.finfo(float).tiny)
    lab = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    sweeps = 0
    while sweeps < max_sweeps:
        left = int(max_sweeps) - sweeps
        if is_sparse:
            sweeps += int(moves.sparse_one_element_moves(
                A.indptr.astype(np.int64), A.indices.astype(np.int64),
                np.ascontiguousarray(A.data), lab, left, eps))
        else:
            sweeps += int(moves.best_one_element_moves(A, lab, left, eps))
        lab, merges = merge_clusters(A, lab, eps)
        if merges == 0:
            break
    return lab, sweeps


def common_refinement(a, b):
    """Labels ``0 .. k-1`` of the meet of two clusterings of the same nodes.

    Nodes ``i`` and ``j`` share a label iff they share one in ``a`` and in
    ``b``.
    """
    a = np.unique(a, return_inverse=True)[1].astype(np.int64)
    b = np.unique(b, return_inverse=True)[1].astype(np.int64)
    if a.size == 0:
        return a
    return np.unique(a * (int(b.max()) + 1) + b,
                     return_inverse=True)[1].astype(np.int64)


def _canonical_key(labels):
    """A digest identifying a clustering whatever its label names."""
    _, first, inverse = np.unique(labels, return_index=True,
                                  return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return hashlib.blake2b(rank[inverse].tobytes(), digest_size=16).digest()


def cheapest_distinct(entries, size):
    """The ``size`` cheapest distinct ``(labels, cost, ...)`` entries, cheapest first.

    Two entries are the same clustering if their labels differ only by
    names; of those the first is kept, and equal costs keep their order.
    """
    seen, out = set(), []
    for entry in sorted(entries, key=lambda e: e[1]):
        key = _canonical_key(entry[0])
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out[:size]


def local_search_from_singletons(A, max_sweeps, rng, *, kernels):
    """:func:`local_search` from singletons, nodes swept in a random order.

    A clustering found without the LP: on an early LP iterate, whose
    roundings can join whole communities, often the cheaper start.  The
    order (``rng.permutation``) changes which local optimum is reached, so
    several calls give several starts for :func:`recombine`.
    Returns ``(labels, sweeps)``; ``kernels`` as for :func:`local_search`.
    """
    n = A.shape[0]
    order = rng.permutation(n)
    if sparse.issparse(A):
        B = sparse.csr_matrix(A)[order][:, order]
    else:
        B = np.asarray(A)[np.ix_(order, order)]
    labels, sweeps = local_search(B, np.arange(n), max_sweeps, kernels=kernels)
    out = np.empty(n, dtype=np.int64)
    out[order] = labels
    return np.unique(out, return_inverse=True)[1].astype(np.int64), sweeps


def recombine(A, pool, cost, max_sweeps, size=8, max_rounds=8, crossed=None,
              deadline=None, *, kernels):
    """Cross the cheapest clusterings of ``pool``; return the improved pool.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, n)
        The signed graph (as for :func:`local_search`).
    pool : list of ``(labels, cost, sweeps)``
        Clusterings of ``A`` with their costs (``sweeps``: the local-search
        sweeps that made them, carried along for the caller).
    cost : callable ``cost(A, labels) -> float``
        The correlation clustering cost.
    max_sweeps : int
        Sweeps of each :func:`local_search`.
    size : int, default=8
        Clusterings crossed per round: the ``size`` cheapest distinct ones,
        every pair of them once.
    max_rounds : int, default=8
        Rounds at most; the crossing stops at the first round that finds
        nothing cheaper than its cheapest parent.
    crossed : set or None
        Pairs already crossed (updated in place): pass the same set to
        later calls on a growing pool so that they cross only new pairs.
    deadline : float or None
        A ``time.perf_counter()`` value: no crossing starts after it (the
        pairs left are not marked crossed), and the pool found so far is
        returned.
    kernels : Kernels
        Those of the fit, for :func:`local_search`.

    Returns
    -------
    pool : list of ``(labels, cost, sweeps)``
        The ``size`` cheapest distinct clusterings seen, cheapest first
        (ties: the earlier one first).  Its head is never more costly than
        the cheapest clustering of the input.
    """
    pool = cheapest_distinct(pool, size)
    crossed = set() if crossed is None else crossed
    for _ in range(max_rounds):
        if len(pool) < 2:
            break
        best = pool[0][1]
        keys = [_canonical_key(entry[0]) for entry in pool]
        children = []
        late = False
        for i, j in itertools.combinations(range(len(pool)), 2):
            pair = (keys[i], keys[j])
            if pair in crossed:
                continue
            if deadline is not None and time.perf_counter() >= deadline:
                late = True
                break
            crossed.add(pair)
            labels, sweeps = local_search(
                A, common_refinement(pool[i][0], pool[j][0]), max_sweeps,
                kernels=kernels)
            children.append((labels, cost(A, labels), sweeps))
        if not children:
            break
        pool = cheapest_distinct(pool + children, size)
        if late or not pool[0][1] < best:
            break
    return pool
