"""Shared machinery of every Mahalanobis learner.

A fitted learner holds ``components_`` ``L`` of shape (n_components,
n_features).  The learned (squared) distance is
``d(x, y)^2 = ||L (x - y)||^2 = (x - y)^T M (x - y)`` with ``M = L^T L``.
"""

import numbers
import os
import warnings

import numpy as np
from scipy import linalg
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    ArrayIndexer,
    apply_preprocessor,
    check_indices,
    check_square_matrix,
    plain,
    resolve_preprocessor,
    check_no_tuple_labels,
    validate_labelled_pairs,
    validate_pair_labels,
    validate_pairs,
    validate_points,
    validate_tuples,
)
from .exceptions import NonPSDError

__all__ = [
    "BaseMetricLearner",
    "check_calibration_dict",
    "check_calibration_params",
    "renamed_parameter",
    "MahalanobisMixin",
    "MahalanobisDistance",
    "PairsClassifierMixin",
    "QuadrupletsClassifierMixin",
    "TripletsClassifierMixin",
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
        """Distance between the vectors ``u`` and ``v`` (or its square).

        Parameters
        ----------
        u, v : array-like of shape (n_features,)
            Two points; plain numbers for a one-feature model.  Extra axes of
            length 1 are dropped (a row of shape (1, n_features) is a
            point); several points are a ``ValueError``.
        squared : bool, default=False
            Return the squared distance.

        Returns
        -------
        distance : float
        """
        u = self._vector(u, "u")
        v = self._vector(v, "v")
        diff = self.components @ (u - v)
        sq = float(diff @ diff)
        return sq if squared else float(np.sqrt(sq))

    def _vector(self, u, name):
        u = np.asarray(u, dtype=np.float64)
        shape = u.shape
        # one vector, possibly with extra axes of length 1 (a row (1, d),
        # [[x]] for one feature), as metric-learn's metric accepts
        u = u.reshape(-1) if u.ndim > 1 and u.size == max(shape) else u
        if u.ndim == 0:
            u = u.reshape(1)
        d = self.components.shape[1]
        if u.ndim != 1:
            raise ValueError(
                f"metric expects one vector ({name} has shape {shape}), "
                "as scipy's distances do; for many points use "
                "pair_distance, or transform and then a Euclidean distance."
            )
        if u.shape[0] != d:
            raise ValueError(
                f"metric expects one vector of {d} features, {name} has "
                f"{u.shape[0]} values (shape {shape})."
            )
        return u

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
        raise NonPSDError(
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


# The "?" link of an estimator's HTML representation (in Jupyter) points to
# its API page, ``DOC_LINK_TEMPLATE.format(docs_url=..., estimator_name=...)``.
# ``docs_url`` is the environment variable METRIC_ESTIMATORS_DOCS_URL (the
# root of a built or hosted copy of docs/, e.g. ``file:///path/to/docs/
# _build/html`` or a web address), read when the link is made; without it
# there is no link, since the documentation is not hosted yet.
DOC_LINK_TEMPLATE = "{docs_url}/generated/metric_estimators.{estimator_name}.html"
DOCS_URL_ENV = "METRIC_ESTIMATORS_DOCS_URL"


class DocLinkMixin:
    """Point the "?" of scikit-learn's HTML representation to our API pages.

    scikit-learn builds the link from ``_doc_link_module``,
    ``_doc_link_template`` and ``_doc_link_url_param_generator``; here the
    template is :data:`DOC_LINK_TEMPLATE` with ``docs_url`` taken from the
    environment variable ``METRIC_ESTIMATORS_DOCS_URL`` (empty: no link).
    """

    _doc_link_module = "metric_estimators"

    @property
    def _doc_link_template(self):
        docs_url = os.environ.get(DOCS_URL_ENV, "").rstrip("/")
        if not docs_url:
            return ""
        return DOC_LINK_TEMPLATE.replace("{docs_url}", docs_url)

    @_doc_link_template.setter
    def _doc_link_template(self, value):  # scikit-learn's own API allows it
        raise AttributeError(f"set the environment variable {DOCS_URL_ENV} instead.")

    def _doc_link_url_param_generator(self):
        # every public estimator is documented as metric_estimators.<Name>
        return {"estimator_name": type(self).__name__}


class BaseMetricLearner(DocLinkMixin, BaseEstimator):
    """Base class of every metric learner: the ``preprocessor`` and the pair face.

    Subclass it (usually through :class:`MahalanobisMixin`) to write a learner
    of your own: ``fit`` calls :meth:`_check_preprocessor` and sets the fitted
    attributes; :meth:`pair_distance`, :meth:`pair_score` and
    :meth:`get_metric` come from the mixin.

    Parameters
    ----------
    preprocessor : array-like of shape (n_samples, n_features), callable or None, default=None
        If an array, tuples (pairs, triplets, ...) and 1-D inputs may be given
        as indices into it.  If a callable, it receives a 1-D array of
        indices (integers, strings, any ids) and returns the points as a 2-D
        array, one row per index.
    """

    def __init__(self, preprocessor=None):
        self.preprocessor = preprocessor

    def _check_preprocessor(self):
        """Set ``preprocessor_`` (a callable or None) from ``preprocessor``."""
        self.preprocessor_ = resolve_preprocessor(
            getattr(self, "preprocessor", None))
        return self.preprocessor_

    def _points(self, X, name="X"):
        """``X`` itself, or the points of 1-D indices ``X`` through the preprocessor."""
        fn = getattr(self, "preprocessor_", None)
        if fn is None:
            return X
        arr = np.asarray(X) if not hasattr(X, "iloc") else None
        if arr is None or arr.ndim != 1:
            return X
        if isinstance(fn, ArrayIndexer):  # an array: indices must be in range
            arr = check_indices(arr, name, fn.n_samples)
        return apply_preprocessor(fn, arr, name)

    def score_pairs(self, pairs):
        """Deprecated: the learned distance of each pair (:meth:`pair_distance`).

        .. deprecated:: 0.1
            ``score_pairs`` returns :meth:`pair_distance`, the learned
            **distance** (smaller is more similar), with a FutureWarning,
            exactly as metric-learn 0.7.0's deprecated ``score_pairs`` does.
            Use :meth:`pair_distance`, or :meth:`pair_score` for a similarity
            (``-pair_distance``, higher is more similar).

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        distances : ndarray of shape (n_pairs,)
        """
        warnings.warn(
            "score_pairs is deprecated, as in metric-learn 0.7: it returns "
            "the learned distance (pair_distance); use pair_distance, or "
            "pair_score for a similarity (higher is more similar).",
            FutureWarning, stacklevel=2)
        return self.pair_distance(pairs)


class MahalanobisMixin(ClassNamePrefixFeaturesOutMixin, BaseMetricLearner):
    """Methods shared by every learner of a linear map ``L`` (``components_``).

    Provides ``transform``, ``get_mahalanobis_matrix``, ``get_metric``,
    ``get_knn_params``, ``pair_distance``, ``pair_score`` and
    ``get_feature_names_out``; the learner's ``fit`` must set ``components_`` and ``n_features_in_``.  It is
    a :class:`BaseMetricLearner` (hence a scikit-learn ``BaseEstimator``), so
    ``class MyLearner(MahalanobisMixin)`` is a complete estimator base.

    ``transform`` maps points, whatever the learner was fitted on, but the
    mixin is not a scikit-learn :class:`~sklearn.base.TransformerMixin` (as
    in metric-learn): a learner fitted on points adds it
    (``class MyLearner(MahalanobisMixin, TransformerMixin)``) and gets
    ``fit_transform`` and ``set_output`` (which then applies to this
    ``transform``); a learner fitted on pairs,
    triplets or quadruplets does not, since ``fit_transform(pairs, y)``
    cannot mean anything and code that treats transformers specially (a
    Pipeline, ``isinstance(est, TransformerMixin)``) must not hand it
    tuples to transform.

    Parameters
    ----------
    preprocessor : array-like of shape (n_samples, n_features), callable or None, default=None
        As in :class:`BaseMetricLearner`: turns indices in pairs (and other
        tuples) into points.
    """

    def __init_subclass__(cls, **kwargs):
        # scikit-learn's set_output wraps only a transform defined by the
        # TransformerMixin subclass itself; give such a subclass its own
        # reference to the transform here, before TransformerMixin's hook
        # (later in the chain) wraps it
        if (issubclass(cls, TransformerMixin) and "transform" not in cls.__dict__
                and getattr(cls, "transform", None) is MahalanobisMixin.transform):
            cls.transform = MahalanobisMixin.transform
        super().__init_subclass__(**kwargs)

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
        X : array-like of shape (n_samples, n_features), or (n_samples,)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        X_embedded : ndarray of shape (n_samples, n_components)
            float32 for float32 ``X`` (``components_`` is cast), float64
            otherwise.  Fitting always runs in float64, so float32 training
            data gives the metric of the same values in float64.
        """
        check_is_fitted(self, "components_")
        X = validate_points(self, self._points(X), reset=False)
        return X @ self.components_.T.astype(X.dtype, copy=False)

    def get_mahalanobis_matrix(self):
        """Return ``M = components_.T @ components_`` (n_features, n_features)."""
        check_is_fitted(self, "components_")
        return self.components_.T @ self.components_

    def get_metric(self):
        """Return the learned distance as a picklable callable.

        The callable ``metric(u, v, squared=False)`` takes two 1-D arrays of
        ``n_features`` values (plain numbers for a one-feature model) and
        returns ``||L (u - v)||`` (or its square); 2-D input is a
        ``ValueError``, as for scipy's distances.  It is independent of the
        estimator: refitting the estimator does not change a metric already
        returned.

        Cost: it is called once per pair of points from Python, so
        ``KNeighborsClassifier(metric=est.get_metric())`` is about 100 times
        slower than a k-NN on ``est.transform(X)`` (the same distances; 7.6 s
        against 0.065 s on digits).  Prefer a Pipeline of this estimator and
        a k-NN, or ``KNeighborsClassifier(**est.get_knn_params())``
        (``metric="mahalanobis", metric_params={"VI": M}``, see
        :meth:`get_knn_params`).

        Returns
        -------
        metric : MahalanobisDistance
            A picklable callable.
        """
        check_is_fitted(self, "components_")
        return MahalanobisDistance(self.components_)

    def get_knn_params(self):
        """Return keyword arguments for a fast k-NN under the learned distance.

        ``KNeighborsClassifier(n_neighbors=3, **est.get_knn_params())`` finds
        the same neighbours as ``KNeighborsClassifier(3,
        metric=est.get_metric())`` (up to ties between equal distances) at the
        speed of scikit-learn's compiled Mahalanobis distance instead of one
        Python call per pair of points.  The fastest route of all, when the
        k-NN need not see the original features, is a Pipeline of this
        estimator and the k-NN (a Euclidean k-NN on :meth:`transform`).

        Returns
        -------
        params : dict
            ``{"metric": "mahalanobis", "metric_params": {"VI": M}}`` with
            ``M = components_.T @ components_``, for
            :class:`~sklearn.neighbors.KNeighborsClassifier`,
            :class:`~sklearn.neighbors.KNeighborsRegressor` or
            :class:`~sklearn.neighbors.NearestNeighbors`.
        """
        check_is_fitted(self, "components_")
        M = np.ascontiguousarray(self.get_mahalanobis_matrix(), dtype=np.float64)
        return {"metric": "mahalanobis", "metric_params": {"VI": M}}

    def _pairs_preprocessor(self):
        # fitted estimators hold preprocessor_; a user's learner that never
        # called _check_preprocessor still gets its preprocessor honoured
        if hasattr(self, "preprocessor_"):
            return self.preprocessor_
        return getattr(self, "preprocessor", None)

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

    For learners fitted on pairs (e.g. :class:`~metric_estimators.ITML`).  As
    in metric-learn, ``threshold_`` is a *distance*: a pair is predicted
    similar (+1) when its learned distance is at most ``threshold_``, i.e.
    when ``decision_function(pairs) = -distance >= -threshold_``.  The class is a scikit-learn classifier (its tags say so)
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
            +1 where ``-decision_function(pairs) <= threshold_``, i.e. where
            ``pair_distance(pairs) <= threshold_``.
        """
        check_is_fitted(self, "threshold_")
        # -decision_function is the learned distance; a subclass that
        # overrides decision_function gets predictions on its own scores
        distances = -self.decision_function(pairs)
        return np.where(distances <= self.threshold_, 1, -1)

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
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(y, scores, sample_weight=sample_weight))

    def _training_pairs(self, pairs, y, calibration_params):
        """The start of a pairs learner's ``fit``: ``(V, y, points)`` to solve on.

        Checks ``calibration_params`` (before solving, so that a typo fails at
        once), validates the pairs and labels
        (:func:`~metric_estimators._validation.validate_labelled_pairs`) and
        sets ``n_features_in_``.
        """
        check_calibration_dict(calibration_params)
        V, y, points = validate_labelled_pairs(pairs, y, self._check_preprocessor())
        self.n_features_in_ = V.shape[1]
        return V, y, points

    def _calibrate_on_training_pairs(self, pairs, y, calibration_params):
        """The end of a pairs learner's ``fit``: ``classes_`` and ``threshold_``."""
        self.classes_ = np.array([-1, 1])
        return self.calibrate_threshold(pairs, y, **(calibration_params or {}))

    def set_threshold(self, threshold):
        """Set the distance at or below which pairs are predicted similar.

        Parameters
        ----------
        threshold : float
            A learned distance (as in metric-learn): pairs with
            ``pair_distance <= threshold`` are predicted similar.

        Returns
        -------
        self

        Raises
        ------
        NotFittedError
            If the learner is not fitted (the threshold applies to its
            learned distance).
        """
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise ValueError(
                f"threshold must be a real number (a distance), got {plain(threshold)!r}."
            )
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {float(threshold)}.")
        check_is_fitted(self, "components_")
        self.threshold_ = float(threshold)
        return self

    def calibrate_threshold(self, pairs=None, y=None, strategy="accuracy",
                            min_rate=None, beta=1.0, *, pairs_valid=None,
                            y_valid=None):
        """Choose ``threshold_`` (a distance) on labelled pairs.

        Every distinct distance ``-decision_function`` of ``pairs`` (the
        learned distance, or the negated scores of a subclass that
        overrides :meth:`decision_function`) is a candidate cut (plus
        "predict everything dissimilar"); the threshold is set halfway
        between the chosen distance and the next larger one, so that
        predictions on these pairs are exactly those of the chosen cut.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
            Validation pairs (indices if the estimator has a preprocessor).
        y : array-like of shape (n_pairs,), values in {-1, +1}
            Their labels.
        strategy : {'accuracy', 'f_beta', 'max_tpr', 'max_tnr'}, default='accuracy'
            'accuracy' maximises accuracy; 'f_beta' the F-beta score of the
            similar class; 'max_tpr' the true positive rate subject to a true
            negative rate >= ``min_rate``; 'max_tnr' the true negative rate
            subject to a true positive rate >= ``min_rate``.  Ties are broken
            by accuracy, then by the smaller threshold.
        min_rate : float in [0, 1] or None
            Required for 'max_tpr' and 'max_tnr', ignored otherwise.
        beta : float >= 0, default=1.0
            Weight of recall for 'f_beta' (``beta = 0`` is the precision).
        pairs_valid, y_valid : array-like
            metric-learn's names of ``pairs`` and ``y`` (deprecated here,
            with a FutureWarning).

        Returns
        -------
        self
        """
        pairs, y = _renamed_pair_args(pairs, y, pairs_valid, y_valid)
        check_is_fitted(self, "components_")
        check_calibration_params(strategy=strategy, min_rate=min_rate,
                                 beta=beta)
        distances = -self.decision_function(pairs)
        y = validate_pair_labels(y, distances.shape[0])
        order = np.argsort(distances, kind="stable")
        s = distances[order]
        pos = (y[order] == 1).astype(np.float64)
        # last index of each run of equal distances (ascending order)
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
            # one extreme cut always has rate 1, so some cut is feasible
            crit = np.where(feasible, rate, -np.inf)
        # lexicographic: criterion, then accuracy; first (smallest threshold) wins
        best = np.flatnonzero(crit == crit.max())
        k = best[np.argmax(accuracy[best])]
        cuts = s[last]
        if k == 0:  # nothing similar: below the smallest distance
            threshold = cuts[0] - max(1.0, abs(cuts[0]))
        elif k == cuts.size:  # everything similar
            threshold = cuts[-1] + max(1.0, abs(cuts[-1]))
        else:
            threshold = (cuts[k - 1] + cuts[k]) / 2
        self.threshold_ = float(threshold)
        return self


def renamed_parameter(estimator, old, new, default, *, stacklevel=4):
    """Value of parameter ``new``, honouring metric-learn's name ``old`` for it.

    ``old`` is a constructor parameter whose default is the string
    ``"deprecated"``.  If the user set it, a FutureWarning names our
    parameter and its value is used; setting both is a ``ValueError``.

    Parameters
    ----------
    estimator : BaseEstimator
    old, new : str
        metric-learn's name and ours.
    default : object
        The default of ``new`` (to tell whether the user set it).
    stacklevel : int, default=4
        Of the warning (4: the caller of ``fit`` when called from ``fit``
        behind scikit-learn's ``_fit_context``).

    Returns
    -------
    value : object
    """
    value_old = getattr(estimator, old)
    value_new = getattr(estimator, new)
    if isinstance(value_old, str) and value_old == "deprecated":
        return value_new
    name = type(estimator).__name__
    if not (value_new is default or value_new == default):
        raise ValueError(
            f"{name} got both {old}={plain(value_old)!r} (metric-learn's name) and "
            f"{new}={plain(value_new)!r}; pass only {new}."
        )
    warnings.warn(
        f"{name}: {old} is metric-learn's name of {new}; use "
        f"{new}={plain(value_old)!r} (accepted for now, removed in a future "
        "release).", FutureWarning, stacklevel=stacklevel)
    return value_old


def check_calibration_dict(calibration_params):
    """Validate ``calibration_params`` of a pairs learner's ``fit`` before solving.

    Parameters
    ----------
    calibration_params : dict or None
        Keyword arguments of :meth:`PairsClassifierMixin.calibrate_threshold`.

    Raises
    ------
    TypeError, ValueError
        Naming the argument or key.
    """
    if calibration_params is None:
        return
    if not isinstance(calibration_params, dict):
        raise TypeError(
            "calibration_params must be a dict or None, got "
            f"{type(calibration_params).__name__}."
        )
    unknown = set(calibration_params) - {"strategy", "min_rate", "beta"}
    if unknown:
        raise ValueError(
            f"calibration_params has unknown key(s) {sorted(unknown)}; the "
            "keys are 'strategy', 'min_rate' and 'beta'."
        )
    check_calibration_params(**calibration_params)
class _OrderedTuplesClassifierMixin(ClassifierMixin):
    """Shared face of the triplets and quadruplets classifiers.

    A tuple is *ordered*: its first pair is meant to be the more similar one.
    ``decision_function`` is positive when the learned metric agrees,
    ``predict`` is +1 exactly then (-1 otherwise, ties included: a tie does
    not satisfy the constraint), and ``score`` is the fraction of tuples
    predicted +1, i.e. the accuracy against the all-+1 labels that the
    order implies.  No ``y`` is needed anywhere (passing one is an error,
    see :func:`~metric_estimators._validation.check_no_tuple_labels`), so
    ``cross_val_score(est, tuples)`` and ``GridSearchCV(est, grid).fit(tuples)``
    work directly (plain, unstratified K-fold on the tuples).
    """

    _estimator_type = "classifier"
    _tuple_size = None  # 3 or 4
    _tuple_word = None  # "triplet" or "quadruplet"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.target_tags.required = False
        return tags

    def _validate_tuples(self, tuples, *, fitted=True):
        return validate_tuples(
            tuples, self._tuple_size, self._pairs_preprocessor(),
            n_features=self.n_features_in_ if fitted else None,
        )

    def _decision(self, pts):
        # pts: (n, t, d); far pair minus near pair
        near = (pts[:, 0] - pts[:, 1]) @ self.components_.T
        far = (pts[:, -2] - pts[:, -1]) @ self.components_.T
        return (np.sqrt(np.einsum("ij,ij->i", far, far))
                - np.sqrt(np.einsum("ij,ij->i", near, near)))

    def predict(self, tuples):
        """+1 where the first pair is closer than the second, else -1 (ties: -1).

        Parameters
        ----------
        tuples : array-like of shape (n_tuples, t, n_features), or (n_tuples, t)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        y_pred : ndarray of shape (n_tuples,), values in {-1, +1}
        """
        return np.where(self.decision_function(tuples) > 0, 1, -1)

    def score(self, tuples, y=None, sample_weight=None):
        """Fraction of tuples whose order the learned metric satisfies.

        Parameters
        ----------
        tuples : array-like of shape (n_tuples, t, n_features), or (n_tuples, t)
            indices if the estimator has a ``preprocessor``.
        y : None
            Not used (tuples are ordered); must be None.
        sample_weight : array-like of shape (n_tuples,) or None
            Weights of the tuples.

        Returns
        -------
        accuracy : float
            Weighted fraction of tuples with ``decision_function > 0``.
        """
        check_no_tuple_labels(y, self, self._tuple_word)
        ok = (self.decision_function(tuples) > 0).astype(np.float64)
        if sample_weight is None:
            return float(ok.mean())
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != ok.shape:
            raise ValueError(
                f"sample_weight must have shape {ok.shape}, got {w.shape}."
            )
        return float(np.average(ok, weights=w))


class TripletsClassifierMixin(_OrderedTuplesClassifierMixin):
    """Triplets ``(a, b, c)`` meaning "a is closer to b than to c".

    For learners fitted on triplets (e.g. :class:`~metric_estimators.SCML`),
    given as an array of points of shape (n_triplets, 3, n_features), or as
    index triplets (n_triplets, 3) with a ``preprocessor``.

    * ``decision_function(triplets) = d(a, c) - d(a, b)`` with ``d`` the
      learned (not squared) distance;
    * ``predict`` is +1 when ``a`` is strictly closer to ``b`` than to ``c``,
      -1 otherwise (a tie counts as -1; metric-learn's ``np.sign`` would
      return 0 there);
    * ``score`` is the accuracy of ``predict`` against the all-+1 labels that
      the triplets' order implies: the fraction of satisfied triplets.

    The learner's ``fit`` must set ``components_`` and ``n_features_in_``.
    """

    _tuple_size = 3
    _tuple_word = "triplet"

    def decision_function(self, triplets):
        """``d(a, c) - d(a, b)`` for each triplet ``(a, b, c)``.

        Parameters
        ----------
        triplets : array-like of shape (n_triplets, 3, n_features), or (n_triplets, 3)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        decision : ndarray of shape (n_triplets,)
            Positive where ``a`` is closer to ``b`` than to ``c``.
        """
        check_is_fitted(self, "components_")
        pts = self._validate_tuples(triplets)
        # (a, b) against (a, c)
        return self._decision(pts[:, [0, 1, 0, 2]])


class QuadrupletsClassifierMixin(_OrderedTuplesClassifierMixin):
    """Quadruplets ``(a, b, c, d)`` meaning "pair (a, b) is more similar than (c, d)".

    For learners fitted on quadruplets (e.g. :class:`~metric_estimators.LSML`),
    given as an array of points of shape (n_quadruplets, 4, n_features), or
    as index quadruplets (n_quadruplets, 4) with a ``preprocessor``.

    * ``decision_function(quadruplets) = d(c, d) - d(a, b)``;
    * ``predict`` is +1 when ``d(a, b) < d(c, d)``, -1 otherwise (ties -1);
    * ``score`` is the fraction of satisfied quadruplets.
    """

    _tuple_size = 4
    _tuple_word = "quadruplet"

    def decision_function(self, quadruplets):
        """``d(c, d) - d(a, b)`` for each quadruplet ``(a, b, c, d)``.

        Parameters
        ----------
        quadruplets : array-like of shape (n_quadruplets, 4, n_features), or \
(n_quadruplets, 4) indices if the estimator has a ``preprocessor``.

        Returns
        -------
        decision : ndarray of shape (n_quadruplets,)
            Positive where ``(a, b)`` is the closer pair.
        """
        check_is_fitted(self, "components_")
        return self._decision(self._validate_tuples(quadruplets))


def _renamed_pair_args(pairs, y, pairs_valid, y_valid):
    """Map metric-learn's ``pairs_valid`` / ``y_valid`` onto ``pairs`` / ``y``."""
    for old, new, value, current in (("pairs_valid", "pairs", pairs_valid, pairs),
                                     ("y_valid", "y", y_valid, y)):
        if value is None:
            continue
        if current is not None:
            raise TypeError(f"calibrate_threshold got both {old} and {new}; "
                            f"pass only {new}.")
        warnings.warn(f"calibrate_threshold: {old} is metric-learn's name of "
                      f"{new}; use {new}=.", FutureWarning, stacklevel=3)
    pairs = pairs_valid if pairs_valid is not None else pairs
    y = y_valid if y_valid is not None else y
    if pairs is None or y is None:
        raise TypeError("calibrate_threshold needs pairs and y.")
    return pairs, y


def check_calibration_params(strategy="accuracy", min_rate=None, beta=1.0):
    """Validate the arguments of :meth:`PairsClassifierMixin.calibrate_threshold`.

    Learners call it in ``fit`` on ``calibration_params`` before solving, so
    that a typo fails at once, not after the solver ran.

    Parameters
    ----------
    strategy : str
    min_rate : float or None
    beta : float

    Raises
    ------
    ValueError
        Naming the argument.
    """
    if strategy not in _CALIBRATION_STRATEGIES:
        raise ValueError(
            f"strategy must be one of {_CALIBRATION_STRATEGIES}, got {strategy!r}."
        )
    if strategy in ("max_tpr", "max_tnr"):
        if min_rate is None:
            raise ValueError(f"strategy={strategy!r} needs min_rate in [0, 1].")
        if (isinstance(min_rate, bool) or not isinstance(min_rate, numbers.Real)
                or not 0 <= min_rate <= 1):
            raise ValueError(f"min_rate must be a number in [0, 1], got {plain(min_rate)!r}.")
    if strategy == "f_beta":
        if (isinstance(beta, bool) or not isinstance(beta, numbers.Real)
                or not (beta >= 0 and np.isfinite(beta))):
            raise ValueError(f"beta must be a number >= 0, got {plain(beta)!r}.")
