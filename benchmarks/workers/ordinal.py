"""Ordinal metric learning: one learner on one data set over several splits.

Jobs (``dataset`` is a key of :data:`DATASETS`):

* ``impl`` = ``euclidean`` | ``OMDML`` | ``LODML`` | ``NCA`` | ``LMNN``,
  ``params = {"splits": s, "first_seed": 0}``: stratified 70/30 splits with
  seeds ``first_seed .. first_seed + s - 1``, StandardScaler fitted on the
  training part, default parameters, numba kernels loaded by a warm-up fit
  before timing. Means over the splits of the fit time, MAE of the 5-NN
  median vote, Kendall's tau, NDCG@10 and precision@10
  (:func:`metric_estimators.ranking.ranking_report`); ``n_iter`` per split,
  negative when a ConvergenceWarning said max_iter was hit.
* ``impl`` = ``OMDML-ablation``, ``params = {"splits": s, "first_seed": 100}``:
  OMDML with each variant of :data:`ABLATION`, on *selection* splits disjoint
  from the reported ones; one result row per variant (MAE and NDCG@10).
* ``impl`` = ``cold_start``: import time and the first OMDML and LODML fits
  in this fresh process (``dataset`` ignored; 200 points of ``make_ordinal``).
"""

from __future__ import annotations

import sys
import time
import warnings

from benchmarks.workers import _protocol

DATASETS = {
    "synth-linear": "synth-linear (n=800, d=25, 8 levels)",
    "synth-100d": "synth-100d (n=1000, d=100, 8 levels)",
    "synth-nonlinear": "synth-nonlinear (n=800, d=25, 8 levels)",
    "diabetes": "diabetes (n=442, d=10, 6 levels)",
}
LEARNERS = ("euclidean", "OMDML", "LODML", "NCA", "LMNN")
ABLATION = {
    "sqrt": {"label_dissimilarity": "sqrt"},
    "absolute, same_level, w=1, k=5 (default)": {"label_dissimilarity": "absolute"},
    "rank": {"label_dissimilarity": "rank"},
    "sqrt, local_weight=0 (no local term)": {"label_dissimilarity": "sqrt", "local_weight": 0.0},
    "sqrt, local_weight=10": {"label_dissimilarity": "sqrt", "local_weight": 10.0},
    "sqrt, local_graph='all'": {"label_dissimilarity": "sqrt", "local_graph": "all"},
    "sqrt, local_graph='all', w=0.1": {
        "label_dissimilarity": "sqrt", "local_graph": "all", "local_weight": 0.1},
    "sqrt, n_neighbors=10": {"label_dissimilarity": "sqrt", "n_neighbors": 10},
    "sqrt, n_neighbors=15": {"label_dissimilarity": "sqrt", "n_neighbors": 15},
    "sqrt, n_neighbors=30": {"label_dissimilarity": "sqrt", "n_neighbors": 30},
    "absolute, n_neighbors=15": {"label_dissimilarity": "absolute", "n_neighbors": 15},
    "absolute, local_weight=0": {"label_dissimilarity": "absolute", "local_weight": 0.0},
    "absolute, local_weight=10": {"label_dissimilarity": "absolute", "local_weight": 10.0},
    "absolute, local_graph='all', w=0.1": {
        "label_dissimilarity": "absolute", "local_graph": "all", "local_weight": 0.1},
}


def load(name: str):
    """``(X, y)`` of a benchmark data set."""
    import numpy as np

    from metric_estimators.ranking import make_ordinal

    if name == "synth-linear":
        return make_ordinal(800, 5, 20, 8, random_state=0)
    if name == "synth-100d":
        return make_ordinal(1000, 5, 95, 8, random_state=0)
    if name == "synth-nonlinear":
        return make_ordinal(800, 5, 20, 8, nonlinear=True, random_state=1)
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        X, t = load_diabetes(return_X_y=True)  # progression cut into 6 quantile levels
        edges = np.quantile(t, np.linspace(0, 1, 7)[1:-1])
        return X, np.searchsorted(edges, t, side="right")
    raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")


