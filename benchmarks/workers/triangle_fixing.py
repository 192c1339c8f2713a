"""Triangle fixing for L2 metric nearness: the benchmarks' baseline.

Brickell, Dhillon, Sra & Tropp, "The metric nearness problem", SIAM J. Matrix
Anal. Appl. 30(1), 2008. Benchmark baseline only, written from the paper's
description and self-contained (it uses nothing from metric_estimators): cyclic
Hildreth projections onto *every* triangle inequality, in a fixed order, with
one dual per (triangle, side) -- ``3 C(n, 3)`` duals, so memory is Theta(n^3)
and every sweep costs Theta(n^3).  Stops when a sweep finds no violation
above ``tol_abs`` and moves nothing by more than ``tol_abs`` (the same test
as Project and Forget's: feasible *and* duals consistent).
"""

import time

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _sweep(X, z):
    """One cyclic pass of Hildreth projections over every triangle inequality."""
    n = X.shape[0]
    t = 0
    maxv = 0.0
    maxd = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                for r in range(3):
                    # constraint: X[a,b] <= X[a,c] + X[c,b]
                    if r == 0:
                        a, b, c = i, j, k
                    elif r == 1:
                        a, b, c = i, k, j
                    else:
                        a, b, c = j, k, i
                    s = X[a, b] - X[a, c] - X[c, b]
                    if s > maxv:
                        maxv = s
                    theta = s / 3.0
                    zc = z[t]
                    delta = theta if theta > -zc else -zc
                    if delta != 0.0:
                        z[t] = zc + delta
                        if abs(delta) > maxd:
                            maxd = abs(delta)
                        X[a, b] -= delta
                        X[b, a] = X[a, b]
                        X[a, c] += delta
                        X[c, a] = X[a, c]
                        X[c, b] += delta
                        X[b, c] = X[c, b]
                    t += 1
    return maxv, maxd


def triangle_fixing(D, tol=1e-6, max_sweeps=10000, verbose=False):
    """L2 metric nearness by triangle fixing; returns (M, info dict)."""
    X = np.array(D, dtype=np.float64, copy=True)
    n = X.shape[0]
    tol_abs = tol * float(X.max())
    z = np.zeros(3 * (n * (n - 1) * (n - 2) // 6))
    t0 = time.perf_counter()
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        maxv, maxd = _sweep(X, z)
        if verbose:
            print(sweeps, maxv, maxd, time.perf_counter() - t0, flush=True)
        if maxv <= tol_abs and maxd <= tol_abs:
            break
    iu = np.triu_indices(n, 1)
    return X, {"sweeps": sweeps, "time": time.perf_counter() - t0,
               "objective": float(np.sum((X[iu] - D[iu]) ** 2)),
               "dual_bytes": z.nbytes}
