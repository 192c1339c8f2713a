"""Numerical helpers shared by estimators, problems and solvers (a leaf).

Factors of positive semi-definite matrices (:func:`psd_factor`), the one
positive-definiteness test (:func:`check_positive_definite`), the factor
``C`` of ``A = C C^T`` that maps points to a learned metric's space
(:func:`gram_factor`), the initial linear map of learners that optimise
``L`` directly (:func:`initialize_components`), the power-of-two rescaling
of data of extreme scale (:func:`power_of_two_scale`) and the rows of a
blockwise distance computation (:func:`block_rows`).  This module imports
only numpy, scipy, scikit-learn and the leaf
:mod:`~metric_estimators.exceptions`; :mod:`~metric_estimators._validation`
may import it, never the reverse.
"""

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state

from .exceptions import NonPSDError

__all__ = ["BLOCK", "block_rows", "check_positive_definite", "gram_factor",
           "initialize_components", "power_of_two_scale", "psd_factor"]

# Data whose scale (largest absolute deviation from the mean) lies outside
# this range is rescaled internally by a power of two (an exact operation in
# floating point) by the learners whose loss is invariant under the
# corresponding reparametrisation (see power_of_two_scale).
_SCALE_RANGE = (2.0 ** -20, 2.0 ** 20)
# Blockwise distance computations (block_rows): most entries of one block,
# the entries a block may always hold, and the rows a block gets whenever
# the most entries allow it.
BLOCK = 1 << 21
SMALL_BLOCK = 1 << 17
MIN_BLOCK_ROWS = 64


def block_rows(n_cols, block=BLOCK, small=SMALL_BLOCK):
    """Rows of one block of a blockwise ``(rows, n_cols)`` distance computation.

    A block holds at most ``block`` entries (8 MB at float32, 16 MB at
    float64 for the default).  Within that cap it holds
    ``MIN_BLOCK_ROWS`` rows (enough for an efficient BLAS product) or
    ``small`` entries, whichever is more, rather than as many rows as
    the cap allows: the memory of a search then grows with the data, so a
    small fit does not hold blocks that are large next to its data and to
    what other implementations use, while large fits keep blocks of tens of
    rows.  Always at least one row.  A caller that holds several copies of
    a block at once, or that pays little per block, passes a smaller
    ``small``.
    """
    n_cols = max(int(n_cols), 1)
    wanted = max(int(small) // n_cols, MIN_BLOCK_ROWS)
    return max(1, min(int(block) // n_cols, wanted))


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

    The one positive-definiteness test: the smallest eigenvalue must be
    positive and above ``tol`` times the largest.  ``M`` is symmetric up to
    round-off: a matrix computed from data (a covariance), or one given by a
    user and checked for symmetry first (as
    :func:`~metric_estimators._validation.check_prior` does).

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
    w = np.linalg.eigvalsh(M)
    if w[0] <= tol * max(w[-1], 0.0) or w[0] <= 0:
        raise NonPSDError(
            f"{name} must be positive definite; its smallest eigenvalue is "
            f"{w[0]:.3g}."
        )
    return M


def initialize_components(init, X, y, n_components, random_state, *, auto_lda=True):
    """Initial linear map for learners that optimise ``L`` directly.

    Follows scikit-learn's NCA: ``'auto'`` picks ``'lda'`` when
    ``n_components <= min(n_features, n_classes - 1)`` (and ``auto_lda``),
    else ``'pca'`` when ``n_components < n_features``, else ``'identity'``.
    ``auto_lda=False`` is for data on which LDA's start is ill-posed: LDA
    whitens the pooled within-class scatter, to which a class of one point
    adds nothing, so a direction that varies only through such classes is
    stretched without bound.  An array ``init`` must already be validated
    (:func:`~metric_estimators._validation.check_init`); a copy is returned.
    """
    n_samples, n_features = X.shape
    if isinstance(init, np.ndarray):
        return init.copy()

    if n_components is None:
        n_components = n_features
    if init == "auto":
        n_classes = np.unique(y).size
        if auto_lda and n_components <= min(n_features, n_classes - 1):
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


def power_of_two_scale(X, *, center=True):
    """The power of two ``s`` that brings ``X / s`` to a moderate scale.

    Returns 1.0 when the largest absolute entry of ``X`` (minus its column
    means if ``center``) lies in ``[2**-20, 2**20]``, or when ``X`` is all
    zeros; otherwise ``2**k`` with ``k`` the rounded base-2 logarithm of that
    entry.  Dividing by a power of two is exact in floating point (barring
    underflow), so learners whose loss is invariant under the rescaling (with
    the matching change of their parameters) give the same metric for data
    scaled by 1e150 or 1e-150 as for data of unit scale, instead of
    overflowing or underflowing.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return 1.0
    if center and X.ndim == 2:
        X = X - X.mean(axis=0)
    m = float(np.max(np.abs(X)))
    if m == 0 or not np.isfinite(m) or _SCALE_RANGE[0] <= m <= _SCALE_RANGE[1]:
        return 1.0
    return float(2.0 ** int(np.round(np.log2(m))))
