"""Where a path switch of the package pays: numba start-up against kernel costs.

Job: ``{"dataset": d, "impl": study, "params": {...}}``, one of

``lmnn_startup`` (dataset ``"-"``, params ``{"run": r}``)
    CPU seconds (``time.process_time``) of numba's start-up for an LMNN fit
    in this fresh process, which has imported scikit-learn and the package
    but not numba: importing the kernel modules of LMNN and of the k-NN
    ranking and their first calls (cache loads).
``lmnn_kernels`` (dataset ``wine`` | ``breast_cancer`` | ``digits`` |
``synth-<n>-20``)
    CPU seconds of one warm LMNN fit (``LMNN(random_state=0)``, standardised
    data) with the numpy kernels and with the numba kernels, forced by
    :func:`~metric_estimators._backend.use`; best
    of two after one untimed fit.  ``synth-<n>-20`` is
    ``make_classification(n, 20, n_informative=10, n_classes=5,
    random_state=0)``.  (An earlier basis of the lmnn family's limits.)
``lsml_startup`` (dataset ``"-"``, params ``{"run": r}``)
    the same start-up for LSML's two kernels.
``lsml_kernels`` (dataset ``<n>x<d>``)
    CPU milliseconds of one LSML evaluation (residuals and gradient) on
    ``n`` random quadruplet differences of ``d`` features, numba kernels
    against the numpy twins of :mod:`metric_estimators._problems.lsml`, best
    of three means.
``triangle_oracle`` (dataset ``n<n>-k<k>``)
    seconds of one call of the short-edge triangle search and of the dense
    oracle (float32 and float64) on a correlation-clustering-like iterate:
    ``k`` planted clusters of equal size, ``x`` uniform in [0, 0.4] inside a
    cluster and 1 elsewhere, 1 % of the pairs random; also the fraction of
    short pairs.  Where ``ShortEdgeTriangleOracle`` should fall back to the
    dense oracle (its ``dense_fraction``).

Run single-threaded (``--threads 1``): the numbers are CPU times.
"""

from __future__ import annotations

import sys
import time
import warnings

from benchmarks.workers import _protocol

LMNN_STARTUP = """
import numpy as np
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
"""

LSML_STARTUP = """
import numpy as np
from metric_estimators._kernels.lsml import quadruplet_gradient, quadruplet_residuals
V = np.ones((5, 3)); U = np.zeros((5, 3)); M = np.eye(3); w = np.full(5, 0.2)
cv = np.empty(5); cu = np.empty(5); G = np.empty((3, 3))
quadruplet_residuals(V, U, M, w, cv, cu)
quadruplet_gradient(V, U, cv, cu, G)
"""


def startup(code: str) -> dict:
    """CPU seconds of ``code`` (kernel imports and first calls) in this fresh process."""
    import numpy  # noqa: F401  (imported before the clock starts, as by any fit)
    import sklearn.datasets  # noqa: F401

    import metric_estimators  # noqa: F401
    from metric_estimators.solvers.impostors import ImpostorSet  # noqa: F401

    assert "numba" not in sys.modules, "numba was loaded before the measurement"
    t = time.process_time()
    exec(compile(code, "<startup>", "exec"), {})
    return {"startup_cpu_s": time.process_time() - t}


