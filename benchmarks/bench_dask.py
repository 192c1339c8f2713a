"""First-task overhead of metric learners on fresh Dask workers.

For each learner (LMNN, ITML_Supervised) and numba cache state (cold: an
empty ``NUMBA_CACHE_DIR``; warm: the same directory after the cold run wrote
it), start a fresh ``distributed.LocalCluster`` (2 worker processes, 1 thread
each, one BLAS/OpenMP/numba thread), then send each worker ``--tasks`` fit
tasks one after the other, both workers at the same time.  A task receives a
pickled ``Pipeline(StandardScaler, learner, KNeighborsClassifier)`` and one
cross-validation split of digits, fits and scores it.  Reported per task:

* round trip: ``client.submit`` to result, seen by the client (includes
  unpickling the estimator, which imports metric_estimators on a fresh worker),
* in task: the fit + score time measured inside the task (includes numba
  loading or compiling the kernels on first use),
* numba cache hits / misses (kernel signatures loaded / compiled in the task).

Finally a ``GridSearchCV`` under ``joblib.parallel_backend("dask")`` on the
warm cluster is compared with the sequential local run (same best_params_ and
scores, wall times).

    python benchmarks/bench_dask.py            # -> benchmarks/results/dask.md
    python benchmarks/bench_dask.py --tasks 6 --output dask
"""

import argparse
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"

THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}


def make_pipeline(name):
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from metric_estimators import LMNN, ITML_Supervised

    learner = {
        "LMNN": lambda: LMNN(n_neighbors=3, random_state=0),
        "ITML_Supervised": lambda: ITML_Supervised(random_state=0),
    }[name]()
    return Pipeline([("scale", StandardScaler()), ("ml", learner),
                     ("knn", KNeighborsClassifier(3))])


def fit_task(pipe, X, y, train, test):
    """Runs on a worker: fit + score one split; timings and numba stats."""
    import os
    import sys
    import time
    import warnings

    from numba.core.registry import CPUDispatcher

    import metric_estimators._kernels as kernels_pkg

    def numba_counts():
        hits = misses = 0
        for mod_name, mod in list(sys.modules.items()):
            if not mod_name.startswith(kernels_pkg.__name__ + "."):
                continue
            for obj in vars(mod).values():
                if isinstance(obj, CPUDispatcher):
                    hits += sum(obj.stats.cache_hits.values())
                    misses += sum(obj.stats.cache_misses.values())
        return hits, misses

    h0, m0 = numba_counts()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X[train], y[train])
        score = pipe.score(X[test], y[test])
    t1 = time.perf_counter()
    h1, m1 = numba_counts()
    return {
        "pid": os.getpid(),
        "in_task_s": t1 - t0,
        "score": float(score),
        "cache_hits": h1 - h0,
        "cache_misses": m1 - m0,
        "cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
    }


def start_cluster(cache_dir):
    import distributed

    env = dict(THREAD_ENV, NUMBA_CACHE_DIR=cache_dir)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # spawned worker processes inherit the environment
    try:
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=logging.ERROR)
        client = distributed.Client(cluster)
        client.wait_for_workers(2)
        start_s = time.perf_counter() - t0
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return cluster, client, start_s


def run_tasks(client, name, X, y, splits, n_tasks):
    workers = sorted(client.scheduler_info()["workers"])
    rows = []
    for i in range(n_tasks):
        train, test = splits[i % len(splits)]
        futs, t0 = [], time.perf_counter()
        for w in workers:
            futs.append(client.submit(
                fit_task, make_pipeline(name), X, y, train, test,
                workers=[w], allow_other_workers=False, pure=False))
        for w, f in zip(workers, futs):
            r = f.result()
            r["round_trip_s"] = time.perf_counter() - t0
            r["task"] = i
            r["worker"] = workers.index(w)
            rows.append(r)
    return rows


