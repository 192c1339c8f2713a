"""Image-ranking style evaluation of a learned metric, and ordinal toy data.

scikit-learn has ``mean_absolute_error`` and ``ndcg_score`` and scipy has
``kendalltau``; what they lack is the glue for *retrieval by nearest
neighbours*: predict a query's rank by a vote of its k nearest training
points, and score the ranked list of training points returned for a query.
Every helper takes points already mapped into the space to evaluate (for a
learner, ``learner.transform(X)``; for Euclidean, ``X`` itself).

Relevance of a retrieved training point ``j`` for a query ``q`` (``relevance``):

- ``'linear'`` (default): ``1 - |y_q - y_j| / (y_max - y_min)``, graded in
  ``[0, 1]``, with the label range taken over the training and query labels;
- ``'exact'``: 1 if ``y_j == y_q`` else 0 (label agreement);
- a callable ``f(y_query[:, None], y_train[None, :])`` returning the
  non-negative ``(n_queries, n_train)`` relevance matrix.
"""

import numpy as np
from scipy.stats import kendalltau
from sklearn.metrics import mean_absolute_error, ndcg_score
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from ._validation import check_array_2d, check_int

__all__ = [
    "knn_rank_predict",
    "retrieval_ndcg",
    "precision_at_k",
    "ranking_report",
    "make_ordinal",
]


def _check_labels(y, n, name):
    y = np.asarray(y)
    if y.dtype.kind not in "iufb":
        raise TypeError(f"{name} must hold numeric ordered labels, got dtype {y.dtype}.")
    y = y.astype(np.float64).ravel()
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} labels for {n} points.")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return y


def _check_k(k, name, n_train):
    k = check_int(k, name, 1)
    if k > n_train:
        raise ValueError(f"{name}={k} exceeds the {n_train} training points.")
    return k


def _validate(Z_train, y_train, Z_query, k, k_name):
    Z_train = check_array_2d(Z_train, "Z_train")
    Z_query = check_array_2d(Z_query, "Z_query")
    if Z_train.shape[1] != Z_query.shape[1]:
        raise ValueError(
            f"Z_train has {Z_train.shape[1]} columns but Z_query has "
            f"{Z_query.shape[1]}."
        )
    y_train = _check_labels(y_train, Z_train.shape[0], "y_train")
    k = _check_k(k, k_name, Z_train.shape[0])
    return Z_train, y_train, Z_query, k


