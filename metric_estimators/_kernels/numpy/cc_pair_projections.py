"""numpy twin of :mod:`metric_estimators._kernels.cc_pair_projections`: the LP's pair constraints.

The two constraints of a pair touch only that pair's ``x_e`` and ``f_e``,
so all pairs are projected at once (the first constraint of every pair,
then the second), with the kernel's arithmetic operation for operation:
the kernel's result, bit for bit.
"""

import numpy as np

from .cycle_projections import _hildreth, _residual

__all__ = ["project_pairs_w", "project_pairs_w_subset"]


def _pairs(x, f, d, w, z_above, z_below, e):
    e = e[w[e] > 0.0]
    if e.size == 0:
        return 0.0
    we = w[e]
    s = x[e] - f[e] - d[e]
    za = z_above[e]
    r1 = _residual(s, za)
    step, z_above[e] = _hildreth(za, -0.5 * s * we)
    dx = step / we
    xe = x[e] + dx
    fe = f[e] - dx
    s = d[e] - xe - fe
    zb = z_below[e]
    r2 = _residual(s, zb)
    step, z_below[e] = _hildreth(zb, -0.5 * s * we)
    dx = step / we
    x[e] = xe - dx
    f[e] = fe - dx
    return float(max(r1, r2))


def project_pairs_w(x, f, d, w, z_above, z_below):
    """Hildreth pass over the pair constraints of every pair with ``w > 0``."""
    return _pairs(x, f, d, w, z_above, z_below, np.arange(x.shape[0]))


def project_pairs_w_subset(x, f, d, w, z_above, z_below, edges):
    """:func:`project_pairs_w` restricted to the distinct pairs ``edges``."""
    return _pairs(x, f, d, w, z_above, z_below, np.asarray(edges))
