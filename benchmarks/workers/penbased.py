"""ITML over all pairs of pen-based digits: ProjectAndForget, ITML_Supervised, Euclidean 5-NN.

Job: ``{"dataset": "penbased", "impl": "project_and_forget" |
"itml_supervised" | "euclidean", "params": {"split": s, "bounds": [low,
high] | "default", "gamma": g, "max_iter": k, "max_new": m, ...}}``.

The protocol of Sonthalia & Gilbert's ITML experiment (JMLR 2022): the
KEEL copy of UCI pen-based digits (10,992 x 16 integers in 0..100, 10
classes), a random 80/20 split (``train_test_split(test_size=0.2,
random_state=split)``, not stratified), raw features (no scaling), 5-NN
(``KNeighborsClassifier(5)``) on the learned embedding.  ``project_and_forget``
is ``ProjectAndForget(gamma, max_iter, max_new_constraints=max_new,
random_state=split)`` over all ~38.6 M same/different-class training pairs
with ``bounds`` on squared distances (the paper: u = 1, l = 10; "default": the
5th / 95th percentiles); ``itml_supervised`` is ``ITML_Supervised(gamma,
random_state=split)`` with its default random constraints and bounds.  Only
``fit`` is timed; peak RSS (``ru_maxrss``) after fit.

The data file: ``penbased.dat`` in the directory ``--data-dir`` of
``bench_penbased.py`` names (the environment variable ``BENCH_DATA_DIR``),
by default ``<repo>/../shared/data``.
"""

from __future__ import annotations

import sys
import time

from benchmarks.workers import _protocol


def data_path() -> str:
    """The path of ``penbased.dat`` (:func:`benchmarks.workers._protocol.data_file`)."""
    return _protocol.data_file("penbased.dat")


def load_penbased(path: str | None = None):
    """``(X, y)`` from a KEEL file: '@' header lines, then '@data', rows 'f1,...,f16,class'."""
    import numpy as np

    rows, in_data = [], False
    with open(path or data_path()) as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            if line.startswith("@"):
                in_data = in_data or line.lower().startswith("@data")
                continue
            if in_data:
                rows.append([float(v) for v in line.split(",")])
    arr = np.asarray(rows)
    return arr[:, :-1], arr[:, -1].astype(np.int64)


def run(job: dict) -> dict:
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsClassifier

    from metric_estimators import ITML_Supervised, ProjectAndForget

    p = dict(job["params"])
    split = int(p.get("split", 0))
    X, y = load_penbased()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=split)
    out = {"n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0])}
    impl = job["impl"]
    t0 = time.perf_counter()
    if impl == "euclidean":
        Ztr, Zte = Xtr, Xte
    elif impl == "itml_supervised":
        est = ITML_Supervised(gamma=float(p.get("gamma", 1.0)), random_state=split)
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(Xtr, ytr)
        out["warnings"] = sorted({type(w.message).__name__ for w in caught})
        out.update(n_iter=int(est.n_iter_), n_constraints=int(len(est.pairs_)),
                   bounds=[float(b) for b in est.bounds_])
        Ztr, Zte = est.transform(Xtr), est.transform(Xte)
    elif impl == "project_and_forget":
        bounds = p.get("bounds", [1.0, 10.0])
        est = ProjectAndForget(
            gamma=float(p.get("gamma", 1.0)), max_iter=int(p.get("max_iter", 30)),
            max_new_constraints=int(p.get("max_new", 5000)),
            max_sweeps=int(p.get("max_sweeps", 10)), random_state=split,
            verbose=int(p.get("verbose", 0)))
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(Xtr, ytr, bounds=None if bounds == "default" else bounds)
        h = est.history_
        iter_time = np.diff(np.r_[0.0, h["time"]])
        out.update(
            warnings=sorted({type(w.message).__name__ for w in caught}),
            n_iter=int(est.n_iter_), converged=bool(est.converged_),
            n_pairs=int(est.n_pairs_), n_same_pairs=int(est.n_same_pairs_),
            n_active_end=int(est.n_active_),
            n_active_peak=int(max(h["n_active"]) if h["n_active"] else 0),
            n_violated_end=int(est.n_violated_),
            max_violation=float(est.violation_),
            bounds=[float(b) for b in est.bounds_],
            oracle_time_mean=float(np.mean(h["oracle_time"])),
            oracle_time_total=float(np.sum(h["oracle_time"])),
            iter_time_mean=float(np.mean(iter_time)),
            history={k: [float(v) for v in h[k]] for k in
                     ("objective", "max_violation", "n_active", "n_added",
                      "oracle_time", "time")})
        Ztr, Zte = est.transform(Xtr), est.transform(Xte)
    else:
        raise ValueError(f"unknown impl {impl!r}")
    out["fit_time"] = time.perf_counter() - t0
    out["fit_peak_rss_gb"] = _protocol.peak_rss_mb() / 1024.0
    knn = KNeighborsClassifier(n_neighbors=5).fit(Ztr, ytr)
    out["accuracy"] = float(knn.score(Zte, yte))
    out["peak_rss_gb"] = _protocol.peak_rss_mb() / 1024.0
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
