"""The metric-learn family side by side with metric-learn 0.7.0.

    python benchmarks/bench_ml_family.py --learners NCA,LFDA,RCA_Supervised,Covariance \\
        --datasets iris,wine,breast_cancer,digits --impls ours,metric_learn,sklearn \\
        --repeat 3 --output ml_family
    python benchmarks/bench_ml_family.py --report --output ml_family

Regression learners (MLKR) run on ``--regression-datasets`` (default
``diabetes``) instead of ``--datasets``.  An implementation a learner does not
have (``sklearn`` is only NCA's) is not run.  The learners are those of
``benchmarks/workers/ml_family.py`` (``LEARNERS``); see benchmarks/README.md.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402
from benchmarks.workers.ml_family import LEARNERS  # noqa: E402

TITLE = "The metric-learn family: fit time and 3-NN score, ours against metric-learn 0.7.0"
BASELINE = "metric_learn"
DATASET_ORDER = ("iris", "wine", "breast_cancer", "digits", "diabetes")

NOTES = (
    "Every implementation on the same data, split and scaling, each fit in a "
    "fresh process (`benchmarks/workers/ml_family.py`): 70/30 split "
    "(`random_state=0`, stratified for classification), StandardScaler fitted "
    "on the training part, `fit` alone timed (so ours includes numba's start-up "
    "in that process), then 3-NN on the transformed data: test accuracy for "
    "classification, test R^2 of `KNeighborsRegressor(3)` for the regression "
    "learners (MLKR on diabetes; the score column holds R^2 there). Default "
    "parameters of each library, `random_state=0`; RCA_Supervised's `n_chunks` "
    "(100) is capped, for both, at the number of disjoint chunklets the "
    "training classes allow (metric-learn raises otherwise). With `--repeat N` "
    "the smallest fit time is kept (all in `fit_times`). × metric-learn: fit "
    "time / metric-learn's on that learner and data set; Δ score: ours minus "
    "metric-learn's. Load 1m: 1-minute load average when the job started "
    "(the machine may be shared).",
)


def _key(row):
    return (row["params"].get("learner"), row["dataset"])


def baseline(rows):
    """metric-learn's successful row per (learner, dataset)."""
    return {_key(r): r for r in rows if r["impl"] == BASELINE and "error" not in r}


def summary(rows):
    """Per learner: summed fit times of ours and metric-learn over the data sets both ran."""
    base = baseline(rows)
    sums = {}
    for r in rows:
        b = base.get(_key(r))
        if r["impl"] != "ours" or "error" in r or b is None:
            continue
        s = sums.setdefault(r["params"]["learner"], [0.0, 0.0, []])
        s[0] += r["fit_time"]
        s[1] += b["fit_time"]
        s[2].append(r["dataset"])
    lines = ["| learner | data sets | ours summed fit (s) | metric-learn summed fit (s) | ratio |",
             "|---|---|---|---|---|"]
    tot = [0.0, 0.0]
    for name, (ours, ml, ds) in sums.items():
        lines.append(f"| {name} | {', '.join(ds)} | {ours:.3f} | {ml:.3f} | {ours / ml:.3f} |")
        tot[0] += ours
        tot[1] += ml
    if sums:
        lines.append(f"| **all** | | {tot[0]:.3f} | {tot[1]:.3f} | {tot[0] / tot[1]:.3f} |")
    return "\n".join(lines) + "\n"


