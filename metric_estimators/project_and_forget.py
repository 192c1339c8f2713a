"""ProjectAndForget: ITML's objective over *all* labelled pairs.

ITML (Davis et al., ICML 2007) learns a Mahalanobis matrix ``A`` from a
random subset of same-class / different-class pairs.  Project and Forget
(Sonthalia & Gilbert, "Project and Forget: Solving Large-Scale Metric
Constrained Problems", JMLR 23, 2022) makes the full problem tractable::

    minimise    D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)
    subject to  d_A(x_i, x_j)^2 <= xi_c   for every same-class pair c = (i, j)
                d_A(x_i, x_j)^2 >= xi_c   for every different-class pair

(``xi0_c = low`` or ``high``; O(n^2) constraints) by keeping only an active
set of them.  The estimator builds the problem (prior, bounds and
identical-point pairs from :mod:`metric_estimators._problems.logdet`, as
ITML) and hands it to the Project-and-Forget driver
(:func:`metric_estimators.solvers.bregman.bregman_project_forget`) with a
:class:`~metric_estimators.solvers.active_sets.LogDetPointPairConstraints` active
set -- ITML's exact LogDet projections, pairs stored by index -- and a
:class:`~metric_estimators.solvers.oracles.LabelPairOracle`, which scans
every pair in blocks for violated ones and checks the remembered ones.

Why every violated pair joins at once: a pair outside the active set keeps
its slack at its bound and a zero dual, so at the optimum it must meet its
bound; every pair that needs slack (on pen-based digits with the bounds of
Sonthalia & Gilbert, more than half of all pairs) must be in the active set.
Adding a few thousand per oracle call would take thousands of calls.  Adding
every violated pair at once wastes passes early on: after the first calls
shrink ``A``, nearly every different-class pair is violated, and a pass over
them all leaves most of them satisfied again (forgotten).  So the active set
may at most triple per call (the most violated pairs first), which reaches
tens of millions of pairs in a handful of calls.  Measurements: ``benchmarks/results/penbased.md``.

Convergence criterion
---------------------
``converged_`` is True only when one oracle call -- a full scan of all
pairs -- finds, at the returned matrix,

* every pair outside the active set within ``tol`` of its bound (relative
  violation ``delta (d - xi0) / xi0 <= tol``), and
* every remembered pair consistent: ``|d - xi| / xi <= tol`` if its dual is
  positive (complementary slackness), ``delta (d - xi) / xi <= tol`` if it
  is zero.

With the stationarity conditions, which the Bregman projections keep by
construction (``A^-1 = A0^-1 + sum_c lambda_c delta_c v_c v_c^T`` and
``gamma / xi_c = gamma / xi0_c - lambda_c delta_c``), these are the
Karush-Kuhn-Tucker conditions of the problem over all pairs, to ``tol``.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._docstrings import fill_doc
from ._linalg import power_of_two_scale
from ._problems.logdet import (
    default_bounds,
    identical_different_class_pairs,
    prior_matrix,
)
from ._reporting import FitReport, convergence_warning
from ._sklearn_private import Interval, Options, StrOptions, _fit_context
from ._validation import (
    check_bounds,
    check_prior,
    validate_labelled_points,
)
from .base import MahalanobisMixin, components_from_matrix
from .solvers.active_sets import LogDetPointPairConstraints
from .solvers.bregman import TABLE_COLUMNS, bregman_project_forget
from .solvers.oracles import LabelPairOracle

__all__ = ["ProjectAndForget"]


class ProjectAndForget(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Mahalanobis metric learning with ITML's objective over all pairs.

    Every same-class pair must be closer than ``low`` and every
    different-class pair farther than ``high`` (squared learned distances),
    softly with ITML's LogDet slack; the problem is solved by Project and
    Forget (Sonthalia & Gilbert, JMLR 2022): sweeps of LogDet Bregman
    projections with Hildreth's correction over an active set that a
    block-scan oracle over all O(n^2) pairs keeps supplied with violated
    constraints, and from which constraints with a zero dual are forgotten.

    Parameters
    ----------
    gamma : float, default=1.0
        Slack weight (``np.inf``: hard constraints), as in ITML.
    max_iter : int, default=200
        Maximum number of oracle calls.
    tol : float, default=1e-3
        Convergence tolerance on the optimality conditions, checked over all
        pairs (module docstring): relative violations of the pairs outside
        the active set, complementary-slackness residuals of those inside.
        Pairs violated by more than ``tol`` join the active set.
    max_sweeps : int, default=3
        Maximum number of sweeps over the active set between oracle calls.
    max_new_constraints : int or None, default=None
        At most this many violated pairs join the active set per oracle
        call (the most violated).  None: all of them, as long as the active
        set stays within ``memory_limit``.
    memory_limit : float, default=4.0
        Gigabytes the active set may hold (25 bytes per pair); when the
        violated pairs do not fit, the most violated join.
    max_time : float or None, default=None
        Stop after the oracle call and sweeps that end this many seconds
        after ``fit`` started (with a ConvergenceWarning if not converged).
    block_size : int, default=512
        Rows of the pair scan per block.
    prior : {"identity", "covariance", "random"} or array-like, default="identity"
        ``A0``, as in ITML.
    verbose : int, default=0
        Print a table (oracle call, objective, largest violation, sweep
        measure, active constraints, added, sweeps, time).
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``X`` in ``fit`` and ``transform`` may be a 1-D array of
        indices into it (array) or of ids it maps to points (callable).
    random_state : int, RandomState instance or None, default=None
        Seeds the sweep order, ``prior="random"`` and the subsample of at
        most 1000 points of the default bounds.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        From the learned matrix: the last iterate, or, when the fit stops
        before converging, the checked iterate with the smallest
        violation (``violation_``).
    bounds_ : ndarray (low, high)
    n_iter_ : int
    loss_curve_ : ndarray
        Objective after each iteration.
    n_active_ : int
        Constraints remembered at the end (positive dual).
    active_pairs_ : ndarray of shape (n_active, 2)
    duals_, slack_ : ndarray of shape (n_active,)
        The active set at the end (of the last iterate).
    violation_ : float
        Largest violation of the optimality conditions over *all* pairs at
        the returned matrix (module docstring), from a full scan.
    max_violation_ : float
        Deprecated name of ``violation_`` (a FutureWarning).
    n_violated_ : int
        Pairs outside the active set violated by more than ``tol`` at the
        last full scan.
    n_pairs_ : int
        Number of labelled pairs considered (all of them but the
        different-class pairs of identical points).
    n_same_pairs_ : int
        Number of same-class pairs.
    converged_ : bool
        True only when a full scan confirmed the optimality conditions to
        ``tol``.
    history_ : dict of lists
        Per iteration, the driver's record (see
        :class:`metric_estimators.solvers.bregman.BregmanResult`); and per
        full scan (oracle call, one more than iterations when the last call
        certified convergence or the fit stopped early and checked its
        result): ``scan_active`` (pairs in the active set),
        ``scan_violated`` (pairs outside it violated by more than ``tol``),
        ``scan_active_violated`` (remembered pairs whose residual exceeds
        ``tol``), ``scan_violation`` (the largest violation of either kind).
    """

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_sweeps": [Interval(Integral, 1, None, closed="left")],
        "max_new_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "memory_limit": [Interval(Real, 0, None, closed="neither")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), "array-like"],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    #: bytes per remembered pair (two int32 indices, an int8 sign, the
    #: float64 slack and dual)
    _PAIR_BYTES = 25

    def __init__(self, gamma=1.0, max_iter=200, tol=1e-3, max_sweeps=3,
                 max_new_constraints=None, memory_limit=4.0, max_time=None,
                 block_size=512, prior="identity", verbose=0,
                 preprocessor=None, random_state=None):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.max_new_constraints = max_new_constraints
        self.memory_limit = memory_limit
        self.max_time = max_time
        self.block_size = block_size
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y, bounds=None):
        """Learn the metric from class labels.

        Parameters
        ----------
        %(labelled_points)s
        bounds : (low, high) or None
            Bounds on squared distances; default: the 5th / 95th percentiles
            of squared prior distances between distinct points (as ITML).

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        X, y_idx, A0, (low, high), seed = self._validate(X, y, bounds)
        # Data of extreme scale: X / s and bounds / s^2 (s a power of two,
        # exact) pose the same problem in A, without overflow / underflow.
        s = power_of_two_scale(X)
        active, oracle = self._build(X / s if s != 1.0 else X, y_idx, A0,
                                     low / s / s, high / s / s, seed)
        report.phase(f"{oracle.n_pairs} pair constraints, bounds ({low:.4g}, {high:.4g})")
        tol = float(self.tol)
        res = bregman_project_forget(
            active, oracle, objective=active.objective, tol=tol,
            max_iter=self.max_iter, max_passes=self.max_sweeps,
            add_threshold=tol, report=report, max_time=self.max_time,
            # the oracle's full scan is the whole criterion (module docstring)
            stop_rule=lambda point, maxv, resid: maxv <= tol,
        )
        self._store(res, active, oracle, A0, (low, high), s, y_idx, report)
        return self

    def _validate(self, X, y, bounds):
        """Validated float64 ``X``, class indices, prior ``A0``, bounds and a seed.

        The random stream serves, in this order, ``prior='random'``, the
        points behind the default bounds and the seed of the constraint order.
        """
        self._check_preprocessor()
        X, y, (_, y_idx, _) = validate_labelled_points(self, self._points(X), y)
        X = np.ascontiguousarray(X, dtype=np.float64)
        rng = check_random_state(self.random_state)
        A0 = prior_matrix(check_prior(self.prior, X.shape[1]), X, X.shape[1], rng)
        bounds = default_bounds(X, A0, rng) if bounds is None else check_bounds(bounds)
        return X, y_idx, A0, bounds, int(rng.randint(np.iinfo(np.int32).max))

    def _build(self, X, y_idx, A0, low, high, seed):
        """The remembered pairs (the active set) and the oracle that scans all pairs."""
        n, d = X.shape
        skip = identical_different_class_pairs(X, y_idx)
        # numba kernels or their numpy twins: asked once, for the whole fit
        kernels = _backend.choose("logdet_all_pairs", n * (n - 1) // 2 - skip.shape[0], d)
        oracle = LabelPairOracle(
            X, y_idx, low, high, block_size=self.block_size,
            max_new=self.max_new_constraints,
            max_active=int(self.memory_limit * 1e9 / self._PAIR_BYTES),
            growth=None if self.max_new_constraints is not None else 2.0,
            skip_pairs=skip, kernels=kernels)
        active = LogDetPointPairConstraints(A0, self.gamma, X, (low, high),
                                            random_state=seed, kernels=kernels)
        return active, oracle

    def _store(self, res, active, oracle, A0, bounds, s, y_idx, report):
        """Set the fitted attributes; warn if the run stopped before ``tol``.

        A run that stopped early returns the best iterate the oracle checked,
        the last one included.
        """
        tol = float(self.tol)
        A, violation = active.A, float(res.max_violation)
        if res.converged:
            report.finish(f"converged after {res.n_iter} oracle calls")
        else:
            oracle(A, tol, active)
            A, violation = oracle.best_point, float(oracle.best_violation)
            report.finish(f"stopped after {res.n_iter} oracle calls")
            log = oracle.log
            detail = (f"largest violation {violation:.3g} (tol={tol:g}); "
                      f"{log['n_violated'][-1]} pairs outside the active set "
                      f"and {log['n_active_violated'][-1]} of its "
                      f"{log['n_active'][-1]} pairs violated at the last "
                      "scan; raise max_time or max_iter")
            if log["n_returned"][-1] < log["n_violated"][-1]:
                detail += " (and memory_limit: the active set is full)"
            timed_out = self.max_time is not None and res.n_iter < self.max_iter
            budget = ({"max_iter": self.max_time, "unit": "seconds", "param": "max_time"}
                      if timed_out else {"max_iter": self.max_iter, "unit": "oracle calls"})
            convergence_warning(self, **budget, tol=tol, history=res.history["objective"],
                                detail=detail, stacklevel=5)
        if not np.all(np.isfinite(A)):
            raise FloatingPointError("ProjectAndForget produced a non-finite "
                                     "matrix; check the scale of the data.")
        self.prior_ = A0
        self.components_ = components_from_matrix(A, name="the learned matrix")
        self.bounds_ = np.array(bounds)
        self.n_iter_ = int(res.n_iter)
        self.loss_curve_ = np.asarray(res.history["objective"])
        history = dict(res.history)
        for key, name in (("n_active", "scan_active"),
                          ("n_violated", "scan_violated"),
                          ("n_active_violated", "scan_active_violated")):
            history[name] = list(oracle.log[key])
        history["scan_violation"] = [
            max(a, b) for a, b in zip(oracle.log["outside_violation"],
                                      oracle.log["active_residual"])]
        self.history_ = history
        self.n_active_ = len(active)
        self.active_pairs_ = np.column_stack((active.I, active.J)).astype(np.int64)
        self.duals_ = active.lam / s / s
        self.slack_ = active.xi * s * s
        self.violation_ = violation
        self.converged_ = res.converged
        self.n_pairs_ = oracle.n_pairs
        self.n_violated_ = int(oracle.last_n_violated)
        self.n_same_pairs_ = int(sum(c * (c - 1) // 2 for c in np.bincount(y_idx)))

    @property
    def max_violation_(self):
        """Deprecated name of ``violation_``, the name every solver-backed learner uses.

        .. deprecated:: 0.1
            Use ``violation_``; ``max_violation_`` will be removed.
        """
        value = self.violation_  # AttributeError before fit, as before
        warnings.warn("ProjectAndForget.max_violation_ is deprecated: use "
                      "violation_ (the same value).", FutureWarning,
                      stacklevel=2)
        return value
