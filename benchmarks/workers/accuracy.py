"""Accuracy at defaults: stratified K-fold 3-NN accuracy of supervised learners.

Job: ``{"dataset": <name>, "impl": "ours" | "metric_learn" | "pydml" |
"sklearn" | "euclidean", "params": {"learners": [<names in LEARNERS>], "folds": 10,
"seeds": [0, 1, 2, 3, 4], "cv_seed": 0, "budget": <seconds>}}``.

The protocol, identically for every implementation and learner: the data
set's folds come from ``StratifiedKFold(folds, shuffle=True,
random_state=cv_seed)``; on each fold a ``MinMaxScaler`` is fitted on the
training part, the learner (built afresh, at its defaults) is fitted on the
scaled training part, and a ``KNeighborsClassifier(3)`` fitted on the
transformed training part is scored on the transformed test part.  A
learner that draws random constraints (:data:`RANDOMISED`) is fitted once
per seed of ``seeds`` (``random_state=seed``) on every fold; the others once
per fold with ``random_state=seeds[0]`` where they take one.  The result is
one row per learner (its ``params`` name the learner, folds, seeds and
cv_seed, which key the row): the number of test points each fit classified
correctly (``correct[seed][fold]``), the fold sizes, the accuracy per seed
(correct over all points), their mean (``accuracy``) and range (``spread``),
the ConvergenceWarnings (and any other warning except Future/Deprecation
notices) counted over all fits of the cell, and the summed fit time.

A learner whose fits raise, or give NaN/infinite coordinates, gets a row with
``error``; one whose summed fit time has passed ``budget`` seconds before
its last fit stops there (``error``: budget exceeded) so that one slow cell
cannot stall a panel.

Dataset names: those of :func:`benchmarks.workers.classification.load_dataset`,
and ``<name>@<n>``, a stratified subsample of ``n`` points of ``<name>``
(``train_test_split(train_size=n, stratify=y, random_state=0)``).

Runs in metric-learn's environment too (its own scikit-learn): only APIs
present in scikit-learn 1.2 to 1.9, and the learners are imported by name.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import time
import warnings

from benchmarks.workers import _protocol
from benchmarks.workers.classification import load_dataset

KNN_NEIGHBORS = 3
SUBSAMPLE_SEED = 0

#: learner -> implementation -> (module, class).  "Euclidean" is the identity map.
LEARNERS = {
    "LMNN": {"ours": ("metric_estimators", "LMNN"),
             "metric_learn": ("metric_learn", "LMNN")},
    "NCA": {"ours": ("metric_estimators", "NCA"),
            "metric_learn": ("metric_learn", "NCA"),
            "sklearn": ("sklearn.neighbors", "NeighborhoodComponentsAnalysis"),
            # pyDML 0.1.0 (Suarez, Garcia & Herrera): gradient ascent on
            # single points from the identity, 100 epochs, adaptive step
            "pydml": ("dml", "NCA")},
    "LFDA": {"ours": ("metric_estimators", "LFDA"),
             "metric_learn": ("metric_learn", "LFDA")},
    "MLKR": {"ours": ("metric_estimators", "MLKR"),
             "metric_learn": ("metric_learn", "MLKR")},
    "Covariance": {"ours": ("metric_estimators", "Covariance"),
                   "metric_learn": ("metric_learn", "Covariance")},
    "ITML_Supervised": {"ours": ("metric_estimators", "ITML_Supervised"),
                        "metric_learn": ("metric_learn", "ITML_Supervised")},
    "MMC_Supervised": {"ours": ("metric_estimators", "MMC_Supervised"),
                       "metric_learn": ("metric_learn", "MMC_Supervised")},
    "SDML_Supervised": {"ours": ("metric_estimators", "SDML_Supervised"),
                        "metric_learn": ("metric_learn", "SDML_Supervised")},
    "LSML_Supervised": {"ours": ("metric_estimators", "LSML_Supervised"),
                        "metric_learn": ("metric_learn", "LSML_Supervised")},
    "SCML_Supervised": {"ours": ("metric_estimators", "SCML_Supervised"),
                        "metric_learn": ("metric_learn", "SCML_Supervised")},
    "RCA_Supervised": {"ours": ("metric_estimators", "RCA_Supervised"),
                       "metric_learn": ("metric_learn", "RCA_Supervised")},
    "Euclidean": {"euclidean": None},
}

#: the alternatives to some of our defaults, fitted by ``--variants``: name ->
#: (learner, parameters).  A string value that names a rule of :data:`RULES` is that rule,
#: evaluated on each training fold.
VARIANTS = {
    "ITML_Supervised(n_constraints=20*n_classes**2)":
        ("ITML_Supervised", {"n_constraints": "20*n_classes**2"}),
    "RCA_Supervised(chunk_size=2)": ("RCA_Supervised", {"chunk_size": 2}),
    "MLKR(tol=None)": ("MLKR", {"tol": None}),
    "NCA(max_iter=200)": ("NCA", {"max_iter": 200}),
    "NCA(reg='auto')": ("NCA", {"reg": "auto"}),
    "NCA(reg='auto', tol=1e-5)": ("NCA", {"reg": "auto", "tol": 1e-5}),
}
#: parameter rules of :data:`VARIANTS`: name -> function of the training labels
RULES = {"20*n_classes**2": lambda y: 20 * len(set(y.tolist())) ** 2}

#: the learners that draw random constraints: fitted once per seed (and
#: the variants of them)
RANDOMISED = ("ITML_Supervised", "MMC_Supervised", "SDML_Supervised",
              "LSML_Supervised", "SCML_Supervised", "RCA_Supervised")
RANDOMISED += tuple(name for name, (base, _) in VARIANTS.items() if base in RANDOMISED)


class Identity:
    """The Euclidean baseline: nothing learned."""

    def fit(self, X, y):
        return self

    def transform(self, X):
        return X


def load(name: str):
    """``(X, y)`` of a data set name, with ``@<n>`` meaning a stratified subsample."""
    import numpy as np

    base, _, size = name.partition("@")
    X, y = load_dataset(base)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    if size and int(size) < len(y):
        from sklearn.model_selection import train_test_split

        X, _, y, _ = train_test_split(X, y, train_size=int(size), stratify=y,
                                      random_state=SUBSAMPLE_SEED)
    return X, y


def build(learner: str, impl: str, seed: int, y=None):
    """The estimator at its defaults (``random_state=seed`` where it takes one);
    a name of :data:`VARIANTS`: ours with its parameters (rules evaluated on ``y``)."""
    if learner in VARIANTS:
        base, params = VARIANTS[learner]
        est = build(base, impl, seed)
        return est.set_params(**{k: RULES[v](y) if isinstance(v, str) and v in RULES else v
                                 for k, v in params.items()})
    entry = LEARNERS[learner]
    if impl not in entry:
        raise ValueError(f"{impl} has no {learner}")
    if entry[impl] is None:
        return Identity()
    module_name, cls_name = entry[impl]
    cls = getattr(importlib.import_module(module_name), cls_name)
    # asked of the signature: pyDML's estimators have no working get_params
    if "random_state" in inspect.signature(cls).parameters:
        return cls(random_state=seed)
    return cls()


def version_of(learner: str, impl: str) -> str:
    """The version of the package the learner comes from."""
    entry = LEARNERS[VARIANTS.get(learner, (learner,))[0]].get(impl)
    module = entry[0].split(".")[0] if entry else "sklearn"
    return str(getattr(importlib.import_module(module), "__version__", "dev"))


def fit_score(est, X_train, y_train, X_test, y_test):
    """Fit on the training part; (correct test points, fit seconds, warnings caught)."""
    import numpy as np
    from sklearn.neighbors import KNeighborsClassifier

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        est.fit(X_train, y_train)
        seconds = time.perf_counter() - start
    Z_train, Z_test = est.transform(X_train), est.transform(X_test)
    if not (np.all(np.isfinite(Z_train)) and np.all(np.isfinite(Z_test))):
        raise FloatingPointError("the learned map gives NaN or infinite coordinates")
    knn = KNeighborsClassifier(n_neighbors=KNN_NEIGHBORS).fit(Z_train, y_train)
    correct = int(np.sum(knn.predict(Z_test) == y_test))
    said = [(w.category.__name__, str(w.message)) for w in caught
            if not issubclass(w.category, (FutureWarning, DeprecationWarning))]
    return correct, seconds, said


def folds_of(X, y, n_folds: int, cv_seed: int):
    """The stratified folds, each scaled to [0, 1] on its training part."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import MinMaxScaler

    out = []
    for train, test in StratifiedKFold(n_folds, shuffle=True,
                                       random_state=cv_seed).split(X, y):
        scaler = MinMaxScaler().fit(X[train])
        out.append((scaler.transform(X[train]), y[train],
                    scaler.transform(X[test]), y[test]))
    return out


