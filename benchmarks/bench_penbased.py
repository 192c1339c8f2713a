"""ITML over all pairs of pen-based digits: ProjectAndForget beside ITML_Supervised (ours, metric-learn) and Euclidean 5-NN.

    python benchmarks/bench_penbased.py                       # the defaults row, 100 % of the training set
    python benchmarks/bench_penbased.py --fractions 0.25 0.5 1 --configs pf itml ml-itml euclidean
    python benchmarks/bench_penbased.py --configs pf-t120      # a time budget
    python benchmarks/bench_penbased.py --report

One fresh process per (configuration, fraction, split),
``benchmarks/workers/penbased.py`` (the protocol is described there).  Results
merge into ``benchmarks/results/penbased.json`` keyed by (``penbased``, impl,
params).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "penbased"
TITLE = "ITML over all pairs of pen-based digits (Project and Forget)"
#: name -> (impl, params without split and fraction)
CONFIGS = {
    "euclidean": ("euclidean", {}),
    # this project's and metric-learn's ITML_Supervised at their defaults
    "itml": ("itml_supervised", {}),
    "ml-itml": ("metric_learn", {}),
    # the paper's protocol: u = 1, l = 10 (gamma = 1, every other parameter
    # at its default), all pairs
    "pf": ("project_and_forget", {"bounds": [1.0, 10.0]}),
    # the same with a budget: the best checked iterate and a warning
    "pf-t120": ("project_and_forget", {"bounds": [1.0, 10.0], "max_time": 120.0}),
    "pf-i5": ("project_and_forget", {"bounds": [1.0, 10.0], "max_iter": 5}),
}
NAMES = {"euclidean": "Euclidean 5-NN", "itml_supervised": "ITML_Supervised (ours)",
         "metric_learn": "ITML_Supervised (metric-learn 0.7.0)",
         "project_and_forget": "ProjectAndForget (all pairs)"}
NOTES = (
    "Protocol (Sonthalia & Gilbert, JMLR 2022, ITML experiment): KEEL pen-based digits "
    "(10,992 x 16, integers 0-100, 10 classes), random 80/20 split "
    "(`train_test_split(test_size=0.2, random_state=split)`), raw features, the first "
    "`fraction` of the 8,793 training points, 5-NN accuracy on the whole test part in the "
    "learned embedding. ProjectAndForget: `fit(X, y, bounds=(1, 10))`, every other "
    "parameter at its default (gamma = 1, tol = 1e-3, max_iter = 200, 3 sweeps between "
    "oracle calls, adaptive bulk adds within memory_limit = 4 GB); every one of the "
    "labelled training pairs is a constraint. ITML_Supervised (ours and metric-learn's, "
    "in its own environment, `benchmarks/peers.py`): their defaults.",
    "`converged` is ProjectAndForget's criterion: a full scan of all pairs found every "
    "pair outside the active set within tol of its bound and every active pair tight "
    "(positive dual) or satisfied. `objective (all pairs)` evaluates, for every method, "
    "ProjectAndForget's objective with bounds (1, 10) at the learned matrix, each pair's "
    "slack at its best value: the methods on one problem.",
    "How ProjectAndForget grows with the number of pairs (split 0, 25 / 50 / 100 % of the "
    "training set: 2.4 M, 9.7 M, 38.7 M pairs): CPU time 10.1, 54.7, 291.5 s, about x5.3 "
    "per x4 pairs (pairs^1.2: the active set is a steady ~57 % of the pairs and the number "
    "of sweeps grows slowly); peak RSS 0.37, 0.65, 1.52 GB, linear in the pairs above the "
    "interpreter's ~0.2 GB (25 bytes per active pair plus the oracle's violated-pair lists "
    "while it fills the set). `pf-t120` is the same fit stopped by `max_time=120`: the best "
    "checked iterate, a ConvergenceWarning, converged False with violation 0.17; its "
    "objective is already within 3e-5 of the converged one.",
    "Times on a 2-core machine shared with other jobs: `load` is the 1-minute load "
    "average sampled during the fit (mean / max); `CPU (s)` is the fit's process CPU "
    "time, which the other jobs inflate far less than the wall-clock `fit (s)`.",
)


def jobs(args) -> list:
    out = []
    for name in args.configs:
        impl, params = CONFIGS[name]
        for f in args.fractions:
            for s in args.splits:
                out.append(runner.Job("penbased", "penbased", impl,
                                      {**params, "fraction": f, "split": s},
                                      python=None if impl == "metric_learn" else args.python))
    return out


def _cfg(row):
    p = {k: v for k, v in row["params"].items() if k not in ("split", "fraction")}
    for name, (impl, params) in CONFIGS.items():
        if impl == row["impl"] and params == p:
            return name
    return runner.params_text(row)


def render(rows: list, stem: str = STEM) -> str:
    rows = sorted(rows, key=lambda r: (r["params"].get("fraction", 1.0), _cfg(r),
                                       r["params"].get("split", 0)))
    columns = [
        Column("configuration", _cfg),
        Column("method", lambda r: NAMES.get(r["impl"], r["impl"])),
        Column("fraction", lambda r: r["params"].get("fraction", 1.0), "{:g}"),
        Column("split", lambda r: r["params"].get("split")),
        Column("training points", "n_train"),
        Column("pairs", "n_pairs_total"),
        Column("5-NN acc.", "accuracy", "{:.4f}"),
        Column("fit (s)", "fit_time", "{:.1f}"),
        Column("CPU (s)", "fit_cpu_time", "{:.1f}"),
        Column("peak RSS (GB)", "peak_rss_gb", "{:.2f}"),
        Column("converged", "converged"),
        Column("oracle calls", "n_iter"),
        Column("active at end", "n_active_end"),
        Column("peak active", "n_active_peak"),
        Column("violation", "violation", "{:.2g}"),
        Column("objective (all pairs)", "objective_all_pairs", "{:.6g}"),
        Column("load (mean / max)", lambda r: (r.get("load_mean"), r.get("load_max")),
               lambda v: "–" if v[0] is None else f"{v[0]:.1f} / {v[1]:.1f}"),
        Column("note", lambda r: runner.error_note(r)[:80]),
    ]
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines += ["## Every run", "", runner.markdown_table(rows, columns)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=3600, mem_limit_gb=8,
                                repeat=False, output=STEM, data_dir=True)
    parser.add_argument("--splits", type=int, nargs="+", default=[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0])
    parser.add_argument("--configs", nargs="+", default=["pf"], choices=list(CONFIGS))
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
