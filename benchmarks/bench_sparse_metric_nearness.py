"""L2 metric nearness on sparse random graphs (``MetricNearness`` on a scipy.sparse D).

    python benchmarks/bench_sparse_metric_nearness.py --graphs 10000:100000 100000:1000000 geo:100000:18
    python benchmarks/bench_sparse_metric_nearness.py --graphs 100000:1000000 --probe-only
    python benchmarks/bench_sparse_metric_nearness.py --report

One fresh process per graph, ``benchmarks/workers/sparse_metric_nearness.py``
(graph and measures described there). Results merge into
``benchmarks/results/sparse_metric_nearness.json``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "sparse_metric_nearness"
TITLE = "Metric nearness on sparse graphs (Project and Forget, shortest-path oracle)"
NOTES = (
    "Graphs: `random-<n>-<m>` = m distinct uniformly random node pairs of n nodes, "
    "lengths uniform(0, 1), seed 0 (`benchmarks/workers/sparse_metric_nearness.py:"
    "random_graph`); `geo-<n>-<k>` = n uniform points of the unit square, symmetrised "
    "k-nearest-neighbour graph, lengths = Euclidean length x lognormal(0, 0.3) per edge, "
    "seed 0 (`geometric_graph`). On the random graphs shortest paths are short "
    "(about ln n / degree against edge lengths up to 1), so every node's bounded search "
    "covers most of the graph and one oracle call is nearly all-pairs; on the geometric "
    "graphs violated cycles are local and the searches stay small. Ours: `MetricNearness(tol, max_iter=200)` on the scipy.sparse "
    "matrix: the L2 problem over the edges, cycle inequalities from one bounded "
    "Dijkstra per node; time = the whole `fit` in a fresh process after a warm-up fit. "
    "\"checked violation\" = largest `M_uv - dist_M(u, v)` over the edges of 200 random "
    "sources by scipy's Dijkstra on the result, relative to max D (independent of our "
    "oracle). \"first call, est. (s)\" = the bounded searches of the first oracle call "
    "timed from 500 random sources and extrapolated to all n (`probe` in the worker); "
    "rows with `\"fit\": false` ran that probe only. No peer solves this problem on a sparse graph; the dense solvers of "
    "`metric_nearness.md` would need n^2 = 10^10 entries at n = 10^5.",
)


def jobs(args) -> list:
    out = []
    for spec in args.graphs:
        parts = spec.split(":")
        family = parts.pop(0) if len(parts) == 3 else "random"
        n, size = (int(v) for v in parts)
        out.append(runner.Job("sparse_metric_nearness", f"{family}-{n}-{size}", "ours",
                              {"tol": args.tol, "seed": args.seed,
                               **({"fit": False} if args.probe_only else {})},
                              python=args.python, extra={"probe_sources": args.probe_sources}))
    return out


def render(rows: list, stem: str = STEM) -> str:
    rows = sorted(rows, key=lambda r: (r["dataset"].split("-")[0],
                                       [int(v) for v in r["dataset"].split("-")[1:]]))
    cols = [Column("graph", "dataset"), Column("edges", "n_edges"),
            Column("tol", lambda r: r["params"]["tol"], "{:g}"),
            Column("fit", lambda r: "probe only" if r["params"].get("fit") is False
                   else "yes"),
            Column("time (s)", "fit_time", "{:.1f}"), Column("oracle calls", "n_iter"),
            Column("s / oracle call", "oracle_time_per_call", "{:.2f}"),
            Column("first call, est. (s)", "probe_call_estimate", "{:.1f}"),
            Column("active set", "n_active"), Column("objective", "objective", "{:.4f}"),
            Column("violation (ours)", "violation", "{:.1e}"),
            Column("checked violation", "check_violation", "{:.1e}"),
            Column("converged", "converged"),
            Column("peak RSS (GB)", "peak_rss_gb", "{:.2f}"),
            Column("load 1m", runner.load_1m, "{:.1f}"),
            Column("note", lambda r: runner.error_note(r)[:80])]
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines.append(runner.markdown_table(rows, cols))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.add_argument("--graphs", nargs="+", default=["10000:100000"],
                        help="n:m (random graph, nodes:edges) or geo:n:k "
                             "(geometric k-NN graph)")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probe-only", action="store_true",
                        help="time the first oracle call's searches from a sample "
                             "of sources, without fitting")
    parser.add_argument("--probe-sources", type=int, default=500)
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
