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
inner products ``Z_I Z^T`` and the product ``C_I X``, and one numba pass
(:func:`metric_estimators._kernels.mlkr.mlkr_block`) does the element-wise
rest -- or, for at most :data:`NUMPY_MAX_SAMPLES` points, the same formulas
vectorised in numpy (:func:`mlkr_block_numpy`), so that a small fit never
loads numba.  Memory is ``O(b n)`` (at most :data:`BLOCK_ELEMENTS` floats), never
``n x n x d``; time is ``O(n^2 (r + d) + n d^2)`` per evaluation.  Each row
is shifted by its smallest off-diagonal ``D_ij`` before the exponential (a
softmax), which leaves ``W`` unchanged and keeps far-apart data from
underflowing to ``0 / 0``.
"""

import numpy as np

__all__ = [
    "BLOCK_ELEMENTS",
    "NUMPY_MAX_SAMPLES",
    "MLKRObjective",
    "mlkr_block_numpy",
]

#: most elements of one block of rows (``b * n``; 16 MB of float64)
BLOCK_ELEMENTS = 1 << 21

#: Problems of at most this many points compute the element-wise part of the
#: loss in numpy (:func:`mlkr_block_numpy`), larger ones in the numba kernel
#: :func:`metric_estimators._kernels.mlkr.mlkr_block`, whose compilation costs
#: about 1.6 s of CPU in a fresh process (numba's import included).  Early in
#: a fit the two cost about the same (warm fits of 100 iterations on 100 /
#: 200 / 300 / 442 points of diabetes: 0.018 / 0.015, 0.054 / 0.050, 0.112 /
#: 0.105 and 0.240 / 0.217 s, numpy / numba,
#: ``benchmarks/results/numpy_paths_threshold.md``); once the learned metric
#: is large, most kernel values underflow and the numba kernel skips their
#: exponentials: one evaluation at ``L = 3 I`` on 10 features took the same
#: time on both paths up to 200 points but 2.2 against 0.76 ms at 300 and
#: 4.7 against 1.5 ms at 442 (measured outside the benchmark lock, one BLAS
#: thread), where a fit of 1000 iterations would lose about 3 s to numpy.
NUMPY_MAX_SAMPLES = 256

#: ``np.exp(t) == 0.0`` exactly for every float64 ``t <= _EXP_ZERO`` (as in
#: the kernel)
_EXP_ZERO = -746.0


def mlkr_block_numpy(G, sq, y, start, yhat, rsum, want_grad):
    """:func:`metric_estimators._kernels.mlkr.mlkr_block` in vectorised numpy.

    Same arguments, same in-place outputs and the same values up to the
    order of the floating-point sums.
    """
    b = G.shape[0]
    rows = np.arange(start, start + b)
    r = np.arange(b)
    D = sq[rows, None] + sq[None, :] - 2.0 * G
    np.maximum(D, 0.0, out=D)
    D[r, rows] = np.inf                     # j == i never counts
    m = D.min(axis=1)
    T = m[:, None] - D
    T[T <= _EXP_ZERO] = -np.inf             # exactly 0 after exp, as the kernel
    E = np.exp(T)
    tot = E.sum(axis=1)
    yh = (E @ y) / tot
    yhat[rows] = yh
    err = yh - y[rows]
    loss = float(err @ err)
    if not want_grad:
        return loss
    C = E * (y[None, :] - yh[:, None])
    C *= (-2.0 * err / tot)[:, None]
    G[:] = C
    rsum += C.sum(axis=0)
    rsum[rows] += C.sum(axis=1)
    return loss


def _block_kernel(n):
    """The element-wise pass for ``n`` points: numpy up to NUMPY_MAX_SAMPLES, else numba."""
    if n <= NUMPY_MAX_SAMPLES:
        return mlkr_block_numpy
    from .._kernels.mlkr import mlkr_block  # loads numba
    return mlkr_block


class MLKRObjective:
    """Loss and gradient of MLKR in ``L``, flattened for L-BFGS.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    n_components : int
        Rows of ``L``.
    block_elements : int, default=BLOCK_ELEMENTS
        Most elements of one block of rows.
    """

    def __init__(self, X, y, n_components, block_elements=BLOCK_ELEMENTS):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.n_components = int(n_components)
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
        block_kernel = _block_kernel(n)
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
