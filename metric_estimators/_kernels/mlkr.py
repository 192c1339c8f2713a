"""Numba kernel of the MLKR loss and gradient coefficients, one block of rows.

Plain arrays in, plain arrays out; the formulas are those of
:mod:`metric_estimators._problems.mlkr`.  The caller computes the block's
inner products ``G = Z[rows] @ Z.T`` and, after this kernel, the product
``C @ X`` with BLAS; the kernel does everything element-wise in one pass
over the block: squared distances, the leave-one-out softmax weights, the
predictions, the loss and the gradient coefficients ``C_ij``, written over
``G`` in place, with their row and column sums.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

#: ``np.exp(t) == 0.0`` exactly for every float64 ``t <= EXP_ZERO`` (the
#: smallest subnormal is ``exp(-744.44)``; below ``-745.14`` it rounds to 0)
EXP_ZERO = -746.0


@njit(cache=True, nogil=True)
def mlkr_block(G, sq, y, start, yhat, rsum, want_grad):
    """Loss of the rows ``start:start + len(G)``; ``G`` becomes ``C``.

    Parameters
    ----------
    G : ndarray of shape (b, n)
        ``Z[start:start + b] @ Z.T`` (embedded inner products); overwritten
        by ``C_ij = d loss / d D_ij`` when ``want_grad`` (else left as is).
    sq : ndarray of shape (n,)
        Squared norms of the embedded points.
    y : ndarray of shape (n,)
    start : int
        Index of the block's first row.
    yhat : ndarray of shape (n,)
        Receives the leave-one-out predictions of the block's rows.
    rsum : ndarray of shape (n,)
        ``C 1 + C^T 1`` is accumulated into it.
    want_grad : bool

    Returns
    -------
    loss : float
        Sum of the squared errors of the block's rows.
    """
    b, n = G.shape
    loss = 0.0
    for r in range(b):
        i = start + r
        row = G[r]
        sqi = sq[i]
        m = np.inf
        for j in range(n):
            dij = sqi + sq[j] - 2.0 * row[j]
            if dij < 0.0:
                dij = 0.0
            row[j] = dij
            if j != i and dij < m:
                m = dij
        tot = 0.0
        num = 0.0
        for j in range(n):
            if j == i:
                row[j] = 0.0
                continue
            t = m - row[j]
            # exp underflows to exactly 0.0 far before this; skipping the call
            # gives the same bits, and a large learned metric puts most pairs
            # there (measured: benchmarks/README.md, *Measurements behind choices in the code*)
            e = np.exp(t) if t > EXP_ZERO else 0.0
            row[j] = e
            tot += e
            num += e * y[j]
        yh = num / tot
        yhat[i] = yh
        err = yh - y[i]
        loss += err * err
        if not want_grad:
            continue
        coef = -2.0 * err / tot
        s = 0.0
        for j in range(n):
            cij = coef * row[j] * (y[j] - yh)
            row[j] = cij
            s += cij
            rsum[j] += cij
        rsum[i] += s
    return loss
