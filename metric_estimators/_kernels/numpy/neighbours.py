"""numpy twin of :mod:`metric_estimators._kernels.neighbours`: the exact candidate ranking.

Same functions, arguments and outputs, and the same result bit for bit: the
exact squared distances are summed over the features in order (a
cumulative sum, as the kernel's loop), and the candidates are sorted by
(distance, index).  Vectorised over all candidates of a block (usually
``k`` per row of :func:`rank_candidates`).
"""

import numpy as np

__all__ = ["rank_candidates", "rank_listed"]


def _sqdist_in_order(Q, qi, R, rj):
    """``sum_f (Q[qi, f] - R[rj, f])^2`` per pair, features summed in order."""
    diff = np.take(Q, qi, axis=0)
    diff -= np.take(R, rj, axis=0)
    diff *= diff
    if diff.shape[1] == 0:
        return np.zeros(qi.size)
    return np.cumsum(diff, axis=1)[:, -1]


def rank_candidates(Q, R, rows, D, slack, k):
    """The ``k`` best candidates of each row by (exact distance, index).

    See :func:`metric_estimators._kernels.neighbours.rank_candidates`.
    """
    threshold = np.partition(D, k - 1, axis=1)[:, k - 1] + slack
    r, c = np.nonzero(D <= threshold[:, None])
    dist = _sqdist_in_order(Q, rows[r], R, c)
    order = np.lexsort((c, dist, r))
    starts = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=D.shape[0]))[:-1]])
    return c[order][starts[:, None] + np.arange(k)].astype(np.int64)


def rank_listed(Q, R, rows, candidates, exclude, k):
    """The ``k`` best of listed candidates of each row by (exact distance, index).

    See :func:`metric_estimators._kernels.neighbours.rank_listed`; returns
    ``(indices, kth)``.
    """
    m, c = candidates.shape
    cand = np.asarray(candidates, dtype=np.int64)
    dist = _sqdist_in_order(Q, np.repeat(rows, c), R, cand.ravel()).reshape(m, c)
    # an excluded candidate is never returned: the kernel's empty slot
    # (distance inf, index n_r) stands in for it
    excluded = cand == np.asarray(exclude)[:, None]
    dist[excluded] = np.inf
    cand = np.where(excluded, R.shape[0], cand)
    # by row: distance, then index (lexsort's last key is the primary one)
    order = np.lexsort((cand, dist), axis=1)[:, :k]
    out = np.take_along_axis(cand, order, axis=1)
    kth = np.take_along_axis(dist, order[:, k - 1:k], axis=1)[:, 0] if k else np.empty(m)
    return out, kth
