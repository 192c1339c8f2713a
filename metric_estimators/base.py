"""Shared machinery of every Mahalanobis learner.

A fitted learner holds ``components_`` ``L`` of shape (n_components,
n_features).  The learned (squared) distance is
``d(x, y)^2 = ||L (x - y)||^2 = (x - y)^T M (x - y)`` with ``M = L^T L``.
"""

import os
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from ._linalg import psd_factor
from ._tuple_classifiers import (
    PairsClassifierMixin,
    QuadrupletsClassifierMixin,
    TripletsClassifierMixin,
)
from ._validation import (
    ArrayIndexer,
    apply_preprocessor,
    check_indices,
    check_square_matrix,
    resolve_preprocessor,
    validate_pairs,
    validate_points,
)

# The tuple classifier mixins are written in _tuple_classifiers; their
# public (documented) home is this module.
__all__ = [
    "BaseMetricLearner",
    "MahalanobisMixin",
    "MahalanobisDistance",
    "PairsClassifierMixin",
    "QuadrupletsClassifierMixin",
    "TripletsClassifierMixin",
    "components_from_matrix",
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
        # a 1-D map of a one-feature model, [l], is the 1 x 1 matrix [[l]]
        self.components = np.atleast_2d(
            np.array(components, dtype=np.float64, copy=True))

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
    hide.  ``M`` is validated first (finite, real, square); the factor itself
    is :func:`metric_estimators._linalg.psd_factor`.

    Returns
    -------
    L : ndarray of shape (n_features, n_features)
    """
    return psd_factor(check_square_matrix(M, name), name=name)


# The "?" link of an estimator's HTML representation (in Jupyter) points to
# its API page, ``DOC_LINK_TEMPLATE.format(docs_url=..., estimator_name=...)``.
# ``docs_url`` (read when the link is made) is the environment variable
# METRIC_ESTIMATORS_DOCS_URL (the root of a built or hosted copy of docs/, a
# web address or a file:// URL); without it, the documentation built in this
# checkout (``docs/_build/html``, see README, "Documentation") when the page
# exists there; else there is no link (never a dead one: the documentation is
# not hosted yet).
DOC_LINK_TEMPLATE = "{docs_url}/generated/metric_estimators.{estimator_name}.html"
DOCS_URL_ENV = "METRIC_ESTIMATORS_DOCS_URL"
#: where ``python -m sphinx ... docs docs/_build/html`` writes the documentation
BUILT_DOCS = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"


def docs_url(estimator_name=None):
    """The root URL of the documentation the HTML representation links to.

    ``$METRIC_ESTIMATORS_DOCS_URL`` if set; else the ``file://`` URL of this
    checkout's built documentation (:data:`BUILT_DOCS`) if it holds the API
    page of ``estimator_name`` (any page when None); else ``""`` (no link).
    """
    url = os.environ.get(DOCS_URL_ENV, "").rstrip("/")
    if url:
        return url
    page = ("index.html" if estimator_name is None
            else f"generated/metric_estimators.{estimator_name}.html")
    if (BUILT_DOCS / page).is_file():
        return BUILT_DOCS.as_uri()
    return ""


class DocLinkMixin:
    """Point the "?" of scikit-learn's HTML representation to our API pages.

    scikit-learn builds the link from ``_doc_link_module``,
    ``_doc_link_template`` and ``_doc_link_url_param_generator``; here the
    template is :data:`DOC_LINK_TEMPLATE` with the root from
    :func:`docs_url`: the environment variable
    ``METRIC_ESTIMATORS_DOCS_URL``, else the documentation built in this
    checkout, else no link.
    """

    _doc_link_module = "metric_estimators"

    @property
    def _doc_link_template(self):
        root = docs_url(type(self).__name__)
        if not root:
            return ""
        return DOC_LINK_TEMPLATE.replace("{docs_url}", root)

    @_doc_link_template.setter
    def _doc_link_template(self, value):  # scikit-learn's own API allows it
        raise AttributeError(f"set the environment variable {DOCS_URL_ENV} instead.")

    def _doc_link_url_param_generator(self):
        # every public estimator is documented as metric_estimators.<Name>
        return {"estimator_name": type(self).__name__}


class DaskClientMixin:
    """An estimator whose ``client`` parameter is a live Dask connection.

    ``clone`` shares the client (a connection cannot be deep-copied) and
    pickling drops it (``None``): it is a resource of the fit, not a
    parameter of the result.
    """

    def __sklearn_clone__(self):
        """Clone, sharing ``client`` (a live ``distributed.Client`` cannot be deep-copied)."""
        client = self.client
        self.client = None
        try:
            new = super().__sklearn_clone__()
        finally:
            self.client = client
        new.client = client
        return new

    def __getstate__(self):
        """Pickle without ``client`` (a connection, not a parameter of the result)."""
        state = super().__getstate__()
        if state.get("client") is not None:
            state = {**state, "client": None}
        return state


class PrecomputedMixin:
    """The face of an estimator fitted on a square matrix (MetricNearness, CorrelationClustering).

    ``metric`` is ``"precomputed"`` and the ``pairwise`` tag is set:
    scikit-learn's convention for such estimators (as
    ``DBSCAN(metric="precomputed")``), so that tools that split data
    (``cross_val_score``) index rows and columns alike, and scikit-learn's
    estimator checks pass square matrices.  Sparse matrices are accepted.
    """

    @property
    def metric(self):
        """``"precomputed"``: ``fit`` takes the square matrix itself, never feature vectors.

        Read-only: there is no other input.
        """
        return "precomputed"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        tags.input_tags.sparse = True
        return tags


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
    ``transform``); a learner fitted on pairs, triplets or quadruplets does
    not, since ``fit_transform(pairs, y)`` cannot mean anything and code
    that treats transformers specially (a Pipeline, ``isinstance(est,
    TransformerMixin)``) must not hand it tuples to transform.

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
        returns ``||L (u - v)||`` (or its square).  As metric-learn's, it
        takes a vector with extra axes of length 1 (a row ``(1,
        n_features)``, ``[[x]]``); several points are a ``ValueError``, as
        for scipy's distances.  It is independent of the
        estimator: refitting the estimator does not change a metric already
        returned.

        Cost: it is called once per pair of points from Python, so
        ``KNeighborsClassifier(metric=est.get_metric())`` is orders of
        magnitude slower than a k-NN on ``est.transform(X)`` (the same
        distances; measured in benchmarks/README.md, *Measurements behind
        choices in the code*).  Prefer a Pipeline of this estimator and
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
