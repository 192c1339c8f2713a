"""ITML over all ~38.6 M pairs of pen-based digits: ProjectAndForget beside ITML_Supervised and Euclidean 5-NN.

    python benchmarks/bench_penbased.py --splits 0 1 2 3 4 --mem-limit-gb 8
    python benchmarks/bench_penbased.py --splits 0 --configs pf-default pf-i10 pf-i60
    python benchmarks/bench_penbased.py --report

One fresh process per (configuration, split), ``benchmarks/workers/penbased.py``
(the protocol is described there).  Results merge into
``benchmarks/results/penbased.json`` keyed by (``penbased``, impl, params).
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "penbased"
TITLE = "ITML over all pairs of pen-based digits (Project and Forget)"
#: name -> (impl, params without the split)
CONFIGS = {
    "euclidean": ("euclidean", {}),
    "itml": ("itml_supervised", {"gamma": 1.0}),
    # the paper's protocol: u = 1, l = 10, gamma = 1, all pairs
    "pf": ("project_and_forget", {"bounds": [1.0, 10.0], "gamma": 1.0,
                                  "max_iter": 30, "max_new": 5000}),
    "pf-i10": ("project_and_forget", {"bounds": [1.0, 10.0], "gamma": 1.0,
                                      "max_iter": 10, "max_new": 5000}),
    "pf-i60": ("project_and_forget", {"bounds": [1.0, 10.0], "gamma": 1.0,
                                      "max_iter": 60, "max_new": 5000}),
    "pf-big": ("project_and_forget", {"bounds": [1.0, 10.0], "gamma": 1.0,
                                      "max_iter": 30, "max_new": 50000}),
    "pf-default": ("project_and_forget", {"bounds": "default", "gamma": 1.0,
                                          "max_iter": 30, "max_new": 5000}),
}
NAMES = {"euclidean": "Euclidean 5-NN", "itml_supervised": "ITML_Supervised (random pairs)",
         "project_and_forget": "ProjectAndForget (all pairs)"}
NOTES = (
    "Protocol (Sonthalia & Gilbert, JMLR 2022, ITML experiment): KEEL pen-based digits "
    "(10,992 x 16, integers 0-100, 10 classes), random 80/20 split "
    "(`train_test_split(test_size=0.2, random_state=split)`), raw features, 5-NN test "
    "accuracy on the learned embedding. ProjectAndForget: every one of the ~38.65 M "
    "same/different-class training pairs is a constraint (the oracle scans them all, in "
    "blocks of 512 rows, at every call), bounds u = 1 / l = 10 on squared distances "
    "(or `default`: 5th/95th percentiles), A0 = I, gamma = 1; at most `max_new` violated "
    "pairs join the active set per oracle call, `max_iter` oracle calls, 10 sweeps between "
    "calls. ITML_Supervised: its default random constraints and bounds, same gamma.",
    "`max_iter` is a budget, not convergence: with u = 1, l = 10 on raw features "
    "(squared distances ~1e4) the LP-like slack problem keeps tens of millions of pairs "
    "violated (`violated at end`), and its optimum would keep most of them active; the "
    "driver stops at `max_iter` with a ConvergenceWarning. The active set stays bounded "
    "by max_iter x max_new (`peak active`).",
    "Times on a 2-core machine shared with other jobs: see `load 1m` (the load average "
    "when the job started); divide by roughly load/2 for an idle machine.",
)


def jobs(args) -> list:
    out = []
    for name in args.configs:
        impl, params = CONFIGS[name]
        for s in args.splits:
            out.append(runner.Job("penbased", "penbased", impl, {**params, "split": s},
                                  python=args.python))
    return out


def _cfg(row):
    p = {k: v for k, v in row["params"].items() if k != "split"}
    for name, (impl, params) in CONFIGS.items():
        if impl == row["impl"] and params == p:
            return name
    return runner.params_text(row)


def summary(rows) -> str:
    ok = [r for r in rows if "error" not in r]
    groups = {}
    for r in ok:
        groups.setdefault(_cfg(r), []).append(r)
    lines = ["| configuration | method | splits | 5-NN accuracy (mean ± sd) | Euclidean, same "
             "splits | fit time mean (s) | max fit time (s) | peak active | max peak RSS (GB) |",
             "|---|---|---|---|---|---|---|---|---|"]
    eu = {r["params"]["split"]: r["accuracy"] for r in ok if r["impl"] == "euclidean"}
    for name, rs in groups.items():
        acc = [r["accuracy"] for r in rs]
        sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
        e = [eu[r["params"]["split"]] for r in rs if r["params"]["split"] in eu]
        e_txt = f"{statistics.mean(e):.4f}" if len(e) == len(rs) else "–"
        peak = max((r.get("n_active_peak", 0) for r in rs), default=0)
        lines.append(
            f"| {name} | {NAMES.get(rs[0]['impl'], rs[0]['impl'])} | "
            f"{','.join(str(r['params']['split']) for r in sorted(rs, key=lambda r: r['params']['split']))} | "
            f"{statistics.mean(acc):.4f} ± {sd:.4f} | {e_txt} | "
            f"{statistics.mean(r['fit_time'] for r in rs):.1f} | "
            f"{max(r['fit_time'] for r in rs):.1f} | {peak or '–'} | "
            f"{max(r['peak_rss_gb'] for r in rs):.2f} |")
    return "\n".join(lines) + "\n"


def render(rows: list, stem: str = STEM) -> str:
    rows = sorted(rows, key=lambda r: (r["impl"], _cfg(r), r["params"].get("split", 0)))
    columns = [
        Column("configuration", _cfg),
        Column("method", lambda r: NAMES.get(r["impl"], r["impl"])),
        Column("split", lambda r: r["params"].get("split")),
        Column("bounds", lambda r: r.get("bounds"),
               lambda b: f"({b[0]:.4g}, {b[1]:.4g})"),
        Column("5-NN acc.", "accuracy", "{:.4f}"),
        Column("fit (s)", "fit_time", "{:.1f}"),
        Column("oracle calls", "n_iter"),
        Column("s / oracle call", "oracle_time_mean", "{:.2f}"),
        Column("s / iteration", "iter_time_mean", "{:.2f}"),
        Column("peak active", "n_active_peak"),
        Column("violated at end", "n_violated_end"),
        Column("max rel. violation", "max_violation", "{:.3g}"),
        Column("peak RSS (GB)", "peak_rss_gb", "{:.2f}"),
        Column("load 1m", runner.load_1m, "{:.1f}"),
        Column("note", lambda r: runner.error_note(r)[:80]),
    ]
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines += ["## Summary (mean over splits)", "", summary(rows), "## Every run", "",
              runner.markdown_table(rows, columns)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1200, mem_limit_gb=8,
                                repeat=False, output=STEM, data_dir=True)
    parser.add_argument("--splits", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--configs", nargs="+", default=["euclidean", "itml", "pf"],
                        choices=list(CONFIGS))
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
