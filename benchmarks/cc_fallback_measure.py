"""Where the short-edge triangle oracle stops paying: time against the dense one.

    python benchmarks/cc_fallback_measure.py [--n 1000]

CC-like iterates: a fraction ``p`` of the pairs short (planted clusters of
equal size, x uniform in [0, 0.4] inside a cluster, 1 elsewhere, plus 1 %
random noise). Prints the fraction of short pairs, the time of
``short_edge_triangles`` and of ``DenseTriangleOracle`` (float32 and float64).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from metric_estimators._kernels.short_edge_triangles import short_edge_triangles  # noqa: E402
from metric_estimators.solvers.oracles import DenseTriangleOracle, ShortEdgeTriangleOracle  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    iu = np.triu_indices(n, 1)
    dense = DenseTriangleOracle(n)
    short = ShortEdgeTriangleOracle(n)
    x0 = rng.random(iu[0].size)
    short_edge_triangles(x0, n, 1e-3)
    dense(x0, 1e-3, precision="float32")
    print(f"n {n}, load {os.getloadavg()[0]:.1f}")
    print("clusters | short fraction | short-edge s | dense f32 s | dense f64 s")
    for k in (200, 50, 20, 8, 4, 2):
        g = rng.integers(0, k, n)
        same = g[iu[0]] == g[iu[1]]
        x = np.where(same, rng.random(same.size) * 0.4, 1.0)
        noise = rng.random(x.size) < 0.01
        x[noise] = rng.random(noise.sum())
        frac = short.short_fraction(x, 1e-3)
        t = time.perf_counter()
        short_edge_triangles(x, n, 1e-3)
        ts = time.perf_counter() - t
        t = time.perf_counter()
        dense(x, 1e-3, precision="float32")
        t32 = time.perf_counter() - t
        t = time.perf_counter()
        dense(x, 1e-3, precision="float64")
        t64 = time.perf_counter() - t
        print(f"{k} | {frac:.3f} | {ts:.2f} | {t32:.2f} | {t64:.2f}", flush=True)


if __name__ == "__main__":
    main()
