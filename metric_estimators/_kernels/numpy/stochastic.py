"""numpy twin of :mod:`metric_estimators._kernels.stochastic`: one AdaGrad-RDA step.

Same function, arguments and in-place outputs, and the same values bit
for bit (a zero may come out as ``-0.0``), in a few vectorised
operations: small problems take thousands of steps, each costing mostly
the operations' call overhead.
"""

import numpy as np

__all__ = ["adagrad_rda_update"]


def adagrad_rda_update(grad, grad_sum, grad_sq, w, t, step, l1, nonnegative):
    """One AdaGrad regularised-dual-averaging step.

    See :func:`metric_estimators._kernels.stochastic.adagrad_rda_update`.
    """
    grad_sum += grad
    grad_sq += grad * grad
    coef = np.sqrt(grad_sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        # step * t / h: inf where h == 0, where grad_sum == 0 too
        np.divide(step * t, coef, out=coef)
        gbar = grad_sum / t
        if nonnegative:
            # -l1 - gbar is -(gbar + l1) exactly; coef * val <= 0 (or NaN,
            # inf * -0.0 where h == 0 and l1 == 0) wherever val <= 0, so the
            # positive part (fmax drops NaN) is 0 there, coef * val elsewhere
            np.subtract(-l1, gbar, out=gbar)
            coef *= gbar
            np.fmax(coef, 0.0, out=w)
        else:
            mag = np.abs(gbar) - l1
            w[:] = np.where(mag > 0.0, -np.sign(gbar) * coef * mag, 0.0)
    # where h == 0 and nonnegative=False: mag = -l1 <= 0 gives 0
