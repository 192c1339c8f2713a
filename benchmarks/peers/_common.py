"""Shared protocol of every benchmark runner (imported by each ``run_*.py``).

A runner is started as a subprocess with one implementation's interpreter and
receives a JSON job as its first argument (or on stdin)::

    {"algo": "lmnn" | "itml_supervised",
     "dataset": "iris" | "wine" | "breast_cancer" | "digits" | "synth-<n>-<d>",
     "params": {...}}          # optional keyword overrides for the learner

It loads and splits the data itself (identically for every implementation),
times ``fit`` alone, scores 3-NN on the transformed test set and prints ONE
JSON line on stdout. Only numpy / scikit-learn APIs present in every
scikit-learn from 1.2 to 1.9 are used here, because each peer runs on a
different scikit-learn.
"""

from __future__ import annotations

import json
import resource
import sys
import time
import traceback

from sklearn import datasets
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

TEST_SIZE = 0.3
SPLIT_SEED = 0
KNN_NEIGHBORS = 3

_BUNDLED = {
    "iris": datasets.load_iris,
    "wine": datasets.load_wine,
    "breast_cancer": datasets.load_breast_cancer,
    "digits": datasets.load_digits,
}


def make_synthetic(n_samples: int, n_features: int):
    """The ``synth-<n>-<d>`` data set: 10 classes, at most 20 informative features.

    The other ``d - 20`` features are pure noise, so Euclidean k-NN suffers and a
    learned metric has something to gain.
    """
    n_informative = min(n_features, 20)
    return datasets.make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_informative,
        n_redundant=0,
        n_repeated=0,
        n_classes=10,
        n_clusters_per_class=2,
        class_sep=1.0,
        flip_y=0.01,
        random_state=0,
    )


def load_dataset(name: str):
    """Return ``(X, y)`` for a bundled data set name or ``synth-<n>-<d>``."""
    if name in _BUNDLED:
        return _BUNDLED[name](return_X_y=True)
    if name.startswith("synth-"):
        try:
            _, n_samples, n_features = name.split("-")
            return make_synthetic(int(n_samples), int(n_features))
        except ValueError:
            pass
    raise ValueError(f"unknown dataset {name!r}")


def split_scaled(X, y):
    """70/30 stratified split (seed 0), StandardScaler fitted on the train part."""
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, stratify=y, random_state=SPLIT_SEED
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def knn_accuracy(Z_train, y_train, Z_test, y_test) -> float:
    """3-NN test accuracy in an (already transformed) space."""
    knn = KNeighborsClassifier(n_neighbors=KNN_NEIGHBORS).fit(Z_train, y_train)
    return float(knn.score(Z_test, y_test))


def unsupported(impl: str, algo: str):
    """The error a runner raises for an algorithm it does not provide."""
    return ValueError(f"{impl} has no {algo!r} learner")


def read_job(argv) -> dict:
    """The job from ``argv[1]`` if given, else from stdin."""
    text = argv[1] if len(argv) > 1 else sys.stdin.read()
    job = json.loads(text)
    job.setdefault("params", {})
    return job


def _describe(exc: BaseException) -> str:
    """One-line error text; MemoryError is reported as 'out of memory'."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    return f"{type(exc).__name__}: {exc}".strip()[:500]


def run_job(job: dict, impl: str, version: str, build) -> dict:
    """Run one job; ``build(algo, params)`` returns an unfitted learner.

    The learner needs ``fit(X, y)`` and ``transform(X)``; ``build`` may return
    None to mean "no learning" (Euclidean baseline). ``n_iter_`` is reported
    when the fitted learner has it.
    """
    result = {"impl": impl, "version": version, "algo": job["algo"], "dataset": job["dataset"]}
    X_train, X_test, y_train, y_test = split_scaled(*load_dataset(job["dataset"]))
    result.update(n_train=int(X_train.shape[0]), n_features=int(X_train.shape[1]))
    result["rss_before_fit_mb"] = round(peak_rss_mb(), 1)

    learner = build(job["algo"], dict(job["params"]))
    if learner is None:
        result["fit_time"] = 0.0
        Z_train, Z_test = X_train, X_test
    else:
        start = time.perf_counter()
        learner.fit(X_train, y_train)
        result["fit_time"] = time.perf_counter() - start
        result["peak_rss_mb"] = round(peak_rss_mb(), 1)
        Z_train, Z_test = learner.transform(X_train), learner.transform(X_test)
        n_iter = getattr(learner, "n_iter_", None)
        if n_iter is not None:
            result["n_iter"] = int(n_iter)
    result.setdefault("peak_rss_mb", round(peak_rss_mb(), 1))
    result["accuracy"] = knn_accuracy(Z_train, y_train, Z_test, y_test)
    return result


def main(impl: str, load) -> int:
    """Runner entry point: run the job from argv/stdin, print one JSON line.

    ``load()`` imports the library and returns ``(version, build)``; it is
    called inside the error handler so that a library that cannot be imported
    still yields a clean error row.
    """
    job = read_job(sys.argv)
    version = None
    try:
        version, build = load()
        result = run_job(job, impl, version, build)
        code = 0
    except BaseException as exc:  # report every failure as a row, not just a traceback
        traceback.print_exc(file=sys.stderr)
        result = {"impl": impl, "version": version, "algo": job.get("algo"),
                  "dataset": job.get("dataset"), "error": _describe(exc)}
        code = 1
    print(json.dumps(result), flush=True)
    return code
