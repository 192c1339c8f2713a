"""The one first-fit worker: an estimator's first fit in this fresh process, and its warm fits.

Job: ``{"dataset": <case>, "impl": <label>, "params": {"cache": "empty" |
"warm" | "as-is", "kernels": bool, "mode": "auto" | "numpy" | "numba", "warm":
int, "numba_first": bool, "family": str, "size": [int, ...], "data": str}}``
(every parameter but ``cache`` optional; ``impl`` only labels the row:
``"ours"``, or the name a command gives its reference) where ``<case>`` is

* a key of :data:`CASES` or :data:`EXTRA_CASES`: an estimator on a small
  problem (a bundled scikit-learn data set or a small generated matrix /
  graph); among the further cases, ``"LMNN-iris"`` and its reference
  ``"sklearn-NCA-iris"`` (scikit-learn's NeighborhoodComponentsAnalysis;
  this package is not imported) fit raw iris with their defaults and
  ``random_state=0``, and time their imports step by step
  (:data:`IMPORT_STEPS`);
* ``"classification-<algo>"`` with ``data`` a data set of
  ``benchmarks/workers/classification.py`` and ``algo`` one of its learners
  of ours (``lmnn``, ``itml_supervised``): that worker's protocol (70/30
  stratified split, StandardScaler fitted on the training part, its
  learner parameters) fitted on the training part; after the fits, the 3-NN
  test accuracy of the fitted model (``accuracy``, untimed);
* ``"cliff-<family>"`` with ``family`` a key of
  ``metric_estimators._backend.FAMILIES`` listed in :data:`CLIFF_FAMILIES`
  and ``size`` that family's size (one number per component, in the order
  of its ``Family.size``): the public estimator of :data:`CLIFF_FAMILIES`
  on generated data of that size (:func:`cliff_case`; the command picks
  sizes above the family's limit, :func:`cliff_sizes`);
* ``"warmup"``: the process then does what ``python -m
  metric_estimators.warmup`` does and reports its CPU time (``process_cpu``)
  and the specialisations compiled (``cache_misses``).

The numba cache directory is the caller's business: ``NUMBA_CACHE_DIR`` in
the environment, or the job's ``numba_cache_dir`` (set here before anything
imports numba; a shared directory gives "warm installation" rows); ``cache``
only labels the row.  ``mode`` sets ``METRIC_ESTIMATORS_BACKEND`` (the
package's public switch between its numba kernels and their numpy twins)
before the package is imported; absent, the environment's is kept.
``cache`` is ``"as-is"`` for a run on whatever cache the environment has.

The worker times, from its own start: importing the package and making the
data (``import_wall`` / ``import_cpu``; for the cases of
:data:`IMPORT_STEPS`, ``import_steps`` gives the wall seconds of each of
their first imports, a part of ``import_wall``), the first fit
(``first_fit_wall`` / ``first_fit_cpu``), then up to ``warm`` (default 3)
more fits in the same process (fewer once they took 10 s; the best is
``warm_fit_wall`` / ``warm_fit_cpu``). With ``numba_first``, numba's own
start-up is timed between the two, outside both: ``numba_import_wall``
(``import numba``) and ``numba_startup_wall`` (the first call of a trivial
compiled function after it), so that the first fit after them is the
kernels' cache load or compilation plus the fit. ``process_cpu`` is the CPU
time of the whole process (interpreter start included, every thread, not
its children) at the end of the first fit, from ``getrusage(RUSAGE_SELF)``;
``process_wall`` the wall time since the process started (Linux, from
``/proc``), at the same moment.
``numba_loaded`` says whether numba was imported by then.  With
``kernels``, every numba compilation during the first fit is recorded
through numba's ``numba:compile`` event: per kernel the number of
specialisations compiled and the seconds they took, inclusive (with the
kernels it compiled on the way) and exclusive (``kernels``), and the totals
(``compile_s``: the sum of the exclusive times; ``cache_hits`` /
``cache_misses`` over every dispatcher of ``metric_estimators._kernels``, also
without ``kernels``). The recorder imports numba before the clock starts, so
its rows' import figures are not those of a user's first contact.
"""

