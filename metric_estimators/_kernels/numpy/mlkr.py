"""numpy twin of :mod:`metric_estimators._kernels.mlkr`: one block of MLKR's rows.

Same function, arguments, in-place outputs and return value as
:func:`metric_estimators._kernels.mlkr.mlkr_block`, in whole-block numpy
operations.  Equal to rounding, not bit for bit: the row sums run in
another order, and a negligible exponential (``exp(t)`` for ``t <= -600``,
below ``1e-260``) is taken as exactly 0, where the kernel keeps it down to
the last subnormal (``t = -746``).  Each row's sum holds a term equal to 1
(its nearest point), so such a term changes no sum, and it changes a
gradient coefficient by less than ``1e-260`` times that row's largest.
Computing them costs much: numpy's vectorised exponential takes a slow
path for results near the subnormal range, and products with subnormals
run tens of times slower than with normal numbers.
"""

import numpy as np

__all__ = ["mlkr_block"]

#: exponentials of arguments at or below this are taken as 0
_EXP_CUT = -600.0
#: elements of one chunk of rows (256 kB of float64: the chunk's passes
#: stay in the CPU's cache, where a whole block's would not)
_CHUNK_ELEMENTS = 1 << 15


def mlkr_block(G, sq, y, start, yhat, rsum, want_grad):
    """Loss of the rows ``start:start + len(G)``; ``G`` becomes ``C``.

    See :func:`metric_estimators._kernels.mlkr.mlkr_block`.  The rows go
    in chunks of :data:`_CHUNK_ELEMENTS` elements.
    """
    b, n = G.shape
    step = max(1, _CHUNK_ELEMENTS // max(n, 1))
    loss = 0.0
    col_sum = np.zeros(n) if want_grad else None
    for c0 in range(0, b, step):
        c1 = min(b, c0 + step)
        rows = np.arange(start + c0, start + c1)
        # D = max(sq_i + sq_j - 2 G, 0), as the kernel's (sq_i + sq_j) - 2 G
        E = np.multiply(G[c0:c1], -2.0)
        np.add(sq[rows, None] + sq[None, :], E, out=E)
        np.maximum(E, 0.0, out=E)
        E[np.arange(c1 - c0), rows] = np.inf     # j == i never counts
        m = E.min(axis=1)
        # E = exp(m - D), exactly 0 where negligible (see the module docstring)
        np.subtract(m[:, None], E, out=E)
        keep = E > _EXP_CUT
        np.maximum(E, _EXP_CUT, out=E)
        np.exp(E, out=E)
        E *= keep
        tot = E.sum(axis=1)
        yh = (E @ y) / tot
        yhat[rows] = yh
        err = yh - y[rows]
        loss += float(err @ err)
        if not want_grad:
            continue
        # C_ij = (-2 err_i / tot_i) E_ij (y_j - yhat_i), over G's rows
        C = G[c0:c1]
        np.multiply(E, y[None, :] - yh[:, None], out=C)
        C *= (-2.0 * err / tot)[:, None]
        col_sum += C.sum(axis=0)
        rsum[rows] += C.sum(axis=1)
    if want_grad:
        rsum += col_sum
    return loss
