"""Numerical helpers shared by estimators, problems and solvers (a leaf).

Factors of positive semi-definite matrices (:func:`psd_factor`), the
positive-definiteness test of a matrix computed from data
(:func:`check_positive_definite`), the factor ``C`` of ``A = C C^T`` that
maps points to a learned metric's space (:func:`gram_factor`) and the
initial linear map of learners that optimise ``L`` directly
(:func:`initialize_components`).  This module imports only numpy, scipy,
scikit-learn and the leaves :mod:`~metric_estimators.exceptions` and
:mod:`~metric_estimators._validation`.
"""

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state

from ._validation import check_array_2d, require_positive_definite
from .exceptions import NonPSDError

__all__ = ["check_positive_definite", "gram_factor", "initialize_components",
           "psd_factor"]


def psd_factor(M, *, name="M"):
    """Factor a finite square PSD matrix ``M`` as ``L^T L`` and return ``L``.

    Cholesky is tried first (exact and fast for a positive definite ``M``);
    if it fails, an eigendecomposition is used, with negative eigenvalues due
    to round-off clipped to zero.  A matrix that is clearly indefinite (an
    eigenvalue below ``-1e-8`` times the largest) is an error, not something to
    hide.  ``M`` must already be a finite float64 square array (see
    :func:`~metric_estimators.base.components_from_matrix` for user input).

    Returns
    -------
    L : ndarray of shape (n_features, n_features)

    Raises
    ------
    NonPSDError
        When ``M`` is clearly indefinite.
    """
    M = (M + M.T) / 2
    try:
        C = linalg.cholesky(M, lower=True, check_finite=False)
        if np.all(np.isfinite(C)):
            return C.T
    except linalg.LinAlgError:
        pass
    w, V = linalg.eigh(M, check_finite=False)
    scale = max(abs(w[-1]), np.finfo(float).tiny)
    if w[0] < -1e-8 * scale:
        raise NonPSDError(
            f"{name} is not positive semi-definite (smallest eigenvalue "
            f"{w[0]:.3g}, largest {w[-1]:.3g})."
        )
    w = np.clip(w, 0.0, None)
    return (V * np.sqrt(w)).T


def check_positive_definite(M, name, *, tol=1e-10):
    """Return the symmetrised ``M`` if it is positive definite, else raise.

    For a matrix computed from data (a covariance), not given by a user: it
    is symmetric up to round-off.  The test is that of
    :func:`~metric_estimators._validation.check_pd_matrix`: the smallest
    eigenvalue must be positive and above ``tol`` times the largest.

    Raises
    ------
    ValueError
        ``M`` has a non-finite entry.
    NonPSDError
        ``M`` is not positive definite.
    """
    M = np.asarray(M, dtype=np.float64)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} contains NaN or infinity.")
    M = (M + M.T) / 2
    require_positive_definite(M, name, tol=tol)
    return M


def initialize_components(init, X, y, n_components, random_state):
    """Initial linear map for learners that optimise ``L`` directly.

    Follows scikit-learn's NCA: ``'auto'`` picks ``'lda'`` when
    ``n_components <= min(n_features, n_classes - 1)``, else ``'pca'`` when
    ``n_components < n_features``, else ``'identity'``.
    """
    n_samples, n_features = X.shape
    if isinstance(init, np.ndarray):
        init = check_array_2d(init, "init")
        if init.shape[1] != n_features:
            raise ValueError(
                f"init has {init.shape[1]} columns, but X has {n_features} "
                "features."
            )
        if init.shape[0] > n_features:
            raise ValueError(
                f"init has {init.shape[0]} rows (components), more than the "
                f"{n_features} features."
            )
        if n_components is not None and init.shape[0] != n_components:
            raise ValueError(
                f"init has {init.shape[0]} rows but n_components={n_components}."
            )
        if init.size == 0 or np.linalg.matrix_rank(init) < init.shape[0]:
            # a rank-deficient L0 gives a degenerate metric (for L0 = 0 the
            # gradient of LMNN's loss vanishes and L never moves)
            raise ValueError(
                f"init must have full row rank ({init.shape[0]}), i.e. "
                "L0^T L0 must be positive definite on the embedding; got rank "
                f"{np.linalg.matrix_rank(init) if init.size else 0}."
            )
        return init.copy()

    if n_components is None:
        n_components = n_features
    if init == "auto":
        n_classes = np.unique(y).size
        if n_components <= min(n_features, n_classes - 1):
            init = "lda"
        elif n_components < n_features:
            init = "pca"
        else:
            init = "identity"
    if init == "identity":
        return np.eye(n_components, n_features)
    if init == "random":
        rng = check_random_state(random_state)
        return rng.standard_normal((n_components, n_features))
    if init == "pca":
        n_pca = min(n_components, n_samples, n_features)
        from sklearn.decomposition import PCA  # on first need: a costly import

        pca = PCA(n_components=n_pca, random_state=random_state).fit(X)
        L = np.zeros((n_components, n_features))
        L[:n_pca] = pca.components_
        return L
    if init == "lda":
        n_classes = np.unique(y).size
        if n_components > min(n_features, n_classes - 1):
            raise ValueError(
                f"init='lda' needs n_components <= min(n_features, "
                f"n_classes - 1) = {min(n_features, n_classes - 1)}, got "
                f"{n_components}."
            )
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        lda = LinearDiscriminantAnalysis(n_components=n_components).fit(X, y)
        return lda.scalings_.T[:n_components].copy()
    raise ValueError(f"Unknown init {init!r}.")


def gram_factor(A):
    """Return ``C`` with ``A = C C^T`` (Cholesky, else eigenvalues clipped at 0).

    For a symmetric PSD ``A`` (a learned Mahalanobis matrix): ``X @ C`` maps
    points to a space where ``A``'s distances are Euclidean.
    """
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        w, Q = np.linalg.eigh((A + A.T) / 2)
        return Q * np.sqrt(np.maximum(w, 0.0))
