"""Shared machinery of every Mahalanobis learner.

A fitted learner holds ``components_`` ``L`` of shape (n_components,
n_features).  The learned (squared) distance is
``d(x, y)^2 = ||L (x - y)||^2 = (x - y)^T M (x - y)`` with ``M = L^T L``.
"""

import numpy as np
from scipy import linalg
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._validation import check_square_matrix, validate_pairs, validate_points

__all__ = [
    "MahalanobisMixin",
    "MahalanobisDistance",
    "components_from_matrix",
    "initialize_components",
]


class MahalanobisDistance:
    """A picklable Mahalanobis distance ``metric(u, v, squared=False)``.

    Usable as ``KNeighborsClassifier(metric=...)``, ``DBSCAN(metric=...)`` or
    with :func:`scipy.spatial.distance.cdist`.

    Parameters
    ----------
    components : ndarray of shape (n_components, n_features)
        The linear map ``L``; the distance is ``||L (u - v)||``.
    """

    def __init__(self, components):
        self.components = np.array(components, dtype=np.float64, copy=True)

    def __call__(self, u, v, squared=False):
        u = np.asarray(u, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        d = self.components.shape[1]
        if u.shape[-1] != d or v.shape[-1] != d:
            raise ValueError(
                f"metric expects vectors with {d} features, got shapes "
                f"{u.shape} and {v.shape}."
            )
        diff = self.components @ (u - v).T
        sq = np.sum(diff * diff, axis=0)
        if np.ndim(sq) == 0:
            sq = float(sq)
        return sq if squared else np.sqrt(sq)

    def __repr__(self):
        n_components, n_features = self.components.shape
        return f"MahalanobisDistance(n_components={n_components}, n_features={n_features})"


def components_from_matrix(M, *, name="M"):
    """Factor a PSD matrix ``M`` as ``L^T L`` and return ``L``.

    Cholesky is tried first (exact and fast for a positive definite ``M``);
    if it fails, an eigendecomposition is used, with negative eigenvalues due
    to round-off clipped to zero.  A matrix that is clearly indefinite (an
    eigenvalue below ``-1e-8`` times the largest) is an error, not something to
    hide.

    Returns
    -------
    L : ndarray of shape (n_features, n_features)
    """
    M = check_square_matrix(M, name)
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
        raise ValueError(
            f"{name} is not positive semi-definite (smallest eigenvalue "
            f"{w[0]:.3g}, largest {w[-1]:.3g})."
        )
    w = np.clip(w, 0.0, None)
    return (V * np.sqrt(w)).T


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
        lda = LinearDiscriminantAnalysis(n_components=n_components).fit(X, y)
        return lda.scalings_.T[:n_components].copy()
    raise ValueError(f"Unknown init {init!r}.")


def check_array_2d(A, name):
    A = np.asarray(A)
    if A.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {A.dtype}.")
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {A.ndim} dimensions.")
    A = A.astype(np.float64)
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


class MahalanobisMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """Methods shared by every learner of a linear map ``L`` (``components_``).

    Provides ``transform``, ``get_mahalanobis_matrix``, ``get_metric``,
    ``pair_distance``, ``pair_score`` and ``get_feature_names_out``; the
    learner's ``fit`` must set ``components_`` and ``n_features_in_``.
    """

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def transform(self, X):
        """Map points into the learned space: ``X @ components_.T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_embedded : ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self, "components_")
        X = validate_points(self, X, reset=False)
        return X @ self.components_.T.astype(X.dtype, copy=False)

    def get_mahalanobis_matrix(self):
        """Return ``M = components_.T @ components_`` (n_features, n_features)."""
        check_is_fitted(self, "components_")
        return self.components_.T @ self.components_

    def get_metric(self):
        """Return the learned distance as a picklable callable.

        The callable ``metric(u, v, squared=False)`` takes two 1-D arrays of
        ``n_features`` values (or 2-D arrays of matching shape) and returns
        ``||L (u - v)||`` (or its square).  It is independent of the estimator:
        refitting the estimator does not change a metric already returned.
        """
        check_is_fitted(self, "components_")
        return MahalanobisDistance(self.components_)

    def _pairs_preprocessor(self):
        return getattr(self, "preprocessor_", getattr(self, "preprocessor", None))

    def pair_distance(self, pairs):
        """Learned distance between the two points of each pair.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        distances : ndarray of shape (n_pairs,)
        """
        check_is_fitted(self, "components_")
        pairs = validate_pairs(
            pairs, self._pairs_preprocessor(), n_features=self.n_features_in_
        )
        diff = (pairs[:, 0] - pairs[:, 1]) @ self.components_.T
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))

    def pair_score(self, pairs):
        """Similarity score of each pair: ``-pair_distance(pairs)``."""
        return -self.pair_distance(pairs)
