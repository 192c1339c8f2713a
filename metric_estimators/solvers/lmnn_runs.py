"""The three ways of minimising the LMNN objective, as plain functions.

Each takes an objective of :mod:`metric_estimators._problems.lmnn`, the
flattened starting map ``L0`` and ``record(f, x, n_iter=None) -> bool``, the
estimator's per-iteration hook (history, verbose table, user callback;
True asks to stop), and returns ``(x, n_iter, converged, stopped)``.  They
wire the generic drivers (:func:`~metric_estimators.solvers.lbfgs.lbfgs_with_restarts`,
:func:`~metric_estimators.solvers.minibatch.minibatch_amsgrad`,
:func:`~metric_estimators.solvers.subgradient.adaptive_subgradient`) to the
impostor active set; they know nothing about scikit-learn.
"""

import numpy as np

from .lbfgs import lbfgs_with_restarts
from .minibatch import minibatch_amsgrad
from .subgradient import adaptive_subgradient

__all__ = ["run_lbfgs", "run_sgd", "run_subgradient"]


class _Stop(Exception):
    """The hook asked to stop (subgradient solver): ``args = (x, n_iter)``."""


def run_lbfgs(objective, L0, record, *, max_iter, tol):
    """Squared hinge by L-BFGS, restarted when the impostor set changes.

    Stops once a search at the final ``L`` confirms the impostor set
    (``objective.verify(x) == 0``).
    """
    stop = []

    def callback(x, f):
        if record(f, x):
            stop.append(True)
            return True
        if objective.impostors.tick():
            objective.verify(x)  # refresh the active set, L-BFGS goes on
        return False

    x, n_iter, converged = lbfgs_with_restarts(
        objective, L0, max_iter=max_iter, gtol=tol / 10, callback=callback,
        version=lambda: objective.impostors.n_changes,
        confirm=lambda x: objective.verify(x) == 0, ftol=tol,
    )
    return x, n_iter, converged, bool(stop)


def run_sgd(objective, L0, record, *, max_iter, tol, learn_rate, batch_size,
            progress=None):
    """Squared hinge by mini-batch AMSGrad on sampled impostors.

    ``learn_rate=None`` starts at ``0.01 * max |L0|``.
    """
    if learn_rate is None:
        learn_rate = 0.01 * max(float(np.abs(L0).max()), 1e-12)
    res = minibatch_amsgrad(
        objective.sample, L0, objective.n_samples, batch_size=batch_size,
        max_epochs=max_iter, learn_rate=learn_rate, tol=tol,
        random_state=objective.rng,
        callback=lambda epoch, x, f: record(f, x, epoch), progress=progress,
    )
    return res.x, res.n_iter, res.converged, res.stopped


def run_subgradient(objective, L0, record, *, max_iter, tol, learn_rate,
                    min_iter=0):
    """The paper's hinge by the adaptive-step subgradient method.

    ``learn_rate=None`` starts at ``0.01 * ||L0||_F / ||grad||_F``.
    """
    def callback(n_iter, x, f, accepted, step):
        if record(f, x, n_iter):
            raise _Stop(x.copy(), n_iter)
        # a refresh that found missing active impostors changed the loss
        return objective.impostors.tick() and objective.verify(x) > 0

    def first_step(L, grad):
        if learn_rate is not None:
            return learn_rate
        gnorm = np.linalg.norm(grad)
        return 0.01 * np.linalg.norm(L) / gnorm if gnorm > 0 else 1.0

    try:
        res = adaptive_subgradient(
            objective, L0, step=first_step, max_iter=max_iter, tol=tol,
            min_iter=min_iter, callback=callback,
            confirm=lambda x: objective.verify(x) == 0,
        )
    except _Stop as stop:
        return stop.args[0], stop.args[1], False, True
    return res.x, res.n_iter, res.converged, False
