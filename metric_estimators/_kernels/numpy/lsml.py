"""numpy twin of :mod:`metric_estimators._kernels.lsml`: LSML's quadruplet residuals.

Same functions, arguments, in-place outputs and return values, vectorised
over the quadruplets.  Equal to rounding: the quadratic forms and the
gradient's sum run in another order (BLAS products); the gradient is
exactly symmetric, as the kernel's.
"""

import numpy as np

__all__ = ["quadruplet_gradient", "quadruplet_residuals"]


def quadruplet_residuals(V, U, M, weights, coef_v, coef_u):
    """Loss terms of every quadruplet; the gradient's coefficients into ``coef_v``, ``coef_u``.

    See :func:`metric_estimators._kernels.lsml.quadruplet_residuals`.
    """
    dab = np.sqrt(np.maximum(np.einsum("ij,ij->i", V @ M, V), 0.0))
    dcd = np.sqrt(np.maximum(np.einsum("ij,ij->i", U @ M, U), 0.0))
    r = dab - dcd
    active = r > 0.0
    wr = np.where(active, weights * r, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        coef_v[:] = np.where(active & (dab > 0.0), wr / dab, 0.0)
        coef_u[:] = np.where(active & (dcd > 0.0), wr / dcd, 0.0)
    return wr * np.where(active, r, 0.0)


def quadruplet_gradient(V, U, coef_v, coef_u, G):
    """``G = sum_q coef_v[q] V_q V_q^T - coef_u[q] U_q U_q^T``; the number of active quadruplets.

    See :func:`metric_estimators._kernels.lsml.quadruplet_gradient`.
    """
    active = (coef_v != 0.0) | (coef_u != 0.0)
    Va, Ua = V[active], U[active]
    S = (Va.T * coef_v[active]) @ Va - (Ua.T * coef_u[active]) @ Ua
    np.add(S, S.T, out=G)
    G *= 0.5
    return int(np.count_nonzero(active))
