"""Local Fisher discriminant analysis: local scaling, scatter matrices, eigenproblem.

Sugiyama, M. (2007). Dimensionality reduction of multimodal labeled data by
local Fisher discriminant analysis. JMLR 8, 1027-1061.

With the affinity ``A_ij = exp(-||x_i - x_j||^2 / (sigma_i sigma_j))``
(``sigma_i``: distance from ``x_i`` to its ``k``-th nearest neighbour in its
class, "local scaling") and ``n_c`` the size of the class of ``i`` and ``j``,
the local within- and between-class scatter matrices are (eq. 11-14)::

    S_w = 1/2 sum_ij W_ij (x_i - x_j)(x_i - x_j)^T,  W_ij = A_ij / n_c       (same class), 0
    S_b = 1/2 sum_ij B_ij (x_i - x_j)(x_i - x_j)^T,  B_ij = A_ij (1/n - 1/n_c) (same class), 1/n

Computed without any n x n matrix: ``1/2 sum_ij W_ij (x_i - x_j)(x_i -
x_j)^T = X^T (D - W) X`` for a symmetric ``W`` with row sums ``D``, so each
class contributes ``X_c^T (D_c - A_c) X_c``, accumulated over blocks of rows
of ``A_c`` (memory bounded by :data:`BLOCK` entries; the local scales
come from the same blocks); and ``S_w + S_b = S_m``,
the mixture scatter with weights ``A_ij / n`` (same class) and ``1 / n``,
equals ``S_t + 1/n sum_c (X_c^T (D_c - A_c) X_c - n_c S_c)`` with ``S_t`` the
total and ``S_c`` the class scatter (``sum (x - mean)(x - mean)^T``).
"""

import numpy as np
from scipy import linalg

from .._linalg import BLOCK  # entries of an affinity block computed at once

__all__ = ["BLOCK", "class_laplacian_form", "local_scales", "local_scatter",
           "lfda_directions"]



def _sq_dist_rows(Xc, sq, rows):
    """Squared distances of the points ``rows`` to every point of ``Xc``."""
    D2 = sq[rows, None] + sq[None, :] - 2.0 * (Xc[rows] @ Xc.T)
    np.maximum(D2, 0.0, out=D2)
    D2[np.arange(D2.shape[0]), np.arange(rows.start, rows.stop)] = 0.0
    return D2


def _row_blocks(n):
    step = max(1, BLOCK // max(n, 1))
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))


def _kth(D2, k):
    """Square root of the ``k``-th smallest entry of each row (0-based)."""
    return np.sqrt(np.partition(D2, k, axis=1)[:, k])


def _affinity_form(Xr, Xc, D2, sigma_r, sigma):
    """``X_r^T diag(A 1) X_r - X_r^T A X_c`` for one block of rows of ``A``."""
    scale = sigma_r[:, None] * sigma[None, :]
    # scale 0 (duplicates, k = 0): exp(-d / tiny) is 0 for d > 0; the value
    # for d = 0 does not matter, (x_i - x_j) is zero there
    A = np.exp(-D2 / np.maximum(scale, np.finfo(float).tiny))
    deg = A.sum(axis=1)
    return (Xr * deg[:, None]).T @ Xr - Xr.T @ (A @ Xc)


def local_scales(Xc, k):
    """Distance of each row of ``Xc`` to its ``k``-th nearest other row.

    The point itself is not counted (duplicates are: a duplicate is a
    neighbour at distance 0).  ``k`` must be ``<= Xc.shape[0] - 1``; ``k = 0``
    gives zeros.  Exact brute-force search over blocks of rows.
    """
    n = Xc.shape[0]
    sigma = np.zeros(n)
    if k < 1 or n < 2:
        return sigma
    sq = np.einsum("ij,ij->i", Xc, Xc)
    for rows in _row_blocks(n):
        # the k + 1 smallest of a row include the point's own zero
        sigma[rows] = _kth(_sq_dist_rows(Xc, sq, rows), k)
    return sigma


