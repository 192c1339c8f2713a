"""Repeated fits in one fresh process: every fit's time and tier, on an empty or a warm cache.

Job: ``{"dataset": <scenario>, "impl": "ours", "params": {"cache": "empty" |
"warm", "n_jobs": int, "fits": int}, "numba_cache_dir": path}`` where
``<scenario>`` is a key of :data:`SCENARIOS`:

* ``"gridsearch-lmnn-digits"``: ``GridSearchCV`` over
  ``make_pipeline(StandardScaler(), LMNN(), KNeighborsClassifier(3))`` on
  scikit-learn's digits, LMNN's ``n_neighbors`` in (2, 3, 4), ``cv=5``
  (15 fits and the refit), with ``n_jobs`` processes (``fits`` ignored);
* the others: a loop of ``fits`` (default 12) fits of one estimator at its
  defaults on one data set in this process.

``numba_cache_dir`` is set as ``NUMBA_CACHE_DIR`` before anything imports
the package (and is inherited by the grid search's worker processes); the
command passes a fresh empty directory for ``cache="empty"`` and one that
``python -m metric_estimators.warmup`` filled for ``cache="warm"``.

Every fit appends one line to a log (``fit_log``): the process, its start
and end (seconds since the job started), its wall and CPU seconds (CPU of
the process that fitted it: the grid search's workers fit in parallel), the
tier it ran on (``metric_estimators._backend.last_choice``: path and why),
and the background compilations that process had launched so far
(``metric_estimators._background.launched``).  The result holds the fits in
order of their end, ``total_wall`` (the whole search or loop), and
``compilations``: the distinct background compilations launched by all the
processes (what "once per machine" is checked on).  Before returning, the
worker waits for any background compilation still running, so that the
next job starts on a quiet machine.

This worker imports two private modules of the package, ``_backend`` (the
tier each fit ran on) and ``_background`` (the compilations launched): the
measurement is of exactly that machinery.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path

from benchmarks.workers import _protocol

# the first-fit cases' data, at the sizes of these loops
from benchmarks.workers.first_contact import _noisy_distances, _scaled, _signed_graph

REPO_ROOT = Path(__file__).resolve().parents[2]
_LOG_VAR = "BENCH_REPEATED_FITS_LOG"
_T0_VAR = "BENCH_REPEATED_FITS_T0"


def _log_fit(kind, start, start_cpu, family):
    """Append this fit's line to the job's log (any process of the job)."""
    from metric_estimators import _backend, _background

    end = time.time()
    line = {"pid": os.getpid(), "estimator": kind,
            "start": start - float(os.environ[_T0_VAR]),
            "end": end - float(os.environ[_T0_VAR]),
            "wall": end - start, "cpu": time.process_time() - start_cpu,
            "tier": list(_backend.last_choice.get(family, ("?", "?"))),
            "launched": [list(x) for x in _background.launched]}
    with open(os.environ[_LOG_VAR], "a") as fh:
        fh.write(json.dumps(line) + "\n")


def _timed(cls, family):
    """A subclass of ``cls`` whose ``fit`` logs its time and tier (picklable by reference)."""

    def fit(self, *args, **kwargs):
        start, start_cpu = time.time(), time.process_time()
        out = cls.fit(self, *args, **kwargs)
        _log_fit(cls.__name__, start, start_cpu, family)
        return out

    return type(f"Timed{cls.__name__}", (cls,), {"fit": fit, "__module__": __name__})


def _estimators():
    import metric_estimators as me

    return {
        "LMNN": (me.LMNN, "lmnn"),
        "ITML_Supervised": (me.ITML_Supervised, "logdet_listed"),
        "CorrelationClustering": (me.CorrelationClustering, "correlation_clustering"),
        "MetricNearness": (me.MetricNearness, "cycles"),
    }


# The timed classes live at module level, so that the grid search's worker
# processes unpickle them by importing this module.
def __getattr__(name):
    if name.startswith("Timed"):
        cls, family = _estimators()[name[len("Timed"):]]
        timed = _timed(cls, family)
        globals()[name] = timed
        return timed
    raise AttributeError(name)


def _digits():
    from sklearn.datasets import load_digits

    return load_digits(return_X_y=True)


#: scenario -> (what, estimator, data maker(s)); the grid search is its own kind
SCENARIOS = {
    "gridsearch-lmnn-digits": ("GridSearchCV(StandardScaler, LMNN, 3-NN) on digits, "
                               "n_neighbors in (2, 3, 4), cv=5", "LMNN", None),
    "loop-lmnn-digits": ("LMNN on standardised digits (1797 x 64)", "LMNN",
                         lambda: _scaled("load_digits")),
    "loop-itml-digits": ("ITML_Supervised on standardised digits (1797 x 64)",
                         "ITML_Supervised", lambda: _scaled("load_digits")),
    "loop-cc-100": ("CorrelationClustering, complete signed graph of 100 nodes, "
                    "3 planted groups, 15 % of signs flipped",
                    "CorrelationClustering", lambda: (_signed_graph(100),)),
    "loop-mn-200": ("MetricNearness, 200 x 200 noisy Euclidean distances",
                    "MetricNearness", lambda: (_noisy_distances(200),)),
}


def _grid_search(n_jobs):
    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _digits()
    Timed = __getattr__("TimedLMNN")
    pipe = make_pipeline(StandardScaler(), Timed(), KNeighborsClassifier(3))
    search = GridSearchCV(pipe, {"timedlmnn__n_neighbors": [2, 3, 4]}, cv=5,
                          n_jobs=n_jobs)
    search.fit(X, y)
    return {"best_score": float(search.best_score_),
            "best_params": search.best_params_}


def _loop(name, fits):
    _, estimator, make = SCENARIOS[name]
    data = make()
    Timed = __getattr__(f"Timed{estimator}")
    for _ in range(fits):
        Timed().fit(*data)
    return {}


def _wait_for_background(directory, timeout=600.0):
    """Wait until no background compilation holds a lock in ``directory``; seconds waited."""
    start = time.time()
    while time.time() - start < timeout:
        locks = [p for p in Path(directory).rglob("metric_estimators_compiling.*.lock")]
        if not locks:
            break
        time.sleep(0.2)
    return time.time() - start


def run(job: dict) -> dict:
    params = job["params"]
    name = job["dataset"]
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")
    cache = job.get("numba_cache_dir")
    if cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
    log = Path(cache or ".") / f"fits-{os.getpid()}.jsonl"
    os.environ[_LOG_VAR] = str(log)
    os.environ[_T0_VAR] = repr(time.time())
    # the grid search's worker processes import this module by name
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name.startswith("gridsearch"):
            extra = _grid_search(int(params.get("n_jobs", 1)))
        else:
            extra = _loop(name, int(params.get("fits", 12)))
    total = time.perf_counter() - t0
    waited = _wait_for_background(cache) if cache else 0.0
    fits = [json.loads(line) for line in log.read_text().splitlines()]
    fits.sort(key=lambda f: f["end"])
    compilations = sorted({(f, p, pid) for fit in fits for f, p, pid in fit["launched"]})
    return {"what": SCENARIOS[name][0], "total_wall": total, "fits": fits,
            "compilations": [list(c) for c in compilations],
            "background_left_s": waited,
            "peak_rss_mb": _protocol.peak_rss_mb(), **extra}


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
