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

:func:`halfspace_psd_ascent` is Xing et al.'s (NIPS 2002) projected
gradient ascent over ``{A PSD, <N, A> <= bound}``: a fixed-length step along
the gradient's part orthogonal to ``N``, then alternating projections onto
the half-space and the PSD cone; the step length grows after an accepted
step and halves after a rejected one, and the run stops when the step is
small relative to the iterate.  It is a path, not a certified solve: it
stops early, from the start ``A0``, by design.

The drivers know nothing of the learners: they see ``fun`` only.
"""

import numpy as np
from scipy import linalg
from scipy.optimize import minimize

__all__ = ["SpectraplexResult", "project_spectraplex", "spectraplex_ascent",
           "HalfspacePSDResult", "project_halfspace_psd", "halfspace_psd_ascent",
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


def _project_psd(A):
    """Euclidean projection onto the PSD cone (negative eigenvalues to 0)."""
    lam, V = linalg.eigh((A + A.T) / 2.0, check_finite=False)
    keep = lam > 0
    Vk = V[:, keep]
    return (Vk * lam[keep]) @ Vk.T


def project_halfspace_psd(A, N, bound, *, max_proj, rtol):
    """Alternating projections onto ``{<N, A> <= bound}`` and the PSD cone.

    Each round projects onto the half-space (exactly: ``A - c N``), then
    onto the PSD cone (eigenvalues clipped at 0); it stops at the first PSD
    iterate with ``<N, A> <= bound * (1 + rtol)``.

    Parameters
    ----------
    A, N : ndarray of shape (d, d)
        Symmetric; ``N`` is not 0.
    bound : float
        Positive.
    max_proj : int
        Most rounds.
    rtol : float
        Relative slack of the half-space test.

    Returns
    -------
    A : ndarray of shape (d, d)
        The last (PSD) iterate.
    feasible : bool
        Whether it passed the test.
    """
    nn = float(np.vdot(N, N))
    for _ in range(max_proj):
        excess = float(np.vdot(N, A)) - bound
        if excess > 0:
            A = A - (excess / nn) * N
        A = _project_psd(A)
        if float(np.vdot(N, A)) <= bound * (1.0 + rtol):
            return A, True
    return A, False


class HalfspacePSDResult:
    """Outcome of :func:`halfspace_psd_ascent`.

    Attributes
    ----------
    A : ndarray of shape (d, d)
        The last accepted iterate (PSD, ``<N, A> <= bound (1 + rtol)``).
    value : float
        ``fun(A)``.
    n_iter : int
        Iterations (accepted and rejected steps).
    converged : bool
        The relative step fell below ``tol``.
    history : dict of lists
        Per iteration: ``objective`` (of the accepted iterate), ``step``
        (the relative step length after the iteration).
    """

    def __init__(self, A, value, n_iter, converged, history):
        self.A = A
        self.value = value
        self.n_iter = n_iter
        self.converged = converged
        self.history = history


def halfspace_psd_ascent(fun, N, bound, A0, *, max_iter, tol, max_proj,
                         rtol=0.01, step=0.1, grow=1.05, callback=None):
    """Increase ``fun`` over ``{A PSD, <N, A> <= bound}`` by Xing et al.'s steps.

    Xing, Ng, Jordan & Russell (NIPS 2002), section 2.2: from a feasible
    ``A``, step by ``step`` along the unit direction of the gradient's part
    orthogonal to ``N`` (so that, to first order, the constraint does not
    move), then alternate the projections onto the half-space and the PSD
    cone (:func:`project_halfspace_psd`).  A trial that is feasible and
    raises ``fun`` is accepted and ``step`` grows by ``grow``; otherwise
    ``step`` halves and the next trial starts again from the accepted
    iterate.  The run stops when ``step / ||A||_F < tol`` (the relative
    step, the stopping rule of metric-learn's implementation) or after
    ``max_iter`` iterations.

    Parameters
    ----------
    fun : callable
        ``fun(A) -> (value, gradient)`` at a symmetric PSD ``A``.
    N : ndarray of shape (d, d)
        Normal of the half-space (symmetric, not 0).
    bound : float
        Right-hand side, positive.
    A0 : ndarray of shape (d, d)
        Start; projected onto the set first (and accepted).
    max_iter : int
    tol : float
        Relative step below which the run stops.
    max_proj : int
        Most projection rounds per trial.
    rtol : float, default=0.01
        Relative slack of the half-space in the projections.
    step : float, default=0.1
        First step length (Frobenius norm of the update).
    grow : float, default=1.05
        Factor of the step length after an accepted step.
    callback : callable or None
        ``callback(n_iter, value, relative_step, accepted)`` after every
        iteration.

    Returns
    -------
    result : HalfspacePSDResult
    """
    n_unit = N / np.linalg.norm(N)

    def direction(G):
        D = G - float(np.vdot(G, n_unit)) * n_unit
        norm = np.linalg.norm(D)
        return D / norm if norm > 0 else D

    A, _ = project_halfspace_psd(A0, N, bound, max_proj=max_proj, rtol=rtol)
    f, G = fun(A)
    M = direction(G)
    history = {"objective": [], "step": []}
    n_iter = 0
    converged = False
    while n_iter < max_iter:
        n_iter += 1
        trial, feasible = project_halfspace_psd(A + step * M, N, bound,
                                                max_proj=max_proj, rtol=rtol)
        accepted = False
        if feasible:
            f_trial, G_trial = fun(trial)
            if f_trial > f:
                A, f, M = trial, f_trial, direction(G_trial)
                step *= grow
                accepted = True
        if not accepted:
            step /= 2.0
        rel = step * float(np.linalg.norm(M)) / max(np.linalg.norm(A), 1e-300)
        history["objective"].append(float(f))
        history["step"].append(float(rel))
        if callback is not None:
            callback(n_iter, float(f), float(rel), accepted)
        if rel < tol:
            converged = True
            break
    return HalfspacePSDResult(A, float(f), n_iter, converged, history)


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
