"""numba kernels: the pair constraints of the W-weighted correlation-clustering LP.

Veldt, Gleich, Wirth & Saunderson ("Metric-constrained optimization for graph
clustering algorithms", SIAM J. Math. Data Sci. 2019) solve the LP relaxation
``min sum_e w_e f_e  s.t. x metric, f_e >= |x_e - d_e|`` through the
quadratically regularised problem ::

    minimise  w^T f + 1/(2 gamma) (x^T W x + f^T W f),   W = diag(w)

i.e. the W-weighted L2 projection of ``(x, f) = (0, -gamma)`` onto the
feasible set.  Hildreth's method on a constraint ``a^T v <= b`` moves
``v <- v - theta W^-1 a`` with ``theta = (a^T v - b) / (a^T W^-1 a)``
corrected by the dual (:func:`~metric_estimators._kernels.bregman.hildreth_correction`).

* :func:`project_pairs_w` -- the pair constraints ``x_e - f_e <= d_e``
  (dual ``z_above``: ``x`` above ``d``) and ``d_e - x_e <= f_e`` (dual
  ``z_below``): ``x_e`` and ``f_e`` carry the same weight ``w_e``, so the
  primal step is ``s / 2`` whatever the weight; the duals (stored in the
  QP's own units) are ``w_e`` times the step.
* :func:`project_pairs_w_subset` -- the same over a subset of the pairs.

The two constraints of a pair touch only that pair's ``x_e`` and ``f_e``, so
the pairs are independent: from :data:`PARALLEL_MIN_PAIRS` pairs on, a pass
deals contiguous blocks of pairs out to the threads (numba ``prange``); the
result is bit-for-bit that of the serial pass.

The triangle constraints are projected by the metric problems' common
kernel, :func:`~metric_estimators._kernels.cycle_projections.project_paths_l2`.
"""

import numpy as np
from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import CC_PAIRS_PARALLEL_MIN_PAIRS
from .bregman import hildreth_correction
from .cycle_projections import slackness_residual

__all__ = ["PARALLEL_MIN_PAIRS", "project_pairs_w", "project_pairs_w_subset"]

#: From this many pairs on, a pass runs on every thread (below, the threads'
#: start-up costs more than the pass; the size lives in :mod:`._constants`).
PARALLEL_MIN_PAIRS = CC_PAIRS_PARALLEL_MIN_PAIRS

#: pairs per block of the parallel pass
_BLOCK = 1 << 14


@njit(cache=True, nogil=True, inline="always")
def _pair_step(x, f, d, w, z_above, z_below, e):
    we = w[e]
    if we <= 0.0:
        return 0.0
    # x_e - f_e <= d_e ; a^T W^-1 a = 2 / w_e ; theta = s w_e / 2
    s = x[e] - f[e] - d[e]
    zc = z_above[e]
    resid = slackness_residual(s, zc)
    step, z_above[e] = hildreth_correction(zc, -0.5 * s * we)
    # step = -theta (clamped); v <- v + step W^-1 a with a = (1, -1)
    dx = step / we
    x[e] += dx
    f[e] -= dx
    # d_e - x_e - f_e <= 0 ; a = (-1, -1)
    s = d[e] - x[e] - f[e]
    zc = z_below[e]
    resid = max(resid, slackness_residual(s, zc))
    step, z_below[e] = hildreth_correction(zc, -0.5 * s * we)
    dx = step / we
    x[e] -= dx
    f[e] -= dx
    return resid


@njit(cache=True, nogil=True)
def _pairs_serial(x, f, d, w, z_above, z_below, edges, lo, hi, subset):
    # pairs edges[lo:hi] (subset) or lo..hi-1; their largest residual
    resid = 0.0
    for q in range(lo, hi):
        e = edges[q] if subset else q
        r = _pair_step(x, f, d, w, z_above, z_below, e)
        if r > resid:
            resid = r
    return resid


@njit(cache=True, nogil=True, parallel=True)
def _pairs_parallel(x, f, d, w, z_above, z_below, edges, count, subset):
    # blocks of _BLOCK pairs over the threads; the pairs are independent
    nb = (count + _BLOCK - 1) // _BLOCK
    resid = np.zeros(nb)
    for b in prange(nb):
        resid[b] = _pairs_serial(x, f, d, w, z_above, z_below, edges,
                                 b * _BLOCK, min(count, (b + 1) * _BLOCK),
                                 subset)
    return resid.max() if nb else 0.0


def project_pairs_w(x, f, d, w, z_above, z_below):
    """Hildreth pass over the pair constraints of every pair with ``w > 0``.

    All arrays have one entry per pair (edge id); pairs of zero weight have
    no pair constraint (their ``f`` is unused).  Returns the largest
    complementary-slackness residual (in the units of ``x``).
    """
    m = x.shape[0]
    if m >= PARALLEL_MIN_PAIRS:
        return float(_pairs_parallel(x, f, d, w, z_above, z_below, _NO_EDGES,
                                     m, False))
    return float(_pairs_serial(x, f, d, w, z_above, z_below, _NO_EDGES, 0, m,
                               False))


def project_pairs_w_subset(x, f, d, w, z_above, z_below, edges):
    """:func:`project_pairs_w` restricted to the distinct pairs ``edges``."""
    k = edges.shape[0]
    if k >= PARALLEL_MIN_PAIRS:
        return float(_pairs_parallel(x, f, d, w, z_above, z_below, edges, k,
                                     True))
    return float(_pairs_serial(x, f, d, w, z_above, z_below, edges, 0, k,
                               True))


_NO_EDGES = np.empty(0, dtype=np.int64)
