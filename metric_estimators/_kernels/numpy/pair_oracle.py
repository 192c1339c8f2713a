"""The numpy twin of :mod:`metric_estimators._kernels.pair_oracle` (the labelled-pair scan).

:func:`scan_pair_block` takes the kernel's arguments and fills the same
outputs: the whole block of rows at once, ``sq[i] + sq[j] - 2 Z[i] . Z[j]``
for every pair from one matrix product (memory ``O((i1 - i0) n)``, as the
block the caller chose).  Where it differs: the products are BLAS's, so the
distances, violations and row maxima agree with the kernel's to rounding
(a pair violated by ``tol`` up to the last bits may be counted by one and
not the other); the ring buffers hold the same pairs in the same slots.
:func:`active_pair_residuals` is one vectorised expression (the same
arithmetic per pair; the squared distance summed by numpy, so to rounding).
"""

import numpy as np

__all__ = ["active_pair_residuals", "scan_pair_block"]


def scan_pair_block(Z, sq, y, i0, i1, low, high, tol, active_row_start,
                    active_cols, keep_i, keep_j, keep_v, counts, rowmax):
    """Violated pairs ``(i, j)``, ``i0 <= i < i1``, ``i < j``.

    See :func:`metric_estimators._kernels.pair_oracle.scan_pair_block`:
    row ``r = i - i0`` of ``keep_*`` holds the last ``keep_i.shape[1]``
    violated pairs of row ``i`` (hit ``t`` in slot ``t % cap``),
    ``counts[r]`` their number and ``rowmax[r]`` the row's largest relative
    violation (0 if none is positive); the pairs listed in
    ``active_cols[active_row_start[i]:active_row_start[i + 1]]`` are
    skipped.
    """
    n = Z.shape[0]
    r = i1 - i0
    if r <= 0:
        return
    cap = keep_i.shape[1]
    rows = np.arange(i0, i1)
    dist = sq[i0:i1, None] + sq[None, :]
    dist -= 2.0 * (Z[i0:i1] @ Z.T)
    same = y[i0:i1, None] == y[None, :]
    viol = np.where(same, (dist - low) / low, (high - dist) / high)
    valid = np.arange(n)[None, :] > rows[:, None]
    a, b = int(active_row_start[i0]), int(active_row_start[i1])
    if b > a:
        per_row = np.diff(active_row_start[i0:i1 + 1])
        valid[np.repeat(np.arange(r), per_row), active_cols[a:b]] = False
    # as the kernel: the maximum starts at 0, NaN never wins
    rowmax[:r] = np.where(valid & (viol > 0.0), viol, 0.0).max(axis=1)
    hits = valid & (viol > tol)
    cnt = np.count_nonzero(hits, axis=1)
    counts[:r] = cnt
    hr, hj = np.nonzero(hits)  # by row, then by j: the kernel's order
    if hr.size == 0:
        return
    first = np.cumsum(cnt) - cnt
    t = np.arange(hr.size) - first[hr]
    last = t >= cnt[hr] - cap  # what the ring buffer keeps
    hr, hj, t = hr[last], hj[last], t[last]
    slot = t % cap
    keep_i[hr, slot] = hr + i0
    keep_j[hr, slot] = hj
    keep_v[hr, slot] = viol[hr, hj]


def active_pair_residuals(Z, I, J, delta, xi, lam, tol):
    """Largest complementary-slackness residual of the remembered pairs.

    See :func:`metric_estimators._kernels.pair_oracle.active_pair_residuals`:
    returns ``(max_residual, n_above)``.
    """
    if I.shape[0] == 0:
        return 0.0, 0
    D = Z[I] - Z[J]
    dist = np.einsum("ij,ij->i", D, D)
    r = (dist - xi) / xi
    r = np.where(lam > 0.0, np.abs(r), delta * r)
    return float(max(0.0, r.max())), int(np.count_nonzero(r > tol))
