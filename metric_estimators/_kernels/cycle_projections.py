"""numba kernels: Hildreth projections onto the metric polytope (Project and Forget).

One pass of Bregman projections with Hildreth's correction over a block of
cycle constraints ``x_e - sum_{f in P} x_f <= 0`` (stored in the CSR form of
:mod:`metric_estimators._kernels.edges`) for the weighted squared L2
objective (:func:`project_paths_l2`, and :func:`project_triangles_unit` for
triangles under a uniform weight) and for the KL divergence
(:func:`project_paths_kl`), and over the bounds ``x_e >= 0``
(:func:`project_nonnegative`).  Each pass returns the largest
complementary-slackness residual it met (:func:`slackness_residual`).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from .bregman import hildreth_correction

__all__ = [
    "prefetch",
    "project_nonnegative",
    "project_paths_kl",
    "project_paths_l2",
    "project_triangles_l2",
    "project_triangles_unit",
    "slackness_residual",
]


#: How many constraints ahead a pass prefetches the iterate's entries: a
#: pass is bound by the latency of its random reads of ``x`` (an edge
#: vector of tens of MB at n = 2000, far beyond the L2 cache), which the
#: constraint lists give away in advance
PREFETCH_AHEAD = 32


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to load ``arr[idx]`` into the cache (LLVM's ``llvm.prefetch``).

    A prefetch for writing, with high temporal locality; no effect on results, and
    no bounds check (``idx`` must be a valid index of the 1-D ``arr``).
    """
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty,
                                            "llvm.prefetch.p0i8")
        # (address, write = 1: the entry is updated, locality 3 = keep in
        # every cache level, data = 1)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def slackness_residual(s, z):
    """Complementary-slackness residual of ``a^T x - b = s`` with dual ``z``.

    ``|s|`` for a constraint with a positive dual (it must be tight), the
    violation ``max(s, 0)`` for the others.
    """
    return abs(s) if z > 0.0 else max(s, 0.0)


@njit(cache=True, nogil=True)
def project_paths_l2(x, winv, cons_edge, ptr, path, z, start, stop):
    """One Hildreth pass over cycle constraints ``start <= c < stop``.

    Weighted squared L2 (``f(x) = 1/2 sum_e w_e x_e^2``): the projection of
    ``x`` onto ``x_e - sum_P x_f <= 0`` moves ``x_e`` by ``-delta / w_e`` and
    every path edge by ``+delta / w_f``, with Hildreth's correction
    (:func:`metric_estimators._kernels.bregman.hildreth_correction`)
    ``delta = max(theta, -z_c)``, ``theta = (x_e - sum_P x_f) /
    (1/w_e + sum_P 1/w_f)``; the dual becomes ``z_c + delta >= 0``.

    The entries of ``x`` and ``winv`` that constraint ``c +
    PREFETCH_AHEAD`` reads are prefetched while ``c`` is projected.

    Returns
    -------
    residual : float
        Largest complementary-slackness residual met during the pass:
        ``|x_e - sum_P x_f|`` for constraints with a positive dual, the
        violation ``max(0, x_e - sum_P x_f)`` for the others.
    """
    resid = 0.0
    for c in range(start, stop):
        ahead = c + PREFETCH_AHEAD
        if ahead < stop:
            ea = cons_edge[ahead]
            prefetch(x, ea)
            prefetch(winv, ea)
            for p in range(ptr[ahead], ptr[ahead + 1]):
                prefetch(x, path[p])
                prefetch(winv, path[p])
        e = cons_edge[c]
        s = x[e]
        den = winv[e]
        for p in range(ptr[c], ptr[c + 1]):
            f = path[p]
            s -= x[f]
            den += winv[f]
        zc = z[c]
        r = slackness_residual(s, zc)
        if r > resid:
            resid = r
        # Hildreth: step c = min(z, -theta) towards the half-space's
        # interior, i.e. the primal moves by delta = -c along -W^-1 a
        step, z[c] = hildreth_correction(zc, -s / den)
        delta = -step
        if delta != 0.0:
            x[e] -= delta * winv[e]
            for p in range(ptr[c], ptr[c + 1]):
                f = path[p]
                x[f] += delta * winv[f]
    return resid


