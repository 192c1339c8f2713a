"""The metric-learn family side by side: one learner, one data set, 3-NN score.

Job: ``{"dataset": "iris" | "wine" | "breast_cancer" | "digits" | "diabetes"
| "synth-<n>-<d>", "impl": "ours" | "metric_learn" | "sklearn", "params":
{"learner": "<name in LEARNERS>", ...learner keyword overrides}}``.

Every implementation, identically: load the data; 70/30 split
(``random_state=0``, stratified for classification); StandardScaler fitted
on the training part; time ``learner.fit(X_train, y_train)`` alone
(``time.perf_counter``, the first fit in a fresh process, so ours includes
numba's start-up); a 3-NN model on the transformed training part scored on
the transformed test part: ``KNeighborsClassifier(3)`` accuracy, or for the
regression learners (``task="regression"``, e.g. MLKR on diabetes)
``KNeighborsRegressor(3)`` R^2 (the row's ``accuracy`` field holds the R^2
then; the report says so).

:data:`LEARNERS` is the one table of learners: name -> the task, the
defaults every implementation gets, and per implementation the module and
class to build (imported by name, so that the module runs in the peers'
environments too).  Add a learner by adding an entry.  ``adjust`` (optional)
maps ``(params, y_train)`` to the parameters actually used, identically for
every implementation (e.g. RCA_Supervised's ``n_chunks`` capped at what the
classes can supply, because metric-learn raises otherwise).
"""

from __future__ import annotations

import importlib
import sys
import time

from benchmarks.workers import _protocol
from benchmarks.workers.classification import knn_accuracy, load_dataset

TEST_SIZE = 0.3
SPLIT_SEED = 0
KNN_NEIGHBORS = 3


def _cap_chunks(params, y):
    """``n_chunks`` at most the number of disjoint chunklets the classes allow."""
    from collections import Counter

    size = params.get("chunk_size", 2)
    capacity = sum(c // size for c in Counter(list(y)).values())
    return {**params, "n_chunks": min(params.get("n_chunks", 100), capacity)}


#: name -> {"task", "defaults", implementation -> (module, class), "adjust"?}
LEARNERS = {
    "NCA": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "NCA"),
        "metric_learn": ("metric_learn", "NCA"),
        "sklearn": ("sklearn.neighbors", "NeighborhoodComponentsAnalysis"),
    },
    "LFDA": {
        "task": "classification",
        "defaults": {},
        "ours": ("metric_estimators", "LFDA"),
        "metric_learn": ("metric_learn", "LFDA"),
    },
    "RCA_Supervised": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "adjust": _cap_chunks,
        "ours": ("metric_estimators", "RCA_Supervised"),
        "metric_learn": ("metric_learn", "RCA_Supervised"),
    },
    "Covariance": {
        "task": "classification",
        "defaults": {},
        "ours": ("metric_estimators", "Covariance"),
        "metric_learn": ("metric_learn", "Covariance"),
    },
    "MLKR": {
        "task": "regression",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "MLKR"),
        "metric_learn": ("metric_learn", "MLKR"),
    },
    "MMC_Supervised": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "MMC_Supervised"),
        "metric_learn": ("metric_learn", "MMC_Supervised"),
    },
    "MMC_Supervised-diagonal": {
        "task": "classification",
        "defaults": {"random_state": 0, "diagonal": True},
        "ours": ("metric_estimators", "MMC_Supervised"),
        "metric_learn": ("metric_learn", "MMC_Supervised"),
    },
    "SDML_Supervised": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "SDML_Supervised"),
        "metric_learn": ("metric_learn", "SDML_Supervised"),
    },
    "LMNN": {
        "task": "classification",
        "defaults": {"n_neighbors": 3, "random_state": 0},
        "ours": ("metric_estimators", "LMNN"),
        "metric_learn": ("metric_learn", "LMNN"),
    },
    "ITML_Supervised": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "ITML_Supervised"),
        "metric_learn": ("metric_learn", "ITML_Supervised"),
    },
}


