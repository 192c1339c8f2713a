"""Warm fits on the numpy twins and on the numba kernels, by size: the data behind the limits.

Job: ``{"dataset": <estimator>, "impl": "ours", "params": {}}`` where
``<estimator>`` is a class name of :data:`ESTIMATORS`.  In this one process,
with BLAS on one thread (threadpoolctl), for every problem that
:func:`cases` lists for the estimator (the first-contact data sets and
larger ones, from where the twins clearly win to where the kernels do): one
untimed fit and one timed fit on each path, the path forced with
``metric_estimators._backend.use("numpy")`` / ``use("numba")``.  The
kernels are compiled (or loaded) by the untimed fit, so the numba figure is
a warm installation's; the numpy one is what a fit within the family's
limit runs while its kernels are not compiled.  One row per problem:
``estimator``, ``data``, ``numpy`` and ``numba`` (CPU seconds of the timed
fit, ``time.process_time``) and the iterations of each
(``numpy_n_iter`` / ``numba_n_iter``).

This worker imports ``metric_estimators._backend`` (to force a path): the
measurement is of the two paths themselves, which no public name selects
inside a process.
"""

from __future__ import annotations

import sys
import time
import warnings

from benchmarks.workers import _protocol

#: the estimators measured, in the order of the tables
ESTIMATORS = ("ITML_Supervised", "ProjectAndForget", "MetricNearness",
              "CorrelationClustering", "MLKR", "LODML", "LMNN", "SCML_Supervised",
              "LSML_Supervised")


def _std(load, n=None):
    from sklearn.preprocessing import StandardScaler

    X, y = load(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return (X, y) if n is None else (X[:n], y[:n])


def _distances(n):
    import numpy as np

    rng = np.random.RandomState(0)
    P = rng.rand(n, 2)
    D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
    D = D + np.abs(rng.randn(n, n)) * 0.1
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0.0)
    return (D,)


def _signed(n):
    import numpy as np

    rng = np.random.RandomState(0)
    labels = rng.randint(0, 4, n)
    A = np.where(labels[:, None] == labels[None, :], 1.0, -1.0)
    A = np.where(rng.rand(n, n) < 0.1, -A, A)
    A = np.triu(A, 1)
    return (A + A.T,)


def _diabetes(n):
    import numpy as np
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    rng = np.random.RandomState(0)
    idx = rng.randint(0, X.shape[0], n)
    return X[idx] + 0.01 * rng.randn(n, X.shape[1]), y[idx]


def cases(estimator):
    """``[(data label, make estimator, fit arguments), ...]`` for ``estimator``."""
    import numpy as np
    from sklearn.datasets import (
        load_breast_cancer,
        load_diabetes,
        load_digits,
        load_iris,
        load_wine,
    )

    import metric_estimators as me
    from benchmarks.workers.first_contact import _sparse_signed_graph
    from metric_estimators.ranking import make_ordinal

    out = []
    X, y = load_digits(return_X_y=True)
    if estimator in ("ITML_Supervised", "ProjectAndForget"):
        cls = getattr(me, estimator)
        make = lambda: cls(random_state=0)  # noqa: E731
        out += [("iris", make, _std(load_iris)), ("wine", make, _std(load_wine))]
        out += [(f"digits[:{n}]", make, (X[:n], y[:n])) for n in (100, 200, 300)]
        out += [(f"breast_cancer[:{n}]", make, _std(load_breast_cancer, n)) for n in (200, 300)]
        if estimator == "ITML_Supervised":
            out.append(("breast_cancer", make, _std(load_breast_cancer)))
            out += [(f"wine, n_constraints={m}",
                     lambda m=m: me.ITML_Supervised(n_constraints=m, random_state=0),
                     _std(load_wine)) for m in (1000, 2000, 4000, 5000, 10000)]
            out.append(("digits (4000 listed pairs)", make, (X, y)))
        else:
            out += [(f"breast_cancer[:{n}]", make, _std(load_breast_cancer, n))
                    for n in (150, 250)]
            out.append(("digits[:150]", make, (X[:150], y[:150])))
    elif estimator == "MetricNearness":
        out += [(f"{n} x {n} noisy distances", me.MetricNearness, _distances(n))
                for n in (60, 100, 150, 200, 300)]
    elif estimator == "CorrelationClustering":
        make = lambda: me.CorrelationClustering(random_state=0)  # noqa: E731
        out += [(f"{n}-node signed graph", make, _signed(n)) for n in (60, 100, 150, 200)]
        out += [(f"sparse {n}-node signed graph", make, (_sparse_signed_graph(n=n),))
                for n in (200, 400, 500, 800)]
    elif estimator == "MLKR":
        short = lambda: me.MLKR(random_state=0, max_iter=100)  # noqa: E731
        out += [(f"{n} points of diabetes", short, _diabetes(n)) for n in (100, 200, 300, 442)]
        Xs, t = _std(load_diabetes)
        out.append(("diabetes (standardised)", lambda: me.MLKR(random_state=0), (Xs, t)))
        out += [(f"{n} points of diabetes, max_iter=100", short, _diabetes(n))
                for n in (1000, 2000)]
    elif estimator == "LODML":
        make = lambda: me.LODML(random_state=0)  # noqa: E731
        for n in (200, 500, 1000):
            out.append((f"ordinal {n} x 5", make,
                        make_ordinal(n_samples=n, n_informative=3, n_noise=2, n_levels=5,
                                     random_state=0)))
        Xs, t = _std(load_diabetes)
        levels = np.searchsorted(np.quantile(t, [0.2, 0.4, 0.6, 0.8]), t)
        out.append(("diabetes, 5 levels", make, (Xs, levels)))
        for n in (2000, 5000):
            out.append((f"ordinal {n} x 5", make,
                        make_ordinal(n_samples=n, n_informative=3, n_noise=2, n_levels=5,
                                     random_state=0)))
    elif estimator in ("LMNN", "SCML_Supervised", "LSML_Supervised"):
        cls = getattr(me, estimator)
        make = lambda: cls(random_state=0)  # noqa: E731
        Xd, yd = _std(load_digits)
        out += [("breast_cancer", make, _std(load_breast_cancer)),
                ("digits[:1000]", make, (Xd[:1000], yd[:1000])), ("digits", make, (Xd, yd))]
    else:
        raise ValueError(f"unknown estimator {estimator!r}; one of {', '.join(ESTIMATORS)}")
    return out


def run(job: dict) -> list:
    """A warm fit on each path for every problem of the job's estimator."""
    from threadpoolctl import threadpool_limits

    from metric_estimators import _backend

    estimator = job["dataset"]
    rows = []
    warnings.simplefilter("ignore")
    with threadpool_limits(1, user_api="blas"):
        for data, make, args in cases(estimator):
            row = {"dataset": data, "params": {"estimator": estimator},
                   "estimator": estimator, "data": data}
            for path in ("numpy", "numba"):
                with _backend.use(path):  # the path forced, whatever is compiled
                    make().fit(*args)
                    t = time.process_time()
                    fitted = make().fit(*args)
                row[path] = time.process_time() - t
                row[path + "_n_iter"] = int(getattr(fitted, "n_iter_", -1))
            rows.append(row)
            print(data, estimator, f"numpy {row['numpy']:.3f} s, numba {row['numba']:.3f} s",
                  file=sys.stderr, flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
