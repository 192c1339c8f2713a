"""First-task overhead of metric learners on fresh Dask workers (cold / warm numba cache).

    python benchmarks/bench_dask.py --tasks 5 --learners LMNN,ITML_Supervised --n-samples 900
    python benchmarks/bench_dask.py --report

One fresh process per learner runs ``benchmarks/workers/dask_overhead.py``
(what it measures is described there) and returns a cold and a warm row.
Results merge into ``benchmarks/results/dask.json``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402

STEM = "dask"
NOTES = (
    "Digits subsample, one 5-fold split per task (4/5 train), `Pipeline(StandardScaler, "
    "learner, KNeighborsClassifier(3))`, `LocalCluster(n_workers=2, "
    "threads_per_worker=1, processes=True)`, one BLAS/OpenMP/numba thread per "
    "worker, both workers busy at once. Round trip = `client.submit` to result "
    "(unpickling the estimator on a fresh worker imports metric_estimators); in "
    "task = fit + score inside the task (numba loads or compiles the kernels on "
    "first use). Means over the 2 workers for task 1, medians over tasks 2.. of "
    "both workers. cold: empty `NUMBA_CACHE_DIR`; warm: the same directory after "
    "the cold cluster wrote it, fresh worker processes.",
)


def _mean(values):
    return sum(values) / len(values)


def _median(values):
    import statistics

    return statistics.median(values)


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header("First-task overhead on fresh Dask workers", stem, rows, NOTES)
    versions = next((r["versions"] for r in rows if "versions" in r), None)
    if versions:
        lines += [", ".join(f"{k} {v}" for k, v in versions.items()) + ".", ""]
    lines += ["| learner | rows | numba cache | cluster start | task 1 round trip | task 1 in "
              "task | later round trip | later in task | first-task overhead | task 1 "
              "kernels compiled / loaded | load 1m | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cache = r["params"].get("cache", "–")
        if "error" in r or not r.get("tasks"):
            lines.append(f"| {r['impl']} | | {cache} | | | | | | | | | {r.get('error', '')[:80]} |")
            continue
        first = [t for t in r["tasks"] if t["task"] == 0]
        later = [t for t in r["tasks"] if t["task"] > 0] or first
        f_rt = _mean([t["round_trip_s"] for t in first])
        f_in = _mean([t["in_task_s"] for t in first])
        l_rt = _median([t["round_trip_s"] for t in later])
        l_in = _median([t["in_task_s"] for t in later])
        miss = "+".join(str(t["cache_misses"]) for t in first)
        hit = "+".join(str(t["cache_hits"]) for t in first)
        load = runner.load_1m(r)
        if load is None and "load average:" in r.get("uptime", ""):  # rows of 2026-12-02
            load = r["uptime"].split("load average:")[-1].split(",")[0].strip()
        lines.append(
            f"| {r['impl']} | {r.get('n_rows', '–')} | {cache} | {r['cluster_start_s']:.1f} s "
            f"| {f_rt:.2f} s | {f_in:.2f} s | {l_rt:.2f} s | {l_in:.2f} s "
            f"| **{f_rt - l_rt:.2f} s** | {miss} / {hit} | {load if load is not None else '–'} | |")
    lines += ["", "Grid search (2 x 2 grid, 3 folds = 12 fits) on the warm cluster against "
              "the sequential local run:", "",
              "| learner | same best_params_ | same test scores | best_params_ "
              "| local (sequential) | dask (2 workers) |", "|---|---|---|---|---|---|"]
    for r in rows:
        g = r.get("grid")
        if g:
            lines.append(f"| {r['impl']} | {g['same_best_params']} | {g['same_scores']} "
                         f"| `{g['best_params']}` | {g['local_s']:.2f} s | {g['dask_s']:.2f} s |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=900, repeat=False,
                                output=STEM)
    parser.add_argument("--tasks", type=int, default=5, help="fit tasks per worker and cluster")
    parser.add_argument("--learners", default="LMNN,ITML_Supervised")
    parser.add_argument("--n-samples", type=int, default=900, help="digits rows used")
    args = parser.parse_args(argv)
    jobs = [runner.Job("dask_overhead", f"digits-{args.n_samples}", name,
                       {"tasks": args.tasks}, python=args.python)
            for name in runner.csv(args.learners)]
    return runner.execute(args.output, jobs, args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
