"""LSML's problem: squared residuals of quadruplets plus a LogDet prior.

Liu, Guo, Zhang, Jojic & Wang, "Metric learning from relative comparisons by
minimizing squared residual", ICDM 2012.  A quadruplet ``(a, b, c, d)``
says that ``(a, b)`` is more similar than ``(c, d)``; over positive
definite ``M``, LSML minimises::

    f(M) = sum_q w_q max(0, d_M(a, b) - d_M(c, d))^2
           + tr(M M0^-1) - log det M,

``d_M`` the unsquared distance, ``w`` normalised to sum to 1, and ``M0``
the prior (the LogDet divergence ``D_ld(M, M0)`` up to a constant).

The residual sum and its gradient are the kernels of
:mod:`metric_estimators._kernels.lsml` (numba, or their numpy twins: the
fit's ``kernels``).
"""

import numpy as np
from scipy import linalg

__all__ = ["QuadrupletResidualProblem", "check_quadruplet_weights"]


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
    kernels : Kernels
        The fit's kernels (:func:`metric_estimators._backend.choose`).
    """

    def __init__(self, V, U, weights, prior, kernels):
        self.V = np.ascontiguousarray(V, dtype=np.float64)
        self.U = np.ascontiguousarray(U, dtype=np.float64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.prior_inv = np.linalg.inv(prior)
        self.prior_inv = (self.prior_inv + self.prior_inv.T) / 2
        n, d = self.V.shape
        self._cv = np.empty(n)
        self._cu = np.empty(n)
        self.n_active = 0
        self.kernels = kernels

    def _residuals(self, M):
        """Loss terms; the gradient's coefficients in ``_cv``, ``_cu``."""
        return self.kernels.lsml.quadruplet_residuals(
            self.V, self.U, M, self.weights, self._cv, self._cu)

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
        return float(self._residuals(M).sum())

    def value(self, M):
        """``f(M)``; ``+inf`` when ``M`` is not positive definite."""
        logdet = self._logdet(M)
        if logdet is None:
            return np.inf
        return self.loss(M) + float(np.sum(M * self.prior_inv)) - logdet

    def gradient(self, M):
        """``grad f(M)`` (symmetric); sets ``n_active``."""
        self._residuals(M)
        G = np.empty_like(M)
        self.n_active = self.kernels.lsml.quadruplet_gradient(
            self.V, self.U, self._cv, self._cu, G)
        Minv = linalg.inv(M, check_finite=False)
        return G + self.prior_inv - (Minv + Minv.T) / 2