def make_learner(name: str, **params):
    """An unfitted learner (None for the Euclidean baseline)."""
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    from metric_estimators import LMNN, LODML, OMDML

    factories = {"euclidean": lambda: None, "OMDML": lambda: OMDML(**params),
                 "LODML": lambda: LODML(**params),
                 "NCA": lambda: NeighborhoodComponentsAnalysis(random_state=0, **params),
                 "LMNN": lambda: LMNN(**params)}
    if name not in factories:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(factories)}")
    return factories[name]()


def splits(X, y, n_splits: int, first_seed: int):
    """Scaled stratified 70/30 splits with consecutive seeds."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    for seed in range(first_seed, first_seed + n_splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                                  stratify=y)
        scaler = StandardScaler().fit(X_tr)
        yield scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te


def warm_up(name: str) -> None:
    """Load the numba kernels outside the timings."""
    from metric_estimators.ranking import make_ordinal

    X, y = make_ordinal(100, random_state=0)
    extra = {"max_iter": 3} if name == "LODML" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner = make_learner(name, **extra)
        if learner is not None:
            learner.fit(X, y)


def evaluate(job: dict) -> dict:
    """Mean ranking measures and fit time of one learner over the splits."""
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from metric_estimators.ranking import ranking_report

    name, params = job["impl"], job["params"]
    X, y = load(job["dataset"])
    warm_up(name)
    reports = []
    for X_tr, X_te, y_tr, y_te in splits(X, y, params["splits"], params["first_seed"]):
        learner = make_learner(name)
        if learner is None:
            Z_tr, Z_te, seconds, n_iter = X_tr, X_te, 0.0, 0
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                start = time.perf_counter()
                learner.fit(X_tr, y_tr)
                seconds = time.perf_counter() - start
            n_iter = int(getattr(learner, "n_iter_", 0))
            if any(issubclass(w.category, ConvergenceWarning) for w in caught):
                n_iter = -n_iter
            Z_tr, Z_te = learner.transform(X_tr), learner.transform(X_te)
        rep = ranking_report(Z_tr, y_tr, Z_te, y_te, n_neighbors=5, k=10)
        rep.update(fit_time=seconds, n_iter=n_iter)
        reports.append(rep)
    out = {key: float(np.mean([r[key] for r in reports])) for key in reports[0]
           if key != "n_iter"}
    out["n_iter"] = [r["n_iter"] for r in reports]
    return out


def ablation(job: dict) -> list:
    """OMDML's variants on selection splits: one row per variant."""
    import numpy as np

    from metric_estimators import OMDML
    from metric_estimators.ranking import ranking_report

    params = job["params"]
    X, y = load(job["dataset"])
    rows = []
    for variant, kwargs in ABLATION.items():
        reports = []
        for X_tr, X_te, y_tr, y_te in splits(X, y, params["splits"], params["first_seed"]):
            est = OMDML(**kwargs).fit(X_tr, y_tr)
            reports.append(ranking_report(est.transform(X_tr), y_tr, est.transform(X_te), y_te))
        rows.append({"params": {**params, "variant": variant},
                     **{key: float(np.mean([r[key] for r in reports]))
                        for key in ("mae", "ndcg@10")}})
    return rows


def cold_start(job: dict) -> dict:
    """Import and first fits in this fresh process."""
    start = time.perf_counter()
    from metric_estimators import LODML, OMDML
    from metric_estimators.ranking import make_ordinal

    X, y = make_ordinal(200, random_state=0)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        OMDML().fit(X, y)
        t2 = time.perf_counter()
        LODML(max_iter=5).fit(X, y)
    t3 = time.perf_counter()
    return {"import_s": t1 - start, "omdml_first_fit_s": t2 - t1, "lodml_first_fit_s": t3 - t2}


def run(job: dict):
    if job["impl"] == "cold_start":
        return cold_start(job)
    if job["impl"] == "OMDML-ablation":
        return ablation(job)
    return evaluate(job)


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