def grid_search_check(client, name, X, y):
    import joblib
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    grid = ({"ml__n_neighbors": [1, 3], "knn__n_neighbors": [1, 5]}
            if name == "LMNN" else
            {"ml__gamma": [0.1, 1.0], "knn__n_neighbors": [1, 5]})
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    out = {}
    for backend in ("sequential", "dask"):
        gs = GridSearchCV(make_pipeline(name), grid, cv=cv, n_jobs=-1)
        t0 = time.perf_counter()
        with joblib.parallel_backend(backend):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gs.fit(X, y)
        out[backend] = (gs, time.perf_counter() - t0)
    (a, ta), (b, tb) = out["sequential"], out["dask"]
    same_scores = all(
        np.array_equal(a.cv_results_[k], b.cv_results_[k])
        for k in a.cv_results_ if k.endswith("_test_score"))
    return {"same_best_params": a.best_params_ == b.best_params_,
            "best_params": a.best_params_, "same_scores": bool(same_scores),
            "local_s": ta, "dask_s": tb, "n_fits": 3 * 4}


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "n/a"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=5,
                    help="fit tasks per worker and cluster (default 5)")
    ap.add_argument("--learners", default="LMNN,ITML_Supervised")
    ap.add_argument("--n-samples", type=int, default=900,
                    help="digits rows used (default 900)")
    ap.add_argument("--output", default="dask")
    args = ap.parse_args(argv)

    import dask
    import distributed
    import numba
    import sklearn
    from sklearn.datasets import load_digits
    from sklearn.model_selection import StratifiedKFold

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(len(X), min(args.n_samples, len(X)),
                              replace=False))
    X, y = X[keep], y[keep]
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))

    load_before = uptime()
    report = {"uptime_before": load_before, "runs": []}
    for name in args.learners.split(","):
        cache_dir = tempfile.mkdtemp(prefix="numba-cache-")
        try:
            for state in ("cold", "warm"):
                cluster, client, start_s = start_cluster(cache_dir)
                try:
                    rows = run_tasks(client, name, X, y, splits, args.tasks)
                    gs = (grid_search_check(client, name, X, y)
                          if state == "warm" else None)
                finally:
                    client.close()
                    cluster.close()
                report["runs"].append({"learner": name, "cache": state,
                                       "cluster_start_s": start_s,
                                       "tasks": rows, "grid": gs,
                                       "uptime": uptime()})
                first = [r for r in rows if r["task"] == 0]
                later = [r for r in rows if r["task"] > 0]
                print(f"{name:16s} {state}: first round trip "
                      f"{np.mean([r['round_trip_s'] for r in first]):.2f} s, "
                      f"later {np.median([r['round_trip_s'] for r in later]):.2f} s;"
                      f" misses {[r['cache_misses'] for r in first]}",
                      flush=True)
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    report["uptime_after"] = uptime()
    report["versions"] = {
        "python": platform.python_version(), "dask": dask.__version__,
        "distributed": distributed.__version__, "numba": numba.__version__,
        "scikit-learn": sklearn.__version__, "numpy": np.__version__}

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.output}.json").write_text(json.dumps(report, indent=1,
                                                            default=str))
    (RESULTS / f"{args.output}.md").write_text(render(report, args, len(X)))
    print(f"wrote benchmarks/results/{args.output}.md")


def render(report, args, n):
    v = report["versions"]
    lines = [
        "# First-task overhead on fresh Dask workers",
        "",
        f"`python benchmarks/bench_dask.py --tasks {args.tasks} --learners "
        f"{args.learners} --n-samples {args.n_samples}`; digits, {n} rows, "
        "one 5-fold split per task (4/5 train), "
        "`Pipeline(StandardScaler, learner, KNeighborsClassifier(3))`, "
        "`LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`, "
        "one BLAS/OpenMP/numba thread per worker, both workers busy at once.",
        "",
        f"Python {v['python']}, dask {v['dask']}, distributed "
        f"{v['distributed']}, numba {v['numba']}, scikit-learn "
        f"{v['scikit-learn']}, numpy {v['numpy']}. 2-core machine shared with "
        "other jobs.",
        "",
        f"- `uptime` before: `{report['uptime_before']}`",
        f"- `uptime` after: `{report['uptime_after']}`",
        "",
        "Round trip = `client.submit` to result (unpickling the estimator on a "
        "fresh worker imports metric_estimators); in task = fit + score inside "
        "the task (numba loads or compiles the kernels on first use). Means "
        "over the 2 workers for task 1, medians over tasks 2.. of both "
        "workers. cold: empty `NUMBA_CACHE_DIR`; warm: the same directory "
        "after the cold cluster wrote it, fresh worker processes.",
        "",
        "| learner | numba cache | cluster start | task 1 round trip | task 1 "
        "in task | later round trip | later in task | first-task overhead | "
        "task 1 kernels compiled / loaded | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in report["runs"]:
        rows = run["tasks"]
        first = [r for r in rows if r["task"] == 0]
        later = [r for r in rows if r["task"] > 0]
        f_rt = np.mean([r["round_trip_s"] for r in first])
        f_in = np.mean([r["in_task_s"] for r in first])
        l_rt = np.median([r["round_trip_s"] for r in later])
        l_in = np.median([r["in_task_s"] for r in later])
        miss = "+".join(str(r["cache_misses"]) for r in first)
        hit = "+".join(str(r["cache_hits"]) for r in first)
        load = run["uptime"].split("load average:")[-1].split(",")[0].strip()
        lines.append(
            f"| {run['learner']} | {run['cache']} | {run['cluster_start_s']:.1f} s"
            f" | {f_rt:.2f} s | {f_in:.2f} s | {l_rt:.2f} s | {l_in:.2f} s | "
            f"**{f_rt - l_rt:.2f} s** | {miss} / {hit} | {load} |")
    lines += ["", "Grid search (2 x 2 grid, 3 folds = 12 fits) on the warm "
              "cluster vs the sequential local run:", "",
              "| learner | same best_params_ | same test scores | best_params_ "
              "| local (sequential) | dask (2 workers) |", "|---|---|---|---|---|---|"]
    for run in report["runs"]:
        g = run["grid"]
        if g:
            lines.append(
                f"| {run['learner']} | {g['same_best_params']} | "
                f"{g['same_scores']} | `{g['best_params']}` | {g['local_s']:.2f} s"
                f" | {g['dask_s']:.2f} s |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
