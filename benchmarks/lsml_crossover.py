"""LSML: numba start-up against the per-evaluation cost of numba and numpy.

Measures what :mod:`metric_estimators._problems.lsml` bases its switch on:

* the CPU time of loading the cached numba kernels in a fresh process
  (``import`` of the kernel module and the first calls), three fresh
  processes;
* the CPU time of one evaluation (residuals and gradient) with the numba
  kernels and with the vectorised numpy twins, for quadruplet counts
  ``n`` and feature counts ``d`` around those of the benchmark data sets,
  best of three repetitions.

Run single-threaded (the numbers are CPU seconds, ``time.process_time``)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \\
        python benchmarks/lsml_crossover.py > benchmarks/results/lsml_crossover.txt
"""

import subprocess
import sys
import time

import numpy as np

START_UP = """
import time
t = time.process_time()
import numpy as np
from metric_estimators._kernels.lsml import quadruplet_gradient, quadruplet_residuals
V = np.ones((5, 3)); U = np.zeros((5, 3)); M = np.eye(3); w = np.full(5, 0.2)
cv = np.empty(5); cu = np.empty(5); G = np.empty((3, 3))
quadruplet_residuals(V, U, M, w, cv, cu)
quadruplet_gradient(V, U, cv, cu, G)
print(time.process_time() - t)
"""


def best_ms(fn, repeat):
    """Best of three mean CPU milliseconds of ``repeat`` calls."""
    best = np.inf
    for _ in range(3):
        t = time.process_time()
        for _ in range(repeat):
            fn()
        best = min(best, (time.process_time() - t) / repeat)
    return 1e3 * best


def main():
    from metric_estimators._kernels.lsml import (
        quadruplet_gradient,
        quadruplet_residuals,
    )
    from metric_estimators._problems.lsml import gradient_numpy, residuals_numpy

    starts = [float(subprocess.run([sys.executable, "-c", START_UP], check=True,
                                   capture_output=True, text=True).stdout)
              for _ in range(3)]
    print("numba start-up in a fresh process (import + first calls), CPU s: "
          + ", ".join(f"{s:.3f}" for s in starts))
    rng = np.random.RandomState(0)
    print(f"{'n':>6} {'d':>4} {'numba ms':>9} {'numpy ms':>9}")
    for n in (80, 180, 500, 2000, 10000):
        for d in (13, 30, 64):
            V, U = rng.randn(n, d), rng.randn(n, d)
            A = rng.randn(d, d)
            M = A @ A.T / d + np.eye(d)
            w = np.full(n, 1.0 / n)
            cv, cu, G = np.empty(n), np.empty(n), np.empty((d, d))

            def with_numba():
                quadruplet_residuals(V, U, M, w, cv, cu)
                quadruplet_gradient(V, U, cv, cu, G)

            def with_numpy():
                _, a, b = residuals_numpy(V, U, M, w)
                gradient_numpy(V, U, a, b)

            repeat = max(3, int(2e6 / (n * d * d)))
            print(f"{n:6d} {d:4d} {best_ms(with_numba, repeat):9.3f} "
                  f"{best_ms(with_numpy, repeat):9.3f}")


if __name__ == "__main__":
    main()
