"""What an NCA fit ends at: its training objective, its scale, its test accuracy.

Job: ``{"dataset": <name>, "impl": "ours" | "pydml", "params": {"variant":
<name of VARIANTS>, "folds": 10, "n_folds_run": 3}}``.

The folds are the accuracy panel's (:func:`benchmarks.workers.accuracy.folds_of`:
stratified, seed 0, min-max scaled on the training part); the first
``n_folds_run`` of them are fitted.  For each fold the row records, for the
learned map ``L``:

* ``f_over_n``: NCA's objective ``f(L) / n`` on the training part, the mean
  leave-one-out probability that a point's soft neighbour has its class
  (Goldberger et al. 2004), computed here in plain numpy for every
  implementation (1 means every soft neighbourhood is pure);
* ``scale``: ``||L S||_F``, ``S`` the training features' standard deviations
  (the size of the map on standardised features);
* ``correct`` / ``n_test``: 3-NN on the transformed test part;
* ``n_iter`` where the implementation reports it.

Runs in pyDML's environment too (no import of this project there).
"""

from __future__ import annotations

import sys

from benchmarks.workers import _protocol

#: variant -> (implementation, constructor parameters)
VARIANTS = {
    "ours (defaults)": ("ours", {}),
    "ours reg='auto' tol=1e-5": ("ours", {"reg": "auto", "tol": 1e-5}),
    "pyDML (defaults)": ("pydml", {}),
}


def nca_mean_objective(L, X, y):
    """``f(L) / n``: mean over points of the softmax mass on their own class."""
    import numpy as np

    Z = X @ L.T
    sq = np.einsum("ij,ij->i", Z, Z)
    D = -(sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T))
    np.fill_diagonal(D, -np.inf)
    D -= D.max(axis=1, keepdims=True)
    P = np.exp(D)
    P /= P.sum(axis=1, keepdims=True)
    return float(np.sum(P * (y[:, None] == y[None, :])) / len(y))


def fit_map(variant, X, y):
    """``(L, n_iter or None)`` of one fit."""
    impl, params = VARIANTS[variant]
    if impl == "pydml":
        from dml import NCA as PyDMLNCA

        model = PyDMLNCA(**params).fit(X, y)
        return model.transformer(), None
    from metric_estimators import NCA

    est = NCA(**params).fit(X, y)
    return est.components_, int(est.n_iter_)


def run(job: dict) -> list:
    import numpy as np
    from sklearn.neighbors import KNeighborsClassifier
    from threadpoolctl import threadpool_limits

    from benchmarks.workers.accuracy import folds_of, load

    p = job["params"]
    variant = p["variant"]
    if VARIANTS[variant][0] != job["impl"]:
        raise ValueError(f"variant {variant!r} is not of implementation {job['impl']!r}")
    X, y = load(job["dataset"])
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for fold, (Xtr, ytr, Xte, yte) in enumerate(folds_of(X, y, p["folds"], 0)):
            if fold >= p["n_folds_run"]:
                break
            L, n_iter = fit_map(variant, Xtr, ytr)
            knn = KNeighborsClassifier(3).fit(Xtr @ L.T, ytr)
            rows.append({
                "params": {**p, "fold": fold},
                "f_over_n": nca_mean_objective(L, Xtr, np.asarray(ytr)),
                "scale": float(np.linalg.norm(L * Xtr.std(axis=0))),
                "correct": int(np.sum(knn.predict(Xte @ L.T) == yte)),
                "n_test": int(len(yte)),
                "n_iter": n_iter,
            })
    return rows


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
