"""LMNN: numba start-up against the fit time of the numpy and the numba kernels.

Measures what :data:`metric_estimators._problems.neighbours.NUMPY_MAX_SAMPLES`
is based on:

* the CPU time of numba's start-up for an LMNN fit in a fresh process that
  has imported scikit-learn and the package but not numba: importing the
  kernel modules of LMNN and of the k-NN ranking, and their first calls
  (cache loads), three fresh processes;
* the CPU time of one warm LMNN fit (``LMNN(random_state=0)``, the
  defaults) with the numpy kernels and with the numba kernels (forced by
  :func:`~metric_estimators._problems.neighbours.numpy_max_samples`), on
  wine, breast cancer, digits and ``make_classification`` sets of ``n``
  points with 20 features and 5 classes, best of two.

Run single-threaded (CPU seconds, ``time.process_time``)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \\
        python benchmarks/lmnn_numpy_threshold.py > benchmarks/results/numpy_threshold.txt
"""

import subprocess
import sys
import time
import warnings

import numpy as np

START_UP = """
import time
import numpy as np
import sklearn.datasets, metric_estimators
from metric_estimators._problems.lmnn import ImpostorSet
t = time.process_time()
from metric_estimators._kernels import lmnn as k
from metric_estimators._kernels.neighbours import rank_candidates
Z = np.random.RandomState(0).randn(20, 3); idx = np.arange(20); t3 = np.zeros((20, 1), np.int64)
td = k.target_sqdist(Z, t3); d = k.pair_sqdist(Z, idx.astype(np.int32), idx[::-1].astype(np.int32))
_, w, wi, _ = k.triplet_loss_weights(td, t3, idx.astype(np.int32), d, 0.5, True)
k.laplacian_product(Z, t3, w, idx.astype(np.int32), idx[::-1].astype(np.int32), wi)
h = k.point_hashes(20, 0)
G = Z @ Z.T; sq = np.einsum("ij,ij->i", Z, Z); rho = np.ones(20)
k.threshold_block(G, sq, sq, rho, rho, idx, idx, True, h, 1.0)
k.pairs_within(Z, idx.astype(np.int32), idx.astype(np.int32), rho)
rank_candidates(Z, Z, idx, G, rho, 1)
print(time.process_time() - t)
"""


def fit_seconds(X, y, numba, repeat=2):
    """Best CPU seconds of ``repeat`` warm LMNN fits (numpy or numba kernels)."""
    from metric_estimators import LMNN
    from metric_estimators._problems.neighbours import numpy_max_samples

    best = np.inf
    for _ in range(repeat + 1):  # the first fit compiles / loads: not counted
        with numpy_max_samples(-1 if numba else 10**12), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.process_time()
            LMNN(random_state=0).fit(X, y)
            elapsed = time.process_time() - t
        best = min(best, elapsed) if _ else best
    return best


def main():
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine, make_classification
    from sklearn.preprocessing import StandardScaler

    starts = [float(subprocess.run([sys.executable, "-c", START_UP], check=True,
                                   capture_output=True, text=True).stdout)
              for _ in range(3)]
    print("numba start-up of an LMNN fit (CPU s, 3 fresh processes): "
          + ", ".join(f"{s:.3f}" for s in starts))
    sets = [(load.__name__[5:], load(return_X_y=True))
            for load in (load_wine, load_breast_cancer, load_digits)]
    for n in (250, 500, 1000, 2500):
        sets.append((f"synth-{n}-20", make_classification(
            n_samples=n, n_features=20, n_informative=10, n_classes=5,
            random_state=0)))
    print(f"{'data':<16s} {'numpy (s)':>10s} {'numba (s)':>10s} {'numpy - numba':>14s}")
    for name, (X, y) in sets:
        X = StandardScaler().fit_transform(X)
        a, b = fit_seconds(X, y, False), fit_seconds(X, y, True)
        print(f"{name:<16s} {a:10.3f} {b:10.3f} {a - b:14.3f}", flush=True)


if __name__ == "__main__":
    main()
