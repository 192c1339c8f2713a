"""Information Theoretic Metric Learning: ITML and ITML_Supervised.

Davis, Kulis, Jain, Sra & Dhillon, "Information-theoretic metric learning",
ICML 2007.

The problem
-----------
Given pairs ``(x_c, x'_c)`` labelled ``y_c = +1`` (similar) or ``-1``
(dissimilar), bounds ``low <= high`` and a positive definite prior ``A0``,
ITML solves, over positive definite ``A`` and slacks ``xi > 0``::

    minimise    D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)
    subject to  d_A(x_c, x'_c)^2 <= xi_c    if y_c = +1,   xi0_c = low
                d_A(x_c, x'_c)^2 >= xi_c    if y_c = -1,   xi0_c = high

where ``d_A(x, x')^2 = (x - x')^T A (x - x')`` is the *squared* learned
distance, ``D_ld(A, A0) = tr(A A0^-1) - log det(A A0^-1) - d`` and
``D_ld(x, y) = x / y - log(x / y) - 1``.  It is solved by Bregman projections
with Hildreth's correction and the exact projection step
``gamma / (gamma + 1) * (1/p - 1/xi)``, by the Project-and-Forget driver
that ProjectAndForget, MetricNearness and CorrelationClustering also use
(:func:`metric_estimators.solvers.bregman.logdet_bregman`: the driver with an
oracle over the fixed list of pairs).  The prior, the bounds and the rule for
pairs of identical points are those of :mod:`metric_estimators._problems.logdet`.

Differences from metric-learn 0.7.0 (same class names and parameters)
----------------------------------------------------------------------
* ``ITML_Supervised`` uses every pair of training points as a constraint
  when they are affordable (small data), and otherwise draws many more
  than metric-learn's ``20 * n_classes ** 2`` of each kind
  (``n_constraints`` below): few random pairs make the metric depend on
  the seed.
* Default bounds are the 5th and 95th percentiles of the **squared** prior
  distances between distinct points, i.e. in the same units as the squared
  distances the constraints bound.  (metric-learn takes percentiles of
  unsquared distances and compares them with squared ones.)
* Every iteration checks all constraints (one matrix product), adds the
  violated ones to an active set, sweeps the active set once in a fresh
  random order (from ``random_state``) and forgets the constraints whose
  dual is zero.  Both leave the fixed point unchanged; reshuffling turns the
  slow, sublinear convergence of a fixed order into fast linear convergence
  on label-generated constraints.
* The run stops when no constraint is violated by more than ``tol``
  (relative to its slack target) and the last sweep's measure
  ``max(sum |d lambda| / sum lambda, max relative violation)`` is at most
  ``tol``: an approximate KKT point, not a fixed budget.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._docstrings import fill_doc
from ._linalg import power_of_two_scale
from ._problems.logdet import default_bounds, prior_matrix
from ._reporting import FitReport, convergence_warning
from ._sklearn_private import Interval, Options, StrOptions, _fit_context
from ._tuple_classifiers import PairsClassifierMixin
from ._validation import (
    check_bounds,
    check_prior,
    dissimilar_identical_mask,
    renamed_parameter,
    validate_labelled_points,
)
from .base import MahalanobisMixin, components_from_matrix
from .constraints import ALL_PAIRS_WORK, ITML_MAX_DRAWN, default_labelled_pairs
from .solvers.bregman import TABLE_COLUMNS, logdet_bregman

__all__ = ["ITML", "ITML_Supervised"]


def _refuse_pairs(X, y):
    """Point users who pass pairs to ITML_Supervised to ITML."""
    if hasattr(X, "iloc"):
        return
    try:
        arr = np.asarray(X)
    except ValueError:  # ragged: validate_points says what is wrong
        return
    if arr.ndim == 3 and arr.shape[1] == 2:
        raise ValueError(
            f"ITML_Supervised learns from points X (n_samples, n_features) "
            f"and class labels; X of shape {arr.shape} looks like pairs of "
            "points. For labelled pairs use ITML().fit(pairs, y)."
        )
    yy = np.asarray(y) if y is not None else None
    if (arr.ndim == 2 and arr.shape[1] == 2 and arr.dtype.kind in "iu"
            and yy is not None and yy.dtype.kind in "iuf" and yy.size
            and np.all(np.isin(yy, (-1, 1)))):
        warnings.warn(
            "X has two integer columns and y is +-1: if these are index pairs "
            "with pair labels, use ITML(preprocessor=points).fit(pairs, y); "
            "ITML_Supervised treats X as points and y as class labels.",
            UserWarning, stacklevel=3,
        )


class _BaseITML(MahalanobisMixin, BaseEstimator):
    """Shared parameters and the solver call of ITML and ITML_Supervised."""

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), "array-like"],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
        "convergence_threshold": [Interval(Real, 0, None, closed="left"),
                                  StrOptions({"deprecated"})],
    }

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, prior="identity",
                 verbose=False, preprocessor=None, random_state=None,
                 convergence_threshold="deprecated"):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.convergence_threshold = convergence_threshold

    def _solve(self, V, delta, points, bounds, rng, report):
        """Run the Bregman solver and set the fitted attributes."""
        n_features = V.shape[1]
        prior = check_prior(self.prior, n_features)
        A0 = prior_matrix(prior, points, n_features, rng)
        if bounds is None:
            low, high = default_bounds(points, A0, rng)
        else:
            low, high = check_bounds(bounds)
        xi0 = np.where(delta > 0, low, high).astype(np.float64)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        # Data of extreme scale (e.g. 1e150 or 1e-150): dividing the pair
        # differences by s (a power of two, exact) and the bounds by s^2
        # leaves the problem in A unchanged, and keeps the duals (~ 1 / d_A)
        # and the squared distances away from overflow and underflow.
        s = power_of_two_scale(V, center=False)
        if s != 1.0:
            V = V / s
            xi0 = xi0 / s / s

        report.phase(f"{V.shape[0]} pair constraints, bounds ({low:.4g}, "
                     f"{high:.4g})")
        tol = renamed_parameter(self, "convergence_threshold", "tol", 1e-3,
                                stacklevel=5)
        # numba kernels or their numpy twins: asked once, for the whole fit
        kernels = _backend.choose("logdet_listed", V.shape[0], V.shape[1])
        result = logdet_bregman(
            A0, V, delta.astype(np.float64), xi0, float(self.gamma),
            tol=tol, max_iter=self.max_iter, random_state=seed,
            report=report, kernels=kernels,
        )
        if result.converged:
            report.finish(f"converged after {result.n_iter} iterations")
        else:
            report.finish(f"stopped after {result.n_iter} iterations")
            convergence_warning(self, max_iter=self.max_iter, tol=tol,
                                history=result.history["objective"],
                                detail=result.detail(), stacklevel=5)
        M = result.matrix
        if not np.all(np.isfinite(M)):  # defensive: never store a NaN metric
            raise FloatingPointError(
                "ITML produced a non-finite matrix; check the scale of the data "
                "and of the bounds."
            )
        self.prior_ = A0
        self.components_ = components_from_matrix(M, name="the learned matrix")
        self.bounds_ = np.array([low, high])
        self.n_iter_ = int(result.n_iter)
        self.converged_ = bool(result.converged)
        self.convergence_curve_ = np.asarray(result.history["residual"])
        self.loss_curve_ = np.asarray(result.history["objective"])
        self.n_active_curve_ = np.asarray(result.history["n_active"],
                                          dtype=np.int64)
        self.history_ = result.history
        self.duals_ = result.duals / s / s
        self.slack_ = result.slack * s * s
        return self


class ITML(PairsClassifierMixin, _BaseITML):
    """Information Theoretic Metric Learning on labelled pairs.

    Learns a Mahalanobis matrix ``A`` close to a prior ``A0`` in LogDet
    divergence such that similar pairs have squared distance at most
    ``bounds_[0]`` and dissimilar pairs at least ``bounds_[1]``, up to slacks
    weighted by ``gamma`` (Davis et al., ICML 2007; the exact problem is in
    the module docstring of :mod:`metric_estimators.itml`).

    Parameters
    ----------
    gamma : float or np.inf, default=1.0
        Weight of the slack divergence: larger values enforce the bounds more
        strictly; ``np.inf`` makes them hard constraints (which may then be
        infeasible).
    max_iter : int, default=1000
        Maximum number of iterations (each: a check of every constraint and
        one sweep over the active ones).
    tol : float, default=1e-3
        Stop when a sweep changes the duals by at most ``tol`` relative (L1)
        and no constraint is violated by more than ``tol`` relative to its
        slack target.
    prior : {'identity', 'covariance', 'random'} or array of shape \
            (n_features, n_features), default='identity'
        The prior ``A0``: the identity, the inverse covariance of the points,
        a random SPD matrix (``sklearn.datasets.make_spd_matrix`` with
        ``random_state``), or a positive definite matrix.
    verbose : bool or int, default=False
        Print a table (iteration, objective, largest violation, sweep
        measure, active constraints, added, sweeps, time) while fitting.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``pairs`` may be ``(n_pairs, 2)`` indices into it (array),
        or indices it maps to points (callable).
    random_state : int, RandomState instance or None, default=None
        Seeds the order of the projections and ``prior='random'``.
    convergence_threshold : float, default="deprecated"
        metric-learn's former name of ``tol``: accepted with a FutureWarning
        and used as ``tol``.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``A = L^T L`` (Cholesky factor).
    bounds_ : ndarray of shape (2,)
        ``(low, high)`` bounds on squared distances used.
    n_iter_ : int
        Number of iterations run.
    converged_ : bool
        Whether the convergence measure reached ``tol`` within ``max_iter``
        iterations.
    convergence_curve_ : ndarray of shape (n_iter,)
        The sweep's convergence measure in each iteration.
    loss_curve_ : ndarray of shape (n_iter,)
        Objective (LogDet divergence + gamma * slack divergence) after each
        iteration; the iterates are not feasible until convergence, so it need
        not decrease monotonically.
    n_active_curve_ : ndarray of shape (n_iter,)
        Constraints remembered (positive dual) after each iteration.
    history_ : dict of lists
        Per iteration, the driver's record (``objective``,
        ``max_violation``, ``residual``, ``n_active``, ``n_added``,
        ``n_forgotten``, ``passes``, ``time``); see
        :class:`metric_estimators.solvers.bregman.BregmanResult`.
    duals_ : ndarray of shape (n_pairs,)
        Dual variable of each pair constraint (0 for constraints that are
        inactive at the solution).
    slack_ : ndarray of shape (n_pairs,)
        Final slack targets ``xi``.
    prior_ : ndarray of shape (n_features, n_features)
        The prior matrix ``A0``.
    threshold_ : float
        Distance threshold of :meth:`predict` (as in metric-learn: a pair is
        similar when its learned distance is at most ``threshold_``),
        calibrated on the training pairs.
    classes_ : ndarray of shape (2,)
        ``[-1, 1]``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import ITML
    >>> X = np.array([[0., 0.], [0., 1.], [3., 0.], [3., 1.]])
    >>> pairs = np.array([[0, 1], [2, 3], [0, 2], [1, 3]])
    >>> y = np.array([1, 1, -1, -1])
    >>> itml = ITML(preprocessor=X, random_state=0).fit(pairs, y)
    >>> itml.predict(pairs)
    array([ 1,  1, -1, -1])
    """

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, pairs, y, bounds=None, calibration_params=None):
        """Learn the metric from labelled pairs.

        Similar pairs of identical points satisfy every bound: they are kept
        (the solver skips them, their dual stays 0).

        Parameters
        ----------
        %(labelled_pairs)s
        bounds : (low, high) or None
            Bounds on *squared* distances, ``0 < low <= high``.  Default: the
            5th and 95th percentiles of squared prior distances between the
            distinct points of ``pairs`` (at most 1000 of them, drawn with
            ``random_state``; pairs of identical points are not counted).
        %(calibration_params)s

        Returns
        -------
        self : ITML
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        V, y_pairs, points = self._training_pairs(pairs, y, calibration_params)
        self._solve(V, y_pairs, points, bounds,
                    check_random_state(self.random_state), report)
        return self._calibrate_on_training_pairs(pairs, y_pairs,
                                                 calibration_params)


