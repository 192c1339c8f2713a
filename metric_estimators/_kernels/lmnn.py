"""numba kernels for LMNN's inner loops.

Conventions: ``Z = X @ L.T`` is the data in the current embedding; target
neighbours are an (n, k) int array padded with -1; impostor pairs are two
int32 arrays ``(imp_i, imp_l)`` of anchors and impostors (4 bytes per index:
the store of a sampled search is the largest allocation of a fit).
The kernels know nothing about the optimiser.
"""

import numpy as np
from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import GOLDEN, MIX1, MIX2

_OPTS = dict(cache=True, nogil=True)
# Sums of squares may be reassociated (vectorised); inputs are finite, so no
# other fast-math flag is used.
_FAST = dict(_OPTS, fastmath={"reassoc", "contract"})


@njit(inline="always", **_FAST)
def _sqdist(Z, i, j):
    """Squared distance between rows ``i`` and ``j`` of ``Z``."""
    s = 0.0
    for f in range(Z.shape[1]):
        diff = Z[i, f] - Z[j, f]
        s += diff * diff
    return s


@njit(**_FAST)
def target_sqdist(Z, targets):
    """Squared embedded distance from each point to each of its targets."""
    n, k = targets.shape
    out = np.zeros((n, k))
    for i in range(n):
        for t in range(k):
            j = targets[i, t]
            if j >= 0:
                out[i, t] = _sqdist(Z, i, j)
    return out


@njit(**_FAST)
def pair_sqdist(Z, a, b):
    """Squared embedded distance of the pairs ``(a[p], b[p])``."""
    out = np.empty(a.shape[0])
    for p in range(a.shape[0]):
        out[p] = _sqdist(Z, a[p], b[p])
    return out


#: near_pairs returns exactly the pairs within their radius (not a superset)
exact_near_pairs = True

# Relative safety factor of the bound of near_pairs: far above the rounding
# of the float32 reference distances (6e-8) and of the bound's arithmetic.
_BOUND_SLACK = 1e-6


@njit(**_FAST)
def near_pairs(Z, a, b, R, ref_Z, ref_root, reset):
    """The pairs ``(a[p], b[p])`` with squared distance ``< R[a[p]]``, in order.

    Only these pairs can hold an active triplet: the hinge ``1 + d(i, j)^2 -
    d(i, l)^2`` of a target ``j`` of ``i`` is positive only if ``d(i, l)^2 <
    R_i = max_j d(i, j)^2 + 1``, and in floating point too (``1 + d(i, j)^2``
    rounds to at most ``R_i``).  The triplet kernels on the returned pairs
    give the same loss and weights, bit for bit, as on all pairs (the
    inactive ones add nothing and the order of the others is kept).

    A pair's distance is only computed when a bound cannot rule it out:
    ``ref_root[p]`` is the pair's distance at a reference embedding
    ``ref_Z`` and ``shift[i] = ||z_i - z_ref_i||``, so by the triangle
    inequality ``d(i, l) >= ref_root[p] - shift[i] - shift[l]``; a pair whose
    bound (shrunk by :data:`_BOUND_SLACK`, far beyond the rounding) reaches
    ``R_i`` is skipped.  ``ref_root`` is float32 (4 bytes per pair).  With
    ``reset`` every distance is computed and ``ref_root`` is overwritten with
    them (``Z`` becomes the reference; ``ref_Z`` is not read).

    Returns
    -------
    a, b : ndarray of int32
        The pairs within their anchor's radius.
    d : ndarray of float64
        Their squared distances.
    n_computed : int
        Number of distances computed.
    """
    m = a.shape[0]
    keep = np.empty(m, dtype=np.int64)
    dist = np.empty(m)
    lower = 1.0 - _BOUND_SLACK
    upper = 1.0 + _BOUND_SLACK
    # pass 1: the pairs that the bound does not rule out, compacted
    # branch-free (the outcome is unpredictable to the branch predictor)
    n_computed = 0
    if reset:
        for p in range(m):
            keep[p] = p
        n_computed = m
    else:
        n, c = Z.shape
        shift = np.empty(n)
        for i in range(n):
            moved = 0.0
            for f in range(c):
                diff = Z[i, f] - ref_Z[i, f]
                moved += diff * diff
            shift[i] = np.sqrt(moved)
        for p in range(m):
            i = a[p]
            lb = ref_root[p] * lower - (shift[i] + shift[b[p]]) * upper
            far = (lb > 0.0) & (lb * lb > R[i] * upper)
            keep[n_computed] = p
            n_computed += 1 - np.int64(far)
    # pass 2: their distances; those within the radius, compacted in place
    q = 0
    for t in range(n_computed):
        p = keep[t]
        i = a[p]
        s = _sqdist(Z, i, b[p])
        if reset:
            ref_root[p] = np.sqrt(s)
        keep[q] = p
        dist[q] = s
        q += np.int64(s < R[i])
    out_a = np.empty(q, dtype=a.dtype)
    out_b = np.empty(q, dtype=b.dtype)
    for r in range(q):
        out_a[r] = a[keep[r]]
        out_b[r] = b[keep[r]]
    return out_a, out_b, dist[:q].copy(), n_computed