def render(rows, stem):
    """The markdown report."""
    base = baseline(rows)

    def ratio(r):
        b = base.get(_key(r))
        if b and r.get("fit_time") and "error" not in r and r["impl"] != BASELINE:
            return r["fit_time"] / b["fit_time"]
        return None

    def delta(r):
        b = base.get(_key(r))
        if b and "accuracy" in r and r["impl"] != BASELINE:
            return r["accuracy"] - b["accuracy"]
        return None

    def overrides(r):
        extra = {k: v for k, v in r["params"].items() if k != "learner"}
        return json.dumps(extra, sort_keys=True) if extra else None

    def warned(r):
        return "; ".join(r.get("warnings") or []) or None

    columns = [
        Column("learner", lambda r: r["params"].get("learner")),
        Column("dataset", "dataset"),
        Column("n_train × d", lambda r: f"{r['n_train']} × {r['n_features']}" if "n_train" in r else None),
        Column("impl", "impl"), Column("version", "version"),
        Column("overrides", overrides),
        Column("fit time (s)", "fit_time", "{:.3f}"),
        Column("× metric-learn", ratio, "{:.3f}"),
        Column("3-NN score", "accuracy", "{:.4f}"),
        Column("Δ score", delta, "{:+.4f}"),
        Column("peak RSS (MB)", "peak_rss_mb", "{:.0f}"),
        Column("n_iter", "n_iter"), Column("load 1m", runner.load_1m, "{:.2f}"),
        Column("threads", lambda r: r.get("threads", (r.get("run") or {}).get("threads"))),
        Column("warnings", warned),
        Column("note", runner.error_note),
    ]
    order = {name: i for i, name in enumerate(LEARNERS)}
    data_order = {name: i for i, name in enumerate(DATASET_ORDER)}
    impl_order = {name: i for i, name in enumerate(("ours", BASELINE, "sklearn"))}
    rows = sorted(rows, key=lambda r: (order.get(r["params"].get("learner"), 99),
                                       r["params"].get("learner", ""),
                                       data_order.get(r["dataset"], 99), r["dataset"],
                                       impl_order.get(r["impl"], 99)))
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines.append(runner.markdown_table(rows, columns))
    lines += ["", "Summed fit times (data sets where both succeeded):", "", summary(rows)]
    return "\n".join(lines)


def main(argv=None):
    parser = runner.base_parser(TITLE, timeout=900, mem_limit_gb=12, output="ml_family")
    parser.add_argument("--learners", default=",".join(LEARNERS),
                        help=f"comma-separated, from: {', '.join(LEARNERS)}")
    parser.add_argument("--datasets", default="iris,wine,breast_cancer,digits",
                        help="classification data sets, comma-separated")
    parser.add_argument("--regression-datasets", default="diabetes",
                        help="data sets of the regression learners (MLKR)")
    parser.add_argument("--impls", default="ours,metric_learn,sklearn",
                        help="comma-separated; a learner's missing ones are skipped")
    parser.add_argument("--params", type=json.loads, default={},
                        help='overrides per learner and impl, JSON: '
                             '{"NCA": {"ours": {"max_iter": 50}}}')
    args = parser.parse_args(argv)
    jobs = family_jobs(args, LEARNERS, parser.error)
    return runner.execute(args.output, jobs, args, render, skip_after_failure=False)


def family_jobs(args, known, error):
    """One ``ml_family`` worker job per learner, data set and implementation.

    ``args`` holds ``learners``, ``datasets``, ``regression_datasets``,
    ``impls``, ``params`` and ``python``; a learner outside ``known`` is
    reported through ``error`` (the parser's); an implementation a learner
    does not have is skipped.
    """
    jobs = []
    for learner in runner.csv(args.learners):
        if learner not in known:
            error(f"unknown learner {learner!r}; known: {', '.join(known)}")
        entry = LEARNERS[learner]
        datasets = (args.datasets if entry["task"] == "classification"
                    else args.regression_datasets)
        for dataset in runner.csv(datasets):
            for impl in runner.csv(args.impls):
                if impl not in entry:
                    continue
                params = {"learner": learner, **args.params.get(learner, {}).get(impl, {})}
                jobs.append(runner.Job("ml_family", dataset, impl, params,
                                       python=args.python if impl not in runner.PEER_IMPLS else None))
    return jobs


if __name__ == "__main__":
    sys.exit(main())