def knn_rank_predict(Z_train, y_train, Z_query, *, n_neighbors=5, vote="median"):
    """Predict the rank of each query by a vote of its nearest training points.

    Parameters
    ----------
    Z_train : array-like of shape (n_train, n_dims)
        Training points, already in the space to evaluate.
    y_train : array-like of shape (n_train,)
        Their ordered labels.
    Z_query : array-like of shape (n_queries, n_dims)
    n_neighbors : int, default=5
    vote : {'median', 'mean', 'mode'}, default='median'
        ``'median'``: the lower median of the neighbours' labels (always a
        label seen in training; minimises the absolute error of the vote);
        ``'mean'``: their mean; ``'mode'``: the most frequent label, ties
        broken towards the nearest neighbour's label.

    Returns
    -------
    y_pred : ndarray of shape (n_queries,)
    """
    Z_train, y_train, Z_query, k = _validate(
        Z_train, y_train, Z_query, n_neighbors, "n_neighbors"
    )
    if vote not in ("median", "mean", "mode"):
        raise ValueError(f"vote must be 'median', 'mean' or 'mode', got {vote!r}.")
    ind = NearestNeighbors(n_neighbors=k).fit(Z_train).kneighbors(
        Z_query, return_distance=False
    )
    labels = y_train[ind]  # (n_queries, k), nearest first
    if vote == "mean":
        return labels.mean(axis=1)
    if vote == "median":
        return np.sort(labels, axis=1)[:, (k - 1) // 2]
    out = np.empty(labels.shape[0])
    for q, row in enumerate(labels):
        values, counts = np.unique(row, return_counts=True)
        best = values[counts == counts.max()]
        # Tie: the candidate that occurs first in the nearest-first list.
        first = [np.flatnonzero(row == v)[0] for v in best]
        out[q] = best[int(np.argmin(first))]
    return out


def _relevance(y_query, y_train, relevance):
    if callable(relevance):
        R = np.asarray(relevance(y_query[:, None], y_train[None, :]), dtype=float)
        if R.shape != (y_query.size, y_train.size):
            raise ValueError(
                "relevance callable must return an array of shape "
                f"({y_query.size}, {y_train.size}), got {R.shape}."
            )
        if not np.all(np.isfinite(R)) or np.any(R < 0):
            raise ValueError("relevance must be finite and non-negative.")
        return R
    if relevance == "exact":
        return (y_query[:, None] == y_train[None, :]).astype(float)
    if relevance == "linear":
        lo = min(y_query.min(), y_train.min())
        hi = max(y_query.max(), y_train.max())
        span = hi - lo if hi > lo else 1.0
        return 1.0 - np.abs(y_query[:, None] - y_train[None, :]) / span
    raise ValueError(
        f"relevance must be 'linear', 'exact' or a callable, got {relevance!r}."
    )


def retrieval_ndcg(Z_train, y_train, Z_query, y_query, *, k=10, relevance="linear"):
    """Mean NDCG@k of the training points ranked by distance to each query.

    Every query ranks *all* training points by increasing distance; the
    ideal ranking is the best possible one over all training points (not
    only the retrieved ones).  Ties in distance are averaged, as in
    :func:`sklearn.metrics.ndcg_score`, which does the scoring.

    Parameters
    ----------
    Z_train, y_train, Z_query : see :func:`knn_rank_predict`
    y_query : array-like of shape (n_queries,)
    k : int, default=10
    relevance : {'linear', 'exact'} or callable, default='linear'
        See the module docstring.

    Returns
    -------
    ndcg : float in [0, 1]
    """
    Z_train, y_train, Z_query, k = _validate(Z_train, y_train, Z_query, k, "k")
    y_query = _check_labels(y_query, Z_query.shape[0], "y_query")
    R = _relevance(y_query, y_train, relevance)
    total = 0.0
    for start in range(0, Z_query.shape[0], 256):
        stop = start + 256
        diff = Z_query[start:stop, None, :] - Z_train[None, :, :]
        score = -np.einsum("qtf,qtf->qt", diff, diff)
        Rb = R[start:stop]
        # ndcg_score needs a positive ideal DCG; a query with no relevant
        # point at all contributes 0 (it cannot be ranked well or badly).
        ok = Rb.max(axis=1) > 0
        if np.any(ok):
            total += ndcg_score(Rb[ok], score[ok], k=k) * int(ok.sum())
    return total / Z_query.shape[0]


def precision_at_k(Z_train, y_train, Z_query, y_query, *, k=10):
    """Mean fraction of the k nearest training points with the query's label.

    Parameters
    ----------
    Z_train, y_train, Z_query : see :func:`knn_rank_predict`
    y_query : array-like of shape (n_queries,)
        The queries' labels.
    k : int, default=10
        Number of retrieved training points per query.

    Returns
    -------
    precision : float
    """
    Z_train, y_train, Z_query, k = _validate(Z_train, y_train, Z_query, k, "k")
    y_query = _check_labels(y_query, Z_query.shape[0], "y_query")
    ind = NearestNeighbors(n_neighbors=k).fit(Z_train).kneighbors(
        Z_query, return_distance=False
    )
    return float(np.mean(y_train[ind] == y_query[:, None]))


def ranking_report(
    Z_train, y_train, Z_query, y_query, *, n_neighbors=5, k=10, relevance="linear"
):
    """All ranking measures at once.

    Parameters
    ----------
    Z_train, y_train, Z_query : see :func:`knn_rank_predict`
    y_query : array-like of shape (n_queries,)
        The queries' labels.
    n_neighbors : int, default=5
        Neighbours in the vote of :func:`knn_rank_predict` (for ``mae`` and
        ``kendall_tau``).
    k : int, default=10
        Retrieval depth of ``ndcg@k`` and ``precision@k``.
    relevance : {'linear', 'exact'} or callable, default='linear'
        Graded relevance of :func:`retrieval_ndcg`.

    Returns
    -------
    report : dict
        ``mae``: mean absolute error of the k-NN median vote
        (``n_neighbors``); ``kendall_tau``: Kendall's tau-b between the
        predicted and the true ranks of the queries; ``ndcg@k`` (graded
        ``relevance``) and ``precision@k`` (exact label agreement) of
        retrieval.
    """
    y_pred = knn_rank_predict(Z_train, y_train, Z_query, n_neighbors=n_neighbors)
    y_query_arr = _check_labels(y_query, np.asarray(Z_query).shape[0], "y_query")
    tau = kendalltau(y_pred, y_query_arr).statistic
    return {
        "mae": float(mean_absolute_error(y_query_arr, y_pred)),
        "kendall_tau": float(tau) if np.isfinite(tau) else 0.0,
        f"ndcg@{k}": float(
            retrieval_ndcg(Z_train, y_train, Z_query, y_query, k=k, relevance=relevance)
        ),
        f"precision@{k}": precision_at_k(Z_train, y_train, Z_query, y_query, k=k),
    }


def make_ordinal(
    n_samples=500,
    n_informative=5,
    n_noise=20,
    n_levels=8,
    *,
    noise=0.3,
    noise_scale=3.0,
    nonlinear=False,
    return_score=False,
    random_state=None,
):
    """Synthetic ordinal data: a latent score binned into ordered levels.

    ``n_informative`` standard normal features define the latent score
    ``s = X_inf @ w + noise * eps`` (``w`` a random unit vector, ``eps``
    standard normal); ``s`` is cut at its quantiles into ``n_levels`` levels
    ``0 < 1 < ...``.  ``n_noise`` features of pure noise with standard
    deviation ``noise_scale`` drown the score for Euclidean neighbours.

    With ``nonlinear=True`` the informative features first go through
    ``x -> x + 0.5 sin(2 x)`` and the score is ``tanh(X_inf @ w) + 0.5
    X_inf[:, 0]`` (plus noise), so no linear map recovers it exactly.

    Parameters
    ----------
    n_samples : int, default=500
        Number of points.
    n_informative : int, default=5
        Features that define the latent score.
    n_noise : int, default=20
        Pure-noise features appended after the informative ones.
    n_levels : int, default=8
        Number of ordered levels (quantile bins of the score).
    noise : float, default=0.3
        Standard deviation of the noise added to the latent score.
    noise_scale : float, default=3.0
        Standard deviation of the noise features.
    nonlinear : bool, default=False
        Use the non-linear score described above.
    return_score : bool, default=False
        Also return the latent score.
    random_state : int, RandomState instance or None, default=None
        Seeds the data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_informative + n_noise)
    y : ndarray of int64, shape (n_samples,)
    score : ndarray of shape (n_samples,)
        Only if ``return_score``: the latent score (before binning).
    """
    for value, name, low in (
        (n_samples, "n_samples", 2),
        (n_informative, "n_informative", 1),
        (n_noise, "n_noise", 0),
        (n_levels, "n_levels", 2),
    ):
        check_int(value, name, low)
    rng = check_random_state(random_state)
    Xi = rng.standard_normal((n_samples, n_informative))
    w = rng.standard_normal(n_informative)
    w /= np.linalg.norm(w)
    if nonlinear:
        Xi = Xi + 0.5 * np.sin(2.0 * Xi)
        score = np.tanh(Xi @ w) + 0.5 * Xi[:, 0]
    else:
        score = Xi @ w
    score = score + noise * rng.standard_normal(n_samples)
    edges = np.quantile(score, np.linspace(0, 1, n_levels + 1)[1:-1])
    y = np.searchsorted(edges, score, side="right").astype(np.int64)
    Xn = noise_scale * rng.standard_normal((n_samples, n_noise))
    X = np.hstack([Xi, Xn])
    if return_score:
        return X, y, score
    return X, y
