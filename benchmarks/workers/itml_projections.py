"""LogDet (ITML) Bregman projections per second, against BLAS and dgemm, single thread.

Job: ``{"dataset": "d-<d>", "impl": "ours", "params": {}}`` times the kernel's
projections onto ``v^T A v <= xi`` (``min(d, 64)`` violated similar
constraints with tiny targets, so every projection updates ``A``) and the same
projection written with scipy's BLAS level-2 calls (``dsymv`` + ``dsyr``);
``{"dataset": "dgemm-512", "impl": "numpy", ...}`` times single-threaded
``dgemm`` (numpy matmul of two 512 x 512 matrices), the machine's reference
flop rate. One projection costs about ``3 d^2`` flops when symmetry is
exploited (``A v`` on one triangle, then the rank-one update); the kernel does
``5 d^2`` (full matrix, reduction-free, exactly symmetric update).

This is a kernel micro-benchmark: unlike the other workers it imports a
private kernel (``metric_estimators._kernels.bregman.logdet_sweep``), the
only place the projection exists on its own. Everything runs under
``threadpool_limits(1)``.
"""

from __future__ import annotations

import sys
import time

from benchmarks.workers import _protocol


def best_time(fn, min_time=0.3, repeat=5):
    """Smallest per-call time of ``fn`` over ``repeat`` batches of >= min_time / 4."""
    import numpy as np

    fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt >= min_time / 4:
            break
        n *= 2
    n = max(1, int(n * (min_time / 4) / max(dt, 1e-9)) + 1)
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def dgemm_flops(n: int = 512) -> float:
    """Single-threaded dgemm flop rate."""
    import numpy as np

    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return 2 * n ** 3 / best_time(lambda: A @ B, min_time=0.5)


def problem(d: int, m: int, seed: int = 0):
    """``m`` similar constraints with tiny targets: every projection updates ``A``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)) / np.sqrt(d), np.ones(m), np.full(m, 1e-3)


def kernel_rate(d: int) -> float:
    """Projections per second of the numba kernel (resets subtracted)."""
    import numpy as np

    from metric_estimators._kernels.bregman import logdet_sweep

    m = min(d, 64)
    V, delta, xi0 = problem(d, m)
    idx = np.arange(m, dtype=np.int64)
    w, wn = np.empty(d), np.empty(d)
    updates = []

    def sweep():
        A, xi, lam = np.eye(d), xi0.copy(), np.zeros(m)
        updates.append(logdet_sweep(A, V, delta, xi, lam, idx, 1.0, w, wn)[2])

    t = best_time(sweep)
    if set(updates) != {m}:
        raise RuntimeError(f"not every projection updated A: {sorted(set(updates))}")
    t_reset = best_time(lambda: (np.eye(d), xi0.copy(), np.zeros(m)))
    return m / (t - t_reset)


def blas_rate(d: int) -> float:
    """Projections per second of the same projection with scipy's dsymv + dsyr."""
    import numpy as np
    from scipy.linalg import blas

    m = min(d, 64)
    V, delta, xi0 = problem(d, m)

    def sweep():
        A = np.asfortranarray(np.eye(d))
        lam, xi = np.zeros(m), xi0.copy()
        for c in range(m):
            w = blas.dsymv(1.0, A, V[c], lower=0)
            p = V[c] @ w
            alpha = min(lam[c], 0.5 * (1.0 / p - 1.0 / xi[c]))
            lam[c] -= alpha
            beta = alpha / (1.0 - alpha * p)
            xi[c] = xi[c] / (1.0 + alpha * xi[c])
            A = blas.dsyr(beta, w, a=A, lower=0, overwrite_a=1)

    t = best_time(sweep)
    t_reset = best_time(lambda: (np.asfortranarray(np.eye(d)), np.zeros(m), xi0.copy()))
    return m / (t - t_reset)


def run(job: dict) -> dict:
    """One dimension's projection rates, or the dgemm reference."""
    from threadpoolctl import threadpool_limits

    kind, _, size = job["dataset"].rpartition("-")
    with threadpool_limits(1):
        if kind == "dgemm":
            return {"dgemm_flops": dgemm_flops(int(size))}
        d = int(size)
        return {"d": d, "ours_proj_per_s": kernel_rate(d), "blas_proj_per_s": blas_rate(d)}


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
