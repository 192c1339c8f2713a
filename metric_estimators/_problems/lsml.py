"""LSML's problem: squared residuals of quadruplets plus a LogDet prior.

Liu, Guo, Zhang, Jojic & Wang, "Metric learning from relative comparisons by
minimizing squared residual", ICDM 2012.  A quadruplet ``(a, b, c, d)``
says that ``(a, b)`` is more similar than ``(c, d)``; over positive
definite ``M``, LSML minimises::

    f(M) = sum_q w_q max(0, d_M(a, b) - d_M(c, d))^2
           + tr(M M0^-1) - log det M,

``d_M`` the unsquared distance, ``w`` normalised to sum to 1, and ``M0``
the prior (the LogDet divergence ``D_ld(M, M0)`` up to a constant).

Two implementations of the residual sum, equal up to rounding: numba
kernels (:mod:`metric_estimators._kernels.lsml`), the faster per evaluation
on all but the largest sets, and vectorised numpy (:func:`residuals_numpy`,
:func:`gradient_numpy`), which needs no start-up.  Loading the cached numba
kernels in a fresh process costs about 0.3-0.5 s of CPU
(:data:`NUMBA_START_UP`), while a typical LSML fit needs only about ten
evaluations (wine, breast cancer, digits with the default
``n_constraints``: 7-13), each well under a millisecond in numpy.  So a
problem evaluates with numpy first and switches to numba for good once
numpy's estimated time (:func:`numpy_evaluations`) has reached numba's
start-up: a fit never pays more than twice the better choice, and the
short fits pay no start-up at all.  The switch depends on the counts and
sizes only, never on a clock, so results stay reproducible.
"""

import numpy as np
from scipy import linalg

__all__ = ["QuadrupletResidualProblem", "check_quadruplet_weights",
           "gradient_numpy", "numpy_evaluations", "residuals_numpy"]

#: CPU seconds of numba's start-up that the numpy path saves: in a fresh
#: process that has not imported numba yet, importing LSML's kernels and
#: their first calls cost 0.36-0.38 s (``python benchmarks/bench_crossovers.py
#: --studies lsml --threads 1`` -> ``benchmarks/results/crossovers.md``).
#: The figure sits below that, which keeps the rule conservative: it
#: switches to numba early rather than late.
NUMBA_START_UP = 0.3
#: numpy's time per evaluation (residuals and gradient) is at most about
#: ``NUMPY_CALL + NUMPY_PER_ELEMENT * n_quadruplets * n_features ** 2``
#: seconds: an upper envelope of the single-threaded timings of the same
#: command (n from 80 to 10,000, d from 13 to 64; numba is faster per
#: evaluation below about 500 quadruplets, the two are about even beyond).
NUMPY_CALL = 1e-4
NUMPY_PER_ELEMENT = 6e-10


def numpy_evaluations(n_quadruplets, n_features):
    """How many evaluations run in numpy before switching to numba.

    As many as fit in :data:`NUMBA_START_UP` seconds by the cost model of
    :data:`NUMPY_CALL` and :data:`NUMPY_PER_ELEMENT` (the ski-rental rule).
    """
    per_evaluation = (NUMPY_CALL
                      + NUMPY_PER_ELEMENT * n_quadruplets * n_features ** 2)
    return int(NUMBA_START_UP / per_evaluation)


