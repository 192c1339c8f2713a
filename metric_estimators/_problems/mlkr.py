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

The rows are processed in blocks of ``b`` rows: BLAS computes the block's
inner products ``Z_I Z^T`` and the product ``C_I X``, and one pass of
:func:`metric_estimators._kernels.mlkr.mlkr_block` (numba, or its numpy
twin: the fit's ``kernels``) does the element-wise rest.  Memory is
``O(b n)`` (at most :data:`BLOCK_ELEMENTS` floats), never ``n x n x d``; time is ``O(n^2 (r + d) + n d^2)`` per evaluation.  Each row
is shifted by its smallest off-diagonal ``D_ij`` before the exponential (a
softmax), which leaves ``W`` unchanged and keeps far-apart data from
underflowing to ``0 / 0``.
"""

import numpy as np

__all__ = ["BLOCK_ELEMENTS", "MLKRObjective"]

#: most elements of one block of rows (``b * n``; 16 MB of float64)
BLOCK_ELEMENTS = 1 << 21


class MLKRObjective:
    """Loss and gradient of MLKR in ``L``, flattened for L-BFGS.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    n_components : int
        Rows of ``L``.
    kernels : Kernels
        The fit's kernels (:func:`metric_estimators._backend.choose`).
    block_elements : int, default=BLOCK_ELEMENTS
        Most elements of one block of rows.
    """

    def __init__(self, X, y, n_components, kernels, block_elements=BLOCK_ELEMENTS):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.n_components = int(n_components)
        self.kernels = kernels
        n = self.X.shape[0]
        self.block = int(max(1, min(n, block_elements // max(n, 1))))

    def predictions(self, L):
        """Leave-one-out predictions ``yhat`` for ``L`` (no gradient)."""
        return self._pass(L, gradient=False)[1]

    def __call__(self, flat_L):
        """``(loss, flat gradient)`` at ``L = flat_L.reshape(r, d)``."""
        L = flat_L.reshape(self.n_components, -1)
        loss, _, grad = self._pass(L, gradient=True)
        return loss, grad.ravel()

    def _pass(self, L, gradient):
        X, y = self.X, self.y
        n, d = X.shape
        Z = X @ L.T
        sq = np.einsum("ij,ij->i", Z, Z)
        yhat = np.empty(n)
        rsum = np.zeros(n)
        T = np.zeros((d, d))        # sum over blocks of X_I^T C_I X
        loss = 0.0
        block_kernel = self.kernels.mlkr.mlkr_block
        for start in range(0, n, self.block):
            stop = min(n, start + self.block)
            G = Z[start:stop] @ Z.T
            loss += block_kernel(G, sq, y, start, yhat, rsum, gradient)
            if gradient:
                T += X[start:stop].T @ (G @ X)
        if not gradient:
            return loss, yhat, None
        S = (X.T * rsum) @ X - T - T.T
        return loss, yhat, 2.0 * (L @ S)
