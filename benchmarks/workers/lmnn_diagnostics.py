"""LMNN against PyLMNN, diagnostics: per-phase CPU profile, equal iterations / objective.

Same data, split and scaling as :mod:`benchmarks.workers.classification`
(70/30 stratified split, ``random_state=0``, StandardScaler fitted on the
training part); both learners with ``n_neighbors=3``, ``random_state=0``.
The job's ``study`` (passed next to ``dataset`` / ``impl`` / ``params``) is

``profile`` (impl ``ours`` | ``pylmnn``, params: learner overrides)
    One warm-up fit on the first 500 training points, then one fit under
    ``cProfile`` with ``time.process_time`` as the clock (CPU seconds, all
    threads, so less sensitive to the load of a shared machine). Returns
    the fit's CPU seconds, its ``n_iter`` and per phase (:data:`PHASES`)
    the calls, the CPU seconds in total (cumulative) and per call. For ours
    the phases are the impostor searches (``ImpostorSet.refresh``), the
    objective evaluations (``LMNNObjective.__call__``, searches excluded)
    and the target neighbours; for PyLMNN its objective evaluations
    (``_loss_grad_lbfgs``, an impostor search included in each), the
    impostor search inside them (``_find_impostors``) and the target
    neighbours. A phase counts every function of that name defined in a
    file whose path contains ``lmnn``.

``equal_objective`` (no timing: objectives and accuracies only), in stages
    ``stage="fit"`` (impl ``pylmnn``, PyLMNN's environment): PyLMNN at its
    defaults; its ``components_`` are saved to ``components_file`` and its
    ``n_iter`` returned.
    ``stage="score"`` (impl ``pylmnn``, the project's environment): that
    map scored with the *exact* hinge objective of
    :class:`metric_estimators._problems.lmnn.LMNNObjective` (every impostor
    pair within the margin, no subset; ``mu = 0.5``, PyLMNN's objective is
    ``2x`` that, see :func:`exact_objective`) and by its 3-NN test accuracy.
    ``stage="ours"`` (impl ``ours``): ours at its defaults (hinge) refitted
    with ``params["stop"]`` absent (defaults), ``"equal_iterations"``
    (``max_iter`` = the job's ``peer_n_iter``) or ``"equal_objective"``
    (``max_iter`` = the first ``k`` in ``1 .. max_k``, refitting with
    growing ``k``, at which its exact objective is at most the job's
    ``peer_objective``); the exact objective and the 3-NN test accuracy of
    each.

Runs in PyLMNN's environment too (``profile`` and ``equal_objective``'s
``fit``): only the standard library and the classification helpers at
module level.
"""

from __future__ import annotations

import sys
import time
import warnings

from benchmarks.workers import _protocol
from benchmarks.workers.classification import knn_accuracy, load_dataset, split_scaled

#: per implementation: phase -> the profiled function's name
PHASES = {
    "ours": {"search": "refresh", "evaluation": "__call__",
             "target_neighbours": "target_neighbors"},
    "pylmnn": {"evaluation": "_loss_grad_lbfgs", "search": "_find_impostors",
               "target_neighbours": "_select_target_neighbors_wrapper"},
}
WARMUP_POINTS = 500


def build(impl: str, params: dict):
    """The learner: ours or PyLMNN, ``n_neighbors=3``, ``random_state=0``."""
    if impl == "ours":
        from metric_estimators import LMNN

        return LMNN(n_neighbors=3, random_state=0, **params)
    if impl == "pylmnn":
        from pylmnn import LargeMarginNearestNeighbor

        return LargeMarginNearestNeighbor(n_neighbors=3, random_state=0, **params)
    raise ValueError(f"unknown impl {impl!r}; known: ours, pylmnn")


def version(impl: str) -> str:
    if impl == "ours":
        import metric_estimators

        return getattr(metric_estimators, "__version__", "dev")
    from importlib.metadata import version as dist_version

    return dist_version("PyLMNN")


