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
"""

import numpy as np
from scipy import sparse

from ..solvers import numpy_kernels as npk

# numba kernels, loaded on first call (small dense problems run on numpy's)
best_one_element_moves = npk.lazy_kernel("correlation_clustering",
                                         "best_one_element_moves")
sparse_one_element_moves = npk.lazy_kernel("correlation_clustering",
                                           "sparse_one_element_moves")

__all__ = ["local_search", "merge_clusters"]


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


def local_search(A, labels, max_sweeps):
    """Alternate best one-element moves and merge rounds until neither helps.

    Returns ``(labels, sweeps)``: labels relabelled ``0, 1, ...`` and the
    one-element sweeps run (at most ``max_sweeps`` in all; a sweep is
    ``O(n^2)`` for a dense ``A``, ``O(|E|)`` for a sparse one).
    """
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
            # small graphs: the numpy moves (the same labels)
            moves = (npk.sparse_one_element_moves
                     if npk.use_numpy_sparse_cc(A.shape[0])
                     else sparse_one_element_moves)
            sweeps += int(moves(
                A.indptr.astype(np.int64), A.indices.astype(np.int64),
                np.ascontiguousarray(A.data), lab, left, eps))
        else:
            # small graphs: the numpy moves (the same labels), as the LP's path
            moves = (npk.best_one_element_moves
                     if npk.takes_numpy_path(
                         "correlation_clustering",
                         A.shape[0] <= npk.CC_NUMPY_MAX_NODES)
                     else best_one_element_moves)
            sweeps += int(moves(A, lab, left, eps))
        lab, merges = merge_clusters(A, lab, eps)
        if merges == 0:
            break
    return lab, sweeps
