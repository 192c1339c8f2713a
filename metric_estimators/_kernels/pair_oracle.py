"""numba kernel: block scan of all labelled pairs for violated ITML constraints.

The kernel of :class:`metric_estimators.solvers.oracles.LabelPairOracle`,
ProjectAndForget's oracle (Sonthalia & Gilbert, JMLR 2022): instead of a
random subset of pairs, every
same-class / different-class pair is checked against the current metric, one
block of rows at a time (memory ``O(block * n)``); and the check of the
remembered pairs' optimality conditions (:func:`active_pair_residuals`).
"""

from numba import njit, prange

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import PAIR_ORACLE_PARALLEL_MIN_POINTS

__all__ = ["PARALLEL_MIN_POINTS", "active_pair_residuals", "scan_pair_block"]


#: From this many points on, the rows of a block are scanned in parallel;
#: below, serially (same results; the size lives in :mod:`._constants`).
PARALLEL_MIN_POINTS = PAIR_ORACLE_PARALLEL_MIN_POINTS


@njit(cache=True, nogil=True)
def _scan_row(Z, sq, y, i0, r, low, high, tol, active_row_start, active_cols,
              keep_i, keep_j, keep_v, counts, rowmax):
    # row r (point i = i0 + r) of scan_pair_block
    n = Z.shape[0]
    d = Z.shape[1]
    cap = keep_i.shape[1]
    i = i0 + r
    zi = Z[i]
    a = active_row_start[i]
    b = active_row_start[i + 1]
    ptr = a
    cnt = 0
    best = 0.0
    for j in range(i + 1, n):
        while ptr < b and active_cols[ptr] < j:
            ptr += 1
        if ptr < b and active_cols[ptr] == j:
            continue
        dot = 0.0
        zj = Z[j]
        for k in range(d):
            dot += zi[k] * zj[k]
        dist = sq[i] + sq[j] - 2.0 * dot
        if y[i] == y[j]:
            viol = (dist - low) / low
        else:
            viol = (high - dist) / high
        if viol > best:
            best = viol
        if viol > tol:
            slot = cnt % cap
            keep_i[r, slot] = i
            keep_j[r, slot] = j
            keep_v[r, slot] = viol
            cnt += 1
    counts[r] = cnt
    rowmax[r] = best


@njit(cache=True, nogil=True, parallel=True)
def _scan_rows_parallel(Z, sq, y, i0, i1, low, high, tol, active_row_start,
                        active_cols, keep_i, keep_j, keep_v, counts, rowmax):
    for r in prange(i1 - i0):
        _scan_row(Z, sq, y, i0, r, low, high, tol, active_row_start, active_cols,
                  keep_i, keep_j, keep_v, counts, rowmax)


@njit(cache=True, nogil=True)
def _scan_rows_serial(Z, sq, y, i0, i1, low, high, tol, active_row_start,
                      active_cols, keep_i, keep_j, keep_v, counts, rowmax):
    for r in range(i1 - i0):
        _scan_row(Z, sq, y, i0, r, low, high, tol, active_row_start, active_cols,
                  keep_i, keep_j, keep_v, counts, rowmax)


def scan_pair_block(Z, sq, y, i0, i1, low, high, tol, active_row_start,
                    active_cols, keep_i, keep_j, keep_v, counts, rowmax):
    """Violated pairs ``(i, j)``, ``i0 <= i < i1``, ``i < j``.

    A same-class pair is violated when ``d(i, j) > low (1 + tol)``, a
    different-class pair when ``d(i, j) < high (1 - tol)``, with
    ``d(i, j) = sq[i] + sq[j] - 2 Z[i] . Z[j]`` the squared learned distance
    (``Z = X L^T``).  The pairs listed as row ``i``'s sorted partners
    ``active_cols[active_row_start[i]:active_row_start[i + 1]]`` are skipped
    (the caller lists the active set there, and the different-class pairs of
    identical points, which no metric can separate).

    Output per row ``r = i - i0`` in the preallocated ``keep_*[r, :]`` (a
    ring buffer: the last ``keep_i.shape[1]`` hits of the row; ``counts[r]`` is the total number
    of violated pairs of row ``i``, ``rowmax[r]`` the largest relative
    violation ``delta (d - xi0) / xi0``).  Rows run in parallel from
    :data:`PARALLEL_MIN_POINTS` points on; they are independent, so the
    result is the same either way.
    """
    scan = _scan_rows_serial if Z.shape[0] < PARALLEL_MIN_POINTS else _scan_rows_parallel
    scan(Z, sq, y, i0, i1, low, high, tol, active_row_start, active_cols,
         keep_i, keep_j, keep_v, counts, rowmax)


@njit(cache=True, nogil=True)
def active_pair_residuals(Z, I, J, delta, xi, lam, tol):
    """Largest complementary-slackness residual of the remembered pairs.

    Pair ``c = (I[c], J[c])`` with squared learned distance
    ``d_c = |Z[I[c]] - Z[J[c]]|^2`` (``Z = X L^T``), sign ``delta[c]``,
    slack ``xi[c]`` and dual ``lam[c]``: its residual is
    ``|d_c - xi_c| / xi_c`` when ``lam_c > 0`` (a positive dual needs a
    tight constraint) and ``max(0, delta_c (d_c - xi_c) / xi_c)`` when
    ``lam_c = 0`` (the constraint must hold).

    Returns
    -------
    max_residual : float
        The largest residual (0 for no pair).
    n_above : int
        Number of pairs whose residual exceeds ``tol``.
    """
    d = Z.shape[1]
    best = 0.0
    count = 0
    for c in range(I.shape[0]):
        zi = Z[I[c]]
        zj = Z[J[c]]
        dist = 0.0
        for k in range(d):
            t = zi[k] - zj[k]
            dist += t * t
        x = xi[c]
        r = (dist - x) / x
        if lam[c] > 0.0:
            r = abs(r)
        else:
            r = delta[c] * r
        if r > best:
            best = r
        if r > tol:
            count += 1
    return best, count
