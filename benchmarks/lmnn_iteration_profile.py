"""Where an LMNN fit spends its CPU time: ours against PyLMNN, per call.

    python benchmarks/lmnn_iteration_profile.py --impl ours --dataset mcf-10000-50-0-1-15-0
    benchmarks/.venvs/pylmnn/bin/python benchmarks/lmnn_iteration_profile.py --impl pylmnn ...

Same data, split and scaling as ``benchmarks/workers/classification.py``; one
warm-up fit on 500 training points, then one fit under ``cProfile`` with
``time.process_time`` as the clock (CPU seconds, so less sensitive to the load
of a shared machine).  Prints one line per phase: calls, CPU seconds in total
and per call.  For ours the phases are the impostor searches
(``ImpostorSet.refresh``), the objective evaluations (``LMNNObjective.__call__``,
searches excluded) and the target neighbours; for PyLMNN its objective
evaluations (``_loss_grad_lbfgs``, an impostor search included in each), the
impostor search inside them (``_find_impostors``) and the target neighbours.
"""

import argparse
import cProfile
import json
import pstats
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workers.classification import load_dataset, split_scaled  # noqa: E402

PHASES = {
    "ours": {"search": "refresh", "evaluation": "__call__",
             "target neighbours": "find_target_neighbors"},
    "pylmnn": {"evaluation": "_loss_grad_lbfgs", "search": "_find_impostors",
               "target neighbours": "_select_target_neighbors_wrapper"},
}


def build(impl, params):
    if impl == "ours":
        from metric_estimators import LMNN

        return LMNN(n_neighbors=3, random_state=0, **params)
    from pylmnn import LargeMarginNearestNeighbor

    return LargeMarginNearestNeighbor(n_neighbors=3, random_state=0, **params)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=sorted(PHASES), required=True)
    parser.add_argument("--dataset", default="mcf-10000-50-0-1-15-0")
    parser.add_argument("--params", type=json.loads, default={})
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    X, _, y, _ = split_scaled(*load_dataset(args.dataset))
    build(args.impl, args.params).fit(X[:500], y[:500])
    learner = build(args.impl, args.params)
    prof = cProfile.Profile(time.process_time)
    start = time.process_time()
    prof.enable()
    learner.fit(X, y)
    prof.disable()
    total = time.process_time() - start
    stats = pstats.Stats(prof).stats
    print(f"{args.impl} on {args.dataset} ({X.shape[0]} x {X.shape[1]}), params "
          f"{json.dumps(args.params)}: fit {total:.2f} s CPU, n_iter {learner.n_iter_}")
    for phase, name in PHASES[args.impl].items():
        calls, cum = 0, 0.0
        for (path, _, func), (_, ncalls, _, ct, _) in stats.items():
            if func == name and ("lmnn" in path):
                calls += ncalls
                cum += ct
        per = cum / calls if calls else float("nan")
        print(f"  {phase:<18} {calls:4d} calls  {cum:7.2f} s  {per:.3f} s per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
