"""Gradient descent with a backtracking (Armijo) line search; no scikit-learn here.

For objectives defined on an open set (e.g. positive definite matrices)
that return ``+inf`` outside it: a step leaving the set is simply rejected
and halved, so every iterate stays inside.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["DescentResult", "gradient_descent"]

#: Sufficient decrease constant of the Armijo rule.
ARMIJO = 1e-4
#: Halvings of the step tried per iteration before giving up.
MAX_HALVINGS = 60


@dataclass
class DescentResult:
    """What :func:`gradient_descent` returns."""

    x: np.ndarray
    value: float
    n_iter: int
    converged: bool
    objective_curve: list = field(default_factory=list)
    step_curve: list = field(default_factory=list)
    message: str = ""


def gradient_descent(value, gradient, x0, *, max_iter, tol, report=None,
                     extra=None):
    """Minimise ``value`` from ``x0`` by steepest descent with backtracking.

    Each iteration takes the gradient ``g``, tries ``x - s g`` with ``s``
    the previous accepted step doubled (initially ``1 / ||g||``), and halves
    ``s`` until the Armijo condition ``f(x - s g) <= f(x) - ARMIJO s ||g||^2``
    holds (``+inf`` never does).  The run stops when an accepted step lowers
    ``f`` by at most ``tol`` times ``max(|f|, 1)`` (converged), when no step
    can be found (converged: the gradient is numerically zero), or after
    ``max_iter`` iterations (not converged).  ``n_iter`` counts the
    gradients taken (an iteration that finds no step counts).

    Parameters
    ----------
    value : callable ``x -> float`` (``+inf`` outside the domain)
    gradient : callable ``x -> ndarray`` like ``x``
    x0 : ndarray
        A point of the domain (finite ``value``).
    max_iter : int
    tol : float
    report : FitReport or None
        One row ``(iteration, f, *extra(), step)`` per iteration.
    extra : callable or None
        ``() -> tuple`` of extra row values (read after each gradient).

    Returns
    -------
    result : DescentResult
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    f = value(x)
    if not np.isfinite(f):
        raise ValueError("gradient_descent needs a starting point of finite value.")
    result = DescentResult(x=x, value=f, n_iter=0, converged=False)
    step = None
    for it in range(1, max_iter + 1):
        g = gradient(x)
        gg = float(np.sum(g * g))
        if gg == 0.0:
            result.converged, result.message = True, "zero gradient"
            result.n_iter = it
            break
        step = 1.0 / np.sqrt(gg) if step is None else 2.0 * step
        for _ in range(MAX_HALVINGS):
            x_new = x - step * g
            f_new = value(x_new)
            if f_new <= f - ARMIJO * step * gg:
                break
            step /= 2.0
        else:
            result.converged, result.message = True, "no descent step found"
            result.n_iter = it
            break
        decrease = f - f_new
        x, f = x_new, f_new
        result.objective_curve.append(float(f))
        result.step_curve.append(float(step))
        result.n_iter = it
        if report is not None:
            report.row(it, float(f), *(extra() if extra else ()), float(step))
        if decrease <= tol * max(abs(f), 1.0):
            result.converged, result.message = True, "objective decrease below tol"
            break
    result.x, result.value = x, f
    return result