def lmnn_data(name: str):
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    if name.startswith("synth-"):
        _, n, d = name.split("-")
        X, y = datasets.make_classification(n_samples=int(n), n_features=int(d),
                                            n_informative=10, n_classes=5, random_state=0)
    else:
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def lmnn_fit_seconds(X, y, numba: bool, repeat: int = 2) -> float:
    """Best CPU seconds of ``repeat`` warm LMNN fits (numpy or numba kernels)."""
    from metric_estimators import LMNN, _backend

    best = float("inf")
    for i in range(repeat + 1):  # the first fit compiles / loads: not counted
        with _backend.use("numba" if numba else "numpy"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.process_time()
            LMNN(random_state=0).fit(X, y)
            elapsed = time.process_time() - t
        if i:
            best = min(best, elapsed)
    return best


def lmnn_kernels(name: str) -> dict:
    X, y = lmnn_data(name)
    a, b = lmnn_fit_seconds(X, y, False), lmnn_fit_seconds(X, y, True)
    return {"n_samples": int(X.shape[0]), "numpy_cpu_s": a, "numba_cpu_s": b,
            "numpy_minus_numba_s": a - b}


def best_ms(fn, repeat: int) -> float:
    """Best of three mean CPU milliseconds of ``repeat`` calls."""
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        for _ in range(repeat):
            fn()
        best = min(best, (time.process_time() - t) / repeat)
    return 1e3 * best


def lsml_kernels(name: str) -> dict:
    import numpy as np

    from metric_estimators._kernels.lsml import quadruplet_gradient, quadruplet_residuals
    from metric_estimators._kernels.numpy import lsml as twin

    n, d = (int(v) for v in name.split("x"))
    rng = np.random.RandomState(0)
    V, U = rng.randn(n, d), rng.randn(n, d)
    A = rng.randn(d, d)
    M = A @ A.T / d + np.eye(d)
    w = np.full(n, 1.0 / n)
    cv, cu, G = np.empty(n), np.empty(n), np.empty((d, d))

    def with_numba():
        quadruplet_residuals(V, U, M, w, cv, cu)
        quadruplet_gradient(V, U, cv, cu, G)

    def with_numpy():
        twin.quadruplet_residuals(V, U, M, w, cv, cu)
        twin.quadruplet_gradient(V, U, cv, cu, G)

    with_numba()  # load the kernels before timing
    repeat = max(3, int(2e6 / (n * d * d)))
    return {"n_quadruplets": n, "n_features": d, "numba_ms": best_ms(with_numba, repeat),
            "numpy_ms": best_ms(with_numpy, repeat)}


def triangle_oracle(name: str) -> dict:
    import numpy as np

    from metric_estimators._backend import NUMBA
    from metric_estimators._kernels.short_edge_triangles import short_edge_triangles
    from metric_estimators.solvers.oracles import DenseTriangleOracle, ShortEdgeTriangleOracle

    n, k = (int(part[1:]) for part in name.split("-"))
    rng = np.random.default_rng(0)
    iu = np.triu_indices(n, 1)
    dense, short = (DenseTriangleOracle(n, kernels=NUMBA),
                    ShortEdgeTriangleOracle(n, kernels=NUMBA))
    x0 = rng.random(iu[0].size)
    short_edge_triangles(x0, n, 1e-3)  # load the kernels before timing
    dense(x0, 1e-3, precision="float32")
    g = rng.integers(0, k, n)
    same = g[iu[0]] == g[iu[1]]
    x = np.where(same, rng.random(same.size) * 0.4, 1.0)
    noise = rng.random(x.size) < 0.01
    x[noise] = rng.random(noise.sum())
    out = {"short_fraction": float(short.short_fraction(x, 1e-3))}
    t = time.perf_counter()
    short_edge_triangles(x, n, 1e-3)
    out["short_edge_s"] = time.perf_counter() - t
    for precision in ("float32", "float64"):
        t = time.perf_counter()
        dense(x, 1e-3, precision=precision)
        out[f"dense_{precision}_s"] = time.perf_counter() - t
    return out


def run(job: dict) -> dict:
    study, dataset = job["impl"], job["dataset"]
    if study == "lmnn_startup":
        return startup(LMNN_STARTUP)
    if study == "lsml_startup":
        return startup(LSML_STARTUP)
    if study == "lmnn_kernels":
        return lmnn_kernels(dataset)
    if study == "lsml_kernels":
        return lsml_kernels(dataset)
    if study == "triangle_oracle":
        return triangle_oracle(dataset)
    raise ValueError(f"unknown study {study!r}")


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
