"""The LogDet (ITML) problem's pieces shared by ITML and ProjectAndForget.

Both learners solve (Davis, Kulis, Jain, Sra & Dhillon, "Information-theoretic
metric learning", ICML 2007)::

    minimise    D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)
    subject to  d_A(x_c, x'_c)^2 <= xi_c    similar pairs,      xi0_c = low
                d_A(x_c, x'_c)^2 >= xi_c    dissimilar pairs,   xi0_c = high

ITML over a given list of pairs, ProjectAndForget over every labelled pair.
This module builds what the two have in common: the prior ``A0``
(:func:`prior_matrix`), the default bounds (:func:`default_bounds`) and the
rule for pairs of identical points
(:func:`~metric_estimators._validation.dissimilar_identical_mask`,
:func:`identical_different_class_pairs`):
a dissimilar pair of identical points cannot be separated by any metric, so it
is never a constraint; a similar one is always satisfied and harmless.
"""

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.datasets import make_spd_matrix

from .._linalg import check_positive_definite, psd_factor

__all__ = ["MAX_BOUND_POINTS", "prior_matrix", "covariance_pseudo_inverse",
           "default_bounds",
           "identical_different_class_pairs"]

#: At most this many points are used to estimate the default bounds (all
#: pairwise distances among them are computed).
MAX_BOUND_POINTS = 1000


def prior_matrix(prior, points, n_features, rng):
    """Return the positive definite prior ``A0`` for ``prior`` and the data.

    ``prior`` is ``'identity'``, ``'random'``, ``'covariance'`` or a matrix
    already validated by the estimator
    (:func:`~metric_estimators._validation.check_prior`).
    """
    if isinstance(prior, str):
        if prior == "identity":
            return np.eye(n_features)
        if prior == "random":
            return make_spd_matrix(n_features, random_state=rng)
        # covariance
        if points.shape[0] < 2:
            raise ValueError(
                "prior='covariance' needs at least 2 distinct points."
            )
        C = np.atleast_2d(np.cov(points, rowvar=False))
        try:
            C = check_positive_definite(C, "the covariance of the data")
        except ValueError as exc:
            raise ValueError(
                f"prior='covariance' needs an invertible covariance: {exc} "
                "Use prior='identity', or reduce the dimension first."
            ) from None
        return np.linalg.inv(C)
    return prior


def covariance_pseudo_inverse(points):
    """Return the pseudo-inverse of the covariance of ``points`` and its rank.

    For learners whose start need not be positive definite (MMC's
    ``init='covariance'``): a singular covariance gives its pseudo-inverse
    (eigenvalues below ``n_features * eps`` times the largest count as
    zero), which is 0 along the directions without variance.  Data without
    any variance is a ``ValueError``.
    """
    if points.shape[0] < 2:
        raise ValueError("init='covariance' needs at least 2 distinct points.")
    C = np.atleast_2d(np.cov(points, rowvar=False))
    w, V = np.linalg.eigh((C + C.T) / 2.0)
    keep = w > C.shape[0] * np.finfo(float).eps * max(w[-1], 0.0)
    if w[-1] <= 0 or not np.any(keep):
        raise ValueError(
            "init='covariance' needs data with some variance; every point is "
            "the same."
        )
    V = V[:, keep]
    return (V / w[keep]) @ V.T, int(np.count_nonzero(keep))


def default_bounds(points, A0, rng):
    """Return the 5th / 95th percentiles of squared prior distances of distinct points.

    At most :data:`MAX_BOUND_POINTS` points (drawn with ``rng``) are used.
    """
    if points.shape[0] > MAX_BOUND_POINTS:
        keep = rng.choice(points.shape[0], MAX_BOUND_POINTS, replace=False)
        points = points[np.sort(keep)]
    Z = points @ psd_factor(A0, name="prior").T
    D = pdist(Z, "sqeuclidean")
    D = D[D > 0]
    if D.size == 0:
        raise ValueError(
            "Cannot set default bounds: all points are identical. Pass bounds "
            "explicitly."
        )
    low, high = np.percentile(D, [5, 95])
    return float(low), float(high)


def identical_different_class_pairs(X, y):
    """Return the pairs ``i < j`` of identical rows of ``X`` with ``y_i != y_j``.

    The all-pairs version of :func:`dissimilar_identical_mask`, without
    forming the ``O(n^2)`` differences: rows are grouped by value first.
    Returns an int64 array of shape ``(k, 2)``, sorted by ``(i, j)``.
    """
    _, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    y = np.asarray(y)
    pairs = []
    if np.unique(inv).size < inv.size:
        order = np.argsort(inv, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(inv[order])) + 1)
        for g in groups:
            if g.size > 1:
                g = np.sort(g)
                a, b = np.triu_indices(g.size, 1)
                i, j = g[a], g[b]
                keep = y[i] != y[j]
                pairs.append(np.column_stack((i[keep], j[keep])))
    if not pairs:
        return np.empty((0, 2), dtype=np.int64)
    out = np.concatenate(pairs).astype(np.int64)
    return out[np.lexsort((out[:, 1], out[:, 0]))]