@njit(**_OPTS)
def triplet_loss_weights(target_d, targets, imp_i, imp_d, push_weight, squared):
    """Hinge loss over (anchor, target, impostor) triplets and edge weights.

    For every impostor pair ``p = (i, l)`` and every target ``j`` of ``i``,
    the triplet's hinge is ``h = 1 + d(i, j)^2 - d(i, l)^2``.  With
    ``squared`` the loss is ``push_weight * h^2`` (smooth), else
    ``push_weight * h``.  The derivative ``g`` of the loss in ``h`` is added
    to the weight of the target edge ``(i, j)`` and subtracted from the
    weight of the impostor edge ``(i, l)``, so that the gradient with respect
    to ``L`` is ``2 L X^T Lap(W) X`` (see :func:`laplacian_product`).

    Returns
    -------
    loss : float
        Push part of the loss.
    w_target : ndarray (n, k)
        Push contributions to the target edge weights.
    w_imp : ndarray (n_pairs,)
        Impostor edge weights (<= 0).
    n_active : int
        Number of triplets with ``h > 0``.
    """
    n, k = targets.shape
    m = imp_i.shape[0]
    w_target = np.zeros((n, k))
    w_imp = np.zeros(m)
    loss = 0.0
    n_active = 0
    for p in range(m):
        i = imp_i[p]
        dl = imp_d[p]
        wsum = 0.0
        for t in range(k):
            if targets[i, t] < 0:
                continue
            h = 1.0 + target_d[i, t] - dl
            if h > 0.0:
                n_active += 1
                if squared:
                    loss += h * h
                    g = 2.0 * h
                else:
                    loss += h
                    g = 1.0
                w_target[i, t] += push_weight * g
                wsum += g
        w_imp[p] = -push_weight * wsum
    return push_weight * loss, w_target, w_imp, n_active


@njit(**_OPTS)
def laplacian_product(X, targets, w_target, imp_i, imp_l, w_imp):
    """``Lap(W) @ X`` for the graph with target and impostor edge weights.

    Each edge ``(a, b)`` of weight ``w`` adds ``w (x_a - x_b)`` to row ``a``
    and subtracts it from row ``b``; then ``X^T Lap X = sum w (x_a - x_b)
    (x_a - x_b)^T`` and the gradient is ``2 Z^T (Lap X)``.
    """
    n, d = X.shape
    k = targets.shape[1]
    out = np.zeros((n, d))
    for i in range(n):
        for t in range(k):
            j = targets[i, t]
            if j < 0:
                continue
            w = w_target[i, t]
            if w == 0.0:
                continue
            for f in range(d):
                v = w * (X[i, f] - X[j, f])
                out[i, f] += v
                out[j, f] -= v
    for p in range(imp_i.shape[0]):
        w = w_imp[p]
        if w == 0.0:
            continue
        i = imp_i[p]
        j = imp_l[p]
        for f in range(d):
            v = w * (X[i, f] - X[j, f])
            out[i, f] += v
            out[j, f] -= v
    return out


