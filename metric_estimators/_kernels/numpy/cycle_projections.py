"""numpy twin of :mod:`metric_estimators._kernels.cycle_projections`: Hildreth passes.

Same functions, arguments, in-place updates of ``x`` and ``z``, and the
same returned residual (the largest complementary-slackness error met).

A pass of :func:`project_paths_l2` over few constraints, or over many
whose batches (below) would be small, is the kernel's pass bit for bit:
constraint after constraint in storage order, in Python floats (the
constraint sets of a sparse correlation clustering hold a hundred or so
short cycles on a few hot edges, where a batch holds three or four
constraints and its numpy calls cost more than the arithmetic).

Where it differs: the *order* of the projections of the other passes.  The
kernels project constraint after constraint in storage order.  Hildreth's
projections onto half-spaces that share no variable commute, so this twin
colours the constraints ``start .. stop - 1`` greedily into *batches* of
variable-disjoint constraints (:func:`_disjoint_batches`: a constraint joins
the first batch none of whose constraints touches one of its edges, in
index order) and projects each batch at once, batch after batch.  A pass is
then exactly the kernel's pass over the constraints reordered batch by
batch (each projection's arithmetic is the kernel's, operation for
operation), not the pass in storage order: the iterates differ along the
way, the fixed point -- Hildreth's, the projection onto the intersection
-- is the same, so a solve reaches the same solution to its tolerance.
The batches of a constraint set are kept (one set, checked by content)
while the set does not change, as the driver makes several passes between
two changes.  :func:`project_nonnegative` projects bounds that share no
variable: the kernel's result, bit for bit.
"""

import numpy as np

__all__ = [
    "project_nonnegative",
    "project_paths_kl",
    "project_paths_l2",
    "project_triangles_l2",
    "project_triangles_unit",
]


def _hildreth(z, theta):
    """The kernels' ``hildreth_correction`` on arrays: ``(min(z, theta), z - step)``."""
    less = theta < z
    return np.where(less, theta, z), np.where(less, z - theta, 0.0)


def _residual(s, z):
    """The kernels' ``slackness_residual`` on arrays (largest, 0 if empty)."""
    if s.size == 0:
        return 0.0
    return float(np.max(np.where(z > 0.0, np.abs(s), np.maximum(s, 0.0))))


def _disjoint_batches(cons_edge, ptr, path):
    """Split constraints into batches that share no variable (greedy, in index order).

    ``ptr`` None: triangles stored with a fixed stride (``path[2c:2c+2]``).
    Returns a list of index arrays: in each round, a constraint joins the
    batch when it is the lowest-numbered constraint not yet placed on each
    of its variables (edge and path edges), so no two constraints of a
    batch touch the same variable, and every constraint is in one batch.
    """
    k = cons_edge.shape[0]
    lens = (np.full(k, 3, dtype=np.int64) if ptr is None
            else np.diff(ptr) + 1)
    owner = np.repeat(np.arange(k), lens)
    var = np.empty(owner.size, dtype=np.int64)
    first = np.cumsum(lens) - lens
    var[first] = cons_edge
    rest = np.ones(owner.size, dtype=bool)
    rest[first] = False
    var[rest] = path[:2 * k] if ptr is None else path[ptr[0]:ptr[k]]
    batches = []
    left = np.ones(k, dtype=bool)
    size = int(var.max()) + 1 if var.size else 0
    while owner.size:
        low = np.full(size, k, dtype=np.int64)
        np.minimum.at(low, var, owner)
        bad = np.zeros(k, dtype=bool)
        bad[owner[low[var] != owner]] = True
        chosen = np.flatnonzero(left & ~bad)
        batches.append(chosen)
        left[chosen] = False
        stay = left[owner]
        owner, var = owner[stay], var[stay]
    return batches


# the batches of the last constraint set seen, with a copy of that set
_last = {"key": None, "batches": None}


