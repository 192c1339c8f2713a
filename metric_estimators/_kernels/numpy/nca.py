"""numpy twin of :mod:`metric_estimators._kernels.nca`: NCA's softmax rows and gradient weights.

Same function, arguments, in-place output and return value as
:func:`metric_estimators._kernels.nca.softmax_weights`, in whole-matrix
numpy operations.  Equal to rounding, not bit for bit: the row sums run in
numpy's pairwise order where the kernel adds in index order.
"""

import numpy as np

__all__ = ["softmax_weights"]


def softmax_weights(G, sq, y):
    """Overwrite ``G`` with the weights ``W``; return ``p`` (one per row).

    See :func:`metric_estimators._kernels.nca.softmax_weights`: ``G`` holds
    the Gram matrix ``Z Z^T`` on entry, ``sq`` its diagonal and ``y`` the
    class indices; row ``i`` of ``W`` is ``p_ij ([y_j = y_i] - p_i)``.
    """
    n = G.shape[0]
    same = y[:, None] == y[None, :]
    # squared distances, clipped at 0 as the kernel does; the diagonal is
    # excluded from the softmax
    G *= -2.0
    G += sq[:, None]
    G += sq[None, :]
    np.maximum(G, 0.0, out=G)
    diag = np.arange(n)
    G[diag, diag] = np.inf
    m = G.min(axis=1, keepdims=True)
    np.subtract(m, G, out=G)
    np.exp(G, out=G)
    G /= G.sum(axis=1, keepdims=True)
    p = np.where(same, G, 0.0).sum(axis=1)
    np.multiply(G, np.where(same, 1.0 - p[:, None], -p[:, None]), out=G)
    return p
