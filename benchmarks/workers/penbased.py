"""ITML over all pairs of pen-based digits: ProjectAndForget, ITML_Supervised (ours, metric-learn), Euclidean.

Job: ``{"dataset": "penbased", "impl": "project_and_forget" |
"itml_supervised" | "metric_learn" | "euclidean", "params": {"split": s,
"fraction": f, "bounds": [low, high], ...estimator keyword overrides}}``.

The protocol of Sonthalia & Gilbert's ITML experiment (JMLR 2022): the
KEEL copy of UCI pen-based digits (10,992 x 16 integers in 0..100, 10
classes), a random 80/20 split (``train_test_split(test_size=0.2,
random_state=split)``, not stratified), raw features (no scaling), 5-NN
(``KNeighborsClassifier(5)``) on the learned embedding, scored on the whole
test part.  ``fraction`` keeps the first ``round(fraction * 8793)`` training
points (the split is already shuffled).

* ``project_and_forget``: ``ProjectAndForget(random_state=split, **overrides)``
  (its defaults otherwise) with ``fit(X, y, bounds=bounds)``, over every
  same/different-class training pair;
* ``itml_supervised``: this project's ``ITML_Supervised(random_state=split)``
  at its defaults; ``metric_learn``: metric-learn's, in its own environment
  (``benchmarks/peers.py``), at its defaults.

Only ``fit`` is timed (``fit_time``, and ``fit_cpu_time``: the process's
user + system CPU seconds during it, which the other jobs on a shared
machine do not inflate as much); the load average is sampled every 5 s
during the fit (``load_mean``, ``load_max``); peak RSS (``ru_maxrss``).
``objective_all_pairs`` is, for every method, the all-pairs objective of
ProjectAndForget's problem with ``bounds`` at the learned matrix ``A``, each
pair's slack at its best value (``D_ld(A, I) + gamma sum_c h(d_c / xi0_c)``
with ``h(r) = r - log r - 1`` over the pairs beyond their bound), so that
the methods are compared on one problem.  Runs in metric-learn's
environment too: the ``metric_estimators`` import is only made for our
learners.

The data file: ``penbased.dat`` in the directory ``--data-dir`` of
``bench_penbased.py`` names (the environment variable ``BENCH_DATA_DIR``),
by default ``<repo>/../shared/data``.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time

from benchmarks.workers import _protocol


def data_path() -> str:
    """The path of ``penbased.dat`` (:func:`benchmarks.workers._protocol.data_file`)."""
    return _protocol.data_file("penbased.dat")


def load_penbased(path: str | None = None):
    """``(X, y)`` from a KEEL file: '@' header lines, then '@data', rows 'f1,...,f16,class'."""
    import numpy as np

    features, labels = _protocol.read_keel(path or data_path())
    return (np.asarray(features, dtype=np.float64),
            np.asarray(labels, dtype=np.float64).astype(np.int64))


def all_pairs_objective(X, y, M, bounds, gamma=1.0, block=256):
    """ProjectAndForget's objective over all pairs at ``M``, each slack at its best value."""
    import numpy as np

    d = M.shape[0]
    sign, logdet = np.linalg.slogdet(M)
    if sign <= 0:
        return float("inf")
    low, high = bounds
    w, U = np.linalg.eigh(M)
    Z = X @ (U * np.sqrt(np.clip(w, 0, None)))
    total = 0.0
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", Z, Z)
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        D = sq[i0:i1, None] + sq[None, :] - 2.0 * Z[i0:i1] @ Z.T
        np.maximum(D, 0.0, out=D)
        upper = np.arange(n)[None, :] > np.arange(i0, i1)[:, None]
        same = y[i0:i1, None] == y[None, :]
        r_same = D[same & upper] / low
        r_diff = D[~same & upper] / high
        for r, beyond in ((r_same, r_same > 1.0), (r_diff, r_diff < 1.0)):
            r = r[beyond]
            r = r[r > 0]
            total += float(np.sum(r - np.log(r) - 1.0))
    return float(np.trace(M) - logdet - d + gamma * total)


class LoadSampler:
    """The 1-minute load average every ``every`` seconds, in a daemon thread."""

    def __init__(self, every=5.0):
        self.every = every
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run(job: dict) -> dict:
    import warnings

    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsClassifier

    p = dict(job["params"])
    split = int(p.pop("split", 0))
    fraction = float(p.pop("fraction", 1.0))
    bounds = [float(b) for b in p.pop("bounds", [1.0, 10.0])]
    X, y = load_penbased()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=split)
    m = int(round(fraction * Xtr.shape[0]))
    Xtr, ytr = Xtr[:m], ytr[:m]
    out = {"n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
           "n_pairs_total": int(m * (m - 1) // 2)}
    impl = job["impl"]
    est = None
    if impl == "project_and_forget":
        from metric_estimators import ProjectAndForget
        est = ProjectAndForget(random_state=split, **p)
        fit_args = {"bounds": bounds}
    elif impl == "itml_supervised":
        from metric_estimators import ITML_Supervised
        est = ITML_Supervised(random_state=split, **p)
        fit_args = {}
    elif impl == "metric_learn":
        import metric_learn
        est = metric_learn.ITML_Supervised(random_state=split, **p)
        fit_args = {}
        out["version"] = metric_learn.__version__
    elif impl != "euclidean":
        raise ValueError(f"unknown impl {impl!r}")
    cpu0 = _cpu_seconds()
    t0 = time.perf_counter()
    with LoadSampler() as load, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if est is not None:
            est.fit(Xtr, ytr, **fit_args)
    out["fit_time"] = time.perf_counter() - t0
    out["fit_cpu_time"] = _cpu_seconds() - cpu0
    out["fit_peak_rss_gb"] = _protocol.peak_rss_mb() / 1024.0
    out["load_mean"] = float(np.mean(load.samples))
    out["load_max"] = float(np.max(load.samples))
    out["warnings"] = sorted({type(w.message).__name__ for w in caught})
    if est is None:
        M = np.eye(X.shape[1])
        Ztr, Zte = Xtr, Xte
    else:
        M = est.get_mahalanobis_matrix()
        Ztr, Zte = est.transform(Xtr), est.transform(Xte)
        out["n_iter"] = int(np.max(est.n_iter_))
        if hasattr(est, "bounds_"):
            out["bounds"] = [float(b) for b in est.bounds_]
    if impl == "project_and_forget":
        h = est.history_
        out.update(
            converged=bool(est.converged_), n_pairs=int(est.n_pairs_),
            n_same_pairs=int(est.n_same_pairs_), n_active_end=int(est.n_active_),
            n_active_peak=int(max(h["scan_active"] + [est.n_active_])),
            n_violated_end=int(est.n_violated_), violation=float(est.violation_),
            objective=float(est.loss_curve_[-1]),
            oracle_time_total=float(np.sum(h["oracle_time"])),
            history={k: [float(v) for v in h[k]] for k in
                     ("objective", "n_active", "n_added", "passes", "oracle_time",
                      "time", "scan_active", "scan_violated",
                      "scan_active_violated", "scan_violation")})
    out["objective_all_pairs"] = all_pairs_objective(
        Xtr, ytr, M, bounds, gamma=float(p.get("gamma", 1.0)))
    knn = KNeighborsClassifier(n_neighbors=5).fit(Ztr, ytr)
    out["accuracy"] = float(knn.score(Zte, yte))
    out["peak_rss_gb"] = _protocol.peak_rss_mb() / 1024.0
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