from __future__ import annotations

import importlib
import math
import os
import resource
import sys
import time
import warnings

from benchmarks.workers import _protocol

# ---------------------------------------------------------------- the cases


def _scaled(loader):
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(datasets, loader)(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _ordinal_diabetes():
    """diabetes with its target cut into 5 ordered levels (quintiles)."""
    import numpy as np

    X, t = _scaled("load_diabetes")
    return X, np.searchsorted(np.quantile(t, [0.2, 0.4, 0.6, 0.8]), t)


def _noisy_distances(n=60, seed=0):
    """Euclidean distances of ``n`` points in the plane with 20 % multiplicative noise."""
    import numpy as np

    rng = np.random.RandomState(seed)
    P = rng.rand(n, 2)
    D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
    D = D * (1 + 0.2 * rng.randn(n, n))
    D = np.abs(D + D.T) / 2
    np.fill_diagonal(D, 0)
    return D


def _signed_graph(n=60, seed=0):
    """A +-1 complete graph of 3 planted groups with 15 % of the signs flipped."""
    import numpy as np

    rng = np.random.RandomState(seed)
    g = rng.randint(0, 3, n)
    A = np.where(g[:, None] == g[None], 1.0, -1.0)
    A[rng.rand(n, n) < 0.15] *= -1
    A = np.triu(A, 1)
    return A + A.T


def _sparse_signed_graph(n=400, degree=8, seed=0):
    """A sparse signed graph (about ``degree`` edges per node) of 4 planted groups,
    10 % of the signs flipped, as a CSR matrix."""
    import numpy as np
    from scipy import sparse

    rng = np.random.RandomState(seed)
    g = rng.randint(0, 4, n)
    m = n * degree // 2
    i, j = rng.randint(0, n, (2, m))
    keep = i != j
    i, j = i[keep], j[keep]
    s = np.where(g[i] == g[j], 1.0, -1.0)
    s[rng.rand(len(s)) < 0.1] *= -1
    A = sparse.coo_matrix((s, (i, j)), shape=(n, n)).tocsr()
    A = sparse.triu(A, 1) + sparse.triu(A, 1).T  # duplicates summed: sign kept or 0
    A.data = np.sign(A.data)
    A.eliminate_zeros()
    return A.tocsr()


def _pairs(X, y, n_pairs=300, seed=0):
    import numpy as np

    rng = np.random.RandomState(seed)
    i, j = rng.randint(0, len(X), (2, n_pairs))
    keep = i != j
    return (np.stack([X[i[keep]], X[j[keep]]], axis=1),
            np.where(y[i[keep]] == y[j[keep]], 1, -1))


def _classification(n, d, seed=0):
    """``make_classification``: ``n`` points, ``d`` features (up to 10 informative), 3 classes."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n_samples=n, n_features=d, n_informative=min(d, 10),
                               n_redundant=0, n_classes=3, random_state=seed)
    return StandardScaler().fit_transform(X), y


def _listed_pairs(n_pairs, d, seed=0):
    """``n_pairs`` distinct labelled pairs of ``make_classification`` points (ITML's input)."""
    import numpy as np

    X, y = _classification(max(200, int(math.isqrt(4 * n_pairs)) + 2), d, seed)
    rng = np.random.RandomState(seed)
    chosen = set()
    while len(chosen) < n_pairs:
        i, j = rng.randint(0, len(X), (2, 2 * n_pairs))
        for a, b in zip(i.tolist(), j.tolist()):
            if a != b and len(chosen) < n_pairs:
                chosen.add((min(a, b), max(a, b)))
    i, j = np.array(sorted(chosen)).T
    return np.stack([X[i], X[j]], axis=1), np.where(y[i] == y[j], 1, -1)


def _points_for_pairs(n_pairs):
    """The fewest points whose pairs number at least ``n_pairs``."""
    n = int((1 + math.isqrt(1 + 8 * n_pairs)) // 2)
    while n * (n - 1) // 2 < n_pairs:
        n += 1
    return n


#: family of ``metric_estimators._backend.FAMILIES`` -> (the public estimator
#: whose fit asks for that family, what the data are, the components after
#: the first of a cliff case's size, each capped at the family's limit)
CLIFF_FAMILIES = {
    "logdet_listed": ("ITML", "listed labelled pairs of make_classification points", (30,)),
    "logdet_all_pairs": ("ProjectAndForget", "make_classification points, all labelled pairs",
                         (13,)),
    "cycles": ("MetricNearness", "noisy Euclidean distances", ()),
    "correlation_clustering": ("CorrelationClustering", "dense signed complete graph", ()),
    "sparse_correlation_clustering": ("CorrelationClustering",
                                      "sparse signed graph, ~8 edges per node", ()),
    "lmnn": ("LMNN", "make_classification, 3 classes", (30,)),
    "mlkr": ("MLKR", "make_friedman1, 10 features", ()),
    "scml": ("SCML_Supervised", "make_classification, 3 classes", (30,)),
    "ordinal": ("LODML", "make_ordinal, 5 levels", (10,)),
    "lsml": ("LSML_Supervised", "make_classification (2,000 points), 3 classes", (30,)),
    "neighbours": ("OMDML", "make_ordinal, 5 levels", ()),
}

#: the scales of a cliff case: label -> the first component of its size
#: from the family's limit (just above it, twice and four times it)
CLIFF_SCALES = {"above": lambda limit: int(limit) + 1,
                "2x": lambda limit: int(2 * limit),
                "4x": lambda limit: int(4 * limit)}


def cliff_sizes(family, limits):
    """``[(scale label, size), ...]`` of ``family`` for its ``limits`` (``Family.limits``).

    The first component is scaled (:data:`CLIFF_SCALES`); the others are
    the values of :data:`CLIFF_FAMILIES`, each at most its limit.
    """
    others = CLIFF_FAMILIES[family][2]
    if len(others) != len(limits) - 1:
        raise ValueError(f"{family}: {len(limits)} limits, {len(others) + 1} size components")
    rest = [int(min(v, lim)) for v, lim in zip(others, limits[1:])]
    return [(label, [scale(limits[0]), *rest]) for label, scale in CLIFF_SCALES.items()]


def cliff_case(family, size):
    """``(estimator, fit arguments, the size the fit sees)`` of a cliff case."""
    import metric_estimators as me

    first, rest = int(size[0]), [int(v) for v in size[1:]]
    if family == "logdet_listed":
        return me.ITML(random_state=0), _listed_pairs(first, rest[0]), [first, rest[0]]
    if family == "logdet_all_pairs":
        n = _points_for_pairs(first)
        return (me.ProjectAndForget(random_state=0), _classification(n, rest[0]),
                [n * (n - 1) // 2, rest[0]])
    if family == "cycles":
        return me.MetricNearness(), (_noisy_distances(first),), [first]
    if family == "correlation_clustering":
        return me.CorrelationClustering(random_state=0), (_signed_graph(first),), [first]
    if family == "sparse_correlation_clustering":
        return (me.CorrelationClustering(random_state=0), (_sparse_signed_graph(first),),
                [first])
    if family in ("lmnn", "scml"):
        cls = me.LMNN if family == "lmnn" else me.SCML_Supervised
        return cls(random_state=0), _classification(first, rest[0]), [first, rest[0]]
    if family == "mlkr":
        from sklearn.datasets import make_friedman1
        from sklearn.preprocessing import StandardScaler

        X, t = make_friedman1(n_samples=first, n_features=10, noise=1.0, random_state=0)
        return me.MLKR(random_state=0), (StandardScaler().fit_transform(X), t), [first]
    if family in ("ordinal", "neighbours"):
        from metric_estimators.ranking import make_ordinal

        d = rest[0] if rest else 10
        X, y = make_ordinal(n_samples=first, n_informative=3, n_noise=d - 3, n_levels=5,
                            random_state=0)
        est = me.LODML(random_state=0) if family == "ordinal" else me.OMDML()
        return est, (X, y), [first, d] if rest else [first]
    if family == "lsml":
        return (me.LSML_Supervised(n_constraints=first, random_state=0),
                _classification(2000, rest[0]), [first, rest[0]])
    raise ValueError(f"no cliff case for family {family!r}")


def classification_case(algo, data):
    """``(estimator, (X_train, y_train), (X_test, y_test))`` of a ``classification-<algo>`` case."""
    from benchmarks.workers.classification import build_ours, load_dataset, split_scaled

    X_train, X_test, y_train, y_test = split_scaled(*load_dataset(data))
    return build_ours(algo, {})[1], (X_train, y_train), (X_test, y_test)


def _case(name, params=None):
    """``(estimator, fit arguments)`` of one case, built in this process."""
    if name in ("LMNN-iris", "sklearn-NCA-iris"):
        from sklearn.datasets import load_iris

        if name == "LMNN-iris":
            from metric_estimators import LMNN as Learner
        else:  # the reference: this package stays unimported
            from sklearn.neighbors import NeighborhoodComponentsAnalysis as Learner
        return Learner(random_state=0), load_iris(return_X_y=True)

    import metric_estimators as me

    if name.startswith("cliff-"):
        estimator, args, _ = cliff_case(name[len("cliff-"):], (params or {})["size"])
        return estimator, args
    if name in ("ITML_Supervised-iris", "ProjectAndForget-iris"):
        cls = me.ITML_Supervised if name.startswith("ITML") else me.ProjectAndForget
        return cls(random_state=0), _scaled("load_iris")
    if name == "ProjectAndForget-200x13":
        # 19,900 pairs: at the logdet_all_pairs limit
        from sklearn.datasets import make_classification
        from sklearn.preprocessing import StandardScaler

        X, y = make_classification(200, 13, n_informative=8, n_classes=3, random_state=0)
        return me.ProjectAndForget(random_state=0), (StandardScaler().fit_transform(X), y)
    if name == "CorrelationClustering-dense":
        return me.CorrelationClustering(random_state=0), (_signed_graph(),)
    if name == "CorrelationClustering-sparse":
        return me.CorrelationClustering(random_state=0), (_sparse_signed_graph(),)
    if name == "CorrelationClustering-sparse-2000":
        # above the sparse family's twin limit: the numba graph kernels
        return (me.CorrelationClustering(random_state=0),
                (_sparse_signed_graph(n=2000),))
    if name == "MetricNearness":
        return me.MetricNearness(), (_noisy_distances(),)
    breast_cancer = {
        "LMNN": me.LMNN, "NCA": me.NCA, "ITML_Supervised": me.ITML_Supervised,
        "MMC_Supervised": me.MMC_Supervised, "SDML_Supervised": me.SDML_Supervised,
        "LSML_Supervised": me.LSML_Supervised, "SCML_Supervised": me.SCML_Supervised,
        "RCA_Supervised": me.RCA_Supervised}
    if name in breast_cancer:
        return breast_cancer[name](random_state=0), _scaled("load_breast_cancer")
    if name == "MLKR":
        return me.MLKR(random_state=0), _scaled("load_diabetes")
    if name == "LODML":
        return me.LODML(random_state=0), _ordinal_diabetes()
    if name == "OMDML":
        return me.OMDML(), _ordinal_diabetes()
    if name == "ProjectAndForget":
        return me.ProjectAndForget(random_state=0), _scaled("load_wine")
    if name == "LFDA":
        return me.LFDA(), _scaled("load_digits")
    if name == "Covariance":
        return me.Covariance(), _scaled("load_digits")
    raise ValueError(f"unknown case {name!r}")


#: case -> what it fits (the rows of the result table, in this order): each
#: estimator on the data set a new user tries first, at its full size
CASES = {
    "LMNN": "breast_cancer (569 x 30), standardised",
    "NCA": "breast_cancer, standardised",
    "ITML_Supervised": "breast_cancer, standardised",
    "MMC_Supervised": "breast_cancer, standardised",
    "SDML_Supervised": "breast_cancer, standardised",
    "LSML_Supervised": "breast_cancer, standardised",
    "SCML_Supervised": "breast_cancer, standardised",
    "RCA_Supervised": "breast_cancer, standardised",
    "MLKR": "diabetes (442 x 10), standardised",
    "OMDML": "diabetes, target in 5 ordered levels",
    "LODML": "diabetes, target in 5 ordered levels",
    "ProjectAndForget": "wine (178 x 13), standardised",
    "LFDA": "digits (1797 x 64), standardised",
    "Covariance": "digits (1797 x 64), standardised",
    "MetricNearness": "60 x 60 noisy Euclidean distances",
    "CorrelationClustering-dense": "signed complete graph, 60 nodes, 3 planted groups",
    "CorrelationClustering-sparse": "sparse signed graph, 400 nodes, ~8 edges per node",
}

#: further cases, run only when named with ``--cases``
EXTRA_CASES = {
    "CorrelationClustering-sparse-2000": "the same generator, 2,000 nodes (numba graph kernels)",
    "ITML_Supervised-iris": "iris (150 x 4), standardised",
    "ProjectAndForget-iris": "iris (150 x 4), standardised",
    "ProjectAndForget-200x13": "make_classification, 200 x 13, 8 informative, 3 classes "
                               "(19,900 pairs)",
    "LMNN-iris": "iris (150 x 4), raw; LMNN's defaults",
    "sklearn-NCA-iris": "iris (150 x 4), raw; scikit-learn's NeighborhoodComponentsAnalysis "
                        "(the reference; this package not imported)",
}

#: case -> its first imports, timed one by one at the start of the import
#: phase (``import_steps``: step -> wall seconds): ``(step, module, name)``,
#: ``name`` taken from the module as ``from <module> import <name>`` would
IMPORT_STEPS = {
    "LMNN-iris": (("sklearn_import", "sklearn.datasets", "load_iris"),
                  ("package_import", "metric_estimators", "LMNN")),
    "sklearn-NCA-iris": (("sklearn_import", "sklearn.datasets", "load_iris"),
                         ("package_import", "sklearn.neighbors",
                          "NeighborhoodComponentsAnalysis")),
}

#: the prefix of the cases that fit the classification worker's protocol
CLASSIFICATION = "classification-"


#: the pseudo-case that runs the warm-up command's work instead of a fit
WARMUP = "warmup"


# ------------------------------------------------------------ compile events


class _CompileRecorder:
    """Listens to ``numba:compile``: seconds per kernel, inclusive and exclusive."""

    def __init__(self):
        self.stack = []  # [name, start, seconds spent in nested compilations]
        self.kernels = {}

    def on_start(self, event):
        d = event.data["dispatcher"]
        name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
        self.stack.append([name, time.thread_time(), 0.0])

    def on_end(self, event):
        name, start, nested = self.stack.pop()
        total = time.thread_time() - start
        if self.stack:
            self.stack[-1][2] += total
        k = self.kernels.setdefault(name, {"specialisations": 0, "inclusive_s": 0.0,
                                           "exclusive_s": 0.0})
        k["specialisations"] += 1
        k["inclusive_s"] += total
        k["exclusive_s"] += total - nested


def _install(recorder):
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            recorder.on_start(ev)

        def on_end(self, ev):
            recorder.on_end(ev)

    event.register("numba:compile", Listener())


def _cache_stats():
    """(hits, misses) over every dispatcher defined in ``metric_estimators._kernels``."""
    from numba.core.registry import CPUDispatcher

    hits = misses = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("metric_estimators._kernels.") or module is None:
            continue
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == name:
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
    return hits, misses


def _cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _warm_up() -> dict:
    """What ``python -m metric_estimators.warmup`` costs in this process."""
    t0 = time.perf_counter()
    from metric_estimators.warmup import warm_up

    stats = warm_up(verbose=False)
    return {"process_cpu": _cpu(), "warmup_wall": time.perf_counter() - t0,
            "cache_misses": sum(m for _, m in stats.values()),
            "cache_hits": sum(h for h, _ in stats.values())}


def _process_wall():
    """Seconds since this process started (Linux ``/proc``), or None elsewhere."""
    try:
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return round(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, ValueError, IndexError):
        return None


def _one(x):
    return x + 1


def _numba_startup() -> tuple:
    """``(import numba, first call of a trivial compiled function)``: wall seconds."""
    start = time.perf_counter()
    import numba

    imported = time.perf_counter()
    numba.njit(_one)(1.0)
    return imported - start, time.perf_counter() - imported


def _environment(job: dict) -> None:
    """The job's numba cache directory and backend mode, before anything imports them."""
    if job.get("numba_cache_dir"):
        os.environ["NUMBA_CACHE_DIR"] = str(job["numba_cache_dir"])
    mode = job["params"].get("mode")
    if mode:
        os.environ["METRIC_ESTIMATORS_BACKEND"] = mode


def run(job: dict) -> dict:
    """Import, build the case, fit once (recording compilations), then fit warm."""
    _environment(job)
    if job["dataset"] == WARMUP:
        return _warm_up()
    params = job["params"]
    t0, c0 = time.perf_counter(), time.process_time()
    recorder = _CompileRecorder()
    if params.get("kernels"):
        _install(recorder)  # imports numba, which the package may not need: not timed
        t0, c0 = time.perf_counter(), time.process_time()
    warnings.simplefilter("ignore")
    steps = {}
    for step, module, name in IMPORT_STEPS.get(job["dataset"], ()):
        start = time.perf_counter()
        getattr(importlib.import_module(module), name)
        steps[step] = time.perf_counter() - start
    fit_size = test = None
    if job["dataset"].startswith("cliff-"):
        estimator, args, fit_size = cliff_case(job["dataset"][len("cliff-"):], params["size"])
    elif job["dataset"].startswith(CLASSIFICATION):
        estimator, args, test = classification_case(job["dataset"][len(CLASSIFICATION):],
                                                    params["data"])
    else:
        estimator, args = _case(job["dataset"], params)
    t1, c1 = time.perf_counter(), time.process_time()
    import_wall, import_cpu = t1 - t0, c1 - c0
    numba_import = numba_startup = None
    if params.get("numba_first"):
        numba_import, numba_startup = _numba_startup()
        t1, c1 = time.perf_counter(), time.process_time()
    estimator.fit(*args)
    t2, c2 = time.perf_counter(), time.process_time()
    process_cpu, process_wall = _cpu(), _process_wall()
    numba_loaded = "numba" in sys.modules
    hits, misses = _cache_stats() if numba_loaded else (0, 0)
    warm = []
    # the kernel table needs no warm fits; slow fits: fewer
    n_warm = 0 if params.get("kernels") else int(params.get("warm", 3))
    while len(warm) < n_warm and sum(w for w, _ in warm) < 10.0:
        s, sc = time.perf_counter(), time.process_time()
        estimator.fit(*args)
        warm.append((time.perf_counter() - s, time.process_time() - sc))
    accuracy = None
    if test is not None:
        from benchmarks.workers.classification import knn_accuracy

        accuracy = knn_accuracy(estimator.transform(args[0]), args[1],
                                estimator.transform(test[0]), test[1])
    kernels = {k: {kk: round(vv, 4) for kk, vv in v.items()}
               for k, v in sorted(recorder.kernels.items(),
                                  key=lambda kv: -kv[1]["exclusive_s"])}
    return {"import_wall": import_wall, "import_cpu": import_cpu, "import_steps": steps,
            "numba_import_wall": numba_import, "numba_startup_wall": numba_startup,
            "first_fit_wall": t2 - t1, "first_fit_cpu": c2 - c1,
            "process_cpu": process_cpu, "process_wall": process_wall,
            "numba_loaded": numba_loaded, "fit_size": fit_size,
            "n_iter": getattr(estimator, "n_iter_", None), "accuracy": accuracy,
            "warm_fit_wall": min((w for w, _ in warm), default=None),
            "warm_fit_cpu": min((c for _, c in warm), default=None),
            "compile_s": round(sum(k["exclusive_s"] for k in kernels.values()), 3),
            "cache_hits": hits, "cache_misses": misses, "kernels": kernels}


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