def _batches(cons_edge, ptr, path, start, stop):
    """The batches of the constraints ``start .. stop - 1``, with their variables.

    A list of ``(b, e, pe, seg)`` per batch of :func:`_disjoint_batches`:
    the constraints ``b`` (absolute indices), their edges ``e``, their
    path entries ``pe`` and the position in ``b`` of each path entry's
    constraint.  Kept for the next call while the same constraints come
    back (compared by content, so a changed set never gets stale batches).
    """
    edge = cons_edge[start:stop]
    if ptr is None:
        sub_ptr = None
        sub_path = path[2 * start:2 * stop]
    else:
        sub_ptr = ptr[start:stop + 1] - ptr[start]
        sub_path = path[ptr[start]:ptr[stop]]
    key = _last["key"]
    if (key is not None and key[0] == start and key[1].shape == edge.shape
            and key[2].shape == sub_path.shape
            and (key[3] is None) == (sub_ptr is None)
            and np.array_equal(key[1], edge)
            and np.array_equal(key[2], sub_path)
            and (sub_ptr is None or np.array_equal(key[3], sub_ptr))):
        return _last["batches"]
    batches = []
    for b in _disjoint_batches(edge, sub_ptr, sub_path):
        if sub_ptr is None:
            lens = np.full(b.size, 2, dtype=np.int64)
            first = 2 * b
        else:
            lens = sub_ptr[b + 1] - sub_ptr[b]
            first = sub_ptr[b]
        seg = np.repeat(np.arange(b.size), lens)
        pos = (np.repeat(first - (np.cumsum(lens) - lens), lens)
               + np.arange(int(lens.sum())))
        batches.append((b + start, edge[b].astype(np.int64),
                        sub_path[pos].astype(np.int64), seg))
    _last["key"] = None
    _last["batches"] = batches
    _last["key"] = (start, edge.copy(), sub_path.copy(),
                    None if sub_ptr is None else sub_ptr.copy())
    return batches


#: constraints of a pass below which it runs one constraint at a time
SEQUENTIAL_MAX = 256
#: mean batch size below which a larger pass runs one constraint at a time too
MIN_BATCH = 16


def _sequential_l2(x, winv, cons_edge, ptr, path, z, start, stop):
    """The kernel's pass, constraint after constraint in storage order, in Python floats.

    The same operations in the same order as the kernel, so the same bits:
    the path sums subtracted one after the other, Hildreth's correction,
    no move when the step is 0.
    """
    p0, p1 = int(ptr[start]), int(ptr[stop])
    edges = cons_edge[start:stop].tolist()
    offs = (ptr[start:stop + 1] - p0).tolist()
    pth = path[p0:p1].tolist()
    touched = np.concatenate((cons_edge[start:stop], path[p0:p1]))
    if 4 * touched.size < x.size:
        # a few of many variables: work on those only
        var = np.unique(touched)
        xs = dict(zip(var.tolist(), x[var].tolist()))
        ws = dict(zip(var.tolist(), winv[var].tolist()))
    else:
        var = None
        xs = x.tolist()
        ws = winv.tolist()
    zs = z[start:stop].tolist()
    resid = 0.0
    for c in range(stop - start):
        e = edges[c]
        fs = pth[offs[c]:offs[c + 1]]
        sc = xs[e]
        den = ws[e]
        for f in fs:
            sc -= xs[f]
            den += ws[f]
        zc = zs[c]
        r = abs(sc) if zc > 0.0 else max(sc, 0.0)
        if r > resid:
            resid = r
        theta = -sc / den
        if theta < zc:
            step = theta
            zs[c] = zc - theta
        else:
            step = zc
            zs[c] = 0.0
        delta = -step
        if delta != 0.0:
            xs[e] -= delta * ws[e]
            for f in fs:
                xs[f] += delta * ws[f]
    z[start:stop] = zs
    if var is None:
        x[:] = xs
    else:
        x[var] = [xs[v] for v in var.tolist()]
    return resid


