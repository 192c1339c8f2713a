"""The one Project-and-Forget / Bregman driver, for cycle and LogDet pair constraints.

:func:`bregman_project_forget` minimises a Bregman divergence over the
intersection of (very many) half-spaces by Bregman projections with
Hildreth's correction (Hildreth 1957; Bregman 1967; Censor & Zenios 1997),
keeping only an active set of the constraints: Project and Forget (Sonthalia
& Gilbert, "Project and Forget: Solving Large-Scale Metric Constrained
Problems", JMLR 23, 2022).  Every iteration

1. asks the *oracle* for the constraints violated at the current point and
   adds the new ones to the active set;
2. projects onto the new constraints, then makes passes over the whole
   active set (and over the problem's fixed constraints, if any), each
   constraint carrying a dual ``z_c >= 0``;
3. *forgets* the constraints whose dual is zero: they are satisfied, their
   projection is the identity, and the oracle returns them if they become
   violated again.

It knows neither the divergence nor the constraints: those live in an active
set (:mod:`metric_estimators.solvers.active_sets`) and an oracle
(:mod:`metric_estimators.solvers.oracles`) with a common interface.  The
users are

* MetricNearness and CorrelationClustering: cycle constraints
  (:class:`~metric_estimators.solvers.active_sets.CycleConstraints`; squared
  L2, weighted squared L2, KL) with shortest-path or triangle oracles;
* ITML (:func:`logdet_bregman`): LogDet pair constraints
  (:class:`~metric_estimators.solvers.active_sets.LogDetPairConstraints`)
  from a fixed list (:class:`~metric_estimators.solvers.oracles.FixedListOracle`),
  one pass per iteration;
* ProjectAndForget: the same LogDet constraints over every labelled pair
  (:class:`~metric_estimators.solvers.oracles.LabelPairOracle`).

Numba kernels or numpy twins
----------------------------
The driver calls no kernel itself.  The fit asks
:func:`metric_estimators._backend.choose` once which path it runs on (the
numba kernels or their numpy twins, by the problem's size and what is
compiled) and gives the answer, a
:class:`~metric_estimators._backend.Kernels`, to the active set and the
oracle it builds (their ``kernels`` argument); both paths solve the same
problem to ``tol``.

Stopping rule
-------------
Hildreth's iterate becomes feasible long before it is optimal (the duals are
still wrong).  By default (the *residual rule*) the driver stops when both
hold:

* the oracle finds no constraint violated by more than ``tol``, and
* the last pass's residual is at most ``tol``: every constraint with a
  positive dual was tight and every other satisfied (complementary
  slackness; for LogDet, ITML's measure -- relative dual change and relative
  violation), i.e. a further pass would change nothing beyond ``tol``.

``tol`` is in the units of the active set's violations and residuals
(absolute edge lengths for cycle constraints, relative to the bound for
LogDet).

A problem may pass its own rule instead (``stop_rule``), checked at the same
place, after every oracle call: correlation clustering uses Veldt et al.'s
*gap rule* -- every constraint within ``tol`` and a relative primal-dual gap
of the regularised problem within ``gap_tol``
(:meth:`metric_estimators._problems.correlation_clustering.WeightedCorrelationLP.make_stop_rule`):
the gap is the duals-weighted complementary slackness, so it replaces the
residual test, which can hover above ``tol`` while the gap is tiny.

The problem solved by :func:`logdet_bregman`
--------------------------------------------
Given a positive definite ``A0``, difference vectors ``v_c``, signs
``delta_c`` in {+1, -1}, targets ``xi0_c > 0`` and ``gamma > 0``::

    minimise    D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)
    over        A positive definite, xi > 0
    subject to  delta_c (v_c^T A v_c - xi_c) <= 0      for every c

with ``D_ld(A, A0) = tr(A A0^-1) - log det(A A0^-1) - d`` and, for scalars,
``D_ld(x, y) = x / y - log(x / y) - 1``.  ``gamma = inf`` fixes ``xi = xi0``
(hard constraints).  At the fixed point the duals ``lambda_c >= 0`` satisfy
the KKT conditions::

    A^-1     = A0^-1 + sum_c lambda_c delta_c v_c v_c^T
    gamma/xi_c = gamma/xi0_c - lambda_c delta_c
    lambda_c * (v_c^T A v_c - xi_c) = 0
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .._reporting import ITERATION, OBJECTIVE, Column
from .active_sets import LogDetPairConstraints
from .oracles import FixedListOracle

__all__ = ["BregmanResult", "LogDetResult", "TABLE_COLUMNS",
           "bregman_project_forget", "logdet_bregman"]

#: Columns of the verbose table of every estimator on this driver (for
#: :class:`metric_estimators._reporting.FitReport`, which adds ``Time(s)``).
TABLE_COLUMNS = (
    ITERATION,
    OBJECTIVE,
    Column("Violation", ".3e"),
    Column("Residual", ".3e"),
    Column("Active", "d"),
    Column("Added", "d"),
    Column("Passes", "d", 6),
)

_HISTORY_KEYS = ("objective", "max_violation", "residual", "n_active",
                 "n_added", "n_forgotten", "passes", "time", "oracle_time",
                 "active_bytes")


@dataclass
class BregmanResult:
    """Outcome of :func:`bregman_project_forget`.

    Attributes
    ----------
    active : object
        The active set at the end: the solution ``active.point`` and the
        remembered constraints with their duals.
    converged : bool
        Whether the stopping rule held before ``max_iter`` oracle calls.
    n_iter : int
        Number of iterations (oracle calls followed by passes).
    n_passes : int
        Total number of full passes over the active set.
    n_projections : int
        Total number of projections onto a constraint of the active set.
    max_violation : float
        Largest violation found by the last oracle call.
    residual : float
        Residual of the last pass.
    objective : float
        Final objective value.
    history : dict of lists
        Per iteration: ``objective``, ``max_violation`` (oracle, before the
        passes), ``residual`` (last pass), ``n_active`` (after forgetting),
        ``n_added``, ``n_forgotten``, ``passes``, ``time`` (seconds since the
        report, or the call, started), ``oracle_time`` (seconds spent in
        this iteration's oracle call; the rest of the iteration's time is
        the projections and forgetting), ``active_bytes`` (memory held by
        the active set after forgetting; 0 if it has no ``nbytes``).
    """

    active: object
    converged: bool
    n_iter: int
    n_passes: int
    n_projections: int
    max_violation: float
    residual: float
    objective: float
    history: dict = field(default_factory=dict)

    @property
    def point(self):
        """The solution (the active set's iterate)."""
        return self.active.point

    def detail(self, scale=1.0):
        """Return the ConvergenceWarning clause: violation and residual over ``scale``."""
        return (f"largest violation {self.max_violation / scale:.3g}, duals "
                f"residual {self.residual / scale:.3g}")


def bregman_project_forget(active, oracle, *, objective, tol, max_iter=100,
                           max_passes=20, pass_budget=None, min_passes=1,
                           settle_fraction=0.0, fixed_pass=None,
                           add_threshold=None, report=None, stop_rule=None,
                           pass_tol=None, extra_row=None, max_time=None):
    """Run Project and Forget on an active set and an oracle until it converges.

    Parameters
    ----------
    active : active set
        Holds the starting point (``active.point``, the point to project,
        Hildreth's ``z = 0`` iterate), updated in place; usually empty at the
        start.  See :mod:`metric_estimators.solvers.active_sets`.
    oracle : callable ``oracle(point, threshold, active[, precision])``
        Returns ``(*constraints, max_violation)``.
        See :mod:`metric_estimators.solvers.oracles`.  With a true
        ``supports_float32`` attribute, it is called with
        ``precision="float32"`` while the largest violation exceeds
        ``max(10 tol, 1e-5 max|point_0|)``, and in float64 afterwards (the
        final iterations and the certificate of convergence).
    objective : callable ``objective(point) -> float``
        Recorded after every iteration.
    tol : float
        Tolerance of the stopping rule (module docstring), in the units of
        the active set's violations and residuals.
    max_iter : int
        Maximum number of oracle calls.
    max_passes : int
        Maximum number of passes over the active set between two oracle
        calls (passes stop earlier once the residual is at most ``tol``).
    pass_budget : float or None
        Cost of one oracle call in units of stored constraint entries
        (``active.nnz``); the number of passes between two oracle calls is
        then ``clip(pass_budget / nnz, min_passes, max_passes)``, or
        ``max_passes`` when the oracle added at most ``settle_fraction``
        times the active set's size (the set is nearly complete, only the
        duals need to settle).  ``None`` means ``max_passes``.  A
        deterministic rule, so results are reproducible.
    min_passes : int
        Lower bound of that number of passes.
    settle_fraction : float
        See ``pass_budget``.
    fixed_pass : callable ``fixed_pass(point) -> residual`` or None
        A Hildreth pass over the problem's explicitly listed constraints (it
        owns their duals), run after every pass over the active set.
    add_threshold : float or None
        The oracle returns only constraints violated by more than this
        (default ``tol / 10``).
    report : metric_estimators._reporting.FitReport or None
        Receives one row per iteration, with the columns
        :data:`TABLE_COLUMNS` (followed by those of ``extra_row``); its clock
        also times the history.
    stop_rule : callable ``stop_rule(point, max_violation, residual) -> bool`` or None
        Called after every oracle call; True stops the run as converged.
        ``None``: the residual rule (module docstring).
    pass_tol : float or None
        The passes between two oracle calls stop once the residual is at
        most this (default ``tol``).
    extra_row : callable ``extra_row() -> tuple`` or None
        Values appended to every report row (the problem's own columns).
    max_time : float or None
        Stop (not converged) after the first iteration that ends this many
        seconds after the start (of the report's clock, if any).

    Returns
    -------
    BregmanResult
    """
    if stop_rule is None:
        def stop_rule(point, maxv, resid):
            return maxv <= tol and resid <= tol
    if pass_tol is None:
        pass_tol = tol
    if add_threshold is None:
        add_threshold = tol / 10.0
    point = active.point
    hist = {k: [] for k in _HISTORY_KEYS}
    t0 = time.perf_counter()
    clock = (report.elapsed if report is not None
             else (lambda: time.perf_counter() - t0))
    resid = np.inf
    maxv = np.inf
    converged = False
    n_passes_total = 0
    n_projections = 0
    it = 0
    use32 = getattr(oracle, "supports_float32", False)
    scale = float(np.abs(point).max()) if use32 and point.size else 1.0
    for it in range(1, max_iter + 1):
        t_oracle = time.perf_counter()
        if use32:
            # single-precision search while far from the tolerance
            precision = ("float32" if maxv > max(10.0 * tol, 1e-5 * scale)
                         else "float64")
            *batch, maxv = oracle(point, add_threshold, active,
                                  precision=precision)
        else:
            *batch, maxv = oracle(point, add_threshold, active)
        maxv = float(maxv)
        t_oracle = time.perf_counter() - t_oracle
        if stop_rule(point, maxv, float(resid)):
            converged = True
            it -= 1  # this oracle call only certified the previous iterate
            break
        start = len(active)
        added = active.add(*batch)
        if pass_budget is None or added <= settle_fraction * len(active):
            n_pass = max_passes
        else:
            n_pass = int(np.clip(pass_budget / max(active.nnz, 1),
                                 min(min_passes, max_passes), max_passes))
        # the new constraints first, then full passes
        if added:
            active.project(start)
            n_projections += len(active) - start
        done = 0
        for done in range(1, n_pass + 1):
            resid = active.project(0)
            n_projections += len(active)
            if fixed_pass is not None:
                resid = max(resid, fixed_pass(point))
            if resid <= pass_tol:
                break
        n_passes_total += done
        forgotten = active.forget()
        obj = float(objective(point))
        for key, value in zip(_HISTORY_KEYS,
                              (obj, maxv, float(resid), len(active), added,
                               forgotten, done, clock(), t_oracle,
                               int(getattr(active, "nbytes", 0)))):
            hist[key].append(value)
        if report is not None:
            extra = tuple(extra_row()) if extra_row is not None else ()
            report.row(it, obj, maxv, float(resid), len(active), added, done,
                       *extra)
        if max_time is not None and hist["time"][-1] >= max_time:
            break
    return BregmanResult(
        active=active, converged=converged, n_iter=it,
        n_passes=n_passes_total, n_projections=n_projections,
        max_violation=maxv, residual=float(resid),
        objective=float(objective(point)), history=hist,
    )


@dataclass
class LogDetResult(BregmanResult):
    """Outcome of :func:`logdet_bregman`: a BregmanResult and per-constraint arrays.

    Attributes
    ----------
    matrix : ndarray of shape (d, d)
        The solution ``A`` (a copy, exactly symmetric).
    duals : ndarray of shape (m,)
        Dual of each listed constraint (0 for those not remembered).
    slack : ndarray of shape (m,)
        Final slack target ``xi`` of each listed constraint (``xi0`` for
        those not remembered).
    """

    matrix: np.ndarray = None
    duals: np.ndarray = None
    slack: np.ndarray = None


def logdet_bregman(A0, V, delta, xi0, gamma=1.0, *, tol=1e-3, max_iter=1000,
                   max_passes=1, active_set=True, shuffle=True,
                   random_state=None, report=None, kernels):
    """Solve ITML's slack-penalised LogDet problem over a list of pair constraints.

    See the module docstring for the exact problem and the stopping rule.
    The driver is :func:`bregman_project_forget` with a
    :class:`~metric_estimators.solvers.oracles.FixedListOracle` (which adds
    every violated listed constraint, ``add_threshold=0``) and a
    :class:`~metric_estimators.solvers.active_sets.LogDetPairConstraints`.

    Parameters
    ----------
    A0 : ndarray of shape (d, d)
        Positive definite prior.
    V : ndarray of shape (m, d)
        Difference vectors of the constraint pairs (none may be zero for a
        ``delta = -1`` constraint; zero rows with ``delta = +1`` are always
        satisfied and never change anything).
    delta : ndarray of shape (m,)
        +1 for similar (``<=``), -1 for dissimilar (``>=``) constraints.
    xi0 : ndarray of shape (m,)
        Positive targets (the bounds).
    gamma : float
        Slack weight; ``np.inf`` for hard constraints.
    tol : float
        Tolerance on relative violations and on ITML's measure.
    max_iter : int
        Maximum number of iterations (each: one check of every listed
        constraint, then ``max_passes`` passes at most).
    max_passes : int
        Passes over the active set per iteration.
    active_set : bool
        If False, every constraint joins at the first check and none is ever
        forgotten: plain cyclic projections over the whole list.
    shuffle, random_state
        See :class:`~metric_estimators.solvers.active_sets.LogDetPairConstraints`.
    report : FitReport or None
        See :func:`bregman_project_forget`.
    kernels : Kernels
        The path the fit chose (:func:`metric_estimators._backend.choose`,
        family ``"logdet_listed"``), for the active set and the oracle.

    Returns
    -------
    LogDetResult
    """
    V = np.ascontiguousarray(V, dtype=np.float64)
    xi0 = np.ascontiguousarray(xi0, dtype=np.float64)
    active = LogDetPairConstraints(A0, gamma, shuffle=shuffle,
                                   random_state=random_state,
                                   keep_all=not active_set, kernels=kernels)
    res = bregman_project_forget(
        active, FixedListOracle(V, delta, xi0, kernels=kernels),
        objective=active.objective,
        tol=tol, max_iter=max_iter, max_passes=max_passes,
        add_threshold=0.0 if active_set else -np.inf, report=report,
    )
    m = V.shape[0]
    duals = np.zeros(m)
    duals[active.key] = active.lam
    slack = xi0.copy()
    slack[active.key] = active.xi
    return LogDetResult(**vars(res), matrix=active.A.copy(), duals=duals,
                        slack=slack)