def profile(job: dict) -> dict:
    """CPU seconds of one fit and of its phases (cProfile, ``time.process_time``)."""
    import cProfile
    import pstats

    impl, params = job["impl"], dict(job["params"])
    warnings.simplefilter("ignore")
    X, _, y, _ = split_scaled(*load_dataset(job["dataset"]))
    build(impl, params).fit(X[:WARMUP_POINTS], y[:WARMUP_POINTS])
    learner = build(impl, params)
    prof = cProfile.Profile(time.process_time)
    start = time.process_time()
    prof.enable()
    learner.fit(X, y)
    prof.disable()
    total = time.process_time() - start
    stats = pstats.Stats(prof).stats
    out = {"n_train": int(X.shape[0]), "n_features": int(X.shape[1]),
           "version": version(impl), "fit_cpu": total, "n_iter": int(learner.n_iter_)}
    for phase, name in PHASES[impl].items():
        calls, cum = 0, 0.0
        for (path, _, func), (_, ncalls, _, ct, _) in stats.items():
            if func == name and ("lmnn" in path or "impostors" in path):
                calls += ncalls
                cum += ct
        out[f"{phase}_calls"] = calls
        out[f"{phase}_cpu_s"] = cum
        out[f"{phase}_cpu_per_call_s"] = cum / calls if calls else None
    return out


def exact_objective(L, X, y) -> float:
    """The exact hinge objective of ``L`` (no impostor subset), ``mu = 0.5``."""
    import numpy as np

    from metric_estimators import _backend
    from metric_estimators._problems.lmnn import LMNNObjective, find_target_neighbors
    from metric_estimators.solvers.impostors import ImpostorSet

    y_idx = np.unique(y, return_inverse=True)[1]
    targets = find_target_neighbors(X, y_idx, 3)
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**10,
                       _backend.choose("lmnn", *X.shape))
    obj = LMNNObjective(X, targets, imps, 0.5, False, L.shape[0])
    imps.refresh(*obj.search_point(L.ravel()))
    return float(obj(L.ravel())[0])


def equal_objective(job: dict) -> dict:
    """One stage of the equal-iterations / equal-objective comparison."""
    stage = job["stage"]
    X, X_test, y, y_test = split_scaled(*load_dataset(job["dataset"]))
    shape = {"n_train": int(X.shape[0]), "n_features": int(X.shape[1])}

    def scored(L) -> dict:
        return {"exact_objective": exact_objective(L, X, y),
                "accuracy": knn_accuracy(X @ L.T, y, X_test @ L.T, y_test)}

    if stage == "fit":
        import numpy as np

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            learner = build(job["impl"], job["params"]).fit(X, y)
        np.save(job["components_file"], learner.components_)
        return {**shape, "version": version(job["impl"]), "n_iter": int(learner.n_iter_)}
    if stage == "score":
        import numpy as np

        return {**shape, **job["fit"], **scored(np.load(job["components_file"]))}
    if stage != "ours":
        raise ValueError(f"unknown stage {stage!r}")

    def ours(**params):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return build("ours", params).fit(X, y)

    stop = job["params"].get("stop")
    out = {**shape, "version": version("ours")}
    if stop is None:
        est = ours()
    elif stop == "equal_iterations":
        out["max_iter"] = int(job["peer_n_iter"])
        est = ours(max_iter=out["max_iter"])
    elif stop == "equal_objective":
        for k in range(1, int(job["max_k"]) + 1):
            est = ours(max_iter=k)
            f = exact_objective(est.components_, X, y)
            if f <= job["peer_objective"]:
                out["max_iter"] = k
                break
        else:
            out["note"] = "never reached PyLMNN's exact objective"
            return out
    else:
        raise ValueError(f"unknown stop {stop!r}")
    return {**out, "n_iter": int(est.n_iter_), **scored(est.components_)}


def run(job: dict) -> dict:
    study = job.get("study")
    if study == "profile":
        return profile(job)
    if study == "equal_objective":
        return equal_objective(job)
    raise ValueError(f"unknown study {study!r}; known: profile, equal_objective")


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
