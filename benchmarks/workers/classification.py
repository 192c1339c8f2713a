"""LMNN / ITML_Supervised side by side: one learner, one data set, 3-NN accuracy.

Job: ``{"dataset": "iris" | "wine" | "breast_cancer" | "digits" |
"synth-<n>-<d>" | "mc-<n>-<d>" | "mcf-<n>-<d>-<r>-<c>-<s>-<seed>" |
"mcn-<n>-<d>-<i>-<k>-<s>-<seed>" | "penbased" | "keel-<name>", "impl": "ours"
| "metric_learn" | "pylmnn" | "mlpack" | "euclidean", "params": {"algo":
"lmnn" | "itml_supervised", ...learner keyword overrides}}``.

Every implementation, identically: load the data; 70/30 stratified split
(``random_state=0``); StandardScaler fitted on the training part; time
``learner.fit(X_train, y_train)`` alone (``time.perf_counter``); 3-NN
(``KNeighborsClassifier(n_neighbors=3)``) fitted on the transformed training
part, scored on the transformed test part (with ``"splits": K``, the mean
over K stratified splits, seeds 0 to K - 1, each fitted once more; the
times and memory stay those of split 0). The current RSS is read right
before ``fit`` (after the learner's modules are imported) and the peak RSS
(``ru_maxrss``) right after it; ``fit_added_mb`` is their difference.

Runs in the peers' environments too (scikit-learn 1.2 to 1.9): only APIs
present in all of them.
"""

from __future__ import annotations

import sys
import time

from benchmarks.workers import _protocol

TEST_SIZE = 0.3
SPLIT_SEED = 0
KNN_NEIGHBORS = 3


def make_synthetic(n_samples: int, n_features: int):
    """``synth-<n>-<d>``: 10 classes, at most 20 informative features, the rest noise."""
    from sklearn.datasets import make_classification

    return make_classification(
        n_samples=n_samples, n_features=n_features, n_informative=min(n_features, 20),
        n_redundant=0, n_repeated=0, n_classes=10, n_clusters_per_class=2,
        class_sep=1.0, flip_y=0.01, random_state=0,
    )


def make_issue16(n_samples: int, n_features: int):
    """``mc-<n>-<d>``: the scale target's data, 10 classes, 8 informative features, class_sep 1.5.

    Every parameter the issue does not name keeps scikit-learn's default
    (``n_redundant=2``, ``n_repeated=0``, ``n_clusters_per_class=2``,
    ``flip_y=0.01``, ...), with ``random_state=0``.
    """
    from sklearn.datasets import make_classification

    return make_classification(
        n_samples=n_samples, n_features=n_features, n_informative=8,
        n_classes=10, class_sep=1.5, random_state=0,
    )


def make_family(n_samples: int, n_features: int, n_redundant: int,
                n_clusters: int, sep_tenths: int, seed: int):
    """``mcf-<n>-<d>-<r>-<c>-<s>-<seed>``: the LMNN panel's generator family.

    10 classes, 8 informative features, ``n_redundant=r``,
    ``n_clusters_per_class=c``, ``class_sep=s / 10`` and ``random_state=seed``;
    scikit-learn's defaults otherwise (``flip_y=0.01``, ``n_repeated=0``).
    ``mcf-30000-50-0-1-15-0`` is the family of the issue's measured rows.
    """
    from sklearn.datasets import make_classification

    return make_classification(
        n_samples=n_samples, n_features=n_features, n_informative=8,
        n_redundant=n_redundant, n_classes=10, n_clusters_per_class=n_clusters,
        class_sep=sep_tenths / 10.0, random_state=seed,
    )


def make_noise_classes(n_samples: int, n_features: int, n_informative: int,
                       n_classes: int, sep_tenths: int, seed: int):
    """``mcn-<n>-<d>-<i>-<k>-<s>-<seed>``: noise-heavy and many-class families.

    ``make_classification`` with ``i`` informative features out of ``d`` (the
    other ``d - i`` pure noise: ``n_redundant=0``, ``n_repeated=0``), ``k``
    classes of one cluster each, ``class_sep=s / 10``, ``random_state=seed``;
    scikit-learn's defaults otherwise (``flip_y=0.01``).
    """
    from sklearn.datasets import make_classification

    return make_classification(
        n_samples=n_samples, n_features=n_features, n_informative=n_informative,
        n_redundant=0, n_repeated=0, n_classes=n_classes, n_clusters_per_class=1,
        class_sep=sep_tenths / 10.0, random_state=seed,
    )


def load_keel(name: str):
    """``(X, y)`` of ``keel/<name>.dat`` (``_protocol.data_file``): KEEL format.

    '@' header lines, then '@data' and one comma-separated row per sample,
    numeric features, the class (a number or a name) last; classes are
    numbered in sorted order of their names.  Rows with a missing value
    (``<null>``: 6 of cleveland's, 16 of wisconsin's) are dropped.
    """
    import numpy as np

    features, labels = _protocol.read_keel(_protocol.data_file(f"keel/{name}.dat"))
    _, y = np.unique(np.asarray(labels), return_inverse=True)
    return np.asarray(features, dtype=np.float64), y.astype(np.int64)


