"""Cold start of LMNN: a fresh process's imports and first fit on iris, on a warm installation.

    python benchmarks/bench_cold_start.py --runs 5 --impls ours,nca
    # -> benchmarks/results/cold_start.{json,md}

A warm installation: ``python -m metric_estimators.warmup`` fills a fresh
numba cache directory (``NUMBA_CACHE_DIR``, not recorded), which every run
uses (``--cache as-is`` keeps the environment's cache instead).  One
unrecorded process per implementation warms the OS file cache, then ``--runs``
fresh processes per implementation run ``benchmarks/workers/cold_start.py``,
alternating between the implementations (so that a change of machine load
hits both); a row per implementation keeps every run and the medians.
``nca`` is scikit-learn's NeighborhoodComponentsAnalysis, the reference of
the cold-start overhead (the target: ours - nca < 0.4 s). ``wall_including_interpreter`` is the runner's wall time
of the whole subprocess.
"""

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402

STEM = "cold_start"
STEPS = ("sklearn_import", "package_import", "first_fit", "total_after_start",
         "cpu_after_start", "wall_including_interpreter")


def measure(args) -> list:
    """Warm-up, then ``args.runs`` alternating runs per implementation."""
    impls = args.impls.split(",")
    jobs = {impl: runner.Job("cold_start", "iris", impl, {}, python=args.python)
            for impl in impls}
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info)
    if args.cache == "warm-installation":
        directory = tempfile.mkdtemp(prefix="cold_start_warm_")
        kw["env"] = {"NUMBA_CACHE_DIR": directory}
        subprocess.run([args.python, "-m", "metric_estimators.warmup"], check=True,
                       env=dict(os.environ, NUMBA_CACHE_DIR=directory),
                       stdout=subprocess.DEVNULL, cwd=runner.REPO_ROOT)
    for job in jobs.values():
        runner.run_job(job, **kw)  # populate the OS file cache
    runs = {impl: [] for impl in impls}
    for _ in range(args.runs):
        for impl in impls:
            runs[impl].append(runner.run_job(jobs[impl], **kw)[0])
    rows = []
    for impl in impls:
        bad = [r for r in runs[impl] if "error" in r]
        if bad:
            rows.append(bad[0])
            continue
        for r in runs[impl]:
            r["wall_including_interpreter"] = r["wall_time"]
        row = {k: v for k, v in runs[impl][-1].items() if k not in STEPS}
        row["loadavg_start"] = runs[impl][0]["loadavg_start"]
        row["runs"] = [{k: r[k] for k in STEPS} for r in runs[impl]]
        row.update({k: statistics.median(r[k] for r in runs[impl]) for k in STEPS})
        rows.append(row)
    return rows


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header(
        "LMNN cold start (fresh process, warm installation)", stem, rows,
        ["Median, min and max over the runs; load 1m = 1-minute load average when "
         "the first run started, load at end = when the last ended."])
    for row in rows:
        if "error" in row:
            lines += [f"error: {row['error']}", ""]
            continue
        runs = row.get("runs", [])
        load_end = (row.get("loadavg_end") or [None])[0]
        load = runner.load_1m(row)
        n_runs = len(runs) or row.get("n_runs")
        lines += [f"**{row.get('impl', 'ours')}**: "
                  f"{n_runs} runs; load 1m {'–' if load is None else load} at start, "
                  f"{load_end} at end.", "",
                  "| step | median (s) | min (s) | max (s) |", "|---|---|---|---|"]
        for k in STEPS:
            if k not in row:  # rows from before the step was recorded
                continue
            vals = [r[k] for r in runs]
            low = min(vals) if vals else row["min"][k]  # rows transcribed from markdown
            high = max(vals) if vals else row["max"][k]
            lines.append(f"| {k} | {row[k]:.3f} | {low:.3f} | {high:.3f} |")
        lines.append("")
    by_impl = {r.get("impl"): r for r in rows if "error" not in r}
    if "ours" in by_impl and "nca" in by_impl:
        ours, nca = by_impl["ours"], by_impl["nca"]
        lines.append("Overhead of ours over scikit-learn's NCA (medians): "
                     + ", ".join(f"{k} {ours[k] - nca[k]:+.3f} s"
                                 for k in ("total_after_start", "cpu_after_start",
                                           "wall_including_interpreter")
                                 if k in ours and k in nca))
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=300, repeat=False,
                                output=STEM)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--impls", default="ours,nca",
                        help="comma-separated: ours (LMNN), nca (scikit-learn's NCA)")
    parser.add_argument("--cache", choices=("warm-installation", "as-is"),
                        default="warm-installation",
                        help="the numba cache of every run: a fresh one filled by the "
                             "warm-up command (default), or the environment's")
    args = parser.parse_args(argv)
    if not args.report:
        runner.save_rows(args.output, measure(args))
    print(runner.write_markdown(args.output, render(runner.load_rows(args.output), args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
