"""Least Squared-residual Metric Learning: LSML and LSML_Supervised.

Liu, Guo, Zhang, Jojic & Wang, "Metric learning from relative comparisons by
minimizing squared residual", ICDM 2012.

The problem
-----------
Quadruplets ``(a, b, c, d)`` say that the pair ``(a, b)`` is more similar
than ``(c, d)``.  Over positive definite ``M``, LSML minimises::

    f(M) = sum_q w_q max(0, d_M(a, b) - d_M(c, d))^2
           + tr(M M0^-1) - log det M

with ``d_M`` the (unsquared) learned distance, weights ``w`` normalised to
sum to 1 and a positive definite prior ``M0`` (the LogDet divergence
``D_ld(M, M0)`` up to a constant keeps ``M`` positive definite and close to
the prior).  The problem is :mod:`metric_estimators._problems.lsml`, the
sum over quadruplets and its gradient are the numba kernels of
:mod:`metric_estimators._kernels.lsml`, and the solver is gradient descent
on ``M`` with a backtracking line search that rejects steps leaving the
positive definite cone (:func:`metric_estimators.solvers.descent.gradient_descent`),
started at ``M0``, as in the paper and in metric-learn.

Differences from metric-learn 0.7.0 (same class names and parameters)
----------------------------------------------------------------------
* The run stops when an iteration lowers ``f`` by at most ``tol * max(|f|,
  1)``; a ``ConvergenceWarning`` says when ``max_iter`` came first.
* ``LSML.fit(quadruplets, y=None, weights=None)``: quadruplets are ordered,
  so a ``y`` is an error; pass ``weights`` by keyword.
"""

from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._docstrings import fill_doc
from ._problems.logdet import prior_matrix
from ._problems.lsml import QuadrupletResidualProblem, check_quadruplet_weights
from ._reporting import ITERATION, OBJECTIVE, Column, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._threads import one_blas_thread
from ._tuple_classifiers import QuadrupletsClassifierMixin
from ._validation import (
    check_no_tuple_labels,
    check_prior,
    validate_labelled_points,
    validate_tuples,
)
from .base import MahalanobisMixin, components_from_matrix
from .constraints import default_n_constraints, positive_negative_pairs
from .solvers.descent import gradient_descent

__all__ = ["LSML", "LSML_Supervised"]

#: Up to this many features the solver runs with one BLAS thread.
SMALL_FEATURES = 512
TABLE_COLUMNS = (ITERATION, OBJECTIVE, Column("Active", "d"),
                 Column("Step", ".3e"))


class _BaseLSML(MahalanobisMixin, BaseEstimator):
    """Shared parameters and the solver call of LSML and LSML_Supervised."""

    _parameter_constraints: dict = {
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), "array-like"],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(self, tol=1e-3, max_iter=1000, prior="identity",
                 verbose=False, preprocessor=None, random_state=None):
        self.tol = tol
        self.max_iter = max_iter
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def _solve(self, V, U, weights, points, rng, report):
        """Run gradient descent from the prior and set the fitted attributes."""
        n_features = V.shape[1]
        prior = check_prior(self.prior, n_features)
        M0 = prior_matrix(prior, points, n_features, rng)
        w = check_quadruplet_weights(weights, V.shape[0])
        report.phase(f"{V.shape[0]} quadruplets, {n_features} features")
        problem = QuadrupletResidualProblem(V, U, w, M0,
                                            _backend.choose("lsml", *V.shape))
        # small dense matrices (Cholesky, inverse of d x d): one BLAS thread;
        # spinning threads make them many times slower on a busy machine
        blas = (one_blas_thread(V.shape[0] * n_features ** 2)
                if n_features <= SMALL_FEATURES else nullcontext())
        with blas:
            result = gradient_descent(
                problem.value, problem.gradient, M0, max_iter=self.max_iter,
                tol=self.tol, report=report, extra=lambda: (problem.n_active,))
        M = result.x
        if not np.all(np.isfinite(M)):  # defensive: never store a NaN metric
            raise FloatingPointError("LSML produced a non-finite matrix; "
                                     "standardise the data.")
        self.prior_ = M0
        self.components_ = components_from_matrix((M + M.T) / 2,
                                                  name="the learned matrix")
        self.n_iter_ = int(result.n_iter)
        self.loss_curve_ = np.asarray(result.objective_curve)
        self.weights_ = w
        if result.converged:
            report.finish(f"converged after {self.n_iter_} iterations "
                          f"({result.message})")
        else:
            report.finish(f"stopped after {self.n_iter_} iterations")
            convergence_warning(self, max_iter=self.max_iter, tol=self.tol,
                                history=result.objective_curve, stacklevel=5)
        return self


