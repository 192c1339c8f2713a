"""Information Theoretic Metric Learning (Davis, Kulis, Jain, Sra & Dhillon,
"Information-theoretic metric learning", ICML 2007).

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
``D_ld(x, y) = x / y - log(x / y) - 1``.  It is solved by cyclic Bregman
projections with Hildreth's correction (the engine in
:mod:`metric_estimators.solvers.bregman`, shared with Project-and-Forget),
with the exact projection step ``gamma / (gamma + 1) * (1/p - 1/xi)``.

Differences from metric-learn 0.7.0 (same class names and parameters)
----------------------------------------------------------------------
* Default bounds are the 5th and 95th percentiles of the **squared** prior
  distances between distinct points, i.e. in the same units as the squared
  distances the constraints bound.  (metric-learn takes percentiles of
  unsquared distances and compares them with squared ones.)
* Each sweep visits the constraints in a fresh random order (from
  ``random_state``), and constraints with a zero dual are swept only when a
  periodic scan finds them violated (active set).  Both leave the fixed point
  unchanged; reshuffling turns the slow, sublinear convergence of a fixed
  order into fast linear convergence on label-generated constraints.
* ``tol`` applies to ``max(sum |d lambda| / sum lambda, max relative
  violation)`` after a sweep (plus a scan of all constraints): the run stops
  at an approximate KKT point, not after a fixed budget.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, _fit_context
from sklearn.datasets import make_spd_matrix
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from ._validation import (
    check_pd_matrix,
    power_of_two_scale,
    validate_pair_labels,
    validate_pairs,
    validate_points,
)
from .base import MahalanobisMixin, PairsClassifierMixin, components_from_matrix
from .constraints import pairs_from_labels
from .solvers.bregman import logdet_bregman

__all__ = ["ITML", "ITML_Supervised"]

# At most this many points are used to estimate the default bounds (all
# pairwise distances among them are computed).
_MAX_BOUND_POINTS = 1000


def _prior_matrix(prior, points, n_features, rng):
    """The prior ``A0`` (positive definite) for ``prior`` and the data."""
    if isinstance(prior, str):
        if prior == "identity":
            return np.eye(n_features)
        if prior == "random":
            return make_spd_matrix(n_features, random_state=rng)
        # covariance
        if points.shape[0] < 2:
            raise ValueError(
                "prior='covariance' needs at least 2 distinct points."
            )
        C = np.atleast_2d(np.cov(points, rowvar=False))
        try:
            C = check_pd_matrix(C, "the covariance of the data")
        except ValueError as exc:
            raise ValueError(
                f"prior='covariance' needs an invertible covariance: {exc} "
                "Use prior='identity', or reduce the dimension first."
            ) from None
        return np.linalg.inv(C)
    return check_pd_matrix(prior, "prior", size=n_features)


def _default_bounds(points, A0, rng):
    """5th / 95th percentiles of squared prior distances of distinct points."""
    if points.shape[0] > _MAX_BOUND_POINTS:
        keep = rng.choice(points.shape[0], _MAX_BOUND_POINTS, replace=False)
        points = points[np.sort(keep)]
    Z = points @ components_from_matrix(A0, name="prior").T
    D = pdist(Z, "sqeuclidean")
    D = D[D > 0]
    if D.size == 0:
        raise ValueError(
            "Cannot set default bounds: all points are identical. Pass bounds "
            "explicitly."
        )
    low, high = np.percentile(D, [5, 95])
    return float(low), float(high)


def _check_bounds(bounds):
    arr = np.asarray(bounds)
    if arr.dtype.kind not in "iuf" or arr.shape != (2,):
        raise ValueError(
            f"bounds must be two numbers (low, high), got {bounds!r}."
        )
    low, high = (float(b) for b in arr)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"bounds must be finite, got {bounds!r}.")
    if low <= 0:
        raise ValueError(
            f"bounds must be positive squared distances, got low={low}."
        )
    if low > high:
        raise ValueError(
            f"bounds must satisfy low <= high, got low={low} > high={high}."
        )
    return low, high


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
    }

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, prior="identity",
                 verbose=False, preprocessor=None, random_state=None):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def _print(self, line):
        print(f"[{type(self).__name__}] {line}", flush=True)

    def _solve(self, V, delta, points, bounds, rng):
        """Run the Bregman solver and set the fitted attributes."""
        n_features = V.shape[1]
        A0 = _prior_matrix(self.prior, points, n_features, rng)
        if bounds is None:
            low, high = _default_bounds(points, A0, rng)
        else:
            low, high = _check_bounds(bounds)
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

        callback = None
        if self.verbose:
            header = (f"{'Iteration':>10} {'Convergence':>12} {'Active':>8} "
                      f"{'Objective':>14} {'Time(s)':>9}")
            self._print(header)
            self._print("-" * len(header))

            def callback(it, measure, n_active, obj, elapsed):
                self._print(f"{it:>10d} {measure:>12.3e} {n_active:>8d} "
                            f"{obj:>14.6e} {elapsed:>9.3f}")

        result = logdet_bregman(
            A0, V, delta.astype(np.float64), xi0, float(self.gamma),
            tol=self.tol, max_iter=self.max_iter, random_state=seed,
            track_objective=True, callback=callback,
        )
        if not result.converged:
            warnings.warn(
                f"[{type(self).__name__}] did not converge in max_iter="
                f"{self.max_iter} sweeps (last convergence measure "
                f"{result.history[-1]:.3g} > tol={self.tol}).",
                ConvergenceWarning,
            )
        elif self.verbose:
            self._print(f"converged after {result.n_iter} sweeps.")
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
        self.convergence_curve_ = result.history
        self.loss_curve_ = result.objective
        self.n_active_curve_ = result.n_active
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
        Maximum number of sweeps over the (active) constraints.
    tol : float, default=1e-3
        Stop when a sweep changes the duals by less than ``tol`` relative
        (L1) and no constraint is violated by more than ``tol`` relative to
        its slack target.
    prior : {'identity', 'covariance', 'random'} or array of shape \
            (n_features, n_features), default='identity'
        The prior ``A0``: the identity, the inverse covariance of the points,
        a random SPD matrix (``sklearn.datasets.make_spd_matrix`` with
        ``random_state``), or a positive definite matrix.
    verbose : bool or int, default=False
        Print a table (sweep, convergence measure, active constraints,
        objective, time) while fitting.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``pairs`` may be ``(n_pairs, 2)`` indices into it (array),
        or indices it maps to points (callable).
    random_state : int, RandomState instance or None, default=None
        Seeds the order of the projections and ``prior='random'``.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``A = L^T L`` (Cholesky factor).
    bounds_ : ndarray of shape (2,)
        ``(low, high)`` bounds on squared distances used.
    n_iter_ : int
        Number of sweeps run.
    convergence_curve_ : ndarray of shape (n_iter,)
        Convergence measure after each sweep.
    loss_curve_ : ndarray of shape (n_iter,)
        Objective (LogDet divergence + gamma * slack divergence) after each
        sweep; the iterates are not feasible until convergence, so it need
        not decrease monotonically.
    n_active_curve_ : ndarray of shape (n_iter,)
        Constraints swept in each sweep.
    duals_ : ndarray of shape (n_pairs,)
        Dual variable of each pair constraint (0 for constraints that are
        inactive at the solution).
    slack_ : ndarray of shape (n_pairs,)
        Final slack targets ``xi``.
    prior_ : ndarray of shape (n_features, n_features)
        The prior matrix ``A0``.
    threshold_ : float
        Score threshold of :meth:`predict`, calibrated on the training pairs.
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
    def fit(self, pairs, y, bounds=None, calibration_params=None):
        """Learn the metric from labelled pairs.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
            Pairs of points, or index pairs when a ``preprocessor`` is set.
        y : array-like of shape (n_pairs,)
            +1 for similar, -1 for dissimilar pairs.
        bounds : (low, high) or None
            Bounds on *squared* distances, ``0 < low <= high``.  Default: the
            5th and 95th percentiles of squared prior distances between the
            distinct points of ``pairs`` (at most 1000 of them, drawn with
            ``random_state``; pairs of identical points are not counted).
        calibration_params : dict or None
            Keyword arguments of :meth:`calibrate_threshold`, run on the
            training pairs at the end of ``fit``.

        Returns
        -------
        self
        """
        pts = validate_pairs(pairs, self.preprocessor)
        y = validate_pair_labels(y, pts.shape[0])
        if calibration_params is not None and not isinstance(calibration_params, dict):
            raise TypeError(
                f"calibration_params must be a dict or None, got {calibration_params!r}."
            )
        n_features = pts.shape[2]
        V = pts[:, 0] - pts[:, 1]
        same = ~np.any(V != 0, axis=1)
        if np.any(same & (y == -1)):
            bad = np.flatnonzero(same & (y == -1))
            raise ValueError(
                f"{bad.size} dissimilar pair(s) (y=-1) join identical points "
                f"(first at index {bad[0]}); no metric can separate them."
            )
        # Similar pairs of identical points satisfy every bound; they are kept
        # (and skipped by the kernel, their dual stays 0).
        points = np.unique(pts.reshape(-1, n_features), axis=0)
        rng = check_random_state(self.random_state)
        self.n_features_in_ = n_features
        self._solve(V, y, points, bounds, rng)
        self.classes_ = np.array([-1, 1])
        self.calibrate_threshold(pairs, y, **(calibration_params or {}))
        return self


class ITML_Supervised(_BaseITML):
    """ITML with pairs drawn from class labels.

    Draws ``n_constraints`` same-class pairs (similar) and ``n_constraints``
    different-class pairs (dissimilar) uniformly without replacement
    (:func:`metric_estimators.constraints.pairs_from_labels`, reproducible
    with ``random_state``) and solves the ITML problem on them.

    Parameters
    ----------
    gamma, max_iter, tol, prior, verbose, preprocessor, random_state
        As in :class:`ITML`; ``random_state`` also seeds the pair sampling.
        ``preprocessor`` is accepted for metric-learn compatibility and is
        not used (``X`` holds the points).
    n_constraints : int or None, default=None
        Number of pairs of each kind; ``None`` means ``20 * n_classes ** 2``
        (metric-learn's default).

    Attributes
    ----------
    components_, bounds_, n_iter_, convergence_curve_, loss_curve_, \
    n_active_curve_, duals_, slack_, prior_, n_features_in_
        As in :class:`ITML` (``duals_`` and ``slack_`` per drawn pair).
    pairs_ : ndarray of shape (n_pairs, 2)
        The drawn index pairs into ``X``.
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
    }

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, n_constraints=None,
                 prior="identity", verbose=False, preprocessor=None,
                 random_state=None):
        super().__init__(gamma=gamma, max_iter=max_iter, tol=tol, prior=prior,
                         verbose=verbose, preprocessor=preprocessor,
                         random_state=random_state)
        self.n_constraints = n_constraints

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, bounds=None):
        """Learn the metric from class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.
        bounds : (low, high) or None
            Bounds on squared distances; see :class:`ITML`.

        Returns
        -------
        self
        """
        X, y = validate_points(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"ITML_Supervised needs samples of at least 2 classes in y; "
                f"got {classes.size} class."
            )
        n_constraints = self.n_constraints
        if n_constraints is None:
            n_constraints = 20 * classes.size ** 2
        rng = check_random_state(self.random_state)
        pairs, labels = pairs_from_labels(y, n_constraints, random_state=rng)
        V = X[pairs[:, 0]] - X[pairs[:, 1]]
        same = ~np.any(V != 0, axis=1)
        bad = same & (labels == -1)
        if np.any(bad):
            warnings.warn(
                f"{int(bad.sum())} different-class pair(s) join identical "
                "points and are left out.", UserWarning,
            )
            keep = ~bad
            pairs, labels, V = pairs[keep], labels[keep], V[keep]
        self._solve(V, labels, X, bounds, rng)
        self.pairs_ = pairs
        self.pair_labels_ = labels
        return self
