"""Ordered labels in a target space: label dissimilarities, classical MDS, ordinal triplets.

The label side of the ordinal learners (:mod:`metric_estimators.ordinal`):
OMDML regresses on the classical MDS embedding of a dissimilarity between
ordered levels (Torgerson 1952; Yu & Li 2018); LODML's hinge runs over the
ordinal triplets inside neighbourhoods (after Li et al. 2015).
"""

import numpy as np
from scipy import linalg

__all__ = ["classical_mds", "label_embedding", "level_dissimilarity", "ordinal_triplets"]


def classical_mds(D, n_components=None, *, tol=1e-10):
    """Classical (Torgerson) multidimensional scaling of a dissimilarity matrix.

    Parameters
    ----------
    D : ndarray of shape (m, m)
        Symmetric dissimilarities with a zero diagonal.
    n_components : int or None
        Number of coordinates to keep; None keeps every coordinate with a
        positive eigenvalue (larger than ``tol`` times the largest).
    tol : float
        Relative threshold below which eigenvalues count as zero.

    Returns
    -------
    coords : ndarray of shape (m, r)
        Coordinates; column ``q`` is the eigenvector of the ``q``-th largest
        eigenvalue of ``B = -J D^2 J / 2`` scaled by its square root.
    eigenvalues : ndarray of shape (m,)
        All eigenvalues of ``B``, in decreasing order.
    """
    D = np.asarray(D, dtype=np.float64)
    D2 = D * D
    row = D2.mean(axis=1)
    B = -0.5 * (D2 - row[:, None] - row[None, :] + row.mean())
    w, V = linalg.eigh((B + B.T) / 2)
    w, V = w[::-1], V[:, ::-1]
    positive = w > tol * max(w[0], np.finfo(float).tiny)
    r = int(np.sum(positive))
    if n_components is not None:
        r = min(r, n_components)
    coords = V[:, :r] * np.sqrt(w[:r])
    return coords, w


def level_dissimilarity(levels, kind):
    """The ``(m, m)`` dissimilarity matrix of ordered levels.

    Parameters
    ----------
    levels : ndarray of shape (m,)
        The distinct label values, increasing.
    kind : {'absolute', 'rank', 'sqrt'} or callable
        See :class:`~metric_estimators.OMDML`; a callable is checked
        (shape, finite, non-negative, symmetric, zero diagonal).

    Returns
    -------
    D : ndarray of shape (m, m)
    """
    m = levels.size
    if callable(kind):
        D = np.asarray(kind(levels[:, None], levels[None, :]), dtype=np.float64)
        if D.shape != (m, m):
            raise ValueError(
                "label_dissimilarity callable must return an (m, m) array for "
                f"m = {m} levels when called as f(levels[:, None], "
                f"levels[None, :]); got shape {D.shape}."
            )
        if not np.all(np.isfinite(D)):
            raise ValueError("label_dissimilarity returned NaN or infinity.")
        if np.any(D < 0):
            raise ValueError("label_dissimilarity returned negative values.")
        scale = max(np.abs(D).max(), np.finfo(float).tiny)
        if not np.allclose(D, D.T, atol=1e-12 * scale, rtol=1e-10):
            raise ValueError("label_dissimilarity must be symmetric.")
        if np.any(np.abs(np.diag(D)) > 1e-12 * scale):
            raise ValueError("label_dissimilarity must be 0 between equal labels.")
        return (D + D.T) / 2
    if kind == "absolute":
        return np.abs(levels[:, None] - levels[None, :])
    if kind == "rank":
        r = np.arange(m, dtype=np.float64)
        return np.abs(r[:, None] - r[None, :])
    if kind == "sqrt":
        return np.sqrt(np.abs(levels[:, None] - levels[None, :]))
    raise ValueError(f"Unknown label_dissimilarity {kind!r}.")


def label_embedding(levels, label_dissimilarity="absolute", n_components=None):
    """Place ordered levels in a target space by classical MDS.

    Parameters
    ----------
    levels : array-like of shape (m,)
        The distinct label values, sorted increasingly.
    label_dissimilarity : {'absolute', 'rank', 'sqrt'} or callable
        See :class:`~metric_estimators.OMDML`.
    n_components : int or None
        Keep at most this many coordinates.

    Returns
    -------
    T : ndarray of shape (m, r)
        The level coordinates.  Each column is oriented so that it increases
        with the level on average (non-negative covariance with the level
        index), so the first column is increasing whenever the embedding keeps
        the order.
    eigenvalues : ndarray of shape (m,)
        Eigenvalues of the double-centred matrix, in decreasing order.
    """
    levels = np.asarray(levels, dtype=np.float64)
    m = levels.size
    if isinstance(label_dissimilarity, str) and label_dissimilarity in (
        "absolute",
        "rank",
    ):
        # Dissimilarities of points on a line: classical MDS recovers the line
        # exactly (B = t t^T with t centred); no eigendecomposition needed.
        base = levels if label_dissimilarity == "absolute" else np.arange(m, dtype=float)
        t = base - base.mean()
        eigenvalues = np.zeros(m)
        eigenvalues[0] = t @ t
        T = t[:, None]
    else:
        D = level_dissimilarity(levels, label_dissimilarity)
        T, eigenvalues = classical_mds(D, n_components)
    if n_components is not None:
        T = T[:, :n_components]
    idx = np.arange(m) - (m - 1) / 2.0
    signs = np.where(idx @ T < 0, -1.0, 1.0)
    return T * signs, eigenvalues


def ordinal_triplets(y, neighbors):
    """Ordinal triplets inside neighbourhoods.

    For every anchor ``i`` and every pair ``j, l`` of its neighbours
    (``neighbors[i]``) with ``|y_i - y_j| < |y_i - y_l|``, the triplet
    ``(i, j, l)``: ``j`` should be closer to ``i`` than ``l``.

    Returns
    -------
    ti, tj, tl : ndarray of int64
    """
    n, k = neighbors.shape
    gap = np.abs(y[neighbors] - y[:, None])  # (n, k)
    a, b = np.triu_indices(k, 1)
    ga, gb = gap[:, a], gap[:, b]  # (n, p)
    anchors = np.broadcast_to(np.arange(n)[:, None], ga.shape)
    na, nb = neighbors[:, a], neighbors[:, b]
    closer_a = ga < gb
    closer_b = gb < ga
    ti = np.concatenate([anchors[closer_a], anchors[closer_b]])
    tj = np.concatenate([na[closer_a], nb[closer_b]])
    tl = np.concatenate([nb[closer_a], na[closer_b]])
    order = np.lexsort((tl, tj, ti))
    return (
        ti[order].astype(np.int64),
        tj[order].astype(np.int64),
        tl[order].astype(np.int64),
    )