class LSML(QuadrupletsClassifierMixin, _BaseLSML):
    """Least Squared-residual Metric Learning on quadruplets.

    Learns ``M`` so that for each quadruplet ``(a, b, c, d)`` the pair
    ``(a, b)`` is closer than ``(c, d)``, penalising the squared residual
    ``max(0, d(a, b) - d(c, d))^2`` with a LogDet prior (Liu et al., ICDM
    2012).

    Parameters
    ----------
    tol : float >= 0, default=1e-3
        Stop when an iteration lowers the objective by at most ``tol *
        max(|f|, 1)``.
    max_iter : int, default=1000
        Maximum number of gradient steps.
    prior : {'identity', 'covariance', 'random'} or array of shape \
            (n_features, n_features), default='identity'
        The prior ``M0`` (also the starting point): the identity, the
        inverse covariance of the distinct points of the quadruplets, a
        random positive definite matrix (from ``random_state``), or a given
        positive definite matrix.
    verbose : int, default=False
        Print one table row per iteration (throttled, see
        :class:`~metric_estimators._reporting.FitReport`).
    preprocessor : array-like or callable, default=None
        Points that index quadruplets (n_quadruplets, 4) refer to.
    random_state : int, RandomState instance or None, default=None
        Seeds ``prior='random'``.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``L^T L = M``.
    prior_ : ndarray of shape (n_features, n_features)
        ``M0``.
    weights_ : ndarray of shape (n_quadruplets,)
        The normalised weights.
    n_iter_ : int
        Gradient steps taken.
    loss_curve_ : ndarray
        Objective after each step.
    n_features_in_ : int

    See Also
    --------
    LSML_Supervised : the same learner on quadruplets drawn from class labels.

    Notes
    -----
    Each iteration costs ``O(n_quadruplets * n_features^2)`` for the
    distances and the gradient, plus ``O(n_features^3)`` per tried step
    (Cholesky factorisation); memory is ``O(n_quadruplets * n_features)``.

    References
    ----------
    E. Y. Liu, Z. Guo, X. Zhang, V. Jojic and W. Wang, "Metric learning
    from relative comparisons by minimizing squared residual", ICDM 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import LSML
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 2) * [1.0, 5.0]   # the 2nd feature is noise
    >>> q = rng.randint(0, 60, (300, 4))
    >>> gap = np.abs(X[q[:, 0], 0] - X[q[:, 1], 0]) < np.abs(X[q[:, 2], 0] - X[q[:, 3], 0])
    >>> quadruplets = np.where(gap[:, None], q, q[:, [2, 3, 0, 1]])
    >>> lsml = LSML(preprocessor=X).fit(quadruplets)
    >>> lsml.score(quadruplets) > 0.7
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, quadruplets, y=None, weights=None):
        """Learn the metric from quadruplets: (a, b) more similar than (c, d).

        Parameters
        ----------
        quadruplets : array-like of shape (n_quadruplets, 4, n_features), \
or (n_quadruplets, 4) indices if the estimator has a ``preprocessor``
        y : None
            Not used: quadruplets are ordered.  Must be None (metric-learn's
            positional ``weights`` must be passed as ``weights=``).
        weights : array-like of shape (n_quadruplets,) or None
            Relative weights of the quadruplets (normalised to sum to 1);
            None means uniform.

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        self._check_preprocessor()
        pts = validate_tuples(quadruplets, 4, self.preprocessor_)
        check_no_tuple_labels(y, self, "quadruplet")
        rng = check_random_state(self.random_state)
        n_features = pts.shape[2]
        points = (np.unique(pts.reshape(-1, n_features), axis=0)
                  if isinstance(self.prior, str) and self.prior == "covariance"
                  else None)
        self.n_features_in_ = n_features
        self.classes_ = np.array([-1, 1])
        return self._solve(pts[:, 0] - pts[:, 1], pts[:, 2] - pts[:, 3],
                           weights, points, rng, report)


@fill_doc
class LSML_Supervised(TransformerMixin, _BaseLSML):
    """LSML on quadruplets drawn from class labels.

    Each quadruplet joins a same-class pair ``(a, b)`` and a different-class
    pair ``(c, d)``, both drawn uniformly without replacement
    (:func:`metric_estimators.constraints.positive_negative_pairs`,
    reproducible with ``random_state``).

    Parameters
    ----------
    tol, max_iter, prior, verbose, random_state
        As in :class:`LSML`; ``random_state`` also seeds the draw.
    n_constraints : int or None, default=None
        Number of quadruplets (one same-class and one different-class
        pair each); None grows with the data
        %(default_n_constraints)s
    weights : array-like of shape (n_constraints,) or None, default=None
        Relative weights of the drawn quadruplets; None means uniform.
    preprocessor : None
        Accepted for metric-learn compatibility, not used.

    Attributes
    ----------
    components_, prior_, weights_, n_iter_, loss_curve_, n_features_in_
        As in :class:`LSML`.
    quadruplets_ : ndarray of shape (n_quadruplets, 4)
        The drawn quadruplets, as indices into ``X``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> from metric_estimators import LSML_Supervised
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> LSML_Supervised(random_state=0).fit(X, y).transform(X).shape
    (178, 13)
    """

    _parameter_constraints: dict = {
        **_BaseLSML._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "weights": ["array-like", None],
    }

    def __init__(self, tol=1e-3, max_iter=1000, prior="identity",
                 n_constraints=None, weights=None, verbose=False,
                 preprocessor=None, random_state=None):
        super().__init__(tol=tol, max_iter=max_iter, prior=prior,
                         verbose=verbose, preprocessor=preprocessor,
                         random_state=random_state)
        self.n_constraints = n_constraints
        self.weights = weights

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y):
        """Learn the metric from class labels.

        Parameters
        ----------
        %(labelled_points)s

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        self._check_preprocessor()
        X, y, labels = validate_labelled_points(
            self, self._points(X), y, minus_one_note=True)
        n_constraints = default_n_constraints(self.n_constraints, y, X.shape[1])
        rng = check_random_state(self.random_state)
        a, b, c, d = positive_negative_pairs(y, n_constraints, same_length=True,
                                             random_state=rng)
        quadruplets = np.column_stack((a, b, c, d)).astype(np.intp)
        self._solve(X[a] - X[b], X[c] - X[d], self.weights, X, rng, report)
        self.quadruplets_ = quadruplets
        return self
