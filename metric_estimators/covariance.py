"""Covariance: the inverse covariance of the data as the metric.

Mahalanobis, P. C. (1936). On the generalised distance in statistics.
Proceedings of the National Institute of Sciences of India 2(1), 49-55.
"""

from numbers import Real

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin

from ._linalg import power_of_two_scale
from ._reporting import FitReport
from ._sklearn_private import Interval, _fit_context
from ._validation.points import validate_points
from .base import MahalanobisMixin

__all__ = ["Covariance"]


class Covariance(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """The classical Mahalanobis distance: the inverse covariance of ``X``.

    The learned matrix is ``M = Sigma^{-1}`` with ``Sigma`` the (unbiased)
    covariance of ``X``; the map ``L = Sigma^{-1/2}`` (symmetric) whitens the
    data.  Unsupervised: ``y`` is ignored.  A baseline for every other
    learner.

    Singular covariance (constant features, collinear features, fewer
    samples than features): the **pseudo-inverse** is used, as in
    metric-learn 0.7.0: directions without variance get weight 0 (they carry
    no information about the data, and every point is equal along them).
    Eigenvalues below ``rtol`` times the largest count as zero.
    ``rank_`` says how many directions were kept.

    Parameters
    ----------
    rtol : float, default=1e-10
        Relative threshold under which an eigenvalue of the covariance is
        treated as zero.
    preprocessor : array-like, callable or None, default=None
        If given, ``X`` may be 1-D indices that it maps to points.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``Sigma^{+1/2}``, symmetric.
    rank_ : int
        Rank of the covariance (the number of directions with weight > 0).
    n_iter_ : int
        Always 1 (closed form).
    n_features_in_ : int

    Notes
    -----
    Cost ``O(n n_features^2 + n_features^3)``.  metric-learn's ``Covariance``
    has no ``rtol`` (it relies on ``scipy.linalg.pinvh``'s default cut-off).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from metric_estimators import Covariance
    >>> X, _ = load_iris(return_X_y=True)
    >>> Covariance().fit(X).get_mahalanobis_matrix().shape
    (4, 4)
    """

    _parameter_constraints: dict = {
        "rtol": [Interval(Real, 0, 1, closed="left")],
        "preprocessor": ["array-like", callable, None],
    }

    def __init__(self, rtol=1e-10, preprocessor=None):
        self.rtol = rtol
        self.preprocessor = preprocessor

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Compute the inverse covariance of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : Covariance
        """
        report = FitReport(self, verbose=0)
        self._check_preprocessor()
        X = validate_points(self, self._points(X), ensure_min_samples=2)
        X = X.astype(np.float64, copy=False)
        s = power_of_two_scale(X)
        Z = X / s if s != 1.0 else X
        Z = Z - Z.mean(axis=0)
        cov = Z.T @ Z / (Z.shape[0] - 1)
        w, U = linalg.eigh((cov + cov.T) / 2, check_finite=False)
        top = max(w[-1], 0.0)
        keep = w > self.rtol * top if top > 0 else np.zeros(w.size, bool)
        if not keep.any():
            raise ValueError("X has zero variance (all samples are equal): "
                             "its covariance has no inverse, not even a "
                             "pseudo-inverse with a positive direction.")
        inv_sqrt = np.zeros_like(w)
        inv_sqrt[keep] = 1.0 / np.sqrt(w[keep])
        self.components_ = (U * inv_sqrt) @ U.T / s
        self.rank_ = int(keep.sum())
        self.n_iter_ = 1
        report.finish("solved")
        return self