# learners at their plain defaults (``random_state=0`` only), for
# bench_defaults.py; "Euclidean" is the identity map (the baseline)
LEARNERS.update({
    "Euclidean": {
        "task": "classification",
        "defaults": {},
        "ours": ("sklearn.preprocessing", "FunctionTransformer"),
    },
    "Euclidean-regression": {
        "task": "regression",
        "defaults": {},
        "ours": ("sklearn.preprocessing", "FunctionTransformer"),
    },
    "RCA_Supervised@defaults": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "RCA_Supervised"),
        "metric_learn": ("metric_learn", "RCA_Supervised"),
    },
    "MMC_Supervised-exact": {
        "task": "classification",
        "defaults": {"random_state": 0, "solver": "exact"},
        "ours": ("metric_estimators", "MMC_Supervised"),
    },
    "LSML_Supervised": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "LSML_Supervised"),
        "metric_learn": ("metric_learn", "LSML_Supervised"),
    },
    "SCML_Supervised": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "SCML_Supervised"),
        "metric_learn": ("metric_learn", "SCML_Supervised"),
    },
    "ProjectAndForget": {
        "task": "classification",
        "defaults": {"random_state": 0},
        "ours": ("metric_estimators", "ProjectAndForget"),
    },
})


def split_scaled(X, y, task):
    """70/30 split (seed 0; stratified for classification), StandardScaler on the training part."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, random_state=SPLIT_SEED,
        stratify=y if task == "classification" else None)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def load(name):
    """``(X, y)``: the classification sets of ``classification.py``, or diabetes."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        return load_diabetes(return_X_y=True)
    return load_dataset(name)


def knn_r2(Z_train, y_train, Z_test, y_test) -> float:
    """3-NN regression R^2 in an (already transformed) space."""
    from sklearn.neighbors import KNeighborsRegressor

    knn = KNeighborsRegressor(n_neighbors=KNN_NEIGHBORS).fit(Z_train, y_train)
    return float(knn.score(Z_test, y_test))


def version_of(module_name):
    """The version of the package a learner comes from."""
    top = importlib.import_module(module_name.split(".")[0])
    return getattr(top, "__version__", "dev")


def build(learner, impl, params, y_train):
    """The estimator of ``learner`` in ``impl`` with the table's defaults and ``params``."""
    if learner not in LEARNERS:
        raise ValueError(f"unknown learner {learner!r}; known: {', '.join(LEARNERS)}")
    entry = LEARNERS[learner]
    if impl not in entry:
        raise ValueError(f"{impl} has no {learner}")
    module_name, cls_name = entry[impl]
    kwargs = {**entry["defaults"], **params}
    if "adjust" in entry:
        kwargs = entry["adjust"](kwargs, y_train)
    cls = getattr(importlib.import_module(module_name), cls_name)
    return version_of(module_name), kwargs, cls(**kwargs)


def run(job: dict) -> dict:
    """Fit one learner on one data set; fit time, 3-NN score, memory."""
    params = dict(job["params"])
    learner = params.pop("learner")
    task = LEARNERS[learner]["task"]
    X_train, X_test, y_train, y_test = split_scaled(*load(job["dataset"]), task)
    out = {"task": task, "n_train": int(X_train.shape[0]),
           "n_features": int(X_train.shape[1]),
           "rss_before_fit_mb": _protocol.peak_rss_mb()}
    out["version"], out["used_params"], est = build(learner, job["impl"], params, y_train)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        est.fit(X_train, y_train)
        out["fit_time"] = time.perf_counter() - start
    # what the learner says about the fit (not the libraries' deprecation notices)
    out["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:120]}"
                              for w in caught
                              if not issubclass(w.category, (FutureWarning,
                                                             DeprecationWarning))})
    out["peak_rss_mb"] = _protocol.peak_rss_mb()
    Z_train, Z_test = est.transform(X_train), est.transform(X_test)
    import numpy as np

    if not (np.all(np.isfinite(Z_train)) and np.all(np.isfinite(Z_test))):
        raise FloatingPointError("the learned map gives NaN or infinite coordinates")
    if getattr(est, "n_iter_", None) is not None:
        out["n_iter"] = int(est.n_iter_)
    score = knn_accuracy if task == "classification" else knn_r2
    out["accuracy"] = score(Z_train, y_train, Z_test, y_test)
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
