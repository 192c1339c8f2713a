"""Cyclic Bregman projections with Hildreth's correction, with an active set.

Two layers:

* :func:`cyclic_bregman` — a generic driver for *any* divergence.  It is given
  a ``sweep(idx)`` callable (project onto the constraints ``idx`` in order,
  updating the primal point and the duals in place) and a ``check(idx)``
  callable (relative violation of the constraints ``idx`` at the current
  point, nothing modified).  It owns the active-set logic, the convergence
  test, the history and the iteration budget.
* :func:`logdet_bregman` — ITML's LogDet problem (Davis et al., ICML 2007) on
  top of the numba kernels in :mod:`metric_estimators._kernels.bregman`.
  :class:`LogDetProblem` exposes the same pieces (``sweep``, ``check``) for
  other drivers, e.g. Project-and-Forget, that bring their own constraint
  sets.

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

Convergence
-----------
After each sweep the driver computes
``measure = max(sum |d lambda| / sum lambda, max relative violation)`` over the
swept constraints.  With ``active_set=True``, constraints whose dual is zero
are dropped after each sweep ("forget"); every ``check_every`` sweeps, and
whenever the measure falls below ``tol``, all dropped constraints are checked
("oracle") and the violated ones rejoin the active set.  The run has converged
only when the active sweep's measure is below ``tol`` **and** no dropped
constraint is violated by more than ``tol`` (relative): then a full cyclic
sweep would change nothing beyond the tolerance, and the point is a fixed
point of the full iteration.  Skipping a constraint with zero dual that is
satisfied is exact: its Hildreth projection is the identity.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .._kernels.bregman import logdet_sweep, logdet_violations

__all__ = ["BregmanResult", "cyclic_bregman", "LogDetProblem", "logdet_bregman"]

_TINY = np.finfo(np.float64).tiny


@dataclass
class BregmanResult:
    """Outcome of a Bregman projection run.

    Attributes
    ----------
    matrix : ndarray or None
        The primal point (for LogDet, the full symmetric ``A``).
    duals : ndarray of shape (n_constraints,)
        Dual variable of each constraint (``>= 0``).
    slack : ndarray or None
        Final slack targets ``xi`` (LogDet).
    n_iter : int
        Number of sweeps run (active-set sweeps included).
    history : ndarray of shape (n_iter,)
        Convergence measure after each sweep.
    n_active : ndarray of shape (n_iter,)
        Number of constraints swept in each sweep.
    converged : bool
        Whether the convergence test passed before ``max_iter`` sweeps.
    n_projections : int
        Total number of projections computed.
    objective : ndarray or None
        Objective after each sweep, if an objective was given.
    """

    matrix: object
    duals: np.ndarray
    slack: object
    n_iter: int
    history: np.ndarray
    n_active: np.ndarray
    converged: bool
    n_projections: int
    objective: object = None
    info: dict = field(default_factory=dict)


def cyclic_bregman(sweep, check, duals, *, tol=1e-3, max_iter=1000,
                   active_set=True, check_every=5, shuffle=True,
                   random_state=None, objective=None, callback=None):
    """Generic cyclic Bregman driver with an optional active set.

    Parameters
    ----------
    sweep : callable ``sweep(idx) -> (dual_change, max_violation)``
        Projects, in order, onto the constraints ``idx`` (int64 array),
        updating the primal point and ``duals`` in place.  ``dual_change`` is
        ``sum |lambda_new - lambda_old|`` and ``max_violation`` the largest
        relative violation met before a projection.
    check : callable ``check(idx) -> ndarray``
        Relative violation (positive = violated) of each constraint ``idx`` at
        the current point; must not modify anything.
    duals : ndarray of shape (n_constraints,)
        The dual variables, shared with ``sweep`` (read here, never written).
    tol : float
        Convergence tolerance (see the module docstring).
    max_iter : int
        Maximum number of sweeps.
    active_set : bool
        If False, every sweep goes over all constraints (plain cyclic
        projections) and the run stops when one sweep's measure is below tol.
    check_every : int
        With ``active_set``, re-check the dropped constraints at least every
        this many sweeps.
    shuffle : bool
        Visit the constraints of each sweep in a fresh random order (drawn
        from ``random_state``).  Strongly recommended: on ITML problems built
        from labels (constraints grouped by class) a fixed order converges
        sublinearly and slowly, a reshuffled order linearly (on digits,
        relative dual change 1e-2 -> 1e-8 in 30 sweeps, against 2e-3 after
        300 fixed-order sweeps).
    random_state : None, int or numpy Generator
        Seed of the shuffling.
    objective : callable or None
        ``objective() -> float`` evaluated after each sweep and recorded.
    callback : callable or None
        ``callback(n_iter, measure, n_active, objective_value, elapsed)``
        called after each sweep (e.g. for a verbose table).

    Returns
    -------
    BregmanResult
        With ``matrix`` and ``slack`` left as None (the caller owns them).
    """
    m = duals.shape[0]
    rng = np.random.default_rng(random_state)
    everything = np.arange(m, dtype=np.int64)
    active = everything
    history, n_active, objectives = [], [], []
    converged = False
    n_projections = 0
    since_check = 0
    n_iter = 0
    start = time.perf_counter()
    while n_iter < max_iter:
        order = rng.permutation(active) if shuffle else active
        dual_change, max_violation = sweep(order)
        n_iter += 1
        n_projections += active.size
        total = duals[active].sum() if active.size else 0.0
        measure = max(dual_change / max(total, _TINY) if dual_change > 0 else 0.0,
                      max_violation)
        history.append(measure)
        n_active.append(active.size)
        obj = objective() if objective is not None else None
        if obj is not None:
            objectives.append(obj)
        if callback is not None:
            callback(n_iter, measure, active.size, obj,
                     time.perf_counter() - start)
        if not active_set:
            if measure < tol:
                converged = True
                break
            continue
        # forget: constraints whose dual is zero are satisfied (their last
        # projection clipped the dual to zero) and projecting onto them again
        # is the identity until something else violates them.
        active = active[duals[active] > 0.0]
        since_check += 1
        if measure < tol or since_check >= check_every:
            since_check = 0
            dropped = np.setdiff1d(everything, active, assume_unique=True)
            if dropped.size:
                viol = check(dropped)
                worst = viol.max()
                new = dropped[viol > 0.0]
            else:
                worst = 0.0
                new = dropped
            if measure < tol and worst <= tol:
                converged = True
                break
            if new.size:
                active = np.union1d(active, new).astype(np.int64)
    return BregmanResult(
        matrix=None, duals=duals, slack=None, n_iter=n_iter,
        history=np.asarray(history), n_active=np.asarray(n_active, dtype=np.int64),
        converged=converged, n_projections=n_projections,
        objective=np.asarray(objectives) if objective is not None else None,
    )


class LogDetProblem:
    """State of a LogDet (ITML) Bregman problem, with kernel-backed pieces.

    Parameters
    ----------
    A0 : ndarray of shape (d, d)
        Positive definite prior (not modified).
    V : ndarray of shape (m, d)
        Difference vectors, one row per constraint.
    delta : ndarray of shape (m,)
        +1 (``v^T A v <= xi``) or -1 (``v^T A v >= xi``).
    xi0 : ndarray of shape (m,)
        Positive targets.
    gamma : float
        Slack weight (``np.inf`` for hard constraints).

    Attributes
    ----------
    A : ndarray (d, d)
        Current (exactly symmetric) matrix, updated in place by ``sweep``.
    xi, lam : ndarray (m,)
        Current slack targets and duals.

    Notes
    -----
    ``sweep(idx)`` and ``check(idx)`` are the callables
    :func:`cyclic_bregman` needs; another driver (an active set grown by an
    oracle over many more constraints) may call them directly, or call
    :func:`metric_estimators._kernels.bregman.logdet_sweep` on its own arrays.
    """

    def __init__(self, A0, V, delta, xi0, gamma):
        self.A0 = np.ascontiguousarray(A0, dtype=np.float64)
        self.A = self.A0.copy()
        self.V = np.ascontiguousarray(V, dtype=np.float64)
        self.delta = np.ascontiguousarray(delta, dtype=np.float64)
        self.xi0 = np.ascontiguousarray(xi0, dtype=np.float64)
        self.xi = self.xi0.copy()
        self.lam = np.zeros(self.V.shape[0])
        self.gamma = float(gamma)
        d = self.A.shape[0]
        self._w = np.empty(d)
        self._wn = np.empty(d)
        self._A0_inv = None
        self._logdet_A0 = None

    def sweep(self, idx):
        """Project onto constraints ``idx`` in order; see ``logdet_sweep``."""
        change, viol, _ = logdet_sweep(
            self.A, self.V, self.delta, self.xi, self.lam,
            np.ascontiguousarray(idx, dtype=np.int64), self.gamma,
            self._w, self._wn,
        )
        return change, viol

    def check(self, idx):
        """Relative violation of constraints ``idx`` (positive = violated)."""
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        S = self.A
        Vi = self.V[idx]
        p = np.einsum("ij,ij->i", Vi @ S, Vi)
        return self.delta[idx] * (p - self.xi[idx]) / self.xi[idx]

    def check_kernel(self, idx):
        """Same as :meth:`check`, computed by the numba kernel (no BLAS)."""
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        out = np.empty(idx.size)
        logdet_violations(self.A, self.V, self.delta, self.xi, idx, out)
        return out

    def matrix(self):
        """The current matrix as a full symmetric array (a copy)."""
        return self.A.copy()

    def objective(self):
        """``D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)`` at the current point."""
        if self._A0_inv is None:
            self._A0_inv = np.linalg.inv(self.A0)
            self._logdet_A0 = np.linalg.slogdet(self.A0)[1]
        S = self.A
        sign, logdet = np.linalg.slogdet(S)
        if sign <= 0:
            return np.inf
        d = S.shape[0]
        value = np.sum(S * self._A0_inv) - logdet + self._logdet_A0 - d
        if np.isfinite(self.gamma):
            r = self.xi / self.xi0
            value += self.gamma * np.sum(r - np.log(r) - 1.0)
        return float(value)


def logdet_bregman(A0, V, delta, xi0, gamma=1.0, *, tol=1e-3, max_iter=1000,
                   active_set=True, check_every=5, shuffle=True,
                   random_state=None, track_objective=False, callback=None):
    """Solve ITML's slack-penalised LogDet problem by Bregman projections.

    See the module docstring for the exact problem and the stopping rule.

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
    tol, max_iter, active_set, check_every, shuffle, random_state, callback
        See :func:`cyclic_bregman`.
    track_objective : bool
        Record the objective after every sweep (costs one ``O(d^3)``
        determinant per sweep).

    Returns
    -------
    BregmanResult
        ``matrix`` is the full symmetric solution, ``slack`` the final ``xi``.
    """
    problem = LogDetProblem(A0, V, delta, xi0, gamma)
    result = cyclic_bregman(
        problem.sweep, problem.check, problem.lam, tol=tol, max_iter=max_iter,
        active_set=active_set, check_every=check_every, shuffle=shuffle,
        random_state=random_state,
        objective=problem.objective if track_objective else None,
        callback=callback,
    )
    result.matrix = problem.matrix()
    result.slack = problem.xi
    return result
