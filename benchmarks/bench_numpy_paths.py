"""First fit on an empty numba cache, and warm fits, of the estimators with a numpy path.

    python benchmarks/bench_numpy_paths.py --label after
    # -> benchmarks/results/numpy_paths_<label>.{json,md}

For each case (the small problems of the first-contact measurements:
a dense 60-node signed graph, 60 x 60 noisy distances, a sparse 400-node
signed graph, diabetes for MLKR, small ordinal data for LODML, iris for
ITML_Supervised and ProjectAndForget) one fresh process with its own empty
``NUMBA_CACHE_DIR``: import the package, build the data, fit once (the
*first fit*: CPU and wall time from the start of the process, imports and
data included), then fit ``--warm`` more times in the same process (the
*warm fit*: median CPU and wall of those).  The child also reports whether
numba was imported and which kernel modules were loaded.

``--paths numba`` forces the numba kernels on every size, ``--paths numpy``
their numpy twins (:func:`metric_estimators._backend.use`), ``--paths auto``
(default) leaves the choice to the package.  :func:`measure_case` is the
function other scripts may call.

    python benchmarks/bench_numpy_paths.py --threshold
    # -> benchmarks/results/numpy_paths_threshold.{json,md}

measures, in this process with one BLAS thread, a warm fit on both paths
(``_backend.use("numpy")`` / ``_backend.use("numba")``, after one untimed fit
each) over a range of sizes per estimator: the data behind the limits of
:data:`metric_estimators._backend.FAMILIES`.  ``--only ITML_Supervised,...``
measures only those estimators and writes
``numpy_paths_threshold_<--label>.{json,md}``.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

CASES = ("cc_dense", "metric_nearness", "cc_sparse", "mlkr", "lodml",
         "itml_supervised", "project_and_forget", "project_and_forget_wine",
         "itml_supervised_breast_cancer")

# the child: its stdout's last line is the JSON record
_CHILD = r'''
import json, os, resource, statistics, sys, time, warnings
t_wall0 = time.perf_counter()
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
case, path, n_warm = sys.argv[1], sys.argv[2], int(sys.argv[3])
warnings.simplefilter("ignore")
import numpy as np
import metric_estimators as me
if path != "auto":
    # the kernels (or their twins) for every size
    from metric_estimators import _backend
    _backend.mode(path)
t_import = cpu()

def data(case):
    rng = np.random.RandomState(0)
    if case in ("cc_dense", "cc_sparse"):
        n = 60 if case == "cc_dense" else 400
        labels = rng.randint(0, 4 if n == 60 else 8, n)
        same = labels[:, None] == labels[None, :]
        A = np.where(same, 1.0, -1.0)
        flip = rng.rand(n, n) < 0.1
        A = np.where(flip, -A, A)
        A = np.triu(A, 1)
        if case == "cc_sparse":
            from scipy import sparse
            keep = np.triu(rng.rand(n, n) < 8.0 / n, 1)
            A = sparse.csr_matrix(np.where(keep, A, 0.0))
            return A + A.T
        A = A + A.T
        return A
    if case == "metric_nearness":
        P = rng.rand(60, 2)
        D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
        D = D + np.abs(rng.randn(60, 60)) * 0.1
        D = (D + D.T) / 2
        np.fill_diagonal(D, 0.0)
        return D
    if case == "mlkr":
        from sklearn.datasets import load_diabetes
        return load_diabetes(return_X_y=True)
    if case == "lodml":
        from metric_estimators.ranking import make_ordinal
        return make_ordinal(n_samples=200, n_informative=3, n_noise=2,
                            n_levels=5, random_state=0)
    if case in ("project_and_forget_wine", "itml_supervised_breast_cancer"):
        from sklearn.datasets import load_breast_cancer, load_wine
        from sklearn.preprocessing import StandardScaler
        load = load_wine if case.endswith("wine") else load_breast_cancer
        X, y = load(return_X_y=True)
        return StandardScaler().fit_transform(X), y
    from sklearn.datasets import load_iris
    return load_iris(return_X_y=True)

def make(case):
    if case in ("cc_dense", "cc_sparse"):
        return me.CorrelationClustering(random_state=0)
    if case == "metric_nearness":
        return me.MetricNearness()
    if case == "mlkr":
        return me.MLKR(random_state=0)
    if case == "lodml":
        return me.LODML(random_state=0)
    if case.startswith("itml_supervised"):
        return me.ITML_Supervised(random_state=0)
    return me.ProjectAndForget(random_state=0)

def fit(est, d):
    if isinstance(d, tuple):
        return est.fit(*d)
    return est.fit(d)

d = data(case)
est = fit(make(case), d)
first_cpu, first_wall = cpu(), time.perf_counter() - t_wall0
numba_loaded = "numba" in sys.modules
kernels = sorted(m for m in sys.modules if m.startswith("metric_estimators._kernels"))
warm = []
for _ in range(n_warm):
    c0, w0 = cpu(), time.perf_counter()
    fit(make(case), d)
    warm.append((cpu() - c0, time.perf_counter() - w0))
def summary(e):
    out = {}
    for k in ("n_iter_", "lp_objective_", "objective_", "cost_"):
        if hasattr(e, k):
            v = getattr(e, k)
            out[k] = float(v) if not isinstance(v, (int, np.integer)) else int(v)
    if hasattr(e, "components_"):
        out["components_abs_sum"] = float(np.abs(e.components_).sum())
    if hasattr(e, "metric_"):
        out["metric_sum"] = float(e.metric_.sum())
    return out
print(json.dumps(dict(case=case, path=path, first_cpu=first_cpu,
                      import_cpu=t_import,
                      first_wall=first_wall, numba_loaded=numba_loaded,
                      kernel_modules=kernels,
                      warm_cpu=statistics.median(w[0] for w in warm) if warm else None,
                      warm_wall=statistics.median(w[1] for w in warm) if warm else None,
                      warm_runs=warm, summary=summary(est))))
'''


def measure_case(case, *, path="auto", n_warm=3, python=sys.executable,
                 timeout=900):
    """First fit in a fresh process on an empty numba cache, then warm fits.

    Returns the child's record (a dict): ``first_cpu``, ``first_wall``
    (seconds from the start of the process), ``warm_cpu``, ``warm_wall``
    (medians over ``n_warm`` further fits in that process), ``numba_loaded``,
    ``kernel_modules`` and a ``summary`` of the fitted attributes.
    """
    with tempfile.TemporaryDirectory(prefix="numba_cache_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=str(ROOT) + os.pathsep
                   + os.environ.get("PYTHONPATH", ""))
        out = subprocess.run([python, "-c", _CHILD, case, path, str(n_warm)],
                             capture_output=True, text=True, env=env,
                             timeout=timeout, cwd=str(ROOT))
    if out.returncode != 0:
        return dict(case=case, path=path, error=out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def render(rows, label, load, command=None):
    if command is None:
        command = f"python benchmarks/bench_numpy_paths.py --label {label}"
    lines = [f"# First fit on an empty numba cache, and warm fits ({label})", "",
             f"`{command}`; "
             f"load average at start {load}.  First fit: CPU and wall seconds "
             "of a fresh process (imports, data and one fit) with an empty "
             "`NUMBA_CACHE_DIR`.  Warm fit: median of the next fits in that "
             "process.  Import CPU: the process's CPU once `metric_estimators` is "
             "imported (and the mode set), before the data.", "",
             "| case | path | import CPU (s) | first fit CPU (s) | first fit wall (s) "
             "| warm fit CPU (s) | warm fit wall (s) | numba loaded | summary |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['path']} | error | | | | | | "
                         f"{r['error'].splitlines()[-1]} |")
            continue
        lines.append(
            f"| {r['case']} | {r['path']} | "
            f"{r.get('import_cpu', float('nan')):.2f} | {r['first_cpu']:.2f} | "
            f"{r['first_wall']:.2f} | {r['warm_cpu']:.3f} | {r['warm_wall']:.3f} | "
            f"{'yes' if r['numba_loaded'] else 'no'} | "
            f"{json.dumps(r['summary'])} |")
    return "\n".join(lines) + "\n"


def _threshold_cases():
    import numpy as np
    from sklearn.datasets import (
        load_breast_cancer,
        load_diabetes,
        load_digits,
        load_iris,
        load_wine,
    )
    from sklearn.preprocessing import StandardScaler

    import metric_estimators as me
    from metric_estimators.ranking import make_ordinal

    def std(load, n=None):
        X, y = load(return_X_y=True)
        X = StandardScaler().fit_transform(X)
        return (X, y) if n is None else (X[:n], y[:n])

    def distances(n):
        rng = np.random.RandomState(0)
        P = rng.rand(n, 2)
        D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
        D = D + np.abs(rng.randn(n, n)) * 0.1
        D = (D + D.T) / 2
        np.fill_diagonal(D, 0.0)
        return (D,)

    def signed(n):
        rng = np.random.RandomState(0)
        labels = rng.randint(0, 4, n)
        A = np.where(labels[:, None] == labels[None, :], 1.0, -1.0)
        A = np.where(rng.rand(n, n) < 0.1, -A, A)
        A = np.triu(A, 1)
        return (A + A.T,)

    def sparse_signed(n):
        # the first-contact case's graph: 4 planted groups, ~8 edges per node
        from benchmarks.workers.first_contact import _sparse_signed_graph

        return (_sparse_signed_graph(n=n),)

    def diabetes(n):
        X, y = load_diabetes(return_X_y=True)
        rng = np.random.RandomState(0)
        idx = rng.randint(0, X.shape[0], n)
        return X[idx] + 0.01 * rng.randn(n, X.shape[1]), y[idx]

    for name in ("iris", "wine"):
        load = load_iris if name == "iris" else load_wine
        yield "ITML_Supervised", name, lambda: me.ITML_Supervised(random_state=0), std(load)
        yield "ProjectAndForget", name, lambda: me.ProjectAndForget(random_state=0), std(load)
    for n in (100, 200, 300):
        X, y = load_digits(return_X_y=True)
        yield "ITML_Supervised", f"digits[:{n}]", lambda: me.ITML_Supervised(random_state=0), (X[:n], y[:n])
        yield "ProjectAndForget", f"digits[:{n}]", lambda: me.ProjectAndForget(random_state=0), (X[:n], y[:n])
    for n in (200, 300):
        yield "ITML_Supervised", f"breast_cancer[:{n}]", lambda: me.ITML_Supervised(random_state=0), std(load_breast_cancer, n)
        yield "ProjectAndForget", f"breast_cancer[:{n}]", lambda: me.ProjectAndForget(random_state=0), std(load_breast_cancer, n)
    # the LogDet families' limits: more pairs, listed or labelled
    yield "ITML_Supervised", "breast_cancer", lambda: me.ITML_Supervised(random_state=0), std(load_breast_cancer)
    for m in (1000, 2000, 4000, 5000, 10000):
        yield ("ITML_Supervised", f"wine, n_constraints={m}",
               lambda m=m: me.ITML_Supervised(n_constraints=m, random_state=0), std(load_wine))
    X, y = load_digits(return_X_y=True)
    yield "ITML_Supervised", "digits (4000 listed pairs)", lambda: me.ITML_Supervised(random_state=0), (X, y)
    for n in (150, 250):
        yield "ProjectAndForget", f"breast_cancer[:{n}]", lambda: me.ProjectAndForget(random_state=0), std(load_breast_cancer, n)
    yield "ProjectAndForget", "digits[:150]", lambda: me.ProjectAndForget(random_state=0), (X[:150], y[:150])
    for n in (60, 100, 150, 200, 300):
        yield "MetricNearness", f"{n} x {n} noisy distances", me.MetricNearness, distances(n)
    for n in (60, 100, 150, 200):
        yield "CorrelationClustering", f"{n}-node signed graph", lambda: me.CorrelationClustering(random_state=0), signed(n)
    for n in (200, 400, 500, 800):
        yield ("CorrelationClustering", f"sparse {n}-node signed graph",
               lambda: me.CorrelationClustering(random_state=0), sparse_signed(n))
    for n in (100, 200, 300, 442):
        yield "MLKR", f"{n} points of diabetes", lambda: me.MLKR(random_state=0, max_iter=100), diabetes(n)
    for n in (200, 500, 1000):
        X, y = make_ordinal(n_samples=n, n_informative=3, n_noise=2, n_levels=5, random_state=0)
        yield "LODML", f"ordinal {n} x 5", lambda: me.LODML(random_state=0), (X, y)
    # the gradient-based learners' families (lmnn, mlkr, scml, ordinal, lsml):
    # the first-contact data sets and larger ones, at the default settings
    Xd, yd = std(load_digits)
    Xb, yb = std(load_breast_cancer)
    for label, (X, y) in (("breast_cancer", (Xb, yb)), ("digits[:1000]", (Xd[:1000], yd[:1000])),
                          ("digits", (Xd, yd))):
        yield "LMNN", label, lambda: me.LMNN(random_state=0), (X, y)
        yield "SCML_Supervised", label, lambda: me.SCML_Supervised(random_state=0), (X, y)
        yield "LSML_Supervised", label, lambda: me.LSML_Supervised(random_state=0), (X, y)
    Xs, t = std(load_diabetes)
    levels = np.searchsorted(np.quantile(t, [0.2, 0.4, 0.6, 0.8]), t)
    yield "MLKR", "diabetes (standardised)", lambda: me.MLKR(random_state=0), (Xs, t)
    for n in (1000, 2000):
        yield ("MLKR", f"{n} points of diabetes, max_iter=100",
               lambda: me.MLKR(random_state=0, max_iter=100), diabetes(n))
    yield "LODML", "diabetes, 5 levels", lambda: me.LODML(random_state=0), (Xs, levels)
    for n in (2000, 5000):
        X, y = make_ordinal(n_samples=n, n_informative=3, n_noise=2, n_levels=5, random_state=0)
        yield "LODML", f"ordinal {n} x 5", lambda: me.LODML(random_state=0), (X, y)


def measure_thresholds(only=None):
    """Warm fits on both paths over a range of sizes (one BLAS thread).

    ``only``: the estimators (class names) to measure; None: all.
    """
    import time
    import warnings

    from threadpoolctl import threadpool_limits

    from metric_estimators import _backend

    rows = []
    warnings.simplefilter("ignore")
    with threadpool_limits(1, user_api="blas"):
        for est, data, make, args in _threshold_cases():
            if only is not None and est not in only:
                continue
            row = dict(estimator=est, data=data)
            for path in ("numpy", "numba"):
                # the path forced, whatever this process has compiled
                with _backend.use(path):
                    make().fit(*args)
                    t = time.process_time()
                    fitted = make().fit(*args)
                row[path] = time.process_time() - t
                row[path + "_n_iter"] = int(getattr(fitted, "n_iter_", -1))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def render_thresholds(rows, load,
                      command="python benchmarks/bench_numpy_paths.py --threshold"):
    lines = ["# Warm fits on the numpy and the numba path, by size", "",
             f"`{command}`; one BLAS "
             f"thread; load average at start {load}.  CPU seconds of one warm "
             "fit (after an untimed one) with every numpy path forced on / off.",
             "", "| estimator | data | numpy (s) | numba (s) | surcharge (s) "
             "| iterations numpy / numba |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['estimator']} | {r['data']} | {r['numpy']:.3f} | "
                     f"{r['numba']:.3f} | {r['numpy'] - r['numba']:+.3f} | "
                     f"{r['numpy_n_iter']} / {r['numba_n_iter']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--paths", default="auto",
                   help="comma-separated: auto, numba, numpy")
    p.add_argument("--warm", type=int, default=3)
    p.add_argument("--label", default="after")
    p.add_argument("--threshold", action="store_true",
                   help="warm fits on both paths by size (see the docstring)")
    p.add_argument("--only", default=None,
                   help="with --threshold: comma-separated estimator names")
    args = p.parse_args(argv)
    load = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    if args.threshold:
        sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one
        only = None if args.only is None else set(args.only.split(","))
        rows = measure_thresholds(only)
        stem = RESULTS / ("numpy_paths_threshold" if only is None
                          else f"numpy_paths_threshold_{args.label}")
        meta = dict(loadavg_start=load, loadavg_end=os.getloadavg(),
                    command=" ".join(["python", "benchmarks/bench_numpy_paths.py"]
                                     + (argv if argv is not None
                                        else sys.argv[1:])))
        stem.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows),
                                                        indent=1))
        stem.with_suffix(".md").write_text(render_thresholds(rows, load,
                                                             meta["command"]))
        return
    rows = []
    for case in args.cases.split(","):
        for path in args.paths.split(","):
            r = measure_case(case, path=path, n_warm=args.warm)
            rows.append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "warm_runs"}),
                  flush=True)
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / f"numpy_paths_{args.label}"
    meta = dict(loadavg_start=load, loadavg_end=os.getloadavg(),
                command=" ".join(["python", "benchmarks/bench_numpy_paths.py"]
                                 + (argv if argv is not None else sys.argv[1:])))
    stem.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows),
                                                    indent=1))
    stem.with_suffix(".md").write_text(render(rows, args.label, load,
                                              meta["command"]))


if __name__ == "__main__":
    main()
