"""Cold start of LMNN: a fresh process's imports and first fit on iris, on a warm installation.

    python benchmarks/bench_cold_start.py --runs 5 --impls ours,nca
    # -> benchmarks/results/cold_start.{json,md}

A warm installation: the warm-up command's work (``python -m
metric_estimators.warmup``, a job of its own with an hour's timeout) fills a
fresh numba cache directory, which every run uses (``--cache as-is`` keeps
the environment's cache instead; the row's ``params.cache`` says which:
``warm`` or ``as-is``).  One unrecorded process per implementation warms
the OS file cache, then ``--runs`` fresh processes per implementation run
the first-fit worker, ``benchmarks/workers/first_contact.py`` (cases ``LMNN-iris`` for ``ours``,
``sklearn-NCA-iris`` for ``nca``, no warm fit), through the runner,
alternating between the implementations (so that a change of machine load
hits both); a row per implementation keeps every run and the medians.
``nca`` is scikit-learn's NeighborhoodComponentsAnalysis, the reference of
the cold-start overhead (the target: ours - nca < 0.4 s).

The steps, in seconds from the worker's start (:func:`steps`): importing
scikit-learn's data set loader (``sklearn_import``) and the learner
(``package_import``), both the worker's ``import_steps``; loading iris and
the first fit (``first_fit``: the rest of the worker's ``import_wall``, and
its ``first_fit_wall``); their total (``total_after_start``) and its CPU
time (``cpu_after_start``: ``import_cpu + first_fit_cpu``);
``wall_including_interpreter`` is the runner's wall time of the whole
subprocess.
"""

import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.first_contact import WARMUP  # noqa: E402

STEM = "cold_start"
#: implementation -> the first-fit worker's case
CASES = {"ours": "LMNN-iris", "nca": "sklearn-NCA-iris"}
STEPS = ("sklearn_import", "package_import", "first_fit", "total_after_start",
         "cpu_after_start", "wall_including_interpreter")
#: the runner's fields of the last run that a row keeps beside the steps
KEPT = ("dataset", "impl", "params", "worker", "run", "python", "threads",
        "loadavg_start", "loadavg_end", "wall_time", "child_maxrss_mb")
#: what the rows' numba cache was (``params.cache``)
CACHES = {"warm": "a warm installation (a fresh numba cache that the warm-up command "
                  "filled)",
          "as-is": "the environment's, as it was"}
WARMUP_TIMEOUT = 3600


def steps(row: dict) -> dict:
    """The cold-start steps (seconds) of one first-contact row (see the module docstring)."""
    imports = row["import_steps"]
    total = row["import_wall"] + row["first_fit_wall"]
    return {"sklearn_import": imports["sklearn_import"],
            "package_import": imports["package_import"],
            "first_fit": total - imports["sklearn_import"] - imports["package_import"],
            "total_after_start": total,
            "cpu_after_start": row["import_cpu"] + row["first_fit_cpu"],
            "wall_including_interpreter": row["wall_time"]}


def summarise(runs: list) -> dict:
    """One row of an implementation's runs: every run's steps and their medians."""
    return runner.summarise_runs(runs, KEPT, steps, statistics.median, STEPS)


def measure(args) -> list:
    """Warm-up, then ``args.runs`` alternating runs per implementation."""
    impls = runner.csv(args.impls)
    unknown = [impl for impl in impls if impl not in CASES]
    if unknown:
        raise SystemExit(f"unknown implementation(s) {unknown}: {', '.join(CASES)}")
    warm = args.cache == "warm-installation"
    directory = tempfile.mkdtemp(prefix="cold_start_warm_") if warm else None
    extra = {"numba_cache_dir": directory} if warm else {}
    params = {"cache": "warm" if warm else "as-is", "warm": 0}
    jobs = {impl: runner.Job("first_contact", CASES[impl], impl, params, python=args.python,
                             extra=extra)
            for impl in impls}
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info, env={"NUMBA_CACHE_DIR": directory} if warm else None)
    try:
        if warm:
            warm_up = runner.Job("first_contact", WARMUP, "ours", {"cache": "empty"},
                                 python=args.python, extra=extra)
            row = runner.run_job(warm_up, **{**kw, "timeout": max(args.timeout,
                                                                  WARMUP_TIMEOUT)})[0]
            if "error" in row:
                raise SystemExit(f"the warm-up failed: {row['error']}")
        for job in jobs.values():
            runner.run_job(job, **kw)  # populate the OS file cache
        runs = {impl: [] for impl in impls}
        for _ in range(args.runs):
            for impl in impls:
                runs[impl].append(runner.run_job(jobs[impl], **kw)[0])
    finally:
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
    return [summarise(runs[impl]) for impl in impls]


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header(
        "LMNN cold start (fresh process)", stem, rows,
        ["Median, min and max over the runs; load 1m = 1-minute load average when "
         "the first run started, load at end = when the last ended."])
    caches = list(dict.fromkeys((r.get("params") or {}).get("cache") for r in rows))
    for cache in caches:
        lines += _render_cache(cache, [r for r in rows
                                       if (r.get("params") or {}).get("cache") == cache])
    return "\n".join(lines)


def _render_cache(cache, rows: list) -> list:
    """The tables and the overhead line of the rows on one numba cache."""
    lines = [f"## Numba cache: {CACHES.get(cache, cache)}", ""]
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
    return lines


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
