"""Correlation clustering LP (Project and Forget) on networkx graphs, against cvxpy.

    python benchmarks/bench_correlation_clustering.py --sizes 1000 2000 --graphs planted lfr
    python benchmarks/bench_correlation_clustering.py --sizes 1000 5000 --graphs signed --gap-tol 1e-3
    python benchmarks/bench_correlation_clustering.py --report

One fresh process per (graph, method), ``benchmarks/workers/correlation_clustering.py``
(graphs and measures are described there). Results merge into
``benchmarks/results/correlation_clustering.json`` keyed by (``<graph>-<n>``,
``ours`` | ``cvxpy``, params); cvxpy runs where n <= ``--cvxpy-max``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "correlation_clustering"
TITLE = "Correlation clustering LP (Project and Forget)"
NOTES = (
    "Graphs: `planted-<n>` = `networkx.planted_partition_graph(n/100, 100, 0.9, 0.1)` "
    "(2 blocks of n/2 for n < 200); `lfr-<n>` = `networkx.LFR_benchmark_graph(n, "
    "tau1=2.5, tau2=1.5, mu=0.1, average_degree=20, max_degree=50, "
    "min_community=50, max_community=200)`; each becomes a complete signed graph "
    "(+1 edge, -1 non-edge). `signed-<n>` = a sparse planted-partition signed graph "
    "(`benchmarks/cc_instances.py:signed_planted`: communities of "
    "50-200 nodes, average degree 10, 70 % of the edge draws inside a community, 10 % "
    "sign noise, lognormal(0, 1) weights, seed 0), fitted as a scipy.sparse matrix: the "
    "sparse path (LP over the edges, cycle inequalities by the bounded shortest-path "
    "oracle); its cost counts the stored edges only. Ours: `CorrelationClustering(gamma, tol, "
    "random_state=0, max_iter=1000)`, tolerance on the [0, 1] scale of x (largest "
    "triangle or pair-constraint violation, duals consistent); time = the whole "
    "`fit` (LP, rounding, local search) in a fresh process after a warm-up fit. "
    "\"pivot cost\" = best LP-KwikCluster rounding; \"after local search\" = then "
    "best one-element moves, and since 2026-12-03 (rows that have the two \"planted +\" "
    "columns) alternated with merges of clusters joined by a "
    "positive total weight (\"not run\": rows measured before the local search "
    "existed). \"planted + moves\" / \"planted + moves + merges\" = the planted partition "
    "polished by the same local search without / with merges: a clustering near the "
    "planted one, and how far the objective pulls away from it. cvxpy: the exact (unregularised) LP with Clarabel; gamma = 10 puts "
    "the regularised solution slightly above it.",
    "Reading the table: planted partitions with many communities have loose LPs "
    "(many x = 1/2), so pivoting alone costs well above the planted partition and "
    "the local search is what recovers it. On LFR graphs (mu = 0.1, average "
    "degree 20) the correlation-clustering optimum is not the communities: inside "
    "a community most pairs are non-edges, so splitting is cheaper; hence the low "
    "ARI with a cost far below the planted one. The dual lower bound is computed "
    "from the duals, so it certifies every rounded cost at any accuracy.",
)


def jobs(args) -> list:
    out = []
    for kind in args.graphs:
        for n in sorted(args.sizes):
            impl = f"ours-dask-{args.dask_workers}" if args.dask_workers else "ours"
            out.append(runner.Job("correlation_clustering", f"{kind}-{n}", impl,
                                  {"gamma": args.gamma, "tol": args.tol, "seed": args.seed,
                                   **({"gap_tol": args.gap_tol} if args.gap_tol else {}),
                                   **({"max_iter": args.max_iter} if args.max_iter else {}),
                                   **({"certify_tol": args.certify_tol}
                                      if args.certify_tol is not None else {}),
                                   **({"max_time": args.max_time} if args.max_time else {})},
                                  python=args.python))
            if n <= args.cvxpy_max and kind != "signed":
                out.append(runner.Job("correlation_clustering", f"{kind}-{n}", "cvxpy",
                                      {"seed": args.seed}, python=args.python))
    return out


def _kind_n(row):
    kind, _, n = row["dataset"].rpartition("-")
    return kind, int(n)


def _ref(row, kind):
    """``cost / ARI`` of the planted partition polished by local search (signed graphs)."""
    cost = row.get(f"planted_{kind}_cost")
    return None if cost is None else f"{cost:.0f} / {row[f'planted_{kind}_ari']:.2f}"


def render(rows: list, stem: str = STEM) -> str:
    """One line per ours row, with the cvxpy LP of the same graph next to it."""
    cvx = {r["dataset"]: r for r in rows if r["impl"] == "cvxpy" and "error" not in r}
    ours = sorted((r for r in rows if r["impl"] == "ours" or r["impl"].startswith("ours-dask-")),
                  key=lambda r: (*_kind_n(r), r["impl"]))

    def cvxpy_cell(r):
        c = cvx.get(r["dataset"])
        return f"{c['lp_objective']:.4f} ({c['fit_time']:.1f} s)" if c else None

    columns = [
        Column("graph", lambda r: _kind_n(r)[0]), Column("n", lambda r: r.get("n", _kind_n(r)[1])),
        Column("run", lambda r: ("in-process" if r["impl"] == "ours"
                                 else f"Dask, {r['impl'].rsplit('-', 1)[1]} workers")),
        Column("gamma", lambda r: r["params"].get("gamma"), "{:g}"),
        Column("gap_tol", lambda r: r["params"].get("gap_tol"), "{:g}"),
        Column("max_iter", lambda r: r["params"].get("max_iter"), "{}"),
        Column("tol", lambda r: r["params"].get("tol"), "{:g}"),
        Column("certify_tol", lambda r: r["params"].get("certify_tol"), "{:g}"),
        Column("max_time", lambda r: r["params"].get("max_time"), "{:g}"),
        Column("edges", "n_edges"), Column("time (s)", "fit_time", "{:.2f}"),
        Column("oracle calls", "n_iter"),
        Column("s / oracle call", "oracle_time_per_call", "{:.2f}"),
        Column("active set", "n_active"),
        Column("LP objective", "lp_objective", "{:.2f}"),
        Column("dual lower bound", "lower_bound", "{:.2f}"),
        Column("cost / bound", lambda r: (r["rounded_cost"] / r["lower_bound"]
                                          if r.get("rounded_cost") is not None
                                          and (r.get("lower_bound") or 0) > 0 else None),
               "{:.3f}"),
        Column("certified", "certified"),
        Column("pivot cost", "pivot_cost", "{:.0f}"),
        Column("after local search",
               lambda r: (f"{r['rounded_cost']:.0f}" if r.get("rounded_cost") is not None
                          else None) if "pivot_cost" in r else "not run", "{}"),
        Column("planted cost", "planted_cost", "{:.0f}"), Column("ARI", "ari", "{:.2f}"),
        Column("planted + moves: cost / ARI", lambda r: _ref(r, "moves")),
        Column("planted + moves + merges: cost / ARI", lambda r: _ref(r, "merges")),
        Column("clusters", "n_clusters"), Column("converged", "converged"),
        Column("peak RSS (GB)", "peak_rss_gb", "{:.2f}"),
        Column("cvxpy LP (time)", cvxpy_cell), Column("load 1m", runner.load_1m, "{:.1f}"),
        Column("note", lambda r: runner.error_note(r)[:80]),
    ]
    lines = runner.report_header(TITLE, stem, rows, NOTES)
    lines.append(runner.markdown_table(ours, columns))
    lonely = [r for r in rows if r["impl"] == "cvxpy"
              and not any(o["dataset"] == r["dataset"] for o in ours)]
    if lonely:
        lines += ["cvxpy rows without an ours row:", "",
                  runner.markdown_table(lonely, [Column("graph", "dataset"),
                                                 Column("LP objective", "lp_objective", "{:.4f}"),
                                                 Column("time (s)", "fit_time", "{:.2f}"),
                                                 Column("note", runner.error_note)])]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--graphs", nargs="+", default=["planted", "lfr"],
                        choices=["planted", "lfr", "signed"])
    parser.add_argument("--tol", type=float, default=1e-2)
    parser.add_argument("--gamma", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iter", type=int, default=None,
                        help="CorrelationClustering max_iter (default 1000)")
    parser.add_argument("--gap-tol", type=float, default=None,
                        help="CorrelationClustering gap_tol (default: the estimator's)")
    parser.add_argument("--certify-tol", type=float, default=None,
                        help="CorrelationClustering certify_tol (default: None)")
    parser.add_argument("--max-time", type=float, default=None,
                        help="CorrelationClustering max_time in seconds (default: None)")
    parser.add_argument("--dask-workers", type=int, default=0,
                        help="run the fits on a local Dask cluster of this many "
                             "single-threaded workers (sparse graphs; default 0: in-process)")
    parser.add_argument("--cvxpy-max", type=int, default=40)
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