def load_dataset(name: str):
    """``(X, y)`` for a bundled scikit-learn data set, a KEEL file or a generator name."""
    from sklearn import datasets

    bundled = {"iris": datasets.load_iris, "wine": datasets.load_wine,
               "breast_cancer": datasets.load_breast_cancer, "digits": datasets.load_digits}
    if name in bundled:
        return bundled[name](return_X_y=True)
    if name == "penbased":
        from benchmarks.workers.penbased import load_penbased

        return load_penbased()
    if name.startswith("keel-"):
        return load_keel(name[len("keel-"):])
    parts = name.split("-")
    if len(parts) == 7 and parts[0] == "mcf" and all(p.isdigit() for p in parts[1:]):
        return make_family(*(int(p) for p in parts[1:]))
    if len(parts) == 7 and parts[0] == "mcn" and all(p.isdigit() for p in parts[1:]):
        return make_noise_classes(*(int(p) for p in parts[1:]))
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        if parts[0] == "synth":
            return make_synthetic(int(parts[1]), int(parts[2]))
        if parts[0] == "mc":
            return make_issue16(int(parts[1]), int(parts[2]))
    raise ValueError(f"unknown dataset {name!r}")


def split_scaled(X, y, seed=SPLIT_SEED):
    """70/30 stratified split (seed 0), StandardScaler fitted on the training part."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def knn_accuracy(Z_train, y_train, Z_test, y_test) -> float:
    """3-NN test accuracy in an (already transformed) space."""
    from sklearn.neighbors import KNeighborsClassifier

    knn = KNeighborsClassifier(n_neighbors=KNN_NEIGHBORS).fit(Z_train, y_train)
    return float(knn.score(Z_test, y_test))


class MlpackLMNN:
    """fit/transform adapter around the functional ``mlpack.lmnn`` binding."""

    def __init__(self, lmnn, **params):
        self._lmnn = lmnn
        self.params = params

    def fit(self, X, y):
        """Learn L. mlpack is column-major: ``output`` holds L.T (``X @ output`` maps)."""
        self.components_ = self._lmnn(input_=X, labels=y, **self.params)["output"].T
        return self

    def transform(self, X):
        return X @ self.components_.T


def _unsupported(impl, algo):
    return ValueError(f"{impl} has no {algo!r} learner")


def build_ours(algo, params):
    """This project's learners, n_neighbors=3 and a fixed seed as for the peers."""
    import metric_estimators
    from metric_estimators import LMNN, ITML_Supervised

    version = getattr(metric_estimators, "__version__", "dev")
    if algo == "lmnn":
        return version, LMNN(**{"n_neighbors": 3, "random_state": 0, **params})
    if algo == "itml_supervised":
        return version, ITML_Supervised(**{"random_state": 0, **params})
    raise _unsupported("ours", algo)


def build_metric_learn(algo, params):
    """metric-learn 0.7.0's defaults, n_neighbors=3 and a fixed seed."""
    import metric_learn

    if algo == "lmnn":
        learner = metric_learn.LMNN(**{"n_neighbors": 3, "random_state": 0, **params})
    elif algo == "itml_supervised":
        learner = metric_learn.ITML_Supervised(**{"random_state": 0, **params})
    else:
        raise _unsupported("metric_learn", algo)
    return metric_learn.__version__, learner


def build_pylmnn(algo, params):
    """PyLMNN's defaults, n_neighbors=3 and a fixed seed (LMNN only)."""
    from importlib.metadata import version

    from pylmnn import LargeMarginNearestNeighbor

    if algo != "lmnn":
        raise _unsupported("pylmnn", algo)
    return version("PyLMNN"), LargeMarginNearestNeighbor(
        **{"n_neighbors": 3, "random_state": 0, **params})


def build_mlpack(algo, params):
    """mlpack with k=3, L-BFGS (its default is AMSGrad) and seed=1 (0 = from the clock)."""
    from importlib.metadata import version

    import mlpack

    if algo != "lmnn":
        raise _unsupported("mlpack", algo)
    return version("mlpack"), MlpackLMNN(
        mlpack.lmnn, **{"k": 3, "optimizer": "lbfgs", "seed": 1, **params})


def build_euclidean(algo, params):
    """No learner: 3-NN on the standardised features is the baseline."""
    import sklearn

    return f"scikit-learn {sklearn.__version__}", None


BUILDERS = {"ours": build_ours, "metric_learn": build_metric_learn, "pylmnn": build_pylmnn,
            "mlpack": build_mlpack, "euclidean": build_euclidean}


