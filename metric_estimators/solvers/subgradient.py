"""Adaptive-step (projected) subgradient descent, the step rule of LMNN's paper.

Weinberger & Saul (JMLR 2009, section 5) minimise the hinge loss of LMNN by
subgradient steps whose length adapts: after a step that does not increase
the objective the step grows by 1 %; after one that increases it, the step is
undone (rolled back) and halved.  LMNN's ``solver='subgradient'`` and the
LODML baseline (projected onto the PSD cone) both run :func:`adaptive_subgradient`.

Stopping
--------
The run has *stalled* when

* the subgradient is exactly zero (a stationary point), or
* an accepted step decreased the objective by at most ``tol`` times its
  previous absolute value, or
* after a rejected step, the halved step has become negligible:
  ``step * ||g|| <= STEP_FLOOR * max(||x||, ||x_0||)``, i.e. it would move
  ``x`` by less than ``STEP_FLOOR`` of its size (or of the starting point's,
  should ``x`` have shrunk towards 0).  ``STEP_FLOOR = 1e-12``: a step that
  small changes only the last dozen bits of ``x`` and the objective by far
  less than any useful ``tol``, so the ~13 further halvings down to machine
  precision (the ``1e-16`` LMNN used to wait for) would only evaluate the
  objective in vain at a kink no step along the subgradient can leave.

A stalled run asks ``confirm(x)`` whether the objective it minimised is the
final one (LMNN: a fresh impostor search at ``x`` finds no missing active
impostor); if not, it goes on with the updated objective.
"""

import numpy as np

__all__ = ["STEP_FLOOR", "SubgradientResult", "adaptive_subgradient"]

#: Relative size below which a halved step counts as negligible.
STEP_FLOOR = 1e-12
#: Factor of the step after an accepted (non-increasing) step.
GROW = 1.01
#: Factor of the step after a rejected (increasing) step, which is undone.
SHRINK = 0.5


class SubgradientResult:
    """Outcome of :func:`adaptive_subgradient`.

    Attributes
    ----------
    x : ndarray
        The last accepted point.
    fun : float
        The objective at ``x``.
    n_iter : int
        Iterations run, rejected steps included.
    converged : bool
        Whether the run stalled (and was confirmed) before ``max_iter``.
    step : float
        The step length at the end.
    """

    def __init__(self, x, fun, n_iter, converged, step):
        self.x = x
        self.fun = fun
        self.n_iter = n_iter
        self.converged = converged
        self.step = step


def adaptive_subgradient(value, x0, *, step, max_iter, tol, subgradient=None,
                         project=None, callback=None, confirm=None,
                         step_floor=STEP_FLOOR, min_iter=0):
    """Minimise ``value`` by subgradient steps with the grow / halve-and-roll-back rule.

    Parameters
    ----------
    value : callable
        ``value(x) -> (f, aux)``.  Without ``subgradient``, ``aux`` is a
        subgradient at ``x`` (an array shaped like ``x``).
    x0 : ndarray
        Starting point (feasible when ``project`` is given).
    step : float or callable
        First step length, or ``step(x0, g0) -> float``.
    max_iter : int
        Most iterations; an iteration is one trial step, accepted or not.
    tol : float
        Stop when an accepted step decreases the objective by at most
        ``tol * |f_old|``.
    subgradient : callable or None, default=None
        ``subgradient(x, aux) -> g``, called only at accepted points (a
        rejected trial costs one ``value`` call only).
    project : callable or None, default=None
        ``project(y) -> x``: the trial point of ``x - step * g``, e.g. the
        projection onto a convex set.
    callback : callable or None, default=None
        ``callback(n_iter, x, f, accepted, step)`` after every iteration
        (``step``: the length the next trial will use).  Returning
        True says the objective itself changed at ``x`` (e.g. an active set
        was refreshed): ``f`` and ``g`` are then re-evaluated at ``x``.
    confirm : callable or None, default=None
        ``confirm(x) -> bool`` when the run stalls: True accepts ``x`` as
        converged; False says the objective changed, and the run goes on.
    step_floor : float, default=STEP_FLOOR
        See the module docstring.
    min_iter : int, default=0
        No stop before this many iterations (metric-learn's ``min_iter``);
        a zero subgradient still stops at once.

    Returns
    -------
    result : SubgradientResult
    """
    def evaluate(x):
        f, aux = value(x)
        return f, (aux if subgradient is None else subgradient(x, aux))

    x = x0
    f, g = evaluate(x)
    step = float(step(x, g) if callable(step) else step)
    scale = max(np.linalg.norm(x0), np.finfo(np.float64).tiny)
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        stalled = not np.any(g)
        if not stalled:
            trial = x - step * g
            if project is not None:
                trial = project(trial)
            f_new, aux = value(trial)
            accepted = f_new <= f
            if accepted:
                stalled = f - f_new <= tol * abs(f)
                x, f = trial, f_new
                g = aux if subgradient is None else subgradient(x, aux)
                step *= GROW
            else:  # roll back (x, f, g unchanged) and halve
                step *= SHRINK
                stalled = step * np.linalg.norm(g) <= step_floor * max(
                    np.linalg.norm(x), scale
                )
            if callback is not None and callback(n_iter, x, f, accepted, step):
                f, g = evaluate(x)  # the objective changed
                continue
        if stalled and (n_iter >= min_iter or not np.any(g)):
            if confirm is None or confirm(x):
                converged = True
                break
            f, g = evaluate(x)
    return SubgradientResult(x, f, n_iter, converged, step)
