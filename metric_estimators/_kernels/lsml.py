"""numba kernels of LSML's squared-residual loss over quadruplets.

A quadruplet ``q = (a, b, c, d)`` is given by its two difference vectors
``V[q] = x_a - x_b`` and ``U[q] = x_c - x_d``; with the (unsquared)
distances ``d_ab = sqrt(V M V)`` and ``d_cd = sqrt(U M U)`` its residual is
``r = d_ab - d_cd`` and its loss ``w_q * max(r, 0)^2``.  The kernels know
nothing about the optimiser.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)

_OPTS = dict(cache=True, nogil=True)
_FAST = dict(_OPTS, fastmath={"reassoc", "contract"})


@njit(**_FAST)
def _quad_form(M, v):
    d = v.shape[0]
    s = 0.0
    for i in range(d):
        t = 0.0
        for j in range(d):
            t += M[i, j] * v[j]
        s += v[i] * t
    return s if s > 0.0 else 0.0


@njit(**_FAST)
def quadruplet_residuals(V, U, M, weights, coef_v, coef_u):
    """Loss terms and gradient coefficients of every quadruplet.

    Returns the array of losses ``w_q max(r_q, 0)^2`` and writes the
    coefficients of the gradient ``sum_q (coef_v[q] V_q V_q^T - coef_u[q]
    U_q U_q^T)``: ``coef_v = w r / d_ab`` and ``coef_u = w r / d_cd`` for
    active quadruplets (``r > 0``), 0 otherwise (a zero distance, where
    the square root is not differentiable, has a zero difference vector
    or lies in the null space of ``M`` and contributes 0).  Serial: the
    quadruplet sets of LSML are small (thousands), and a parallel kernel's
    thread-pool start-up would cost more than it saves (measured:
    benchmarks/README.md, *Measurements behind choices in the code*).
    """
    n = V.shape[0]
    loss = np.empty(n)
    for q in range(n):
        dab = np.sqrt(_quad_form(M, V[q]))
        dcd = np.sqrt(_quad_form(M, U[q]))
        r = dab - dcd
        if r > 0.0:
            loss[q] = weights[q] * r * r
            coef_v[q] = weights[q] * r / dab if dab > 0.0 else 0.0
            coef_u[q] = weights[q] * r / dcd if dcd > 0.0 else 0.0
        else:
            loss[q] = 0.0
            coef_v[q] = 0.0
            coef_u[q] = 0.0
    return loss


@njit(**_FAST)
def quadruplet_gradient(V, U, coef_v, coef_u, G):
    """``G = sum_q coef_v[q] V_q V_q^T - coef_u[q] U_q U_q^T`` over active quadruplets.

    Serial, in quadruplet order (bit-reproducible); inactive quadruplets
    (both coefficients 0) are skipped.  Returns the number of active ones.
    """
    n, d = V.shape
    G[:, :] = 0.0
    n_active = 0
    for q in range(n):
        cv = coef_v[q]
        cu = coef_u[q]
        if cv == 0.0 and cu == 0.0:
            continue
        n_active += 1
        for i in range(d):
            vi = cv * V[q, i]
            ui = cu * U[q, i]
            for j in range(i + 1):
                G[i, j] += vi * V[q, j] - ui * U[q, j]
    for i in range(d):
        for j in range(i):
            G[j, i] = G[i, j]
    return n_active