@njit(**_OPTS)
def point_hashes(n, seed):
    """Two fixed 64-bit hashes per point (splitmix64 of its index).

    One for its role as anchor, one as impostor; combined by
    :func:`_pair_uniform`.
    """
    out = np.empty((2, n), dtype=np.uint64)
    for role in range(2):
        for i in range(n):
            z = (np.uint64(2 * i + role) + np.uint64(seed)) * GOLDEN
            z = (z ^ (z >> np.uint64(30))) * MIX1
            z = (z ^ (z >> np.uint64(27))) * MIX2
            out[role, i] = z ^ (z >> np.uint64(31))
    return out


@njit(inline="always", **_OPTS)
def _pair_uniform(ha, hb):
    """A fixed pseudo-random number in [0, 1) for an ordered pair.

    Made from the anchor's and the impostor's point hashes (independent of L).
    """
    z = (ha ^ (hb * GOLDEN)) * MIX1
    z = z ^ (z >> np.uint64(29))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(**_OPTS)
def pair_uniform(a, b, hashes):
    """:func:`_pair_uniform` of the pairs ``(a[p], b[p])``."""
    out = np.empty(a.shape[0])
    for p in range(a.shape[0]):
        out[p] = _pair_uniform(hashes[0, a[p]], hashes[1, b[p]])
    return out


