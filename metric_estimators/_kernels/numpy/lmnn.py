"""numpy twin of :mod:`metric_estimators._kernels.lmnn`: LMNN's inner loops.

The same functions, arguments and results as the numba kernels (see their
docstrings for the conventions), written with whole-array numpy operations.

What is equal and what is not:

* the pair hashes (:func:`point_hashes`, :func:`pair_uniform`) are the same
  64-bit integer arithmetic, so they are bit-identical;
* :func:`threshold_block`, :func:`pairs_within` and
  :func:`sampled_pairs_within` return the same pairs in the same order
  (:func:`threshold_block` evaluates ``sq_a + sq_b - 2 G`` in the same
  order of operations; the other two compare squared distances that may
  differ in the last bit, which matters only for a pair exactly on its
  radius);
* sums of squares and of edge weights (:func:`target_sqdist`,
  :func:`pair_sqdist`, :func:`triplet_loss_weights`,
  :func:`laplacian_product`) are summed in another order than numba's
  vectorised loops, so the loss and the gradient agree to rounding
  (relative ``1e-12`` in the tests), not bit for bit;
* :func:`near_pairs` returns every pair (a superset of the kernel's pairs
  within their radius, flagged by :data:`exact_near_pairs`), which the
  hinge's sum treats alike;
* :func:`sampled_push_weights` sums the loss in another order (to
  rounding); its weights are the same sums of the same terms.
"""

import numpy as np

from .._constants import GOLDEN, MIX1, MIX2

__all__ = ["exact_near_pairs", "laplacian_product", "near_pairs", "pair_sqdist",
           "pair_uniform", "pairs_within", "point_hashes", "sampled_pairs_within",
           "sampled_push_weights", "target_sqdist", "threshold_block",
           "triplet_loss_weights"]

# Anchors per chunk of sampled_pairs_within (memory: chunk * n hashes).
_CHUNK_ENTRIES = 1 << 20


def target_sqdist(Z, targets):
    """Squared embedded distance from each point to each of its targets (0 for -1)."""
    valid = targets >= 0
    diff = np.take(Z, np.where(valid, targets, 0), axis=0)       # (n, k, c)
    diff -= Z[:, None, :]
    out = np.einsum("nkc,nkc->nk", diff, diff)
    out[~valid] = 0.0
    return out


def pair_sqdist(Z, a, b):
    """Squared embedded distance of the pairs ``(a[p], b[p])``."""
    diff = np.take(Z, a, axis=0)  # take: faster than fancy indexing
    diff -= np.take(Z, b, axis=0)
    return np.einsum("ij,ij->i", diff, diff)


#: near_pairs returns every pair, a superset of those within their radius
exact_near_pairs = False


def near_pairs(Z, a, b, R, ref_Z, ref_root, reset):
    """Every pair, a superset of the numba kernel's pairs within their radius.

    See :func:`metric_estimators._kernels.lmnn.near_pairs`.  Here no pair is
    left out: the vectorised :func:`triplet_loss_weights` sums over all
    pairs, so a shorter list would change its rounding; ``ref_root`` is
    still filled with ``reset``.
    """
    d = pair_sqdist(Z, a, b)
    if reset:
        np.sqrt(d, out=ref_root, casting="same_kind")
    return a, b, d, a.shape[0]


def triplet_loss_weights(target_d, targets, imp_i, imp_d, push_weight, squared):
    """Hinge loss over (anchor, target, impostor) triplets and edge weights.

    See :func:`metric_estimators._kernels.lmnn.triplet_loss_weights`.
    """
    n, k = targets.shape
    H = np.take(target_d, imp_i, axis=0)                       # (m, k)
    H -= imp_d[:, None]
    H += 1.0
    active = H > 0.0
    active &= np.take(targets, imp_i, axis=0) >= 0
    H *= active
    if squared:
        loss = float(np.einsum("ij,ij->", H, H))
        g = 2.0 * H
    else:
        loss = float(H.sum())
        g = active.astype(np.float64)
    cells = (imp_i.astype(np.int64) * k)[:, None] + np.arange(k)
    w_target = np.bincount(cells.ravel(), weights=(push_weight * g).ravel(),
                           minlength=n * k).astype(np.float64).reshape(n, k)
    w_imp = -push_weight * g.sum(axis=1)
    return push_weight * loss, w_target, w_imp, int(np.count_nonzero(active))


def laplacian_product(X, targets, w_target, imp_i, imp_l, w_imp):
    """``Lap(W) @ X`` for the graph with target and impostor edge weights.

    See :func:`metric_estimators._kernels.lmnn.laplacian_product`: edge
    ``(a, b)`` of weight ``w`` adds ``v = w (x_a - x_b)`` to row ``a`` and
    subtracts it from row ``b``; here all ``v`` at once, gathered into rows
    by one sparse product with the signed incidence matrix (differences
    first, as in the kernel, so that an offset of ``X`` costs no accuracy).
    """
    from scipy import sparse

    n = X.shape[0]
    keep = (targets >= 0) & (w_target != 0.0)
    nz = w_imp != 0.0
    a = np.concatenate([np.nonzero(keep)[0], imp_i[nz].astype(np.int64)])
    b = np.concatenate([targets[keep], imp_l[nz].astype(np.int64)])
    w = np.concatenate([w_target[keep], w_imp[nz]])
    V = np.take(X, a, axis=0)
    V -= np.take(X, b, axis=0)
    V *= w[:, None]
    m = a.size
    edges = np.arange(m)
    incidence = sparse.csr_matrix(
        (np.concatenate([np.ones(m), -np.ones(m)]),
         (np.concatenate([a, b]), np.concatenate([edges, edges]))), shape=(n, m))
    return np.asarray(incidence @ V)


