"""NCA's solve: scipy's L-BFGS-B on ``-f``, recording every iteration.

The problem is :class:`metric_estimators._problems.nca.NCAProblem`; the run
is the one scikit-learn's NeighborhoodComponentsAnalysis makes (L-BFGS-B
with ``ftol = gtol = tol`` and ``max_iter`` iterations; ``tol=None``:
scipy's defaults, as metric-learn's NCA) through
:func:`metric_estimators.solvers.lbfgs.lbfgs`, whose callback receives each
iteration's objective.
"""

import os
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from .lbfgs import lbfgs

__all__ = ["NCAResult", "solve_nca"]

#: Between these values of ``n_samples^2 * (n_features + n_components)``,
#: BLAS runs single-threaded: the products of an evaluation are small, and
#: spinning BLAS threads make the fit several times slower on busy cores.
#: Below the lower one the fit is too short to pay for threadpoolctl's
#: first call.  Measured: benchmarks/README.md, *Measurements behind choices in the code*.
SMALL_BLAS = (5e6, 1e9)
#: scipy's default projected-gradient tolerance of L-BFGS-B (``tol=None``)
SCIPY_GTOL = 1e-5


@dataclass
class NCAResult:
    """Outcome of :func:`solve_nca`."""

    components: np.ndarray
    n_iter: int
    converged: bool
    n_evals: int
    history: dict = field(default_factory=dict)


def solve_nca(problem, L0, *, max_iter, tol, report=None):
    """Maximise NCA's objective from ``L0``.

    Parameters
    ----------
    problem : NCAProblem
        ``-f`` and its gradient (:mod:`metric_estimators._problems.nca`).
    L0 : ndarray of shape (n_components, n_features)
        The start.
    max_iter : int
        Most L-BFGS-B iterations.
    tol : float or None
        L-BFGS-B's ``ftol`` and ``gtol``; None: scipy's defaults (``ftol``
        about 2.2e-9, ``gtol`` :data:`SCIPY_GTOL`).
    report : FitReport or None
        Receives a row ``(iteration, objective)`` per iteration.

    Returns
    -------
    NCAResult
        ``history`` holds the per-iteration ``objective`` (``f``, to be
        maximised) and ``time``.  ``converged`` is False when the budget
        ``max_iter`` was used up.
    """
    history = {"objective": [], "time": []}

    def callback(x, value):
        f = -value
        history["objective"].append(f)
        history["time"].append(report.elapsed() if report is not None else None)
        if report is not None:
            report.row(len(history["objective"]), f)

    n, d = problem.X.shape
    work = float(n) * n * (d + L0.shape[0])
    capped = os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    small = SMALL_BLAS[0] <= work < SMALL_BLAS[1] and not capped
    with threadpool_limits(limits=1, user_api="blas") if small else nullcontext():
        result = lbfgs(problem, np.ravel(L0), max_iter=max_iter,
                       gtol=SCIPY_GTOL if tol is None else tol, ftol=tol,
                       callback=callback)
    n_iter = len(history["objective"])
    return NCAResult(components=result.x.reshape(L0.shape), n_iter=n_iter,
                     converged=n_iter < max_iter, n_evals=problem.n_evals,
                     history=history)