def project_paths_l2(x, winv, cons_edge, ptr, path, z, start, stop):
    """One Hildreth pass over cycle constraints ``start <= c < stop`` (weighted squared L2).

    A pass of at most :data:`SEQUENTIAL_MAX` constraints, or whose batches
    hold fewer than :data:`MIN_BATCH` constraints on average (a few
    variables on many short cycles), is the kernel's pass bit for bit
    (:func:`_sequential_l2`); a larger one goes batch by batch.
    """
    if stop <= start:
        return 0.0
    if stop - start <= SEQUENTIAL_MAX:
        return _sequential_l2(x, winv, cons_edge, ptr, path, z, start, stop)
    batches = _batches(cons_edge, ptr, path, start, stop)
    if stop - start < MIN_BATCH * len(batches):
        return _sequential_l2(x, winv, cons_edge, ptr, path, z, start, stop)
    return _batched_l2(x, winv, z, batches)


def _batched_l2(x, winv, z, batches):
    """:func:`project_paths_l2` batch by batch (:func:`_batches`)."""
    resid = 0.0
    for b, e, pe, seg in batches:
        s = x[e] - np.bincount(seg, weights=x[pe], minlength=b.size)
        den = winv[e] + np.bincount(seg, weights=winv[pe], minlength=b.size)
        zb = z[b]
        resid = max(resid, _residual(s, zb))
        step, z[b] = _hildreth(zb, -s / den)
        delta = -step
        x[e] -= delta * winv[e]
        x[pe] += delta[seg] * winv[pe]
    return resid


def project_triangles_l2(x, winv, cons_edge, path, z, start, stop):
    """:func:`project_paths_l2` for triangles stored with a fixed stride (no ``ptr``)."""
    resid = 0.0
    if stop <= start:
        return resid
    for b, e, pe, _ in _batches(cons_edge, None, path, start, stop):
        f, g = pe[0::2], pe[1::2]
        s = x[e] - x[f] - x[g]
        den = winv[e] + winv[f] + winv[g]
        zb = z[b]
        resid = max(resid, _residual(s, zb))
        step, z[b] = _hildreth(zb, -s / den)
        delta = -step
        x[e] -= delta * winv[e]
        x[f] += delta * winv[f]
        x[g] += delta * winv[g]
    return resid


def project_triangles_unit(x, winv, cons_edge, path, z, start, stop):
    """:func:`project_paths_l2` for triangles under a uniform inverse weight ``winv`` (a float)."""
    resid = 0.0
    if stop <= start:
        return resid
    third = 1.0 / (3.0 * winv)
    for b, e, pe, _ in _batches(cons_edge, None, path, start, stop):
        f, g = pe[0::2], pe[1::2]
        s = x[e] - x[f] - x[g]
        zb = z[b]
        resid = max(resid, _residual(s, zb))
        step, z[b] = _hildreth(zb, -s * third)
        d = step * winv
        x[e] += d
        x[f] -= d
        x[g] -= d
    return resid


def project_paths_kl(x, cons_edge, ptr, path, z, start, stop):
    """One Hildreth-Bregman pass for the KL divergence over cycle constraints."""
    resid = 0.0
    if stop <= start:
        return resid
    for b, e, pe, seg in _batches(cons_edge, ptr, path, start, stop):
        xe = x[e]
        S = np.bincount(seg, weights=x[pe], minlength=b.size)
        zb = z[b]
        resid = max(resid, _residual(xe - S, zb))
        step, z[b] = _hildreth(zb, 0.5 * np.log(S / xe))
        x[e] = xe * np.exp(step)
        x[pe] *= np.exp(-step)[seg]
    return resid


def project_nonnegative(x, winv, z):
    """Hildreth pass over ``-x_e <= 0`` for every edge; returns the residual.

    The bounds share no variable: one vectorised step is the kernel's pass,
    bit for bit (the kernel skips the edges whose step is exactly 0).
    """
    if x.size == 0:
        return 0.0
    s = -x
    resid = _residual(s, z)
    step, z[:] = _hildreth(z, -s / winv)
    x -= step * winv
    return resid
