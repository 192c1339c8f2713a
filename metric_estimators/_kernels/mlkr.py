"""Numba kernel of the MLKR loss and gradient, one row of points at a time.

Plain arrays in, plain arrays out; the formulas are those of
:mod:`metric_estimators._problems.mlkr`.  Memory is ``O(n)`` per row (never
an ``n x n`` matrix): each row ``i`` computes its kernel weights, its
leave-one-out prediction and its gradient coefficients ``C_ij``, and
accumulates ``sum_j C_ij (x_i - x_j)(x_i - x_j)^T`` through
``rsum`` (``C 1 + C^T 1``) and ``T = sum_i x_i (sum_j C_ij x_j)^T``.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def mlkr_loss_grad(X, Z, y, want_grad):
    """Loss, predictions and ``S = X^T (diag(rsum) - C - C^T) X``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (n, r)
        Embedded points ``X @ L.T``.
    y : ndarray of shape (n,)
    want_grad : bool

    Returns
    -------
    loss : float
    yhat : ndarray of shape (n,)
    S : ndarray of shape (d, d)
        ``grad_L = 2 L S`` (zeros when ``want_grad`` is False).
    """
    n, d = X.shape
    r = Z.shape[1]
    yhat = np.empty(n)
    rsum = np.zeros(n)
    T = np.zeros((d, d))
    w = np.empty(n)
    c = np.empty(d)
    loss = 0.0
    for i in range(n):
        m = np.inf
        for j in range(n):
            if j == i:
                w[j] = np.inf
                continue
            s = 0.0
            for k in range(r):
                t = Z[i, k] - Z[j, k]
                s += t * t
            w[j] = s
            if s < m:
                m = s
        tot = 0.0
        num = 0.0
        for j in range(n):
            if j == i:
                w[j] = 0.0
                continue
            e = np.exp(m - w[j])
            w[j] = e
            tot += e
            num += e * y[j]
        yh = num / tot
        yhat[i] = yh
        err = yh - y[i]
        loss += err * err
        if not want_grad:
            continue
        for k in range(d):
            c[k] = 0.0
        coef = -2.0 * err / tot
        row = 0.0
        for j in range(n):
            if j == i:
                continue
            cij = coef * w[j] * (y[j] - yh)
            row += cij
            rsum[j] += cij
            for k in range(d):
                c[k] += cij * X[j, k]
        rsum[i] += row
        for a in range(d):
            xa = X[i, a]
            for b in range(d):
                T[a, b] += xa * c[b]
    S = np.zeros((d, d))
    if want_grad:
        for i in range(n):
            ri = rsum[i]
            for a in range(d):
                xa = ri * X[i, a]
                for b in range(d):
                    S[a, b] += xa * X[i, b]
        for a in range(d):
            for b in range(d):
                S[a, b] -= T[a, b] + T[b, a]
    return loss, yhat, S