def run_learner(learner, impl, folds, seeds, budget):
    """One cell: every fold (and seed, for the randomised learners)."""
    used_seeds = seeds if learner in RANDOMISED else seeds[:1]
    correct, fit_time, said = [], 0.0, {}
    total = len(used_seeds) * len(folds)
    for seed in used_seeds:
        per_fold = []
        for X_train, y_train, X_test, y_test in folds:
            if fit_time > budget:
                done = sum(len(c) for c in correct) + len(per_fold)
                raise TimeoutError(f"budget exceeded ({budget:g} s of fitting) after "
                                   f"{done} of {total} fits")
            est = build(learner, impl, seed, y_train)
            right, seconds, caught = fit_score(est, X_train, y_train, X_test, y_test)
            per_fold.append(right)
            fit_time += seconds
            for category, message in caught:
                key = f"{category}: {message[:100]}"
                said[key] = said.get(key, 0) + 1
        correct.append(per_fold)
    sizes = [len(fold[3]) for fold in folds]
    n_test = sum(sizes)
    per_seed = [sum(c) / n_test for c in correct]
    return {
        "seeds_used": list(used_seeds), "correct": correct, "fold_sizes": sizes,
        "seed_accuracies": per_seed,
        "accuracy": sum(per_seed) / len(per_seed),
        "spread": max(per_seed) - min(per_seed),
        "convergence_warnings": sum(n for k, n in said.items()
                                    if k.startswith("ConvergenceWarning")),
        "warnings": said,
        "fit_time": fit_time, "fits": total,
    }


def run(job: dict) -> list[dict]:
    """Every requested learner on one data set, one row each."""
    params = dict(job["params"])
    learners = params.pop("learners")
    n_folds = int(params.get("folds", 10))
    seeds = [int(s) for s in params.get("seeds", [0])]
    cv_seed = int(params.get("cv_seed", 0))
    budget = float(params.get("budget", float("inf")))
    X, y = load(job["dataset"])
    folds = folds_of(X, y, n_folds, cv_seed)
    shape = {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
             "n_classes": int(len(set(y.tolist())))}
    rows = []
    for learner in learners:
        key = {"learner": learner, "folds": n_folds, "cv_seed": cv_seed,
               "seeds": seeds if learner in RANDOMISED else seeds[:1]}
        row = {"params": key, **shape}
        try:
            row["version"] = version_of(learner, job["impl"])
            row.update(run_learner(learner, job["impl"], folds, seeds, budget))
        except Exception as exc:  # one failing learner must not lose the others' rows
            row["error"] = _protocol.describe(exc)
        rows.append(row)
    return rows


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
