"""Stochastic (mini-batch) drivers; they know nothing about scikit-learn.

:func:`adagrad_rda` minimises ``F(w) = f(w) + l1 * ||w||_1`` (optionally
over ``w >= 0``) where ``f`` is a mean over ``n_samples`` terms of which a
mini-batch gradient is available: SCML's triplet hinge, and any other
learner written as a sum over constraints.  (LMNN's stochastic solver, a
smooth loss without an L1 term, runs mini-batch AMSGrad instead:
:mod:`metric_estimators.solvers.minibatch`.)
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["StochasticResult", "adagrad_rda"]


@dataclass
class StochasticResult:
    """What :func:`adagrad_rda` returns.

    Attributes
    ----------
    w : ndarray
        The iterate of lowest full objective among the checkpoints.
    n_iter : int
        Iterations (mini-batches) run.
    objective_curve : list of float
        Full objective ``F`` at each checkpoint.
    checkpoints : list of int
        The iteration of each checkpoint.
    best_iter : int
        The checkpoint iteration ``w`` comes from.
    n_active_curve : list of int
        Active terms (non-zero hinge) at each checkpoint, as counted by
        ``objective``.
    converged : bool
        Whether the last checkpoint passed the stopping test (``tol``); True
        when no test was asked for.
    """

    w: np.ndarray
    n_iter: int
    converged: bool = True
    objective_curve: list = field(default_factory=list)
    checkpoints: list = field(default_factory=list)
    best_iter: int = 0
    n_active_curve: list = field(default_factory=list)


def adagrad_rda(batch_gradient, objective, n_samples, n_params, *, step, l1,
                nonnegative=True, max_iter, batch_size, check_every, rng,
                kernels, min_iter=0, tol=None, start_objective=None,
                report=None):
    """AdaGrad with regularised dual averaging (Duchi, Hazan & Singer, JMLR 2011).

    Each iteration draws ``batch_size`` terms uniformly with replacement,
    asks ``batch_gradient(batch, w, out)`` for the mean (sub)gradient of
    ``f`` over them (written into ``out``), and takes the closed-form RDA
    step with the L1 term and the non-negativity handled exactly (so
    coordinates are exactly zero, not merely small).  Every
    ``check_every`` iterations, and after the last, the full objective
    ``objective(w) -> (f(w), n_active)`` is evaluated; the iterate of
    lowest ``F`` is returned (a stochastic iterate is noisy; keeping the
    best checkpoint is the usual remedy and what SCML's authors do).

    With ``tol`` given, the run stops at the first checkpoint at or after
    ``min_iter`` where ``F`` fell since the previous checkpoint by at most
    ``tol`` times its whole decrease since ``start_objective`` (``F`` at the
    start, ``w = 0``).  The test is relative to the whole decrease, not to
    ``F``: on separable terms ``F`` tends to 0, where a small relative change
    of ``F`` is a negligible absolute one.  The batches of a run are drawn
    before it starts (``max_iter`` rows), so a run that stops at iteration
    ``t`` made the same iterations as a run with ``max_iter = t``.

    Parameters
    ----------
    batch_gradient : callable ``(batch, w, out) -> int``
    objective : callable ``(w) -> (float, int)``
    n_samples, n_params : int
    step : float
        The learning rate ``eta``.
    l1 : float
        Weight of ``||w||_1``.
    nonnegative : bool, default=True
        Constrain ``w >= 0``.
    max_iter, batch_size, check_every : int
    min_iter : int, default=0
        Iterations always run before the stopping test is applied.
    tol : float or None, default=None
        Stopping test (above); None runs ``max_iter`` iterations.
    start_objective : float or None
        ``F(0)``, the reference of the test; required with ``tol``.
    rng : numpy.random.RandomState
        Draws the batches (all at once, so a run is reproducible).
    kernels : Kernels
        The fit's kernels (:func:`metric_estimators._backend.choose`): the
        step is their ``stochastic.adagrad_rda_update`` (numba, or its numpy
        twin: the same iterates).
    report : FitReport or None
        Receives one row ``(iteration, F, n_active, n_nonzero)`` per
        checkpoint.

    Returns
    -------
    result : StochasticResult
    """
    adagrad_rda_update = kernels.stochastic.adagrad_rda_update
    w = np.zeros(n_params)
    grad = np.empty(n_params)
    grad_sum = np.zeros(n_params)
    grad_sq = np.zeros(n_params)
    batches = rng.randint(0, n_samples, size=(max_iter, batch_size)).astype(np.intp)
    if tol is not None and start_objective is None:
        raise ValueError("tol needs start_objective, the objective at w = 0")
    result = StochasticResult(w=w.copy(), n_iter=0)
    best = np.inf

    def checkpoint(it):
        nonlocal best
        f, n_active = objective(w)
        F = float(f + l1 * np.abs(w).sum())
        result.objective_curve.append(F)
        result.checkpoints.append(it)
        result.n_active_curve.append(int(n_active))
        if report is not None:
            report.row(it, F, int(n_active), int(np.count_nonzero(w)))
        if F < best:
            best = F
            result.w = w.copy()
            result.best_iter = it

    def settled():
        curve = result.objective_curve
        previous = curve[-2] if len(curve) > 1 else start_objective
        return previous - curve[-1] <= tol * max(start_objective - curve[-1], 1e-300)

    it = 0
    for it in range(1, max_iter + 1):
        batch_gradient(batches[it - 1], w, grad)
        adagrad_rda_update(grad, grad_sum, grad_sq, w, float(it), step, l1,
                           nonnegative)
        if it % check_every == 0 or it == max_iter:
            checkpoint(it)
            if tol is not None and it >= min_iter and settled():
                break
    result.n_iter = it
    result.converged = tol is None or settled()
    return result
