"""Sparse MetricNearness: the shortest-path oracle in-process and on 1 / 2 Dask workers.

    python benchmarks/bench_dask_oracle.py --graphs ring-4000-10 --impls in_process dask-1 dask-2
    python benchmarks/bench_dask_oracle.py --graphs signed-100000 --tol 1e-2 --impls in_process dask-1 dask-2
    python benchmarks/bench_dask_oracle.py --report

One fresh process per (graph, implementation), ``benchmarks/workers/dask_oracle.py``
(what it measures is described there). Results merge into
``benchmarks/results/dask_oracle.json``; ``docs/dask.rst`` sizes a cluster from them.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "dask_oracle"
TITLE = "Shortest-path oracle on a Dask cluster (sparse MetricNearness)"
NOTES = (
    "Graph `ring-<n>-<degree>`: a ring plus random chords (average degree ~degree), "
    "lengths Exp(1)^2. `MetricNearness(tol, max_iter, client=...)`; `dask-k`: "
    "`LocalCluster(n_workers=k, threads_per_worker=1, processes=True)`, one BLAS/numba "
    "thread per worker, warmed by a tiny fit before the timed one (cluster start + warm-up "
    "in `cluster (s)`). `in_process` runs with the library's default threads. Equal "
    "`solution sha256` = the same solution bit for bit.",
    "Graph `signed-<n>`: sparse correlation clustering's oracle alone on the signed "
    "planted graph of the correlation-clustering benchmark: its first (capped) call, "
    "`oracle calls` times, each with a fresh oracle; `fit (s)` is their sum and the "
    "sha256 hashes the constraints returned (see the worker's docstring).",
    "The machine has 2 cores shared with other jobs (see `load 1m`): the speed-up of 2 "
    "workers over 1 is bounded by the cores actually free.",
)


def jobs(args) -> list:
    return [runner.Job("dask_oracle", g, impl, {"max_iter": args.max_iter, "tol": args.tol,
                                                "seed": args.seed}, python=args.python)
            for g in args.graphs for impl in args.impls]


def render(rows: list, stem: str = STEM) -> str:
    order = {"in_process": 0, "dask-1": 1, "dask-2": 2}
    rows = sorted(rows, key=lambda r: (r["dataset"], order.get(r["impl"], 9)))
    base = {r["dataset"]: r for r in rows if r["impl"] == "dask-1" and "error" not in r}
    columns = [
        Column("graph", "dataset"), Column("edges", "n_edges"), Column("impl", "impl"),
        Column("fit (s)", "fit_time", "{:.1f}"),
        Column("oracle calls", "n_iter"),
        Column("s / oracle call", "oracle_time_mean", "{:.2f}"),
        Column("speed-up vs dask-1 (oracle)", lambda r: (
            base[r["dataset"]]["oracle_time_mean"] / r["oracle_time_mean"]
            if r["dataset"] in base and r.get("oracle_time_mean") else None), "{:.2f}"),
        Column("oracle share of fit", "oracle_share", "{:.0%}"),
        Column("µs / source / call", lambda r: (1e6 * r["oracle_time_mean"] / r["n"]
                                                 if r.get("oracle_time_mean") else None),
               "{:.0f}"),
        Column("graph bytes (once / worker)", "graph_bytes"),
        Column("lengths bytes (call / worker)", "lengths_bytes_per_worker"),
        Column("bytes returned (1st call)", "first_call_bytes_returned"),
        Column("peak active-set bytes", "active_bytes_peak"),
        Column("cluster (s)", "cluster_start_s", "{:.1f}"),
        Column("solution sha256", "solution_sha256"),
        Column("load 1m", runner.load_1m, "{:.1f}"),
        Column("note", lambda r: runner.error_note(r)[:80]),
    ]
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines.append(runner.markdown_table(rows, columns))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.add_argument("--graphs", nargs="+", default=["ring-4000-10"])
    parser.add_argument("--impls", nargs="+", default=["in_process", "dask-1", "dask-2"])
    parser.add_argument("--max-iter", type=int, default=3)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
