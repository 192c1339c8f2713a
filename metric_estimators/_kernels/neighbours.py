"""numba kernel of the exact k-NN search: rank the screened candidates exactly.

Conventions: ``D`` is a block of *screened* squared distances (rows: queries
``rows`` of ``Q``, columns: all rows of ``R``); every column within
``threshold`` of its row is a candidate, and candidates are ranked by the
exact squared distance, summed over the features in order, then by index.
No fast-math: the summation order is fixed, so equal points give equal
distances.  The kernel knows nothing about the search's blocking.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

_OPTS = dict(cache=True, nogil=True)


@njit(inline="always", **_OPTS)
def _sqdist(Q, i, R, j):
    """``sum_f (Q[i, f] - R[j, f])^2``, features in order."""
    s = 0.0
    for f in range(Q.shape[1]):
        t = Q[i, f] - R[j, f]
        s += t * t
    return s


@njit(inline="always", **_OPTS)
def _insert(dist, idx, d, j):
    """Insert ``(d, j)`` into the sorted best-``k`` lists if it beats the last."""
    k = dist.shape[0]
    if d > dist[k - 1] or (d == dist[k - 1] and j > idx[k - 1]):
        return
    p = k - 1
    while p > 0 and (dist[p - 1] > d or (dist[p - 1] == d and idx[p - 1] > j)):
        dist[p] = dist[p - 1]
        idx[p] = idx[p - 1]
        p -= 1
    dist[p] = d
    idx[p] = j


@njit(**_OPTS)
def rank_candidates(Q, R, rows, D, slack, k):
    """The ``k`` best candidates of each row by (exact distance, index).

    Parameters
    ----------
    Q, R : ndarray of shape (n_q, d), (n_r, d)
        Query and reference points.
    rows : ndarray of int64, shape (m,)
        The queries of the block.
    D : ndarray of shape (m, n_r)
        Screened squared distances (the query's own column set to inf).
    slack : ndarray of shape (m,)
        Columns with ``D`` at most the row's ``k``-th smallest screened
        distance plus ``slack`` are candidates (at least ``k``).
    k : int

    Returns
    -------
    indices : ndarray of int64, shape (m, k)

    Two passes over each row: the ``k`` smallest screened distances (a
    sorted buffer of ``k``, the same ``k``-th value as ``np.partition``),
    then the exact ranking of the candidates.
    """
    m, n_r = D.shape
    out = np.empty((m, k), dtype=np.int64)
    best = np.empty(k)
    dist = np.empty(k)
    idx = np.empty(k, dtype=np.int64)
    for a in range(m):
        best[:] = np.inf
        for j in range(n_r):
            v = D[a, j]
            if v < best[k - 1]:
                p = k - 1
                while p > 0 and best[p - 1] > v:
                    best[p] = best[p - 1]
                    p -= 1
                best[p] = v
        t = best[k - 1] + slack[a]
        dist[:] = np.inf
        idx[:] = n_r
        for j in range(n_r):
            if D[a, j] <= t:
                _insert(dist, idx, _sqdist(Q, rows[a], R, j), j)
        for q in range(k):  # element loop: see _kernels' docstring
            out[a, q] = idx[q]
    return out


@njit(**_OPTS)
def rank_listed(Q, R, rows, candidates, exclude, k):
    """The ``k`` best of listed candidates of each row by (exact distance, index).

    Parameters
    ----------
    Q, R : ndarray of shape (n_q, d), (n_r, d)
        Query and reference points.
    rows : ndarray of int64, shape (m,)
        The queries.
    candidates : ndarray of int64, shape (m, c)
        Rows of ``R`` to rank for each query (e.g. from another k-NN search).
    exclude : ndarray of int64, shape (m,)
        A row of ``R`` never returned for that query (-1: none).
    k : int
        At most ``c`` minus one excluded.

    Returns
    -------
    indices : ndarray of int64, shape (m, k)
    kth : ndarray of shape (m,)
        The exact squared distance of the ``k``-th returned point.
    """
    m, c = candidates.shape
    n_r = R.shape[0]
    out = np.empty((m, k), dtype=np.int64)
    kth = np.empty(m)
    dist = np.empty(k)
    idx = np.empty(k, dtype=np.int64)
    for a in range(m):
        dist[:] = np.inf
        idx[:] = n_r
        for t in range(c):
            j = candidates[a, t]
            if j != exclude[a]:
                _insert(dist, idx, _sqdist(Q, rows[a], R, j), j)
        for q in range(k):  # element loop: see _kernels' docstring
            out[a, q] = idx[q]
        kth[a] = dist[k - 1]
    return out, kth