def point_hashes(n, seed):
    """Two fixed 64-bit hashes per point (splitmix64 of its index), bit-identical to numba's."""
    idx = np.arange(n, dtype=np.uint64)
    out = np.empty((2, n), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for role in range(2):
            z = (np.uint64(2) * idx + np.uint64(role) + np.uint64(seed)) * GOLDEN
            z = (z ^ (z >> np.uint64(30))) * MIX1
            z = (z ^ (z >> np.uint64(27))) * MIX2
            out[role] = z ^ (z >> np.uint64(31))
    return out


def _uniform(ha, hb):
    """The fixed number in [0, 1) of ordered pairs from their points' hashes (arrays)."""
    with np.errstate(over="ignore"):
        z = (ha ^ (hb * GOLDEN)) * MIX1
        z = z ^ (z >> np.uint64(29))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def pair_uniform(a, b, hashes):
    """The fixed pseudo-random number in [0, 1) of the pairs ``(a[p], b[p])``."""
    return _uniform(hashes[0, a], hashes[1, b])


def threshold_block(G, sq_rows, sq_cols, rho_rows, rho_cols, rows, cols,
                    symmetric, hashes, fraction):
    """Pairs of a block that fall inside a margin radius, in the numba kernel's order.

    See :func:`metric_estimators._kernels.lmnn.threshold_block`.
    """
    V = sq_rows[:, None] + sq_cols[None, :]
    V -= 2.0 * G
    inside = [V < rho_rows[:, None]]
    if symmetric:
        inside.append(V < rho_cols[None, :])
    if fraction < 1.0:
        inside[0] &= _uniform(hashes[0, rows][:, None], hashes[1, cols][None, :]) < fraction
        if symmetric:
            inside[1] &= _uniform(hashes[0, cols][None, :],
                                  hashes[1, rows][:, None]) < fraction
    # entry (a, b) gives (rows[a], cols[b]) then, if symmetric, (cols[b], rows[a])
    a, b, role = np.nonzero(np.stack(inside, axis=-1))
    anchors = np.where(role == 0, rows[a], cols[b]).astype(np.int32)
    imps = np.where(role == 0, cols[b], rows[a]).astype(np.int32)
    return anchors, imps


def sampled_pairs_within(Z, y_idx, hashes, fraction, rho, start, stop, size_hint):
    """Sampled (anchor, impostor) pairs of anchors ``start..stop-1`` inside their radius.

    See :func:`metric_estimators._kernels.lmnn.sampled_pairs_within`; here
    the anchors go in chunks of at most ``_CHUNK_ENTRIES`` pairs.
    """
    n = Z.shape[0]
    out_a, out_b = [], []
    step = max(1, _CHUNK_ENTRIES // max(n, 1))
    for lo in range(start, stop, step):
        anchors = np.arange(lo, min(lo + step, stop))
        anchors = anchors[rho[anchors] > 0.0]
        if anchors.size == 0:
            continue
        keep = (y_idx[anchors][:, None] != y_idx[None, :]) & (
            _uniform(hashes[0, anchors][:, None], hashes[1][None, :]) < fraction)
        a, b = np.nonzero(keep)
        a = anchors[a]
        inside = pair_sqdist(Z, a, b) < rho[a]
        out_a.append(a[inside].astype(np.int32))
        out_b.append(b[inside].astype(np.int32))
    if not out_a:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    return np.concatenate(out_a), np.concatenate(out_b)


def pairs_within(Z, a, b, rho, root=None):
    """The pairs ``(a[p], b[p])`` with squared distance ``< rho[a[p]]``.

    With ``root``, every pair's distance is written to it.
    """
    d = pair_sqdist(Z, a, b)
    if root is not None:
        np.sqrt(d, out=root, casting="same_kind")
    keep = d < rho[a]
    return a[keep], b[keep]


def sampled_push_weights(G, sq_batch, sq_refs, target_d, valid, y_batch, y_refs, scale):
    """Squared-hinge push term of a mini-batch against a reference sample.

    See :func:`metric_estimators._kernels.lmnn.sampled_push_weights`:
    ``(loss, W, w_target, row_sums)``; memory ``O(b k m)``.
    """
    d = sq_batch[:, None] - 2.0 * G
    d += sq_refs[None, :]
    H = (1.0 + target_d)[:, :, None] - d[:, None, :]             # (b, k, m)
    keep = valid[:, :, None] & (y_refs[None, None, :] != y_batch[:, None, None])
    keep &= H > 0.0
    H *= keep
    two_scale = 2.0 * scale
    loss = float(np.einsum("bkm,bkm->", H, H))
    W = H.sum(axis=1)
    W *= -two_scale
    w_target = H.sum(axis=2)
    w_target *= two_scale
    return scale * loss, W, w_target, W.sum(axis=1)
