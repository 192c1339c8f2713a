"""Certified lower bounds of box-constrained LPs from refined Lagrange multipliers.

For the LP ``min_{0 <= x <= 1} k + c^T x  s.t.  A x <= 0`` every ``y >= 0``
certifies ::

    L(y) = k + sum_e min(0, (c + A^T y)_e)  <=  LP optimum

(the minimum of the Lagrangian over the box; weak duality).  ``L`` is
concave and piecewise linear; its maximum over the rows of ``A`` is the
optimum of the LP restricted to those rows.  :func:`refine_box_duals`
raises ``L`` from a starting ``y`` by maximising the *smoothed* Lagrangian ::

    L_mu(y) = k + sum_e min_{0 <= x_e <= 1} [(c + A^T y)_e x_e + mu_e x_e^2 / 2]

(Nesterov's smoothing, "Smooth minimization of non-smooth functions", Math.
Program. 2005: ``L <= L_mu <= L + sum_e mu_e / 2``, with gradient ``A
x_mu(y)``, ``x_mu = clip(-(c + A^T y) / mu, 0, 1)``) with scipy's L-BFGS-B
under the bounds ``y >= 0``, for a decreasing sequence of ``mu``, each run
warm-started from the last.  Only ``L`` itself, evaluated exactly at the
multipliers found, is returned as the bound, so the result is certified
whatever the accuracy of the smoothing or of L-BFGS.  ``L`` comes for free
with every evaluation of ``L_mu`` (both need ``c + A^T y``), so the best
``L`` over every point L-BFGS-B evaluates is kept: a refinement stopped at
any moment (``deadline``) still returns a certified bound, at least the
starting one.
"""

import time

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, minimize

__all__ = ["box_lagrangian", "refine_box_duals"]

#: smoothing per unit weight, in the order they are run (each run is
#: warm-started from the previous one)
MU_SCHEDULE = (1e-2, 3e-3, 1e-3, 3e-4)


def box_lagrangian(c, k, At, y):
    """``L(y) = k + sum_e min(0, (c + A^T y)_e)`` (``At`` is ``A^T``, CSR)."""
    return float(k + np.minimum(c + At @ y, 0.0).sum())


class _OutOfTime(Exception):
    """Raised inside the objective once the deadline has passed."""


def refine_box_duals(c, k, A, y0, *, weights=None, max_iter=500,
                     schedule=MU_SCHEDULE, deadline=None):
    """Return ``(L(y), y)``: multipliers at least as good as ``y0``.

    Parameters
    ----------
    c : ndarray of shape (m,)
        Linear objective on the box.
    k : float
        Constant of the objective.
    A : sparse matrix of shape (r, m)
        The rows ``A x <= 0``.
    y0 : ndarray of shape (r,)
        Starting multipliers (``>= 0``).
    weights : ndarray of shape (m,) or None
        Scale of each variable's cost (the smoothing of variable ``e`` is
        ``mu |weights_e|``); default ``|c|``, floored at a small share of its
        mean.
    max_iter : int
        L-BFGS-B iterations per smoothing level.
    schedule : sequence of float
        The smoothing levels, run in order.
    deadline : float or None
        A :func:`time.perf_counter` time: no evaluation starts after it,
        and the best multipliers evaluated so far are returned (None: run
        the whole schedule).  The bound is certified either way.

    Returns
    -------
    bound : float
        The largest ``L`` over ``y0`` and every point evaluated -- never
        below the starting bound.
    y : ndarray of shape (r,)
        The multipliers achieving it.
    """
    A = sparse.csr_matrix(A, dtype=np.float64)
    At = A.T.tocsr()
    y0 = np.maximum(np.asarray(y0, dtype=np.float64), 0.0)
    best, best_y = box_lagrangian(c, k, At, y0), y0
    if A.shape[0] == 0 or A.nnz == 0:
        return best, best_y
    scale = np.abs(c) if weights is None else np.abs(weights)
    scale = np.maximum(scale, 1e-3 * max(float(scale.mean()), 1e-300))

    def smoothed(v, mu):
        nonlocal best, best_y
        if deadline is not None and time.perf_counter() >= deadline:
            raise _OutOfTime
        s = c + At @ v
        exact = k + float(np.minimum(s, 0.0).sum())  # L(v), certified
        if exact > best and v.min() >= 0.0:
            best, best_y = exact, v.copy()
        x = np.clip(-s / mu, 0.0, 1.0)
        value = k + float(np.sum(s * x + 0.5 * mu * x * x))
        return -value, -(A @ x)

    y = y0
    try:
        for mu_unit in schedule:
            res = minimize(smoothed, y, args=(mu_unit * scale,), jac=True,
                           method="L-BFGS-B", bounds=Bounds(0.0, np.inf),
                           options={"maxiter": int(max_iter), "maxcor": 20})
            y = np.maximum(res.x, 0.0)
            value = box_lagrangian(c, k, At, y)
            if value > best:
                best, best_y = value, y
    except _OutOfTime:
        pass
    return best, best_y
