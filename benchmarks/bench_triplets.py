"""SCML_Supervised and LSML_Supervised against metric-learn; SCML on 100,000 triplets.

    python benchmarks/bench_triplets.py --repeat 3            # -> results/triplets.{json,md}
    python benchmarks/bench_triplets.py --report              # re-render the markdown

Rows: every (data set, learner, implementation) of ``--datasets`` x
``--algos`` x ``--impls`` (3-NN accuracy, held-out triplet accuracy, fit
time, peak memory), plus ``--large`` (default: SCML on 100,000 digits
triplets, ours and metric-learn). See benchmarks/README.md.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

TITLE = "SCML / LSML: fit time, 3-NN accuracy and held-out triplet accuracy"
NOTES = (
    "Worker `benchmarks/workers/triplets.py`, each job in a fresh process: "
    "70/30 stratified split (`random_state=0`), StandardScaler fitted on the "
    "training part, `fit` alone timed (ours includes numba's start-up in that "
    "process), 3-NN accuracy on the test part; triplet accuracy: fraction of "
    "5,000 held-out test triplets (a, b same class, c another class, seed 0) "
    "with d(a, b) < d(a, c) in the learned space. `scml_triplets`: SCML fitted "
    "on `n_triplets` such triplets of training points passed as an array of "
    "points (n, 3, d). Default parameters of both libraries, `random_state=0`. "
    "× metric-learn: our fit time / metric-learn's on the same row key. "
    "With `--repeat N` the smallest fit time is kept. fit CPU: CPU seconds of "
    "all the worker's threads during `fit` (rows measured since it was added): "
    "on a busy machine (see load 1m) wall time is mostly waiting.",
)


def render(rows, stem):
    ml = {(r["dataset"], r["params"].get("algo"), r["params"].get("n_triplets")): r.get("fit_time")
          for r in rows if r["impl"] == "metric_learn" and "error" not in r}

    def ratio(r):
        base = ml.get((r["dataset"], r["params"].get("algo"), r["params"].get("n_triplets")))
        if r["impl"] == "ours" and base and r.get("fit_time"):
            return r["fit_time"] / base
        return None

    columns = [
        Column("dataset", "dataset"), Column("algo", lambda r: r["params"].get("algo")),
        Column("impl", "impl"), Column("version", "version"),
        Column("n_triplets", "n_triplets"),
        Column("fit time (s)", lambda r: None if r["impl"] == "euclidean" else r.get("fit_time"),
               "{:.3f}"),
        Column("× metric-learn", ratio, "{:.3f}"),
        Column("fit CPU (s)", "fit_cpu_time", "{:.3f}"),
        Column("3-NN accuracy", "accuracy", "{:.4f}"),
        Column("triplet accuracy", "triplet_accuracy", "{:.4f}"),
        Column("peak RSS (MB)", "peak_rss_mb", "{:.0f}"),
        Column("n_iter", "n_iter"), Column("load 1m", runner.load_1m, "{:.2f}"),
        Column("note", runner.error_note),
    ]
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines.append(runner.markdown_table(rows, columns))
    return "\n".join(lines)


def main(argv=None):
    parser = runner.base_parser(TITLE, timeout=900, mem_limit_gb=12, output="triplets")
    parser.add_argument("--datasets", default="wine,breast_cancer,digits")
    parser.add_argument("--algos", default="scml_supervised,lsml_supervised")
    parser.add_argument("--impls", default="ours,metric_learn,euclidean")
    parser.add_argument("--large", default="ours,metric_learn",
                        help="implementations of SCML on --n-triplets digits triplets "
                             "('' to skip)")
    parser.add_argument("--n-triplets", type=int, default=100_000)
    parser.add_argument("--params", type=json.loads, default={},
                        help='per-impl overrides, JSON: {"ours": {"max_iter": 500}}')
    args = parser.parse_args(argv)

    def job(dataset, impl, params):
        return runner.Job("triplets", dataset, impl, {**params, **args.params.get(impl, {})},
                          python=args.python if impl not in runner.PEER_IMPLS else None)

    jobs = []
    for dataset in runner.csv(args.datasets):
        for algo in runner.csv(args.algos):
            for impl in runner.csv(args.impls):
                if impl == "euclidean" and algo != runner.csv(args.algos)[0]:
                    continue  # one baseline row per data set
                jobs.append(job(dataset, impl, {"algo": algo}))
    for impl in runner.csv(args.large):
        jobs.append(job("digits", impl, {"algo": "scml_triplets",
                                         "n_triplets": args.n_triplets}))
    return runner.execute(args.output, jobs, args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