@njit(**_OPTS)
def threshold_block(G, sq_rows, sq_cols, rho_rows, rho_cols, rows, cols,
                    symmetric, hashes, fraction):
    """Pairs of a block that fall inside a margin radius.

    ``G = Z[rows] @ Z[cols].T``; the squared distance of entry (a, b) is
    ``sq_rows[a] + sq_cols[b] - 2 G[a, b]``.  Returns the (anchor, impostor)
    pairs ``(rows[a], cols[b])`` with distance ``< rho_rows[a]`` and, if
    ``symmetric``, also ``(cols[b], rows[a])`` with distance ``< rho_cols[b]``
    (each unordered pair is then scanned once for both anchors).  With
    ``fraction < 1`` only pairs whose fixed pseudo-random number
    (:func:`_pair_uniform`) is below ``fraction`` are returned, by row,
    then column.  Serial: a parallel loop here made fits many times slower
    on a machine whose cores are busy (its threads wait for each other).
    """
    na, nb = G.shape
    sample = fraction < 1.0
    # pass 1: distances and radius tests once per entry, the outcome kept
    # as two bits per entry (a block is at most a few MB) and counted per
    # row; with sampling, the pairs' numbers are then tested on the hits
    # only; the last pass only reads the bits.  Rows are padded with zeros
    # to whole eight-byte words, which the later passes skip when empty.
    width = 8 * ((nb + 7) // 8)
    hits = np.zeros(na * width, dtype=np.uint8)
    words = hits.view(np.uint64)
    counts = np.zeros(na + 1, dtype=np.int64)
    # radius tests, branch-free (vectorised); a column's radius of -inf
    # never holds
    rho_c = rho_cols if symmetric else np.full(nb, -np.inf)
    for a in range(na):
        ra = rho_rows[a]
        sa = sq_rows[a]
        base = a * width
        c = 0
        for b in range(nb):
            v = sa + sq_cols[b] - 2.0 * G[a, b]
            bits = np.uint8(v < ra) + np.uint8(2) * np.uint8(v < rho_c[b])
            hits[base + b] = bits
            c += (bits & 1) + (bits >> 1)
        counts[a + 1] = c
    n_words = width // 8
    if sample:
        # sampling tests of rows with a hit, branch-free (vectorised): the
        # pair's number u < fraction as the integer test of
        # sampled_pairs_within, with the columns' hash factors gathered once
        limit = np.uint64(np.ceil(fraction * 9007199254740992.0))
        imp_golden = np.empty(nb, dtype=np.uint64)  # impostor role of cols
        anchor_h = np.empty(nb, dtype=np.uint64)    # anchor role of cols
        for b in range(nb):
            imp_golden[b] = hashes[1, cols[b]] * GOLDEN
            anchor_h[b] = hashes[0, cols[b]]
        for a in range(na):
            if counts[a + 1] == 0:
                continue
            ia = rows[a]
            ha_anchor = hashes[0, ia]
            ha_imp_golden = hashes[1, ia] * GOLDEN
            base = a * width
            c = 0
            for b in range(nb):
                z1 = (ha_anchor ^ imp_golden[b]) * MIX1
                z1 = z1 ^ (z1 >> np.uint64(29))
                z2 = (anchor_h[b] ^ ha_imp_golden) * MIX1
                z2 = z2 ^ (z2 >> np.uint64(29))
                keep = np.uint8((z1 >> np.uint64(11)) < limit) + np.uint8(2) * np.uint8(
                    (z2 >> np.uint64(11)) < limit)
                bits = hits[base + b] & keep
                hits[base + b] = bits
                c += (bits & 1) + (bits >> 1)
            counts[a + 1] = c
    for a in range(na):
        counts[a + 1] += counts[a]
    anchors = np.empty(counts[na], dtype=np.int32)
    imps = np.empty(counts[na], dtype=np.int32)
    for a in range(na):
        q = counts[a]
        if q == counts[a + 1]:
            continue
        ia = rows[a]
        base = a * width
        for w in range(a * n_words, (a + 1) * n_words):
            if words[w] == 0:
                continue
            for e in range(8 * w, 8 * w + 8):
                bits = hits[e]
                if bits == 0:
                    continue
                ib = cols[e - base]
                if bits & 1:
                    anchors[q] = ia
                    imps[q] = ib
                    q += 1
                if bits & 2:
                    anchors[q] = ib
                    imps[q] = ia
                    q += 1
    return anchors, imps


@njit(**_FAST)
def sampled_pairs_within(Z, y_idx, hashes, fraction, rho, start, stop, size_hint):
    """Sampled (anchor, impostor) pairs of anchors ``start..stop-1`` inside their radius.

    Pair ``(a, b)`` of different classes is returned iff its fixed number
    (:func:`_pair_uniform`) is below ``fraction`` and its squared distance is
    below ``rho[a]``.  The hash test comes first, so that only a ``fraction``
    of the pairs costs a distance: ``O(n (stop - start))`` cheap hash tests
    plus ``O(fraction n (stop - start) c)``, with no ``n x n`` block and
    no list of candidate pairs in memory; ordered by anchor, then impostor.
    Anchors with ``rho <= 0`` (no targets) are skipped.

    Per anchor, a branch-free (vectorised) pass marks the sampled
    other-class points in a byte mask; a second pass skips the mask eight
    bytes at a time and computes distances only for marked points.  A
    single loop that tests and branches per pair is about three times
    slower (the test outcome is unpredictable to the branch predictor).
    Releases the GIL, so disjoint anchor ranges can run in threads.
    """
    n, c = Z.shape
    size = max(size_hint, 1024)
    out_a = np.empty(size, dtype=np.int32)
    out_b = np.empty(size, dtype=np.int32)
    # _pair_uniform(ha, hb) < fraction, with the impostor's factor hb *
    # GOLDEN computed once per point and the test on the integer before
    # its scaling to [0, 1) (u = k / 2**53 < f iff k < ceil(f 2**53))
    hb_golden = hashes[1] * GOLDEN
    limit = np.uint64(np.ceil(fraction * 9007199254740992.0))
    n_words = (n + 7) // 8
    mask = np.zeros(8 * n_words, dtype=np.uint8)  # tail bytes stay 0
    words = mask.view(np.uint64)
    q = 0
    for a in range(start, stop):
        ra = rho[a]
        if not ra > 0.0:
            continue
        ha = hashes[0, a]
        ya = y_idx[a]
        for b in range(n):
            z = (ha ^ hb_golden[b]) * MIX1
            z = z ^ (z >> np.uint64(29))
            mask[b] = ((z >> np.uint64(11)) < limit) & (y_idx[b] != ya)
        for w in range(n_words):
            if words[w] == 0:
                continue
            for b in range(8 * w, 8 * w + 8):
                if mask[b] == 0:
                    continue
                s = 0.0
                for f in range(c):
                    diff = Z[a, f] - Z[b, f]
                    s += diff * diff
                if s < ra:
                    if q == size:
                        size *= 2
                        grown_a = np.empty(size, dtype=np.int32)
                        grown_b = np.empty(size, dtype=np.int32)
                        grown_a[:q] = out_a[:q]
                        grown_b[:q] = out_b[:q]
                        out_a, out_b = grown_a, grown_b
                    out_a[q] = a
                    out_b[q] = b
                    q += 1
    return out_a[:q].copy(), out_b[:q].copy()


@njit(**_FAST)
def pairs_within(Z, a, b, rho, root=None):
    """The pairs ``(a[p], b[p])`` with squared distance ``< rho[a[p]]``.

    Two passes (count, fill), so that memory is that of the kept pairs.
    With ``root`` (float32, one per pair), every pair's distance is written
    to it (the reference of :func:`near_pairs`).
    """
    m = a.shape[0]
    keep = np.zeros(m, dtype=np.bool_)
    count = 0
    for p in range(m):
        s = _sqdist(Z, a[p], b[p])
        if root is not None:
            root[p] = np.sqrt(s)
        if s < rho[a[p]]:
            keep[p] = True
            count += 1
    out_a = np.empty(count, dtype=a.dtype)
    out_b = np.empty(count, dtype=b.dtype)
    q = 0
    for p in range(m):
        if keep[p]:
            out_a[q] = a[p]
            out_b[q] = b[p]
            q += 1
    return out_a, out_b


@njit(parallel=True, **_OPTS)
def sampled_push_weights(G, sq_batch, sq_refs, target_d, valid, y_batch, y_refs, scale):
    """Squared-hinge push term of a mini-batch against a reference sample.

    One fused pass over the ``(b, m)`` pairs of ``SampledLMNNObjective``
    (``metric_estimators._problems.lmnn``): with ``d_il = sq_batch[i] - 2
    G[i, l] + sq_refs[l]`` (``G = Z_batch @ Z_refs.T``), every other-class
    pair ``(i, l)`` and valid target ``t`` of ``i`` contributes
    ``h = [1 + target_d[i, t] - d_il]_+`` as ``scale * h^2`` to the loss,
    ``-2 scale h`` to ``W[i, l]`` (d loss / d d_il) and ``+2 scale h`` to
    ``w_target[i, t]`` (d loss / d d_it).  Anchors run in parallel, each
    writing only its own rows; the loss is summed over anchors in order, so
    the result does not depend on the number of threads.

    Returns
    -------
    loss : float
    W : ndarray of shape (b, m)
    w_target : ndarray of shape (b, k)
    row_sums : ndarray of shape (b,)
        ``W.sum(axis=1)``.
    """
    b, m = G.shape
    k = target_d.shape[1]
    W = np.zeros((b, m))
    w_target = np.zeros((b, k))
    row_sums = np.zeros(b)
    row_loss = np.zeros(b)
    two_scale = 2.0 * scale
    for i in prange(b):
        yi = y_batch[i]
        acc = 0.0
        rs = 0.0
        for l in range(m):
            if y_refs[l] == yi:
                continue
            d = (sq_batch[i] - 2.0 * G[i, l]) + sq_refs[l]
            h_sum = 0.0
            for t in range(k):
                if valid[i, t]:
                    h = 1.0 + target_d[i, t] - d
                    if h > 0.0:
                        acc += h * h
                        h_sum += h
                        w_target[i, t] += h
            if h_sum > 0.0:
                w = -two_scale * h_sum
                W[i, l] = w
                rs += w
        row_loss[i] = acc
        row_sums[i] = rs
        for t in range(k):
            w_target[i, t] *= two_scale
    loss = 0.0
    for i in range(b):
        loss += row_loss[i]
    return scale * loss, W, w_target, row_sums
