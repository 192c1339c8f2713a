"""Drivers for smooth convex problems over simple sets: the spectraplex, the orthant.

:func:`spectraplex_ascent` maximises a concave function of a symmetric
matrix over the spectraplex ``{B : B PSD, trace(B) <= 1}`` by projected
gradient ascent: the Euclidean projection onto that set is exact (one
eigendecomposition, then the eigenvalues projected onto ``{l >= 0,
sum(l) <= 1}``), the step is Barzilai-Borwein with a backtracking
(sufficient increase) safeguard, and the run stops on the Frank-Wolfe
duality gap ``max(lambda_max(G), 0) - <G, B>``, which bounds the distance of
the objective from its maximum.

:func:`nonnegative_lbfgs` minimises a smooth function over ``x >= 0`` by
scipy's L-BFGS-B with bounds.

The drivers know nothing of the learners: they see ``fun`` only.
"""

import numpy as np
from scipy import linalg
from scipy.optimize import minimize

__all__ = ["SpectraplexResult", "project_spectraplex", "spectraplex_ascent",
           "nonnegative_lbfgs"]


def _project_capped_simplex(lam):
    """Euclidean projection of a vector onto ``{x >= 0, sum(x) <= 1}``."""
    pos = np.maximum(lam, 0.0)
    if pos.sum() <= 1.0:
        return pos
    s = np.sort(lam)[::-1]
    cs = np.cumsum(s) - 1.0
    k = np.arange(1, s.size + 1)
    rho = np.flatnonzero(s - cs / k > 0)[-1]
    theta = cs[rho] / (rho + 1)
    return np.maximum(lam - theta, 0.0)


def project_spectraplex(B):
    """Euclidean (Frobenius) projection of ``B`` onto ``{PSD, trace <= 1}``."""
    lam, V = linalg.eigh((B + B.T) / 2.0, check_finite=False)
    lam = _project_capped_simplex(lam)
    keep = lam > 0
    Vk = V[:, keep]
    return (Vk * lam[keep]) @ Vk.T


class SpectraplexResult:
    """Outcome of :func:`spectraplex_ascent`.

    Attributes
    ----------
    B : ndarray of shape (d, d)
        The last iterate (in the spectraplex).
    value : float
        ``fun(B)``.
    gap : float
        Its Frank-Wolfe gap (an upper bound of ``max f - f(B)``).
    n_iter : int
    converged : bool
        ``gap <= tol * |value|``.
    history : dict of lists
        Per iteration: ``objective``, ``gap`` (relative), ``step``.
    """

    def __init__(self, B, value, gap, n_iter, converged, history):
        self.B = B
        self.value = value
        self.gap = gap
        self.n_iter = n_iter
        self.converged = converged
        self.history = history


def _fw_gap(B, G):
    lam_max = linalg.eigvalsh((G + G.T) / 2.0, subset_by_index=[G.shape[0] - 1,
                                                               G.shape[0] - 1],
                              check_finite=False)[0]
    return max(lam_max, 0.0) - float(np.vdot(G, B))


def spectraplex_ascent(fun, B0, *, max_iter, tol, max_backtrack=50,
                       callback=None):
    """Maximise a concave ``fun`` over ``{B PSD, trace(B) <= 1}``.

    Parameters
    ----------
    fun : callable
        ``fun(B) -> (value, gradient)``, both at a symmetric ``B``.
    B0 : ndarray of shape (d, d)
        Start; projected onto the set first.
    max_iter : int
        Most gradient steps.
    tol : float
        Stop when the Frank-Wolfe gap is at most ``tol * |value|``.
    max_backtrack : int, default=50
        Most step halvings in one iteration.
    callback : callable or None
        ``callback(n_iter, value, relative_gap, step)`` after every step.

    Returns
    -------
    result : SpectraplexResult
    """
    B = project_spectraplex(B0)
    f, G = fun(B)
    gap = _fw_gap(B, G)
    history = {"objective": [], "gap": [], "step": []}
    step = 1.0 / max(np.linalg.norm(G), 1e-300)
    n_iter = 0
    while gap > tol * abs(f) and n_iter < max_iter:
        n_iter += 1
        for _ in range(max_backtrack):
            B_new = project_spectraplex(B + step * G)
            D = B_new - B
            f_new, G_new = fun(B_new)
            # sufficient increase for a concave f with step-size 1/L
            if f_new >= f + np.vdot(G, D) - np.vdot(D, D) / (2.0 * step) - \
                    1e-12 * abs(f):
                break
            step /= 2.0
        dG = G_new - G
        B, f, G = B_new, f_new, G_new
        gap = _fw_gap(B, G)
        # Barzilai-Borwein step for the next iteration (concave: <D, dG> < 0)
        curv = -float(np.vdot(D, dG))
        if curv > 0:
            step = float(np.vdot(D, D)) / curv
        else:
            step *= 2.0
        rel = gap / max(abs(f), 1e-300)
        history["objective"].append(float(f))
        history["gap"].append(float(rel))
        history["step"].append(float(step))
        if callback is not None:
            callback(n_iter, float(f), float(rel), float(step))
    return SpectraplexResult(B, float(f), float(gap), n_iter,
                             bool(gap <= tol * abs(f)), history)


def nonnegative_lbfgs(fun, x0, *, max_iter, ftol, gtol=1e-10, callback=None):
    """Minimise ``fun(x) -> (value, gradient)`` over ``x >= 0`` (L-BFGS-B).

    Parameters
    ----------
    fun : callable
    x0 : ndarray of shape (n,)
    max_iter : int
    ftol : float
        Relative decrease tolerance (scipy's ``ftol``).
    gtol : float, default=1e-10
        Projected-gradient tolerance (scipy's ``gtol``).
    callback : callable or None
        ``callback(x, value)`` after every iteration.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``status == 1`` when ``max_iter`` was reached.
    """
    scipy_callback = None
    if callback is not None:
        def scipy_callback(intermediate_result):
            callback(intermediate_result.x, float(intermediate_result.fun))
    return minimize(fun, x0, method="L-BFGS-B", jac=True,
                    bounds=[(0.0, None)] * len(x0), callback=scipy_callback,
                    options={"maxiter": max_iter, "ftol": ftol, "gtol": gtol})
