"""Shared machinery of every Mahalanobis learner.

A fitted learner holds ``components_`` ``L`` of shape (n_components,
n_features).  The learned (squared) distance is
``d(x, y)^2 = ||L (x - y)||^2 = (x - y)^T M (x - y)`` with ``M = L^T L``.
"""

import numbers

import numpy as np
from scipy import linalg
from sklearn.base import (
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.metrics import roc_auc_score
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    check_square_matrix,
    validate_pair_labels,
    validate_pairs,
    validate_points,
)

__all__ = [
    "MahalanobisMixin",
    "MahalanobisDistance",
    "PairsClassifierMixin",
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

    def __sklearn_tags__(self):
        # every learner here is (weakly) supervised: fit needs y
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def transform(self, X):
        """Map points into the learned space: ``X @ components_.T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_embedded : ndarray of shape (n_samples, n_components)
            float32 for float32 ``X`` (``components_`` is cast), float64
            otherwise.  Fitting always runs in float64, so float32 training
            data gives the metric of the same values in float64.
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
        """Similarity score of each pair: ``-pair_distance(pairs)``.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        scores : ndarray of shape (n_pairs,)
        """
        return -self.pair_distance(pairs)


_CALIBRATION_STRATEGIES = ("accuracy", "f_beta", "max_tpr", "max_tnr")


class PairsClassifierMixin(ClassifierMixin):
    """Classification of pairs as similar (+1) or dissimilar (-1).

    For learners fitted on pairs (e.g. :class:`~metric_estimators.ITML`).  A
    pair is predicted similar when its score ``-distance`` is at least
    ``threshold_``.  The class is a scikit-learn classifier (its tags say so)
    so that ``cross_val_score`` and ``GridSearchCV`` stratify the folds on the
    pair labels and score with :meth:`score` (ROC AUC).

    The learner's ``fit`` must set ``components_``, ``n_features_in_``,
    ``classes_ = [-1, 1]`` and ``threshold_`` (usually through
    :meth:`calibrate_threshold` on the training pairs).
    """

    _estimator_type = "classifier"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags

    def decision_function(self, pairs):
        """Similarity score of each pair, ``-pair_distance(pairs)``.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        scores : ndarray of shape (n_pairs,)
        """
        return self.pair_score(pairs)

    def predict(self, pairs):
        """Predict +1 (similar) or -1 (dissimilar) for each pair.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        y_pred : ndarray of shape (n_pairs,), values in {-1, +1}
            +1 where ``decision_function(pairs) >= threshold_``.
        """
        check_is_fitted(self, "threshold_")
        scores = self.decision_function(pairs)
        return np.where(scores >= self.threshold_, 1, -1)

    def score(self, pairs, y, sample_weight=None):
        """Area under the ROC curve of ``decision_function`` for labels ``y``.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
        y : array-like of shape (n_pairs,), values in {-1, +1}
        sample_weight : array-like of shape (n_pairs,) or None

        Returns
        -------
        roc_auc : float
        """
        scores = self.decision_function(pairs)
        y = validate_pair_labels(y, scores.shape[0])
        return float(roc_auc_score(y, scores, sample_weight=sample_weight))

    def set_threshold(self, threshold):
        """Set the score threshold above which pairs are predicted similar.

        Parameters
        ----------
        threshold : float
            Compared with ``decision_function`` (= minus the learned
            distance), so it is usually negative.

        Returns
        -------
        self
        """
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise TypeError(f"threshold must be a real number, got {threshold!r}.")
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold!r}.")
        self.threshold_ = float(threshold)
        return self

    def calibrate_threshold(self, pairs, y, strategy="accuracy", min_rate=None,
                            beta=1.0):
        """Choose ``threshold_`` on labelled pairs.

        Every distinct score of ``pairs`` is a candidate cut (plus "predict
        everything dissimilar"); the threshold is set halfway between the
        chosen score and the next lower one, so that predictions on these
        pairs are exactly those of the chosen cut.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
        y : array-like of shape (n_pairs,), values in {-1, +1}
        strategy : {'accuracy', 'f_beta', 'max_tpr', 'max_tnr'}, default='accuracy'
            'accuracy' maximises accuracy; 'f_beta' the F-beta score of the
            similar class; 'max_tpr' the true positive rate subject to a true
            negative rate >= ``min_rate``; 'max_tnr' the true negative rate
            subject to a true positive rate >= ``min_rate``.  Ties are broken
            by accuracy, then by the larger threshold.
        min_rate : float in [0, 1] or None
            Required for 'max_tpr' and 'max_tnr', ignored otherwise.
        beta : float > 0, default=1.0
            Weight of recall for 'f_beta'.

        Returns
        -------
        self
        """
        check_is_fitted(self, "components_")
        if strategy not in _CALIBRATION_STRATEGIES:
            raise ValueError(
                f"strategy must be one of {_CALIBRATION_STRATEGIES}, got {strategy!r}."
            )
        if strategy in ("max_tpr", "max_tnr"):
            if min_rate is None:
                raise ValueError(f"strategy={strategy!r} needs min_rate in [0, 1].")
            if (isinstance(min_rate, bool) or not isinstance(min_rate, numbers.Real)
                    or not 0 <= min_rate <= 1):
                raise ValueError(f"min_rate must be a number in [0, 1], got {min_rate!r}.")
        if strategy == "f_beta":
            if (isinstance(beta, bool) or not isinstance(beta, numbers.Real)
                    or not (beta > 0 and np.isfinite(beta))):
                raise ValueError(f"beta must be a positive number, got {beta!r}.")
        scores = self.decision_function(pairs)
        y = validate_pair_labels(y, scores.shape[0])
        order = np.argsort(-scores, kind="stable")
        s = scores[order]
        pos = (y[order] == 1).astype(np.float64)
        # last index of each run of equal scores (descending order)
        last = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
        tp = np.r_[0.0, np.cumsum(pos)[last]]
        fp = np.r_[0.0, np.cumsum(1.0 - pos)[last]]
        n_pos, n_neg = pos.sum(), pos.size - pos.sum()
        tn = n_neg - fp
        fn = n_pos - tp
        accuracy = (tp + tn) / pos.size
        tpr = tp / n_pos if n_pos else np.ones_like(tp)
        tnr = tn / n_neg if n_neg else np.ones_like(tn)
        if strategy == "accuracy":
            crit = accuracy
        elif strategy == "f_beta":
            b2 = beta * beta
            den = (1 + b2) * tp + b2 * fn + fp
            crit = np.where(den > 0, (1 + b2) * tp / np.where(den > 0, den, 1.0), 0.0)
        else:
            rate, other = (tpr, tnr) if strategy == "max_tpr" else (tnr, tpr)
            feasible = other >= min_rate - 1e-12
            if not np.any(feasible):  # cannot happen: one extreme cut has rate 1
                raise ValueError(f"No threshold reaches min_rate={min_rate}.")
            crit = np.where(feasible, rate, -np.inf)
        # lexicographic: criterion, then accuracy; first (largest threshold) wins
        best = np.flatnonzero(crit == crit.max())
        k = best[np.argmax(accuracy[best])]
        cut_scores = s[last]
        if k == 0:
            threshold = cut_scores[0] + max(1.0, abs(cut_scores[0]))
        elif k == cut_scores.size:
            threshold = cut_scores[-1] - max(1.0, abs(cut_scores[-1]))
        else:
            threshold = (cut_scores[k - 1] + cut_scores[k]) / 2
        self.threshold_ = float(threshold)
        return self