def class_laplacian_form(Xc, k):
    """``X_c^T (D - A) X_c`` for the local-scaling affinity ``A`` of one class.

    One pass over the squared distances when the class fits in a block,
    two (local scales, then affinities) otherwise.
    """
    n, d = Xc.shape
    sq = np.einsum("ij,ij->i", Xc, Xc)
    if n * n <= BLOCK:
        rows = slice(0, n)
        D2 = _sq_dist_rows(Xc, sq, rows)
        sigma = _kth(D2, k) if k >= 1 else np.zeros(n)
        out = _affinity_form(Xc, Xc, D2, sigma, sigma)
    else:
        sigma = local_scales(Xc, k)
        out = np.zeros((d, d))
        for rows in _row_blocks(n):
            out += _affinity_form(Xc[rows], Xc, _sq_dist_rows(Xc, sq, rows),
                                  sigma[rows], sigma)
    return (out + out.T) / 2


def local_scatter(X, y_idx, k):
    """The local within- and between-class scatter matrices ``(S_w, S_b)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices ``0 .. n_classes - 1``.
    k : int
        Neighbour of the local scaling; a class of ``n_c <= k`` points uses
        its ``n_c - 1``-th neighbour.

    Returns
    -------
    S_w, S_b : ndarray of shape (n_features, n_features)
    """
    n, d = X.shape
    S_w = np.zeros((d, d))
    S_m = np.zeros((d, d))
    for c in range(int(y_idx.max()) + 1):
        Xc = X[y_idx == c]
        n_c = Xc.shape[0]
        if n_c < 2:
            continue
        La = class_laplacian_form(Xc, min(k, n_c - 1))
        Zc = Xc - Xc.mean(axis=0)
        S_w += La / n_c
        S_m += (La - n_c * (Zc.T @ Zc)) / n
    Z = X - X.mean(axis=0)
    S_m += Z.T @ Z
    S_m = (S_m + S_m.T) / 2
    return S_w, S_m - S_w


def lfda_directions(S_w, S_b, *, rtol=1e-10):
    """Generalized eigenvectors of ``S_b v = lambda S_w v``, largest first.

    Solved as ``S_b v = mu S_m v`` with ``S_m = S_w + S_b`` (positive
    semi-definite; ``mu = lambda / (1 + lambda)``) on the range of ``S_m``,
    so a singular ``S_w`` (a direction with no within-class spread) is no
    error: its ``lambda`` is capped at ``(1 - rtol) / rtol``.  Directions
    outside the range of ``S_m`` (where every point is equal) are left out.
    The vectors are normalised as for ``scipy.linalg.eigh(S_b, S_w)``
    (``v^T S_w v = 1``, with the same cap) and signed so that their largest
    entry in absolute value is positive.

    Returns
    -------
    lam : ndarray of shape (r,)
        Eigenvalues, descending; ``r`` is the rank of ``S_m``.
    V : ndarray of shape (n_features, r)
        Eigenvectors in columns.
    """
    S_m = (S_w + S_b + (S_w + S_b).T) / 2
    s, U = linalg.eigh(S_m, check_finite=False)
    keep = s > rtol * max(s[-1], 0.0) if s[-1] > 0 else np.zeros(s.size, bool)
    if not keep.any():
        return np.zeros(0), np.zeros((S_m.shape[0], 0))
    P = U[:, keep] / np.sqrt(s[keep])  # P^T S_m P = I
    B = P.T @ S_b @ P
    mu, W = linalg.eigh((B + B.T) / 2, check_finite=False)
    mu, W = mu[::-1], W[:, ::-1]
    mu = np.clip(mu, 0.0, 1.0 - rtol)
    V = (P @ W) / np.sqrt(1.0 - mu)  # v^T S_w v = v^T S_m v - v^T S_b v = 1 - mu
    lam = mu / (1.0 - mu)
    idx = np.argmax(np.abs(V), axis=0)
    V *= np.where(V[idx, np.arange(V.shape[1])] < 0, -1.0, 1.0)
    return lam, V