def run(job: dict) -> dict:
    """Fit one learner on one data set; fit time, accuracy, memory."""
    params = dict(job["params"])
    algo = params.pop("algo")
    # "max_test": score the 3-NN on a fixed random subset of the test part
    # (10^6 points: 3 * 10^5 test queries would cost more than the fit)
    max_test = params.pop("max_test", None)
    # "warmup": fit a copy of the learner on a 500-point stratified subset
    # of the training part first (untimed), so that start-up costs (numba
    # loading its cached kernels, first BLAS calls) are out of the timed fit.
    # Ours warms up on the numba kernels (compiling them if the cache is
    # empty): the timed fits then run where a warm installation runs them,
    # whatever numba's cache held when the job started
    warmup = params.pop("warmup", False)
    # "fits": best of up to this many timed fits (fresh clones, same process),
    # stopping early once "fit_budget" seconds of fitting are spent; the same
    # rule for every implementation (slower ones get fewer fits)
    fits = int(params.pop("fits", 1))
    fit_budget = float(params.pop("fit_budget", float("inf")))
    # "splits": on data sets of fewer than "splits_below" training points
    # (default: all), the 3-NN accuracy is the mean over this many stratified
    # 70/30 splits (seeds 0, 1, ...; the timed fits are those of split 0, the
    # others one untimed fit each). A test part of a few tens of points moves
    # by a whole point per test point; the mean over splits does not.
    n_splits = int(params.pop("splits", 1))
    splits_below = params.pop("splits_below", None)
    impl = job["impl"]
    if impl not in BUILDERS:
        raise ValueError(f"unknown impl {impl!r}; known: {', '.join(BUILDERS)}")
    X_all, y_all = load_dataset(job["dataset"])
    X_train, X_test, y_train, y_test = split_scaled(X_all, y_all)
    if splits_below is not None and X_train.shape[0] >= int(splits_below):
        n_splits = 1
    out = {"n_train": int(X_train.shape[0]), "n_features": int(X_train.shape[1]),
           "n_classes": int(len(set(y_train.tolist())))}
    out["version"], learner = BUILDERS[impl](algo, params)
    # RSS just before fit (the learner's modules imported): the target's
    # "memory added by the fit" is the peak after it minus this
    if warmup and learner is not None:
        from sklearn.base import clone
        from sklearn.model_selection import train_test_split

        if X_train.shape[0] > 500:
            X_w, _, y_w, _ = train_test_split(X_train, y_train, train_size=500,
                                              stratify=y_train, random_state=SPLIT_SEED)
        else:
            X_w, y_w = X_train, y_train
        if impl == "ours":
            from metric_estimators import _backend

            with _backend.use("numba"):
                clone(learner).fit(X_w, y_w)
        else:
            clone(learner).fit(X_w, y_w)
        out["warm"] = True
    out["rss_before_fit_mb"] = _protocol.current_rss_mb()
    if learner is None:
        Z_train, Z_test = X_train, X_test
    else:
        from sklearn.base import clone

        times, cpus, template = [], [], learner
        while True:
            learner = clone(template) if times else template
            start, cpu_start = time.perf_counter(), time.process_time()
            learner.fit(X_train, y_train)
            times.append(time.perf_counter() - start)
            # CPU seconds of the fit, all threads (less sensitive to the load
            # of a shared machine than the wall time)
            cpus.append(time.process_time() - cpu_start)
            if len(times) == 1:  # memory: the first fit's peak
                out["peak_rss_mb"] = _protocol.peak_rss_mb()
                out["fit_added_mb"] = round(out["peak_rss_mb"] - out["rss_before_fit_mb"], 1)
            if len(times) >= fits or sum(times) >= fit_budget:
                break
        best = min(range(len(times)), key=times.__getitem__)
        out["fit_time"], out["fit_cpu"] = times[best], cpus[best]
        if fits > 1:
            out["fit_times"] = [round(t, 4) for t in times]
        if getattr(learner, "regularization_", None) is not None:  # ours: mu used
            out["regularization"] = float(learner.regularization_)
        Z_train, Z_test = learner.transform(X_train), learner.transform(X_test)
        if getattr(learner, "n_iter_", None) is not None:
            out["n_iter"] = int(learner.n_iter_)
    out.setdefault("peak_rss_mb", _protocol.peak_rss_mb())
    if max_test is not None and Z_test.shape[0] > max_test:
        import numpy as np

        keep = np.sort(np.random.RandomState(SPLIT_SEED).choice(
            Z_test.shape[0], int(max_test), replace=False))
        Z_test, y_test = Z_test[keep], y_test[keep]
        out["n_test_scored"] = int(max_test)
    out["accuracy"] = knn_accuracy(Z_train, y_train, Z_test, y_test)
    if n_splits > 1:
        out["accuracy_splits"] = [out["accuracy"]] + [
            _split_accuracy(learner, X_all, y_all, seed) for seed in range(1, n_splits)]
        out["accuracy_split0"] = out["accuracy"]
        out["accuracy"] = sum(out["accuracy_splits"]) / n_splits
        out["n_splits"] = n_splits
    return out


def _split_accuracy(learner, X, y, seed):
    """3-NN test accuracy of a fresh clone of ``learner`` on split ``seed`` (untimed)."""
    X_train, X_test, y_train, y_test = split_scaled(X, y, seed)
    if learner is not None:
        from sklearn.base import clone

        fitted = clone(learner).fit(X_train, y_train)
        X_train, X_test = fitted.transform(X_train), fitted.transform(X_test)
    return knn_accuracy(X_train, y_train, X_test, y_test)


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
