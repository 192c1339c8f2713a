"""Relevant Component Analysis: chunklet covariance and its whitening.

Shental, N., Hertz, T., Weinshall, D. and Pavel, M. (2002). Adjustment
learning and relevant component analysis. ECCV 2002, 776-790.

For chunklets ``C_1 .. C_m`` (groups of points known to share a class) with
``p`` points in all, the within-chunklet covariance is ::

    C = 1/p sum_j sum_{x in C_j} (x - m_j)(x - m_j)^T

and RCA's metric is ``C^{-1}``, i.e. the whitening map ``L = C^{-1/2}``.
With fewer dimensions than features, the paper first reduces with the
Fisher-like criterion: the directions ``A`` minimising ``|A^T C A| / |A^T
S_t A|`` (``S_t`` the covariance of all the points; metric-learn takes the
chunklet points only), i.e. the smallest
generalized eigenvectors of ``C a = mu S_t a``, then whitens within them:
``L = (A^T C A)^{-1/2} A^T``.
"""

import numpy as np
from scipy import linalg

__all__ = ["chunklet_covariances", "rca_components"]


def chunklet_covariances(X, chunks):
    """Within-chunklet covariance ``C`` and total covariance ``S_t`` of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    chunks : ndarray of shape (n_samples,), int
        Chunk index of each point, -1 for points in no chunk.

    Returns
    -------
    C, S_t : ndarray of shape (n_features, n_features)
        ``C`` divided by the number ``p`` of chunklet points, ``S_t`` by
        ``n_samples``.
    n_points : int
        ``p``.
    """
    mask = chunks >= 0
    Xc = X[mask]
    ids = np.unique(chunks[mask], return_inverse=True)[1]
    counts = np.bincount(ids)
    means = np.zeros((counts.size, X.shape[1]))
    np.add.at(means, ids, Xc)
    means /= counts[:, None]
    Z = Xc - means[ids]
    p = Xc.shape[0]
    C = Z.T @ Z / p
    T = X - X.mean(axis=0)
    S_t = T.T @ T / X.shape[0]
    return (C + C.T) / 2, (S_t + S_t.T) / 2, p


def _inv_sqrt(M, rtol):
    """Symmetric ``M^{-1/2}`` on the range of ``M``; the rank-deficient directions."""
    w, U = linalg.eigh(M, check_finite=False)
    top = max(w[-1], 0.0) if w.size else 0.0
    keep = w > rtol * top if top > 0 else np.zeros(w.size, bool)
    inv = np.zeros_like(w)
    inv[keep] = 1.0 / np.sqrt(w[keep])
    return (U * inv) @ U.T, int((~keep).sum())


def rca_components(C, S_t, n_components, *, rtol=1e-10):
    """RCA's linear map from the two covariances.

    Directions in which the points do not vary at all (outside the range of
    ``S_t``, e.g. constant features) get weight 0.  Within the
    range of ``S_t``, a direction with no within-chunklet variance has no
    finite RCA weight; it gets weight 0 too (the pseudo-inverse), and the
    number of such directions is returned so that the caller can warn.

    Parameters
    ----------
    C, S_t : ndarray of shape (n_features, n_features)
    n_components : int
        ``n_features`` for the whitening alone, fewer for the reduction first.

    Returns
    -------
    L : ndarray of shape (n_components, n_features)
        ``C^{-1/2}`` (symmetric) when ``n_components == n_features`` and
        ``C`` has full rank.  Rows beyond the rank of ``S_t`` are zero.
    n_deficient : int
        Directions of the range of ``S_t`` in which ``C`` vanishes.
    rank : int
        Rank of ``S_t``.
    """
    d = C.shape[0]
    s, U = linalg.eigh(S_t, check_finite=False)
    top = max(s[-1], 0.0)
    keep = s > rtol * top if top > 0 else np.zeros(d, bool)
    P = U[:, keep]  # orthonormal basis of the range of S_t
    rank = P.shape[1]
    L = np.zeros((n_components, d))
    if rank == 0:
        return L, 0, 0
    Cp = P.T @ C @ P
    if n_components >= d:
        R, n_def = _inv_sqrt(Cp, rtol)
        # P R P^T is C^{-1/2} itself when S_t (hence P) has full rank
        L[:] = P @ R @ P.T
        return L, n_def, rank
    m = min(n_components, rank)
    Sp = P.T @ S_t @ P  # positive definite on the range
    mu, A = linalg.eigh((Cp + Cp.T) / 2, (Sp + Sp.T) / 2, check_finite=False)
    A = A[:, :m]  # smallest mu: least within-chunklet relative to total
    R, n_def = _inv_sqrt(A.T @ Cp @ A, rtol)
    L[:m] = R @ A.T @ P.T
    return L, n_def, rank
