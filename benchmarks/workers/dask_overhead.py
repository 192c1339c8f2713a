"""First-task overhead of one learner on fresh Dask workers, cold and warm numba cache.

Job: ``{"dataset": "digits-<rows>", "impl": "LMNN" | "ITML_Supervised",
"params": {"tasks": t}}``; returns two rows, ``params["cache"]`` = ``cold``
(an empty ``NUMBA_CACHE_DIR``) and ``warm`` (the same directory after the cold
cluster wrote it). For each, a fresh ``distributed.LocalCluster`` (2 worker
processes, 1 thread each, one BLAS/OpenMP/numba thread) gets ``t`` fit tasks
per worker, one after the other, both workers at once. A task receives a
pickled ``Pipeline(StandardScaler, learner, KNeighborsClassifier(3))`` and
one 5-fold split of ``rows`` digits (seeded subsample), fits and scores it.
Per task: round trip seen by the client (``submit`` to result; unpickling the
estimator imports metric_estimators on a fresh worker), time inside the task
(fit + score; numba loads or compiles the kernels on first use), numba cache
hits / misses. On the warm cluster a ``GridSearchCV`` under
``joblib.parallel_backend("dask")`` is compared with the sequential run.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time

from benchmarks.workers import _protocol

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "NUMBA_NUM_THREADS": "1"}


def make_pipeline(name: str):
    """Scaler, learner, 3-NN."""
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from metric_estimators import LMNN, ITML_Supervised

    learner = {"LMNN": lambda: LMNN(n_neighbors=3, random_state=0),
               "ITML_Supervised": lambda: ITML_Supervised(random_state=0)}[name]()
    return Pipeline([("scale", StandardScaler()), ("ml", learner),
                     ("knn", KNeighborsClassifier(3))])


def numba_cache_counts() -> tuple[int, int]:
    """Numba cache (hits, misses) summed over the package's loaded kernel modules."""
    from numba.core.registry import CPUDispatcher

    hits = misses = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("metric_estimators._kernels."):
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, CPUDispatcher):
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
    return hits, misses


def fit_task(pipe, X, y, train, test) -> dict:
    """Runs on a Dask worker: fit + score one split; timings and numba cache stats."""
    import warnings

    import metric_estimators  # noqa: F401  (already imported by unpickling)

    h0, m0 = numba_cache_counts()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X[train], y[train])
        score = pipe.score(X[test], y[test])
    seconds = time.perf_counter() - start
    h1, m1 = numba_cache_counts()
    return {"pid": os.getpid(), "in_task_s": seconds, "score": float(score),
            "cache_hits": h1 - h0, "cache_misses": m1 - m0,
            "cache_dir": os.environ.get("NUMBA_CACHE_DIR")}


def start_cluster(cache_dir: str):
    """A 2-process LocalCluster whose workers use ``cache_dir`` and one thread."""
    import distributed

    os.environ.update(THREAD_ENV, NUMBA_CACHE_DIR=cache_dir)  # spawned workers inherit it
    start = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    client.wait_for_workers(2)
    return cluster, client, time.perf_counter() - start


def run_tasks(client, name, X, y, folds, n_tasks) -> list:
    """``n_tasks`` rounds, one task per worker per round."""
    workers = sorted(client.scheduler_info()["workers"])
    rows = []
    for i in range(n_tasks):
        train, test = folds[i % len(folds)]
        start = time.perf_counter()
        futures = [client.submit(fit_task, make_pipeline(name), X, y, train, test,
                                 workers=[w], allow_other_workers=False, pure=False)
                   for w in workers]
        for w, future in zip(workers, futures):
            r = future.result()
            r.update(round_trip_s=time.perf_counter() - start, task=i,
                     worker=workers.index(w))
            rows.append(r)
    return rows


def grid_search_check(name, X, y) -> dict:
    """GridSearchCV sequentially and on the cluster: same result? wall times."""
    import warnings

    import joblib
    import numpy as np
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    grid = ({"ml__n_neighbors": [1, 3], "knn__n_neighbors": [1, 5]} if name == "LMNN"
            else {"ml__gamma": [0.1, 1.0], "knn__n_neighbors": [1, 5]})
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    out = {}
    for backend in ("sequential", "dask"):
        search = GridSearchCV(make_pipeline(name), grid, cv=cv, n_jobs=-1)
        start = time.perf_counter()
        with joblib.parallel_backend(backend), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y)
        out[backend] = (search, time.perf_counter() - start)
    (a, ta), (b, tb) = out["sequential"], out["dask"]
    same = all(np.array_equal(a.cv_results_[k], b.cv_results_[k])
               for k in a.cv_results_ if k.endswith("_test_score"))
    return {"same_best_params": a.best_params_ == b.best_params_,
            "best_params": {k: v for k, v in a.best_params_.items()},
            "same_scores": bool(same), "local_s": ta, "dask_s": tb, "n_fits": 3 * 4}


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "n/a"


def run(job: dict) -> list:
    """Cold then warm cluster for one learner."""
    import platform

    import dask
    import distributed
    import numba
    import numpy as np
    import sklearn
    from sklearn.datasets import load_digits
    from sklearn.model_selection import StratifiedKFold

    name, params = job["impl"], job["params"]
    n_rows = int(job["dataset"].rpartition("-")[2])
    X, y = load_digits(return_X_y=True)
    keep = np.sort(np.random.default_rng(0).choice(len(X), min(n_rows, len(X)), replace=False))
    X, y = X[keep], y[keep]
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    versions = {"python": platform.python_version(), "dask": dask.__version__,
                "distributed": distributed.__version__, "numba": numba.__version__,
                "scikit-learn": sklearn.__version__, "numpy": np.__version__}
    rows = []
    cache_dir = tempfile.mkdtemp(prefix="numba-cache-")
    try:
        for state in ("cold", "warm"):
            cluster, client, start_s = start_cluster(cache_dir)
            try:
                tasks = run_tasks(client, name, X, y, folds, params["tasks"])
                grid = grid_search_check(name, X, y) if state == "warm" else None
            finally:
                client.close()
                cluster.close()
            rows.append({"params": {**params, "cache": state}, "cluster_start_s": start_s,
                         "tasks": tasks, "grid": grid, "uptime": uptime(),
                         "versions": versions, "n_rows": int(len(X))})
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return rows


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
