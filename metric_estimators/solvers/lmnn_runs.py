"""The three ways of minimising the LMNN objective, as plain functions.

Each takes the objective as callables, the flattened starting map ``x0`` and
``record(f, x, n_iter=None) -> bool``, the estimator's per-iteration hook
(history, verbose table, user callback; True asks to stop), and returns
``(x, n_iter, converged, stopped)``.  They wire the generic drivers
(:func:`~metric_estimators.solvers.lbfgs.lbfgs_with_restarts`,
:func:`~metric_estimators.solvers.minibatch.minibatch_amsgrad`,
:func:`~metric_estimators.solvers.subgradient.adaptive_subgradient`) to the
impostor oracle (:class:`~metric_estimators.solvers.impostors.ImpostorSet`):
they search once at ``x0``, again whenever the oracle says a search is due,
and confirm convergence by a search at the final point that finds no
missing active impostor.  ``locate(x) -> (Z, R, n_held)`` gives a search its
input at ``x`` (the embedding, the margin radii and, if known, the number
of held active pairs; see :meth:`ImpostorSet.refresh`).  They know nothing
about the problem's objects nor about scikit-learn.
"""

import numpy as np

from .lbfgs import lbfgs_with_restarts
from .minibatch import minibatch_amsgrad
from .subgradient import adaptive_subgradient

__all__ = ["run_lbfgs", "run_sgd", "run_subgradient"]


class _Stop(Exception):
    """The hook asked to stop (subgradient solver): ``args = (x, n_iter)``."""


def _searcher(impostors, locate, x0):
    """``search(x) -> n_missing``, after a first search at ``x0``."""
    def search(x):
        return impostors.refresh(*locate(x))

    search(x0)
    return search


def run_lbfgs(fun, x0, record, *, impostors, locate, max_iter, tol):
    """The loss ``fun(x) -> (f, grad)`` by L-BFGS, restarted when the impostor set changes.

    Stops once a search at the final ``L`` confirms the impostor set
    (it finds no missing active impostor).
    """
    stop = []
    search = _searcher(impostors, locate, x0)

    def callback(x, f):
        if record(f, x):
            stop.append(True)
            return True
        if impostors.tick():
            search(x)  # refresh the active set, L-BFGS goes on
        return False

    x, n_iter, converged = lbfgs_with_restarts(
        fun, x0, max_iter=max_iter, gtol=tol / 10, callback=callback,
        version=lambda: impostors.n_changes,
        confirm=lambda x: search(x) == 0, ftol=tol,
    )
    return x, n_iter, converged, bool(stop)


def run_sgd(sample, x0, record, *, n_samples, random_state, max_iter, tol,
            learn_rate, batch_size, progress=None):
    """Squared hinge by mini-batch AMSGrad on sampled impostors.

    ``sample(x, batch, rng) -> (f, grad)``: the estimate on a batch of the
    ``n_samples`` anchors; ``random_state`` (a RandomState) draws the batches
    and is passed on as ``rng``.  ``learn_rate=None`` starts at
    ``0.01 * max |x0|``.
    """
    if learn_rate is None:
        learn_rate = 0.01 * max(float(np.abs(x0).max()), 1e-12)
    res = minibatch_amsgrad(
        sample, x0, n_samples, batch_size=batch_size,
        max_epochs=max_iter, learn_rate=learn_rate, tol=tol,
        random_state=random_state,
        callback=lambda epoch, x, f: record(f, x, epoch), progress=progress,
    )
    return res.x, res.n_iter, res.converged, res.stopped


def run_subgradient(fun, x0, record, *, impostors, locate, max_iter, tol,
                    learn_rate, min_iter=0):
    """The paper's hinge ``fun(x) -> (f, subgradient)`` by the adaptive-step subgradient method.

    ``learn_rate=None`` starts at ``0.01 * ||x0||_F / ||grad||_F``.
    """
    search = _searcher(impostors, locate, x0)

    def callback(n_iter, x, f, accepted, step):
        if record(f, x, n_iter):
            raise _Stop(x.copy(), n_iter)
        # a refresh that found missing active impostors changed the loss
        return impostors.tick() and search(x) > 0

    def first_step(L, grad):
        if learn_rate is not None:
            return learn_rate
        gnorm = np.linalg.norm(grad)
        return 0.01 * np.linalg.norm(L) / gnorm if gnorm > 0 else 1.0

    try:
        res = adaptive_subgradient(
            fun, x0, step=first_step, max_iter=max_iter, tol=tol,
            min_iter=min_iter, callback=callback,
            confirm=lambda x: search(x) == 0,
        )
    except _Stop as stop:
        return stop.args[0], stop.args[1], False, True
    return res.x, res.n_iter, res.converged, False
