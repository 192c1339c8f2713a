"""One exact Euclidean k-nearest-neighbour search, with one tie rule.

Every neighbourhood the package builds goes through :func:`nearest`: LMNN's
target neighbours, OMDML's and LODML's k-NN graphs and
:func:`metric_estimators.constraints.knn_triplets`.

The result
----------
For a query ``q`` the neighbours are the first ``k`` reference points in the
order of ``(distance, index)``: the squared Euclidean distance
``sum_f (q_f - r_f)^2`` evaluated from the coordinate differences, summed
over the features in order, and, among equal distances, the **lower index
first**.  The rule is guaranteed, not left to the order in which a partial
sort happens to return ties; in particular duplicated points are at distance
exactly 0 from each other and equal candidates are taken in index order.  The
distances themselves are not returned: the search sorts by them and nothing
else depends on their last bits.

How
---
Distances are first screened blockwise through the Gram matrix,
``|q|^2 + |r|^2 - 2 q.r`` on centred copies (one BLAS product per block;
memory bounded by ``block`` entries, never ``n x n``).  That form carries a
round-off of at most ``~(d + 4) eps (|q|^2 + max |r|^2)``; every reference
point within twice that margin of the ``k``-th screened distance is kept as
a candidate (usually exactly ``k`` of them), and the candidates are ranked by
their distances recomputed from the coordinate differences, then by index
(:func:`metric_estimators._kernels.neighbours.rank_candidates` or its numpy
twin: the same result bit for bit).
Any point of the true first ``k`` lies within the margin, so the screening
never loses one.

Large reference sets (:func:`knn_indices` on at least ``SKLEARN_MIN_REFS``
points, e.g. a class of a 10^6-point LMNN problem) take their candidates
from scikit-learn's :class:`~sklearn.neighbors.NearestNeighbors` instead
(its chunked, multi-threaded brute force or a tree; ``k + 1 + _EXTRA``
candidates per point), ranked by the same exact rule.  A row is kept only
if scikit-learn's farthest candidate lies beyond the exact ``k``-th
distance by twice the round-off margin (so no unlisted point can belong to
the first ``k``); the other rows, and rows with more ties than candidates,
are searched again by the blockwise screening.  The result is the same.
"""

import numpy as np

from .._linalg import BLOCK, SMALL_BLOCK, block_rows

__all__ = ["knn_edges", "knn_indices", "nearest", "nearest_in_groups"]

# Safety factor on the round-off bound of the screened distances.
_MARGIN = 32.0
# knn_indices on at least this many points asks scikit-learn's
# NearestNeighbors for k + 1 + _EXTRA candidates (see the module docstring).
SKLEARN_MIN_REFS = 50_000
_EXTRA = 8


