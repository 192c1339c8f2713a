"""The numpy twin of :mod:`metric_estimators._kernels.bregman` (LogDet projections).

Same functions, arguments, in-place updates and returns as the kernels.
Where the results differ: they agree with the kernels' to rounding, not bit
for bit.

* :func:`logdet_sweep` makes the kernel's projections one after the other
  (rank-one updates of one matrix do not commute, so no batch of them can
  be made at once), each a few calls of BLAS (through
  :mod:`scipy.linalg.blas`, whose calls cost a fraction of a numpy
  operation's on vectors this short): ``ddot`` for ``p = v^T A v``,
  ``dsyr`` for the rank-one update and ``dsymv`` for the next ``A v``.
  Those read and update one triangle of ``A``; the other is filled from it
  at the end of the sweep, so ``A`` leaves *exactly* symmetric, as the
  kernel's.  BLAS sums in its own order: values agree with the kernel's to
  rounding.  The work spaces ``w``, ``wn`` are not used.
* :func:`logdet_violations` and :func:`sym_matvec` are one vectorised
  expression each (BLAS products: to rounding).
* :func:`logdet_pair_sweep` forms the difference vectors of the pairs it
  visits (exactly the kernel's) and makes :func:`logdet_sweep` over them:
  to rounding, as that twin.
* :func:`hildreth_correction` is the kernel's, bit for bit.
"""

import numpy as np
from scipy.linalg import blas

from .._constants import P_TINY

__all__ = [
    "hildreth_correction",
    "sym_matvec",
    "logdet_sweep",
    "logdet_violations",
    "logdet_pair_sweep",
]

_ddot = blas.ddot
_dsyr = blas.dsyr
_dsymv = blas.dsymv


def hildreth_correction(z, theta):
    """Return ``(c, z_new)``: the step ``c = min(z, theta)`` and ``z - c``."""
    if theta < z:
        return theta, z - theta
    return z, 0.0


def sym_matvec(A, v, out):
    """``out = A v`` for a symmetric ``A``."""
    np.dot(A, v, out=out)


def logdet_sweep(A, V, delta, xi, lam, idx, gamma, w, wn):
    """One cyclic sweep of LogDet projections over the constraints ``idx``.

    The kernel's arguments and returns
    (:func:`metric_estimators._kernels.bregman.logdet_sweep`): ``A``, ``xi``
    and ``lam`` updated in place; returns ``(dual_change, max_violation,
    n_updates)``.  ``w`` and ``wn`` are not used.
    """
    n = idx.shape[0]
    if n == 0:
        return 0.0, 0.0, 0
    if not (A.flags.c_contiguous and A.dtype == np.float64):
        # BLAS would update a copy
        raise ValueError("A must be a C-contiguous float64 array.")
    if np.isinf(gamma):
        gamma_proj, inv_gamma = 1.0, 0.0
    else:
        gamma_proj, inv_gamma = gamma / (gamma + 1.0), 1.0 / gamma
    # A is C-contiguous and symmetric: its transpose is the same matrix in
    # Fortran order, which BLAS updates in place (its upper triangle, the
    # lower one of A)
    F = A.T
    d = A.shape[0]
    rows = list(V[idx])
    # Python floats in the loop (numpy scalars are slower); written back
    # below, repeated constraints included
    lam_l, xi_l = lam.tolist(), xi.tolist()
    ddot, dsyr, dsymv = _ddot, _dsyr, _dsymv
    dual_change = 0.0
    max_violation = 0.0
    n_updates = 0
    updated = False
    v = rows[0]
    w = dsymv(1.0, F, v)
    rows.append(None)
    for c, s, vn in zip(idx.tolist(), delta[idx].tolist(), rows[1:]):
        p = ddot(v, w)
        if p > P_TINY:
            x = xi_l[c]
            viol = s * (p - x) / x
            if viol > max_violation:
                max_violation = viol
            theta = s * gamma_proj * (1.0 / p - 1.0 / x)
            z = lam_l[c]
            if theta < z:
                alpha = theta
                lam_l[c] = z - theta
            else:
                alpha = z
                lam_l[c] = 0.0
            if alpha != 0.0:
                dual_change += abs(alpha)
                sa = s * alpha
                xi_l[c] = x / (1.0 + sa * x * inv_gamma)
                n_updates += 1
                updated = True
                # A += beta w w^T (positional arguments: faster to call)
                dsyr(sa / (1.0 - sa * p), w, 0, 1, 0, d, F, 1)
        if vn is not None:
            v = vn
            w = dsymv(1.0, F, v)
    if updated:
        # the upper triangle of F is the lower one of A: mirror it
        upper = np.triu_indices(A.shape[0], 1)
        A[upper] = A.T[upper]
    lam[:] = lam_l
    xi[:] = xi_l
    return dual_change, max_violation, n_updates


def logdet_violations(A, V, delta, xi, idx, out):
    """``out[k] = delta (v^T A v - xi) / xi`` for constraint ``idx[k]``."""
    if idx.shape[0] == 0:
        return
    Vs = V[idx]
    p = np.einsum("ij,ij->i", Vs @ A, Vs)
    x = xi[idx]
    out[:idx.shape[0]] = delta[idx] * (p - x) / x


def logdet_pair_sweep(A, X, I, J, delta, xi, lam, order, gamma, w, wn, v,
                      vn):
    """:func:`logdet_sweep` over pairs of points given by their indices.

    The kernel's arguments and returns
    (:func:`metric_estimators._kernels.bregman.logdet_pair_sweep`); ``w``,
    ``wn``, ``v``, ``vn`` are not used.
    """
    if order.shape[0] == 0:
        return 0.0, 0.0, 0
    order = np.asarray(order, dtype=np.int64)
    # the visited pairs only, renumbered: repeats share their slack and dual
    used, local = np.unique(order, return_inverse=True)
    V = X[I[used]] - X[J[used]]
    xs, ls = xi[used], lam[used]
    out = logdet_sweep(A, V, delta[used].astype(np.float64), xs, ls,
                       local.astype(np.int64), gamma, w, wn)
    xi[used] = xs
    lam[used] = ls
    return out
