"""numba kernels of the stochastic solvers: one update of the iterate per call."""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def adagrad_rda_update(grad, grad_sum, grad_sq, w, t, step, l1, nonnegative):
    """One AdaGrad regularised-dual-averaging step (Duchi, Hazan & Singer 2011).

    Accumulates ``grad`` into ``grad_sum`` and ``grad_sq`` (``t`` gradients
    so far, this one included) and sets ``w`` to the minimiser of
    ``<g_bar, w> + l1 ||w||_1 + <w, H w> / (2 step t)`` with ``g_bar`` the
    mean gradient and ``H = diag(sqrt(grad_sq))`` (over ``w >= 0`` when
    ``nonnegative``).
    """
    K = w.shape[0]
    for k in range(K):
        g = grad[k]
        grad_sum[k] += g
        grad_sq[k] += g * g
        h = np.sqrt(grad_sq[k])
        if h == 0.0:
            w[k] = 0.0
            continue
        gbar = grad_sum[k] / t
        if nonnegative:
            val = -(gbar + l1)
            w[k] = step * t / h * val if val > 0.0 else 0.0
        else:
            mag = abs(gbar) - l1
            if mag > 0.0:
                w[k] = -np.sign(gbar) * step * t / h * mag
            else:
                w[k] = 0.0
