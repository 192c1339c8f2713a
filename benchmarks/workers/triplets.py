"""SCML_Supervised / LSML_Supervised side by side, and SCML on 100,000 triplets.

Job: ``{"dataset": "wine" | "breast_cancer" | "digits", "impl": "ours" |
"metric_learn" | "euclidean", "params": {"algo": "scml_supervised" |
"lsml_supervised" | "scml_triplets", ...learner keyword overrides}}``.

``scml_supervised`` / ``lsml_supervised``: the protocol of
``classification.py`` (70/30 stratified split ``random_state=0``,
StandardScaler fitted on the training part, ``fit`` alone timed, 3-NN
accuracy on the test part), plus the *triplet accuracy*: the fraction of
5,000 held-out triplets ``(a, b, c)`` of test points, ``b`` of ``a``'s class
and ``c`` of another (drawn with seed 0), with ``d(a, b) < d(a, c)`` in the
learned space.

``scml_triplets``: ``n_triplets`` (default 100,000) such triplets of
standardised training points, given to ``SCML.fit`` as an array of points
``(n_triplets, 3, n_features)``; fit time, peak memory, triplet accuracy on
the 5,000 held-out test triplets.

Runs in metric-learn's environment too: only APIs present in both.
"""

from __future__ import annotations

import sys
import time

from benchmarks.workers import _protocol
from benchmarks.workers.classification import knn_accuracy, load_dataset, split_scaled

N_HELD_OUT = 5000


def label_triplets(y, n, seed):
    """``n`` index triplets (a, b, c): b of a's class (b != a), c of another class."""
    import numpy as np

    rng = np.random.RandomState(seed)
    y = np.asarray(y)
    members = {c: np.flatnonzero(y == c) for c in np.unique(y)}
    others = {c: np.flatnonzero(y != c) for c in members}
    a = rng.randint(0, y.size, 4 * n)
    a = a[np.array([members[y[i]].size > 1 for i in a])][:n]
    b = np.empty_like(a)
    c = np.empty_like(a)
    for cls in np.unique(y[a]):
        sel = np.flatnonzero(y[a] == cls)
        m = members[cls]
        # a same-class partner other than a itself
        pick = rng.randint(0, m.size - 1, sel.size)
        pos = np.searchsorted(m, a[sel])
        b[sel] = m[pick + (pick >= pos)]
        c[sel] = others[cls][rng.randint(0, others[cls].size, sel.size)]
    return np.column_stack((a, b, c))


def triplet_accuracy(Z, triplets) -> float:
    import numpy as np

    dab = np.linalg.norm(Z[triplets[:, 0]] - Z[triplets[:, 1]], axis=1)
    dac = np.linalg.norm(Z[triplets[:, 0]] - Z[triplets[:, 2]], axis=1)
    return float(np.mean(dab < dac))


def build(impl, algo, params):
    if impl == "euclidean":
        import sklearn

        return f"scikit-learn {sklearn.__version__}", None
    names = {"scml_supervised": "SCML_Supervised", "lsml_supervised": "LSML_Supervised",
             "scml_triplets": "SCML"}
    if algo not in names:
        raise ValueError(f"unknown algo {algo!r}")
    if impl == "ours":
        import metric_estimators as lib

        version = getattr(lib, "__version__", "dev")
    elif impl == "metric_learn":
        import metric_learn as lib

        version = lib.__version__
    else:
        raise ValueError(f"unknown impl {impl!r}")
    return version, getattr(lib, names[algo])(**{"random_state": 0, **params})


def run(job: dict) -> dict:
    params = dict(job["params"])
    algo = params.pop("algo")
    n_triplets = int(params.pop("n_triplets", 100_000))
    X_train, X_test, y_train, y_test = split_scaled(*load_dataset(job["dataset"]))
    held_out = label_triplets(y_test, N_HELD_OUT, 0)
    out = {"n_train": int(X_train.shape[0]), "n_features": int(X_train.shape[1]),
           "rss_before_fit_mb": _protocol.peak_rss_mb()}
    out["version"], learner = build(job["impl"], algo, params)
    if algo == "scml_triplets":
        T = label_triplets(y_train, n_triplets, 1)
        fit_args = (X_train[T],)  # (n_triplets, 3, n_features) points
        out["n_triplets"] = int(T.shape[0])
        out["rss_before_fit_mb"] = _protocol.peak_rss_mb()
    else:
        fit_args = (X_train, y_train)
    if learner is None:
        Z_train, Z_test = X_train, X_test
    else:
        start, cpu = time.perf_counter(), time.process_time()
        learner.fit(*fit_args)
        out["fit_time"] = time.perf_counter() - start
        # CPU seconds of every thread of the process: on a busy machine the
        # wall time is mostly waiting, this is the work
        out["fit_cpu_time"] = time.process_time() - cpu
        out["peak_rss_mb"] = _protocol.peak_rss_mb()
        Z_train, Z_test = learner.transform(X_train), learner.transform(X_test)
        if getattr(learner, "n_iter_", None) is not None:
            out["n_iter"] = int(learner.n_iter_)
    out.setdefault("peak_rss_mb", _protocol.peak_rss_mb())
    out["accuracy"] = knn_accuracy(Z_train, y_train, Z_test, y_test)
    out["triplet_accuracy"] = triplet_accuracy(Z_test, held_out)
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
