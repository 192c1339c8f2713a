"""NCA's solve: scikit-learn's L-BFGS-B run, recording every iteration.

The model is :class:`metric_estimators._problems.nca.RecordingNCA` (built by
:func:`~metric_estimators._problems.nca.nca_model`): scikit-learn's
NeighborhoodComponentsAnalysis whose evaluations remember the last point and
value, so that the callback here finds each iteration's objective for free.
"""

import os
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["NCAResult", "solve_nca"]

#: Between these values of ``n_samples^2 * (n_features + n_components)``,
#: BLAS runs single-threaded: the products of an evaluation are small, and
#: spinning BLAS threads make the fit several times slower on busy cores.
#: Below the lower one the fit is too short to pay for threadpoolctl's
#: first call.  Measured: benchmarks/README.md, *Measurements behind choices in the code*.
SMALL_BLAS = (5e6, 1e9)


@dataclass
class NCAResult:
    """Outcome of :func:`solve_nca`."""

    components: np.ndarray
    n_iter: int
    converged: bool
    n_evals: int
    history: dict = field(default_factory=dict)


def solve_nca(model, X, y_idx, objective, *, report=None):
    """Maximise NCA's objective with ``model``'s L-BFGS-B solve.

    Parameters
    ----------
    model : RecordingNCA
        The problem (:func:`metric_estimators._problems.nca.nca_model`),
        with ``max_iter`` and the labels set.
    X : ndarray of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
    objective : callable
        ``objective(L, X, y_idx)``, NCA's ``f``, for an iterate that is not
        the model's last evaluation (rare).
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

    def callback(transformation, n_iter):
        last = getattr(model, "_last_eval", None)
        if last is not None and np.array_equal(last[0], transformation):
            value = last[1]
        else:  # not the last evaluated point: compute it (rare)
            L = transformation.reshape(-1, X.shape[1])
            value = objective(L, X, y_idx)
        history["objective"].append(value)
        history["time"].append(report.elapsed() if report is not None else None)
        if report is not None:
            report.row(len(history["objective"]), value)

    model.callback = callback
    n, d = X.shape
    r = d if model.n_components is None else model.n_components
    work = float(n) * n * (d + r)
    capped = os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    small = SMALL_BLAS[0] <= work < SMALL_BLAS[1] and not capped
    with threadpool_limits(limits=1, user_api="blas") if small else nullcontext():
        model.fit(X, y_idx)
    n_iter = len(history["objective"])
    return NCAResult(components=model.components_, n_iter=n_iter,
                     converged=n_iter < model.max_iter,
                     n_evals=getattr(model, "_n_evals", 0), history=history)
