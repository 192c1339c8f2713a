"""MLKR's defaults against regularised variants: 3-NN R^2 on one split of one data set.

Job: ``{"dataset": "diabetes" | "friedman1" | "linear", "impl": "ours" |
"metric_learn", "params": {"seed": int}}``; one row per variant, each with
``params`` ``{"seed", "variant"}``, ``r2``, ``n_iter`` and ``no_warning``
(the fit stopped before its budget without a warning; None where unknown).
``Pipeline(StandardScaler, learner, KNeighborsRegressor(3))`` as in
``benchmarks/bench_defaults.py`` (70/30 split with ``random_state=seed``,
the scaler fitted on the training part), BLAS on one thread.  Data:
diabetes, ``make_friedman1(500, 10 features, noise=1)`` (5 informative
features, non-linear) and ``make_regression(500, 10 features, 3
informative, noise=30)`` (linear), both drawn with ``random_state=100``.
The variants (``impl="ours"``):

* ``MLKR`` at its defaults (Weinberger & Tesauro's leave-one-out objective,
  1000 L-BFGS iterations), ``max_iter`` 1 / 3 / 10 (early stopping), and
  ``n_components`` 2 / 3 (PCA start);
* the leave-one-out loss plus ``alpha * sum((y - mean(y))^2) * ||L - I||_F^2 /
  d`` (a ridge towards the identity start);
* the leave-one-out loss plus ``alpha * sum((y - mean(y))^2) * (d tr(M^2) /
  tr(M)^2 - 1)``, ``M = L^T L``: a penalty on the shape of the metric only
  (0 exactly for multiples of the identity, whatever the kernel width);
* ``ridge direction``: the rank-one map onto scikit-learn's ``RidgeCV``
  coefficients (the direction a linear target asks for; not a learner of
  this package, a reference).

``impl="metric_learn"`` (in metric-learn's environment): metric-learn
0.7.0's ``MLKR`` at its defaults.  The penalised variants need the
package's MLKR objective itself, so this worker imports
``metric_estimators._problems.mlkr.MLKRObjective`` and
``metric_estimators._backend`` (the kernels the objective runs on): the
variants are not public estimators.  Accuracies only; no time is measured.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from benchmarks.workers import _protocol

DATASETS = {"diabetes": range(6), "friedman1": range(3), "linear": range(3)}
PENALTIES = {"ridge to I": (0.01, 0.1, 1.0), "shape": (0.3, 1.0, 3.0)}


def load(name):
    from sklearn.datasets import load_diabetes, make_friedman1, make_regression

    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    if name == "friedman1":
        return make_friedman1(500, 10, noise=1.0, random_state=100)
    return make_regression(500, 10, n_informative=3, noise=30.0, random_state=100)


def split(X, y, seed):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def knn_r2(L, Xtr, Xte, ytr, yte):
    from sklearn.neighbors import KNeighborsRegressor

    return float(KNeighborsRegressor(3).fit(Xtr @ L.T, ytr).score(Xte @ L.T, yte))


def ridge_to_identity(d, weight):
    def penalty(L):
        D = L - np.eye(d)
        return weight * np.sum(D * D) / d, 2.0 * weight * D / d
    return penalty


def shape(d, weight):
    def penalty(L):
        M = L.T @ L
        t, q = np.trace(M), np.sum(M * M)
        return (weight * (d * q / t ** 2 - 1.0),
                4.0 * weight * d / t ** 2 * (L @ M - (q / t) * L))
    return penalty


def penalised_fit(Xtr, ytr, penalty):
    from scipy.optimize import minimize

    from metric_estimators import _backend
    from metric_estimators._problems.mlkr import MLKRObjective

    d = Xtr.shape[1]
    objective = MLKRObjective(Xtr, ytr, d, _backend.choose("mlkr", Xtr.shape[0]))

    def f(flat):
        loss, grad = objective(flat)
        p, pg = penalty(flat.reshape(d, d))
        return loss + p, grad + pg.ravel()

    res = minimize(f, np.eye(d).ravel(), jac=True, method="L-BFGS-B",
                   options={"maxiter": 1000})
    return res.x.reshape(d, d), int(res.nit), bool(res.status == 0)


def mlkr_fit(Xtr, ytr, **params):
    from metric_estimators import MLKR

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = MLKR(random_state=0, **params).fit(Xtr, ytr)
    return est.components_, int(est.n_iter_), not caught


def metric_learn_fit(Xtr, ytr):
    from metric_learn import MLKR

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = MLKR(random_state=0).fit(Xtr, ytr)
    clean = not [w for w in caught if not issubclass(w.category, (FutureWarning,
                                                                 DeprecationWarning))]
    return est.components_, int(getattr(est, "n_iter_", -1)), clean


def _ours(name, seed):
    from sklearn.linear_model import RidgeCV

    X, y = load(name)
    Xtr, Xte, ytr, yte = split(X, y, seed)
    d = Xtr.shape[1]
    scale = float(np.sum((ytr - ytr.mean()) ** 2))
    rows = []

    def add(variant, L, n_iter=None, clean=True):
        rows.append({"params": {"seed": seed, "variant": variant},
                     "r2": knn_r2(L, Xtr, Xte, ytr, yte), "n_iter": n_iter,
                     "no_warning": clean})
        print(name, seed, variant, f"{rows[-1]['r2']:.3f}", file=sys.stderr, flush=True)

    add("Euclidean", np.eye(d))
    add("MLKR (defaults)", *mlkr_fit(Xtr, ytr))
    for it in (1, 3, 10):
        add(f"MLKR max_iter={it}", *mlkr_fit(Xtr, ytr, max_iter=it))
    for nc in (2, 3):
        add(f"MLKR n_components={nc}", *mlkr_fit(Xtr, ytr, n_components=nc))
    for kind, alphas in PENALTIES.items():
        make = ridge_to_identity if kind == "ridge to I" else shape
        for a in alphas:
            add(f"{kind}, alpha={a:g}", *penalised_fit(Xtr, ytr, make(d, a * scale)))
    coef = RidgeCV().fit(Xtr, ytr).coef_
    add("ridge direction (reference)", coef[None, :])
    return rows


def _metric_learn(name, seed):
    X, y = load(name)
    Xtr, Xte, ytr, yte = split(X, y, seed)
    L, n_iter, clean = metric_learn_fit(Xtr, ytr)
    # it never reports hitting its budget: converged is unknown
    return [{"params": {"seed": seed, "variant": "metric-learn MLKR (defaults)"},
             "r2": knn_r2(L, Xtr, Xte, ytr, yte), "n_iter": n_iter,
             "no_warning": None, "warned": not clean}]


def run(job: dict) -> list:
    """Every variant of the job's implementation on its data set and split."""
    from threadpoolctl import threadpool_limits

    seed = int(job["params"]["seed"])
    with threadpool_limits(limits=1, user_api="blas"):
        if job["impl"] == "metric_learn":
            return _metric_learn(job["dataset"], seed)
        return _ours(job["dataset"], seed)


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
