"""The LMNN / ITML side-by-side command shared by bench_lmnn.py and bench_itml.py."""

from __future__ import annotations

import json

from benchmarks import runner
from benchmarks.runner import Column

PEERS = runner.PEER_IMPLS

NOTES = (
    "Every implementation on the same data, split and scaling, each in a fresh "
    "process (`benchmarks/workers/classification.py`): 70/30 stratified split "
    "(`random_state=0`), StandardScaler fitted on the training part, `fit` alone "
    "timed (so ours includes numba's start-up in that process), 3-NN accuracy "
    "on the test part. Peers run in their own virtual environments "
    "(`benchmarks/peers.py`). With `--repeat N` the smallest fit time is kept "
    "(all in `fit_times`). Peak RSS: `ru_maxrss` of the worker right after "
    "`fit`; RSS before fit: the current RSS right before `fit` (data loaded, "
    "learner imported); added by fit: the peak minus it. × fastest peer: fit time "
    "/ the fastest successful peer (metric_learn, pylmnn, mlpack) on that data "
    "set. Load 1m: 1-minute load average when the job started (the machine may "
    "be shared; compare rows of similar load).",
    "`--max-test N` (the job parameter `max_test`, shown under overrides): the "
    "3-NN accuracy is scored on a fixed random subset of N points of the test "
    "part (`RandomState(0)`, drawn without replacement from the test indices, "
    "so the same points for every implementation), the 3-NN classifier still "
    "fitted on the whole training part; `test scored` gives N. Used at "
    "10^6 points, where scoring all 300,000 test points against 700,000 "
    "training points would cost more than the fit.",
)


def fastest_peer(rows: list[dict]) -> dict:
    """Fastest successful peer fit time per (dataset, algo)."""
    best = {}
    for r in rows:
        if r["impl"] in PEERS and "error" not in r and r.get("fit_time"):
            key = (r["dataset"], r["params"].get("algo"))
            best[key] = min(best.get(key, float("inf")), r["fit_time"])
    return best


def render(title: str, stem: str, rows: list[dict]) -> str:
    """The markdown report of a classification result file."""
    best = fastest_peer(rows)

    def ratio(r):
        base = best.get((r["dataset"], r["params"].get("algo")))
        if base and r.get("fit_time") and r["impl"] != "euclidean" and "error" not in r:
            return r["fit_time"] / base
        return None

    def shape(r):
        return f"{r['n_train']} × {r['n_features']}" if "n_train" in r else None

    def overrides(r):
        extra = {k: v for k, v in r["params"].items() if k != "algo"}
        return json.dumps(extra, sort_keys=True) if extra else None

    columns = [
        Column("dataset", "dataset"), Column("n_train × d", shape),
        Column("impl", "impl"), Column("version", "version"),
        Column("overrides", overrides),
        Column("fit time (s)", lambda r: None if r["impl"] == "euclidean" else r.get("fit_time"),
               "{:.3f}"),
        Column("× fastest peer", ratio, "{:.2f}"),
        Column("3-NN accuracy", "accuracy", "{:.4f}"),
        Column("peak RSS (MB)", "peak_rss_mb", "{:.0f}"),
        Column("RSS before fit (MB)", "rss_before_fit_mb", "{:.0f}"),
        Column("added by fit (MB)", "fit_added_mb", "{:.0f}"),
        Column("test scored", "n_test_scored"),
        Column("n_iter", "n_iter"), Column("load 1m", runner.load_1m, "{:.2f}"),
        Column("threads", lambda r: r.get("threads", (r.get("run") or {}).get("threads"))),
        Column("note", runner.error_note),
    ]
    lines = runner.report_header(title, stem, rows, NOTES)
    lines.append(runner.markdown_table(rows, columns))
    return "\n".join(lines)


def cli(algo: str, *, datasets: str, impls: str, stem: str, title: str,
        argv: list[str] | None = None, render_rows=None, variants=None) -> int:
    """Command line of bench_lmnn.py / bench_itml.py.

    ``render_rows(rows, stem)`` replaces the markdown of :func:`render`.
    ``variants``: ``(impl, params)`` pairs run on every data set instead of one
    job per implementation (an implementation may appear more than once, with
    different parameters); ``--impls`` still selects among them and
    ``--params`` still adds to each implementation's parameters.
    """
    parser = runner.base_parser(title, timeout=900, mem_limit_gb=12, output=stem)
    parser.add_argument("--datasets", default=datasets, help="comma-separated, smallest first")
    parser.add_argument("--impls", default=impls, help="comma-separated implementations")
    parser.add_argument("--params", type=json.loads, default={},
                        help='per-impl learner overrides, JSON: {"ours": {"max_iter": 50}}')
    parser.add_argument("--max-test", type=int, default=None,
                        help="score the 3-NN on this many test points (a fixed random "
                             "subset, the same for every implementation)")
    parser.add_argument("--no-skip", action="store_true",
                        help="keep running an implementation after a timeout / out of memory")
    args = parser.parse_args(argv)
    scoring = {} if args.max_test is None else {"max_test": args.max_test}
    chosen = runner.csv(args.impls)
    if variants is None:
        variants = [(impl, {}) for impl in chosen]
    jobs = [runner.Job("classification", dataset, impl,
                       {"algo": algo, **scoring, **own, **args.params.get(impl, {})},
                       python=args.python if impl not in PEERS else None)
            for dataset in runner.csv(args.datasets)
            for impl, own in variants if impl in chosen]
    if render_rows is None:
        def render_rows(rows, stem):
            return render(title, stem, rows)
    return runner.execute(args.output, jobs, args, render_rows,
                          skip_after_failure=not args.no_skip)
