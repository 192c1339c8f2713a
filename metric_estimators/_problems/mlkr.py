"""The MLKR objective: leave-one-out kernel regression error and its gradient.

Weinberger & Tesauro, "Metric learning for kernel regression", AISTATS 2007.

For a linear map ``L`` (``r x d``), points ``x_i`` and targets ``y_i``::

    D_ij   = ||L (x_i - x_j)||^2
    K_ij   = exp(-D_ij)                       (j != i;  K_ii = 0)
    yhat_i = sum_j K_ij y_j / sum_j K_ij      (leave-one-out Nadaraya-Watson)
    loss   = sum_i (yhat_i - y_i)^2

With ``W_ij = K_ij / sum_k K_ik`` and
``C_ij = d loss / d D_ij = -2 (yhat_i - y_i) W_ij (y_j - yhat_i)``::

    grad_L = 2 L sum_ij C_ij (x_i - x_j)(x_i - x_j)^T
           = 2 L X^T (diag(C 1 + C^T 1) - C - C^T) X.

The sums run in :func:`metric_estimators._kernels.mlkr.mlkr_loss_grad`,
one row ``i`` at a time: memory is ``O(n)`` per row, never ``n x n`` nor
``n x n x d``; time is ``O(n^2 (r + d) + n d^2)`` per evaluation.  Each row is
shifted by its smallest off-diagonal ``D_ij`` before the exponential (a
softmax), which leaves ``W`` unchanged and keeps far-apart data from
underflowing to ``0 / 0``.
"""

import numpy as np

from .._kernels.mlkr import mlkr_loss_grad

__all__ = ["MLKRObjective"]


class MLKRObjective:
    """Loss and gradient of MLKR in ``L``, flattened for L-BFGS.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    n_components : int
        Rows of ``L``.
    """

    def __init__(self, X, y, n_components):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.n_components = int(n_components)

    def predictions(self, L):
        """Leave-one-out predictions ``yhat`` for ``L`` (no gradient)."""
        return self._pass(L, gradient=False)[1]

    def __call__(self, flat_L):
        """``(loss, flat gradient)`` at ``L = flat_L.reshape(r, d)``."""
        L = flat_L.reshape(self.n_components, -1)
        loss, _, grad = self._pass(L, gradient=True)
        return loss, grad.ravel()

    def _pass(self, L, gradient):
        Z = np.ascontiguousarray(self.X @ L.T)
        loss, yhat, S = mlkr_loss_grad(self.X, Z, self.y, gradient)
        return loss, yhat, (2.0 * (L @ S) if gradient else None)
