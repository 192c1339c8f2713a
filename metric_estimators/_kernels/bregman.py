"""Numba kernels for Bregman projections with Hildreth's correction (LogDet).

:func:`hildreth_correction` is the one Hildreth step of every divergence (the
cycle-constraint kernels of :mod:`metric_estimators._kernels.cycle_projections`
call it too); :func:`logdet_sweep` and :func:`logdet_violations` are the
LogDet pair-constraint kernels behind
:class:`metric_estimators.solvers.active_sets.LogDetPairConstraints` (ITML
and ProjectAndForget).  The kernels know nothing about solvers or
estimators: they take plain arrays and scalars and work in place.

Conventions
-----------
* One dual variable ``z >= 0`` per half-space constraint.  A projection
  computes the step ``theta`` that would land exactly on the constraint's
  boundary; :func:`hildreth_correction` turns it into the applied step
  ``c = min(z, theta)`` and the new dual ``z - c`` (Hildreth 1957; Censor &
  Zenios 1997).  ``theta < 0`` means the constraint is violated (the dual
  grows), ``theta > 0`` means it is slack (the dual, if positive, is given
  back).  Every divergence uses this one helper.
* LogDet (ITML, Davis et al., ICML 2007).  The matrix ``A`` is a full,
  C-contiguous, symmetric ``(d, d)`` float64 array updated in place.  The
  rank-one increment of entry (i, j) is computed as ``beta * (w_i * w_j)``,
  bitwise identical to that of (j, i), so ``A`` stays *exactly* symmetric.

LogDet projection (exact Bregman projection, as in the authors' MATLAB code;
the paper's Algorithm 1 prints ``delta/2 (1/p - gamma/xi)``, which equals the
exact step only for ``gamma = 1``).  For constraint ``c`` with difference
vector ``v``, sign ``delta = +1`` (similar: ``v^T A v <= xi_c``) or ``-1``
(dissimilar: ``v^T A v >= xi_c``)::

    p     = v^T A v
    theta = delta * gamma / (gamma + 1) * (1 / p - 1 / xi_c)
    alpha = min(lambda_c, theta)           # Hildreth correction
    lambda_c -= alpha
    beta  = delta * alpha / (1 - delta * alpha * p)
    xi_c  = xi_c / (1 + delta * alpha * xi_c / gamma)
    A    += beta * (A v) (A v)^T

This is the Bregman projection of ``(A, xi)`` onto the hyperplane
``v^T A v = xi_c`` for the divergence
``D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)``; ``gamma = inf`` gives hard
constraints (``xi`` fixed).  One projection costs one pass over ``A``: the
rank-one update of projection ``k`` is fused with the product ``A v`` needed
by projection ``k + 1`` (``A_new v' = (A + beta w w^T) v'`` computed row by
row while the row is in cache).  The arithmetic is ``5 d^2`` flops per
projection (multiply, FMA for the update; FMA for the product); exploiting
symmetry would bring it to about ``3 d^2``, but storing one triangle makes the
product need a reduction along rows, which is slower than this unit-stride,
reduction-free form (which LLVM vectorises without any fast-math flag;
measured: benchmarks/README.md, *Measurements behind choices in the code*).
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import P_TINY

__all__ = [
    "hildreth_correction",
    "sym_matvec",
    "logdet_sweep",
    "logdet_violations",
    "logdet_pair_sweep",
]


@njit(cache=True, nogil=True, inline="always")
def hildreth_correction(z, theta):
    """Return ``(c, z_new)``: the step ``c = min(z, theta)`` and ``z - c``.

    ``z >= 0`` is the constraint's dual variable, ``theta`` the step onto the
    constraint's boundary.  ``z_new >= 0`` always holds; when ``c == z`` the
    dual is set to exactly ``0.0`` (the constraint is then "forgettable").
    """
    if theta < z:
        return theta, z - theta
    return z, 0.0


@njit(cache=True, nogil=True)
def sym_matvec(A, v, out):
    """``out = A v`` for a symmetric ``A``, as ``sum_i v_i A[i, :]``.

    Row-wise axpy form, four rows at a time: unit stride and no reduction, so
    LLVM vectorises it without fast-math, and ``out`` is loaded and stored
    once per four rows of ``A``.
    """
    d = A.shape[0]
    for j in range(d):
        out[j] = 0.0
    i = 0
    while i + 4 <= d:
        r0, r1, r2, r3 = A[i], A[i + 1], A[i + 2], A[i + 3]
        v0, v1, v2, v3 = v[i], v[i + 1], v[i + 2], v[i + 3]
        for j in range(d):
            out[j] += (r0[j] * v0 + r1[j] * v1) + (r2[j] * v2 + r3[j] * v3)
        i += 4
    while i < d:
        row = A[i]
        vi = v[i]
        for j in range(d):
            out[j] += row[j] * vi
        i += 1


@njit(cache=True, nogil=True)
def _rank1_matvec(A, beta, w, vn, out):
    """``A += beta w w^T`` then ``out = A vn``, fused in one pass over ``A``.

    The increment of entry (i, j) is computed as ``beta * (w_i * w_j)``, which
    is bitwise identical for (j, i): a symmetric ``A`` stays exactly
    symmetric.  Rows are processed four at a time (see :func:`sym_matvec`).
    """
    d = A.shape[0]
    for j in range(d):
        out[j] = 0.0
    i = 0
    while i + 4 <= d:
        r0, r1, r2, r3 = A[i], A[i + 1], A[i + 2], A[i + 3]
        w0, w1, w2, w3 = w[i], w[i + 1], w[i + 2], w[i + 3]
        v0, v1, v2, v3 = vn[i], vn[i + 1], vn[i + 2], vn[i + 3]
        for j in range(d):
            wj = w[j]
            a0 = r0[j] + beta * (w0 * wj)
            a1 = r1[j] + beta * (w1 * wj)
            a2 = r2[j] + beta * (w2 * wj)
            a3 = r3[j] + beta * (w3 * wj)
            r0[j] = a0
            r1[j] = a1
            r2[j] = a2
            r3[j] = a3
            out[j] += (a0 * v0 + a1 * v1) + (a2 * v2 + a3 * v3)
        i += 4
    while i < d:
        row = A[i]
        wi = w[i]
        vi = vn[i]
        for j in range(d):
            a = row[j] + beta * (wi * w[j])
            row[j] = a
            out[j] += a * vi
        i += 1


@njit(cache=True, nogil=True)
def _rank1(A, beta, w):
    """``A += beta w w^T`` (exactly symmetric, see ``_rank1_matvec``)."""
    d = A.shape[0]
    for i in range(d):
        wi = w[i]
        row = A[i]
        for j in range(d):
            row[j] += beta * (wi * w[j])


@njit(cache=True, nogil=True)
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, nogil=True, inline="always")
def _slack_factors(gamma):
    """``(gamma / (gamma + 1), 1 / gamma)``; ``(1, 0)`` for hard constraints (``gamma = inf``)."""
    if np.isinf(gamma):
        return 1.0, 0.0
    return gamma / (gamma + 1.0), 1.0 / gamma


@njit(cache=True, nogil=True, inline="always")
def _project(p, s, c, xi, lam, gamma_proj, inv_gamma, dual_change,
             max_violation, n_updates):
    """Constraint ``c``'s LogDet projection, given ``p = v_c^T A v_c > 0``.

    ``s`` is its sign ``delta[c]``; its dual ``lam[c]`` and slack ``xi[c]``
    are updated in place.  Returns ``(beta, dual_change, max_violation,
    n_updates)``: the coefficient ``beta`` of the rank-one update
    ``A += beta (A v)(A v)^T`` (0 when the dual does not move) and the
    sweep's totals (:func:`logdet_sweep`'s returns) updated with this
    projection.  The one projection of :func:`logdet_sweep` and
    :func:`logdet_pair_sweep`.
    """
    x = xi[c]
    viol = s * (p - x) / x
    if viol > max_violation:
        max_violation = viol
    theta = s * gamma_proj * (1.0 / p - 1.0 / x)
    alpha, lam[c] = hildreth_correction(lam[c], theta)
    beta = 0.0
    if alpha != 0.0:
        dual_change += abs(alpha)
        sa = s * alpha
        beta = sa / (1.0 - sa * p)
        xi[c] = x / (1.0 + sa * x * inv_gamma)
        n_updates += 1
    return beta, dual_change, max_violation, n_updates


@njit(cache=True, nogil=True)
def logdet_sweep(A, V, delta, xi, lam, idx, gamma, w, wn):
    """One cyclic sweep of LogDet projections over the constraints ``idx``.

    Parameters
    ----------
    A : float64 array (d, d), C-contiguous
        Current symmetric matrix, updated in place.
    V : float64 array (m, d), C-contiguous
        Row ``c`` is the difference vector ``v_c = x_i - x_j`` of constraint c.
    delta : float64 array (m,)
        ``+1`` for ``v^T A v <= xi`` (similar), ``-1`` for ``>=`` (dissimilar).
    xi : float64 array (m,)
        Slack targets, updated in place (unchanged if ``gamma`` is infinite).
    lam : float64 array (m,)
        Dual variables (``>= 0``), updated in place.
    idx : int64 array (k,)
        Constraints to project onto, in this order (any subset of
        ``range(m)``, repeats allowed): the full set, or an active set.
    gamma : float
        Slack weight, ``> 0``; ``np.inf`` for hard constraints.
    w, wn : float64 arrays (d,)
        Work space.

    Returns
    -------
    dual_change : float
        ``sum |lambda_new - lambda_old|`` over the sweep (sum of ``|alpha|``).
    max_violation : float
        Largest relative violation ``delta (p - xi) / xi`` met before a
        projection (0 if none was violated).
    n_updates : int
        Number of projections that changed ``A`` (``alpha != 0``).
    """
    n = idx.shape[0]
    if n == 0:
        return 0.0, 0.0, 0
    gamma_proj, inv_gamma = _slack_factors(gamma)
    sym_matvec(A, V[idx[0]], w)
    dual_change = 0.0
    max_violation = 0.0
    n_updates = 0
    for k in range(n):
        c = idx[k]
        v = V[c]
        p = _dot(v, w)
        beta = 0.0
        if p > P_TINY:
            beta, dual_change, max_violation, n_updates = _project(
                p, delta[c], c, xi, lam, gamma_proj, inv_gamma, dual_change,
                max_violation, n_updates)
        if k + 1 < n:
            vn = V[idx[k + 1]]
            if beta != 0.0:
                _rank1_matvec(A, beta, w, vn, wn)
            else:
                sym_matvec(A, vn, wn)
            w, wn = wn, w
        elif beta != 0.0:
            _rank1(A, beta, w)
    return dual_change, max_violation, n_updates


@njit(cache=True, nogil=True)
def logdet_violations(A, V, delta, xi, idx, out):
    """``out[k] = delta (v^T A v - xi) / xi`` for constraint ``idx[k]``.

    Nothing is modified but ``out``.  Positive values are violations.  The
    check behind the LogDet oracles and active set (no BLAS: its time does
    not depend on how many threads other processes leave free).
    """
    d = A.shape[0]
    w = np.empty(d)
    for k in range(idx.shape[0]):
        c = idx[k]
        v = V[c]
        sym_matvec(A, v, w)
        p = _dot(v, w)
        out[k] = delta[c] * (p - xi[c]) / xi[c]


@njit(cache=True, nogil=True)
def _pair_diff(X, i, j, out):
    """``out = X[i] - X[j]``."""
    a = X[i]
    b = X[j]
    for k in range(out.shape[0]):
        out[k] = a[k] - b[k]


@njit(cache=True, nogil=True)
def logdet_pair_sweep(A, X, I, J, delta, xi, lam, order, gamma, w, wn, v,
                      vn):
    """:func:`logdet_sweep` over pairs of points given by their indices.

    Constraint ``c`` is the pair ``(I[c], J[c])``: its difference vector
    ``v_c = X[I[c]] - X[J[c]]`` is formed when it is projected onto, not
    stored (an active set of millions of pairs then holds two indices, a
    sign, a slack and a dual per pair).  The projections, their order and
    the returns are those of :func:`logdet_sweep` on the stacked
    difference vectors, bit for bit.

    Parameters
    ----------
    A : float64 array (d, d), C-contiguous
        Symmetric matrix, updated in place.
    X : float64 array (n, d), C-contiguous
        The points.
    I, J : int32 arrays (m,)
        The pairs.
    delta : int8 array (m,)
        ``+1`` (similar, ``<=``) or ``-1`` (dissimilar, ``>=``).
    xi, lam : float64 arrays (m,)
        Slacks and duals, updated in place.
    order : int array (k,)
        Constraints to project onto, in this order.
    gamma : float
        Slack weight, ``np.inf`` for hard constraints.
    w, wn, v, vn : float64 arrays (d,)
        Work space.

    Returns
    -------
    dual_change, max_violation, n_updates
        As :func:`logdet_sweep`.
    """
    n = order.shape[0]
    if n == 0:
        return 0.0, 0.0, 0
    gamma_proj, inv_gamma = _slack_factors(gamma)
    c = order[0]
    _pair_diff(X, I[c], J[c], v)
    sym_matvec(A, v, w)
    dual_change = 0.0
    max_violation = 0.0
    n_updates = 0
    for k in range(n):
        c = order[k]
        p = _dot(v, w)
        beta = 0.0
        if p > P_TINY:
            beta, dual_change, max_violation, n_updates = _project(
                p, float(delta[c]), c, xi, lam, gamma_proj, inv_gamma, dual_change,
                max_violation, n_updates)
        if k + 1 < n:
            cn = order[k + 1]
            _pair_diff(X, I[cn], J[cn], vn)
            if beta != 0.0:
                _rank1_matvec(A, beta, w, vn, wn)
            else:
                sym_matvec(A, vn, wn)
            w, wn = wn, w
            v, vn = vn, v
        elif beta != 0.0:
            _rank1(A, beta, w)
    return dual_change, max_violation, n_updates
