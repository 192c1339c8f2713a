"""LogDet (ITML) Bregman projections per second against this machine's flop rate.

    python benchmarks/bench_projections.py        # -> results/itml_projections.md

One projection onto ``v^T A v <= xi`` costs, arithmetically, about ``3 d^2``
flops when symmetry is exploited (``A v``: ``d^2`` multiply-adds on one
triangle, ``A += beta (Av)(Av)^T``: ``d^2 / 2`` multiply-adds); the kernel in
``metric_estimators/_kernels/bregman.py`` does ``5 d^2`` (full matrix,
reduction-free, exactly symmetric update; see its docstring).  We report the
projection rate, the rate at ``3 d^2`` flops per projection as a fraction of

* the machine's achievable flop rate, measured here as single-threaded
  ``dgemm`` (numpy matmul of two ``n x n`` matrices, ``n = 512``), and
* the rate of the same projection written with single-threaded BLAS level-2
  calls (``dsymv`` + ``dsyr`` from scipy, i.e. the best a BLAS-based
  implementation gets, at ``3 d^2`` flops too).

Every projection in the timed sweeps changes ``A`` (the constraints are
violated), so the rank-one update is always done.  Single thread throughout
(numba kernels are single-threaded; BLAS is limited to one thread).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
from scipy.linalg import blas
from threadpoolctl import threadpool_limits

from metric_estimators._kernels.bregman import logdet_sweep

RESULTS = Path(__file__).resolve().parent / "results"


def best_time(fn, min_time=0.3, repeat=5):
    """Smallest per-call time of ``fn`` over ``repeat`` batches of >= min_time."""
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


def dgemm_rate(n=512):
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    t = best_time(lambda: A @ B, min_time=0.5)
    return 2 * n ** 3 / t


def problem(d, m, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((m, d)) / np.sqrt(d)
    delta = np.ones(m)  # similar constraints ...
    xi = np.full(m, 1e-3)  # ... with tiny targets: every projection updates A
    return V, delta, xi


def kernel_rate(d):
    m = min(d, 64)  # at most d constraints: each is violated when reached
    V, delta, xi0 = problem(d, m)
    idx = np.arange(m, dtype=np.int64)
    w, wn = np.empty(d), np.empty(d)
    state = {}

    def run():
        A = np.eye(d)
        xi = xi0.copy()
        lam = np.zeros(m)
        _, _, n_upd = logdet_sweep(A, V, delta, xi, lam, idx, 1.0, w, wn)
        state["n_upd"] = n_upd

    t = best_time(run)
    assert state["n_upd"] == m, state
    # subtract the cost of the resets (np.eye etc.), measured alone
    t_reset = best_time(lambda: (np.eye(d), xi0.copy(), np.zeros(m)))
    return m / (t - t_reset)


def blas_rate(d):
    """The same projection with scipy BLAS: dsymv + dot + dsyr (upper)."""
    m = min(d, 64)
    V, delta, xi0 = problem(d, m)

    def run():
        A = np.asfortranarray(np.eye(d))
        lam = np.zeros(m)
        xi = xi0.copy()
        for c in range(m):
            v = V[c]
            w = blas.dsymv(1.0, A, v, lower=0)
            p = v @ w
            theta = 0.5 * (1.0 / p - 1.0 / xi[c])
            alpha = min(lam[c], theta)
            lam[c] -= alpha
            beta = alpha / (1.0 - alpha * p)
            xi[c] = xi[c] / (1.0 + alpha * xi[c])
            A = blas.dsyr(beta, w, a=A, lower=0, overwrite_a=1)

    t = best_time(run)
    t_reset = best_time(lambda: (np.asfortranarray(np.eye(d)), np.zeros(m), xi0.copy()))
    return m / (t - t_reset)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", default="16,64,256,1024")
    parser.add_argument("--output", default=str(RESULTS / "itml_projections.md"))
    args = parser.parse_args(argv)
    dims = [int(x) for x in args.dims.split(",")]
    with threadpool_limits(1):
        peak = dgemm_rate()
        rows = []
        for d in dims:
            k = kernel_rate(d)
            b = blas_rate(d)
            flops = 3 * d * d
            rows.append((d, k, b, k * flops, k * flops / peak, k / b))
            print(f"d={d:5d}  ours {k:12.0f} proj/s  ({k * flops / 1e9:6.2f} GF/s at 3d^2, "
                  f"{100 * k * flops / peak:5.1f}% of dgemm)  BLAS-2 {b:12.0f} proj/s  "
                  f"ours/BLAS {k / b:5.2f}", flush=True)
    load = os.getloadavg()
    lines = [
        "# ITML LogDet projections per second",
        "",
        f"`python benchmarks/bench_projections.py` on {platform.machine()} "
        f"({os.cpu_count()} cores, shared), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.",
        "",
        f"Machine reference: single-threaded dgemm (n = 512) **{peak / 1e9:.2f} GF/s**.",
        "",
        "| d | ours (proj/s) | GF/s at 3 d^2 | fraction of dgemm | BLAS dsymv+dsyr (proj/s) | ours / BLAS |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for d, k, b, fl, frac, ratio in rows:
        lines.append(f"| {d} | {k:,.0f} | {fl / 1e9:.2f} | {100 * frac:.1f} % | {b:,.0f} | {ratio:.2f} |")
    lines += [
        "",
        "Every timed projection updates `A` (violated similar constraints).  "
        "`3 d^2` is the arithmetic bound per projection with symmetry exploited; "
        "the kernel actually executes `5 d^2` flops (full-matrix, reduction-free "
        "fused update + product; the triangle-only variant measured 2-2.5x slower).  "
        "At d = 1024 the matrix (8 MB) leaves the caches and the projection is "
        "memory-bound (one read + one write of A per projection), so no kernel "
        "can approach the dgemm rate there.  The BLAS column is the same projection "
        "with scipy's single-threaded `dsymv` + `dsyr`; at small d it is dominated "
        "by Python call overhead.",
        "",
    ]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text("\n".join(lines))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