def nearest(Q, R, k, *, self_index=None, block=BLOCK, kernels):
    """The ``k`` nearest rows of ``R`` to every row of ``Q``, ties to the lower index.

    Parameters
    ----------
    Q : ndarray of shape (n_queries, n_features)
        Query points.
    R : ndarray of shape (n_refs, n_features)
        Reference points.
    k : int
        Neighbours per query, ``0 <= k <= n_refs`` (``n_refs - 1`` with
        ``self_index``).
    self_index : ndarray of shape (n_queries,) or None, default=None
        Row of ``R`` that is the query itself and must not be returned
        (not its duplicates: those are at distance 0 and come first).
    block : int, default=BLOCK
        Most entries of a screened distance block (8 bytes each); rows per
        block: :func:`~metric_estimators._linalg.block_rows`.
    kernels : Kernels
        The fit's kernels (:func:`metric_estimators._backend.choose`).

    Returns
    -------
    indices : ndarray of shape (n_queries, k), int64
        Rows of ``R``, nearest first; equal distances in increasing index.
    """
    Q = np.asarray(Q, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    n_q, n_r = Q.shape[0], R.shape[0]
    limit = n_r - (self_index is not None)
    if not 0 <= k <= limit:
        raise ValueError(f"k={k} must lie in [0, {limit}].")
    out = np.empty((n_q, k), dtype=np.int64)
    if k == 0 or n_q == 0:
        return out
    centre = R.mean(axis=0)
    Qc, Rc = Q - centre, R - centre
    sq_q = np.einsum("ij,ij->i", Qc, Qc)
    sq_r = np.einsum("ij,ij->i", Rc, Rc)
    eps = np.finfo(np.float64).eps
    margin = _MARGIN * (Q.shape[1] + 4) * eps * (sq_q + sq_r.max())
    # up to three blocks of float64 at once (D, and in the numpy twin
    # np.partition's copy and the candidate mask)
    step = block_rows(n_r, block, small=SMALL_BLOCK // 4)
    rank = kernels.neighbours.rank_candidates
    for start in range(0, n_q, step):
        rows = np.arange(start, min(start + step, n_q))
        D = Qc[rows] @ Rc.T
        D *= -2.0
        D += sq_r[None, :]
        D += sq_q[rows, None]
        if self_index is not None:
            D[np.arange(rows.size), self_index[rows]] = np.inf
        # every point within the margin of the k-th smallest screened
        # distance is a candidate (usually exactly k of them)
        out[rows] = rank(Q, R, rows, D, 2.0 * margin[rows], k)
    return out


def knn_indices(X, k, *, block=BLOCK, kernels):
    """The ``k`` nearest other points of every row of ``X`` (see :func:`nearest`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    k : int
        ``0 <= k <= n_samples - 1``.
    block, kernels : see :func:`nearest`.

    Returns
    -------
    indices : ndarray of shape (n_samples, k), int64
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] >= SKLEARN_MIN_REFS and k > 0:
        return _knn_by_sklearn(X, k, block, kernels)
    return nearest(X, X, k, self_index=np.arange(X.shape[0]), block=block,
                   kernels=kernels)


def _knn_by_sklearn(X, k, block, kernels):
    """:func:`knn_indices` with candidates from scikit-learn's NearestNeighbors.

    Same result as the blockwise screening (see the module docstring).
    """
    from sklearn.neighbors import NearestNeighbors

    n, d = X.shape
    n_cand = min(n, k + 1 + _EXTRA)
    far, cand = NearestNeighbors(n_neighbors=n_cand).fit(X).kneighbors(X)
    rows = np.arange(n)
    out, kth = kernels.neighbours.rank_listed(X, X, rows, cand.astype(np.int64),
                                              rows, k)
    if n_cand < n:
        # complete iff every unlisted point is farther than the k-th; both
        # distances carry round-off (scikit-learn's from uncentred Gram terms)
        sq = np.einsum("ij,ij->i", X, X)
        margin = _MARGIN * (d + 4) * np.finfo(np.float64).eps * (sq + sq.max())
        redo = np.flatnonzero(~(far[:, -1] ** 2 > kth + 2.0 * margin))
        if redo.size:
            out[redo] = nearest(X[redo], X, k, self_index=redo, block=block,
                                kernels=kernels)
    return out


def nearest_in_groups(X, groups, k, *, block=BLOCK, progress=None, kernels):
    """The ``k`` nearest other points of the same group, padded with -1.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    groups : ndarray of shape (n_samples,), int
        Group (class, level) of every point.
    k : int
        Neighbours per point; a group of ``m <= k`` points gives its points
        ``m - 1`` neighbours (the rest of the row is -1).
    block : int, default=BLOCK
        See :func:`nearest`.
    progress : callable or None, default=None
        ``progress(text)`` after every group (e.g. a throttled report line).
    kernels : Kernels
        See :func:`nearest`.

    Returns
    -------
    indices : ndarray of shape (n_samples, k), int64
        Global indices; equal distances in increasing index.
    """
    X = np.asarray(X, dtype=np.float64)
    out = np.full((X.shape[0], k), -1, dtype=np.int64)
    done = 0
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)  # increasing: the tie rule holds
        kg = min(k, members.size - 1)
        if kg < 1:
            continue
        out[members, :kg] = members[knn_indices(X[members], kg, block=block,
                                                kernels=kernels)]
        done += members.size
        if progress is not None:
            progress(f"target neighbours: {done} of {X.shape[0]} points")
    return out


def knn_edges(X, k, groups=None, *, block=BLOCK, kernels):
    """Directed k-NN graph edges ``(i, j)``: ``j`` among the ``k`` nearest of ``i``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    k : int
        Neighbours per point (fewer in groups of at most ``k`` points).
    groups : ndarray of shape (n_samples,) or None, default=None
        Search among the points of the same group only; None: all points.
    block, kernels : see :func:`nearest`.

    Returns
    -------
    rows, cols : ndarray of int64
        The edges, group by group (increasing group), then by ``i``, then
        nearest ``j`` first.
    """
    n = X.shape[0]
    if groups is None:
        groups = np.zeros(n, dtype=np.int64)
    neighbours = nearest_in_groups(X, groups, k, block=block, kernels=kernels)
    order = np.argsort(groups, kind="stable")
    rows = np.repeat(order, neighbours.shape[1])
    cols = neighbours[order].ravel()
    keep = cols >= 0
    return rows[keep], cols[keep]