@njit(cache=True, nogil=True)
def project_triangles_l2(x, winv, cons_edge, path, z, start, stop):
    """:func:`project_paths_l2` for triangles stored with a fixed stride (no ``ptr``).

    Constraint ``c`` is ``x_e - x_f - x_g <= 0`` with ``f = path[2c]``, ``g =
    path[2c + 1]``; the same operations in the same order as
    :func:`project_paths_l2`, hence the same iterates bit for bit.
    """
    resid = 0.0
    for c in range(start, stop):
        ahead = c + PREFETCH_AHEAD
        if ahead < stop:
            ea = cons_edge[ahead]
            fa = path[2 * ahead]
            ga = path[2 * ahead + 1]
            prefetch(x, ea)
            prefetch(winv, ea)
            prefetch(x, fa)
            prefetch(winv, fa)
            prefetch(x, ga)
            prefetch(winv, ga)
        e = cons_edge[c]
        f = path[2 * c]
        g = path[2 * c + 1]
        s = x[e]
        den = winv[e]
        s -= x[f]
        den += winv[f]
        s -= x[g]
        den += winv[g]
        zc = z[c]
        r = slackness_residual(s, zc)
        if r > resid:
            resid = r
        step, z[c] = hildreth_correction(zc, -s / den)
        delta = -step
        if delta != 0.0:
            x[e] -= delta * winv[e]
            x[f] += delta * winv[f]
            x[g] += delta * winv[g]
    return resid


@njit(cache=True, nogil=True)
def project_triangles_unit(x, winv, cons_edge, path, z, start, stop):
    """:func:`project_paths_l2` for triangles under a uniform weight.

    Every constraint is ``x_e - x_f - x_g <= 0`` with ``f = path[2c]``,
    ``g = path[2c + 1]``, and every variable has the same inverse weight
    ``winv``: the projection moves the three entries by the same amount and
    needs no weight loads and no division -- three times fewer random memory
    accesses per constraint than the general kernel, and the same iterates
    (up to rounding).  The entries of ``x`` that constraint ``c +
    PREFETCH_AHEAD`` reads are prefetched while ``c`` is projected.
    """
    resid = 0.0
    third = 1.0 / (3.0 * winv)
    for c in range(start, stop):
        ahead = c + PREFETCH_AHEAD
        if ahead < stop:
            prefetch(x, cons_edge[ahead])
            prefetch(x, path[2 * ahead])
            prefetch(x, path[2 * ahead + 1])
        e = cons_edge[c]
        f = path[2 * c]
        g = path[2 * c + 1]
        s = x[e] - x[f] - x[g]
        zc = z[c]
        r = slackness_residual(s, zc)
        if r > resid:
            resid = r
        step, z[c] = hildreth_correction(zc, -s * third)
        d = step * winv
        x[e] += d
        x[f] -= d
        x[g] -= d
    return resid


@njit(cache=True, nogil=True)
def project_paths_kl(x, cons_edge, ptr, path, z, start, stop):
    """One Hildreth-Bregman pass for the KL divergence over cycle constraints.

    ``f(x) = sum_e x_e log x_e - x_e`` (so ``D_f(x, d)`` is the generalised
    Kullback-Leibler divergence ``sum x log(x / d) - x + d``, ``x > 0``).
    The Bregman projection of ``x`` onto ``x_e - S <= 0``, ``S = sum_P x_f``,
    moves ``log x`` along the constraint normal: ``x_e <- x_e exp(c)``,
    ``x_f <- x_f exp(-c)``; it is tight for ``c = theta = log(S / x_e) / 2``
    (closed form because every coefficient is +-1).  With the dual ``z_c``
    the step is Hildreth's ``c = min(z_c, theta)`` and ``z_c <- z_c - c``
    (Bregman 1967; Censor & Zenios, *Parallel Optimization*, 1997, ch. 6).
    Iterates stay positive.

    Returns the complementary-slackness residual as :func:`project_paths_l2`
    (in the units of ``x``).
    """
    resid = 0.0
    for c in range(start, stop):
        e = cons_edge[c]
        xe = x[e]
        S = 0.0
        for p in range(ptr[c], ptr[c + 1]):
            S += x[path[p]]
        sres = xe - S
        zc = z[c]
        r = slackness_residual(sres, zc)
        if r > resid:
            resid = r
        theta = 0.5 * np.log(S / xe)
        step, z[c] = hildreth_correction(zc, theta)
        if step != 0.0:
            x[e] = xe * np.exp(step)
            q = np.exp(-step)
            for p in range(ptr[c], ptr[c + 1]):
                f = path[p]
                x[f] *= q
    return resid


@njit(cache=True, nogil=True)
def project_nonnegative(x, winv, z):
    """Hildreth pass over ``-x_e <= 0`` for every edge; returns the residual.

    An edge with a zero dual and ``x_e >= 0`` (almost every edge) is left
    as it is: its residual and step are exactly 0, so it is skipped before
    the division.
    """
    resid = 0.0
    for e in range(x.shape[0]):
        zc = z[e]
        if zc == 0.0 and x[e] >= 0.0:
            continue
        s = -x[e]
        r = slackness_residual(s, zc)
        if r > resid:
            resid = r
        step, z[e] = hildreth_correction(zc, -s / winv[e])
        x[e] -= step * winv[e]
    return resid