class ITML_Supervised(TransformerMixin, _BaseITML):
    """ITML with pairs from class labels.

    By default every pair of training points is a constraint (same class:
    similar, different classes: dissimilar) when there are at most
    :data:`metric_estimators.constraints.ALL_PAIRS_MAX` pairs (about 450
    points) and their number times ``n_features ** 2`` stays within
    :data:`metric_estimators.constraints.ALL_PAIRS_WORK`; the metric then
    does not depend on the seed.  On larger data, or with ``n_constraints``
    given, ``n_constraints``
    same-class and as many different-class pairs are drawn uniformly
    without replacement (:func:`metric_estimators.constraints.pairs_from_labels`,
    reproducible with ``random_state``).  metric-learn draws
    ``20 * n_classes ** 2`` of each, so few on small data that which pairs
    are drawn decides the metric; the accuracy of both counts on the
    accuracy panel: ``benchmarks/results/accuracy_panel.md``.

    Parameters
    ----------
    gamma, max_iter, tol, prior, verbose, random_state
        As in :class:`ITML`; ``random_state`` also seeds the pair sampling.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``X`` in ``fit`` and ``transform`` may be a 1-D array of
        indices into it (array) or of ids it maps to points (callable).
    n_constraints : int or None, default=None
        Number of pairs of each kind to draw.  None: every pair when that
        is affordable (see above); otherwise as many of each kind as
        ``pairs x n_features ** 2 <= ALL_PAIRS_WORK`` allows, at most
        :data:`metric_estimators.constraints.ITML_MAX_DRAWN` and at
        least ``20 * n_classes ** 2``
        (:func:`metric_estimators.constraints.default_n_constraints`).
        ``20 * n_classes ** 2`` draws as many as metric-learn.
    num_constraints : int, default="deprecated"
        metric-learn's former name of ``n_constraints``: accepted with a
        FutureWarning and used as ``n_constraints``.
    convergence_threshold : float, default="deprecated"
        As in :class:`ITML`.

    Attributes
    ----------
    components_, bounds_, n_iter_, convergence_curve_, loss_curve_, \
    n_active_curve_, history_, duals_, slack_, prior_, n_features_in_
        As in :class:`ITML` (``duals_`` and ``slack_`` per drawn pair).
    pairs_ : ndarray of shape (n_pairs, 2)
        The index pairs into ``X`` used as constraints.
    pair_labels_ : ndarray of shape (n_pairs,)
        Their labels (+1 same class, -1 different classes).

    Notes
    -----
    Default bounds are the 5th / 95th percentiles of squared prior distances
    between distinct points of ``X`` (at most 1000 points, drawn with
    ``random_state``, are used).  Different-class pairs of identical points
    cannot be separated by any metric and are left out, with a warning.
    """

    _parameter_constraints: dict = {
        **_BaseITML._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "num_constraints": [Interval(Integral, 1, None, closed="left"),
                            StrOptions({"deprecated"})],
    }

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, n_constraints=None,
                 prior="identity", verbose=False, preprocessor=None,
                 random_state=None, num_constraints="deprecated",
                 convergence_threshold="deprecated"):
        super().__init__(gamma=gamma, max_iter=max_iter, tol=tol, prior=prior,
                         verbose=verbose, preprocessor=preprocessor,
                         random_state=random_state,
                         convergence_threshold=convergence_threshold)
        self.n_constraints = n_constraints
        self.num_constraints = num_constraints

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, bounds=None):
        """Learn the metric from class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,)
            indices when a ``preprocessor`` is set.
        y : array-like of shape (n_samples,)
            Class labels.
        bounds : (low, high) or None
            Bounds on squared distances; see :class:`ITML`.

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        n_constraints = renamed_parameter(self, "num_constraints",
                                          "n_constraints", None)
        self._check_preprocessor()
        X = self._points(X)
        _refuse_pairs(X, y)
        X, y, labels = validate_labelled_points(self, X, y,
                                                minus_one_note=True)
        rng = check_random_state(self.random_state)
        pairs, labels = default_labelled_pairs(
            y, X.shape[1], n_constraints, all_pairs_work=ALL_PAIRS_WORK,
            work=ALL_PAIRS_WORK, cap=ITML_MAX_DRAWN, random_state=rng)
        V = X[pairs[:, 0]] - X[pairs[:, 1]]
        bad = dissimilar_identical_mask(V, labels)
        if np.any(bad):
            warnings.warn(
                f"{int(bad.sum())} different-class pair(s) join identical "
                "points and are left out.", UserWarning,
            )
            keep = ~bad
            pairs, labels, V = pairs[keep], labels[keep], V[keep]
        self._solve(V, labels, X, bounds, rng, report)
        self.pairs_ = pairs
        self.pair_labels_ = labels
        return self