def check_quadruplet_weights(weights, n_quadruplets):
    """Non-negative finite weights, one per quadruplet, not all 0, normalised to sum 1."""
    if weights is None:
        return np.full(n_quadruplets, 1.0 / n_quadruplets)
    w = np.asarray(weights)
    if w.dtype.kind not in "iuf":
        raise TypeError(f"weights must be real numbers, got dtype {w.dtype}.")
    w = w.astype(np.float64)
    if w.ndim != 1 or w.shape[0] != n_quadruplets:
        raise ValueError(
            f"weights must have shape ({n_quadruplets},), one per quadruplet, "
            f"got {w.shape}."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contains NaN or infinity.")
    if w.min() < 0:
        raise ValueError("weights must be non-negative.")
    total = w.sum()
    if not total > 0:
        raise ValueError("weights must not all be 0.")
    return w / total


def residuals_numpy(V, U, M, weights):
    """Loss terms and gradient coefficients of every quadruplet, vectorised.

    The numpy twin of :func:`metric_estimators._kernels.lsml.quadruplet_residuals`
    (same formulas, equal up to rounding): ``(loss, coef_v, coef_u)``.  Used
    for the first :func:`numpy_evaluations` evaluations of a problem.
    """
    dab = np.sqrt(np.maximum(np.einsum("ij,ij->i", V @ M, V), 0.0))
    dcd = np.sqrt(np.maximum(np.einsum("ij,ij->i", U @ M, U), 0.0))
    r = dab - dcd
    active = r > 0.0
    wr = np.where(active, weights * r, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        coef_v = np.where(active & (dab > 0.0), wr / dab, 0.0)
        coef_u = np.where(active & (dcd > 0.0), wr / dcd, 0.0)
    return wr * np.where(active, r, 0.0), coef_v, coef_u


def gradient_numpy(V, U, coef_v, coef_u):
    """``(sum_q coef_v[q] V_q V_q^T - coef_u[q] U_q U_q^T, n_active)``, vectorised.

    The numpy twin of :func:`metric_estimators._kernels.lsml.quadruplet_gradient`:
    exactly symmetric, equal to it up to rounding.
    """
    active = (coef_v != 0.0) | (coef_u != 0.0)
    Va, Ua = V[active], U[active]
    G = (Va.T * coef_v[active]) @ Va - (Ua.T * coef_u[active]) @ Ua
    return (G + G.T) / 2, int(active.sum())


class QuadrupletResidualProblem:
    """``f(M)`` and its gradient; ``f = +inf`` where ``M`` is not positive definite.

    Parameters
    ----------
    V, U : ndarray of shape (n_quadruplets, n_features)
        ``x_a - x_b`` and ``x_c - x_d`` of each quadruplet.
    weights : ndarray of shape (n_quadruplets,)
        Normalised weights.
    prior : ndarray of shape (n_features, n_features)
        The positive definite ``M0``.
    """

    def __init__(self, V, U, weights, prior):
        self.V = np.ascontiguousarray(V, dtype=np.float64)
        self.U = np.ascontiguousarray(U, dtype=np.float64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.prior_inv = np.linalg.inv(prior)
        self.prior_inv = (self.prior_inv + self.prior_inv.T) / 2
        n, d = self.V.shape
        self._cv = np.empty(n)
        self._cu = np.empty(n)
        self.n_active = 0
        #: evaluations done; the first ``numpy_evaluations_`` use numpy
        self.n_evaluations = 0
        self.numpy_evaluations_ = numpy_evaluations(n, d)

    def _residuals(self, M):
        """Loss terms; coefficients in ``_cv``, ``_cu``; True when numpy ran."""
        self.n_evaluations += 1
        if self.n_evaluations <= self.numpy_evaluations_:
            loss, self._cv[:], self._cu[:] = residuals_numpy(
                self.V, self.U, M, self.weights)
            return loss, True
        from .._kernels.lsml import quadruplet_residuals  # numba: load on demand
        return quadruplet_residuals(self.V, self.U, M, self.weights,
                                    self._cv, self._cu), False

    def _logdet(self, M):
        try:
            C = linalg.cholesky(M, lower=True, check_finite=False)
        except linalg.LinAlgError:
            return None
        diag = np.diag(C)
        if not np.all(diag > 0) or not np.all(np.isfinite(diag)):
            return None
        return 2.0 * np.log(diag).sum()

    def loss(self, M):
        """The residual part alone (no prior)."""
        return float(self._residuals(M)[0].sum())

    def value(self, M):
        """``f(M)``; ``+inf`` when ``M`` is not positive definite."""
        logdet = self._logdet(M)
        if logdet is None:
            return np.inf
        return self.loss(M) + float(np.sum(M * self.prior_inv)) - logdet

    def gradient(self, M):
        """``grad f(M)`` (symmetric); sets ``n_active``."""
        if self._residuals(M)[1]:
            G, self.n_active = gradient_numpy(self.V, self.U, self._cv, self._cu)
        else:
            from .._kernels.lsml import quadruplet_gradient
            G = np.empty_like(M)
            self.n_active = quadruplet_gradient(self.V, self.U, self._cv,
                                                self._cu, G)
        Minv = linalg.inv(M, check_finite=False)
        return G + self.prior_inv - (Minv + Minv.T) / 2
