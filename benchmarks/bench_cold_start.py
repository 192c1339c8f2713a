"""Cold start of LMNN: a fresh process's imports and first fit on iris, numba cache warm.

    python benchmarks/bench_cold_start.py --runs 5     # -> benchmarks/results/cold_start.{json,md}

One warm-up process populates the numba cache (not recorded), then ``--runs``
fresh processes run ``benchmarks/workers/cold_start.py``; the row keeps every
run and the medians. ``wall_including_interpreter`` is the runner's wall time
of the whole subprocess.
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402

STEM = "cold_start"
STEPS = ("sklearn_import", "package_import", "first_fit", "total_after_start",
         "wall_including_interpreter")


def measure(args) -> dict:
    """Warm-up, then ``args.runs`` runs aggregated into one row."""
    job = runner.Job("cold_start", "iris", "ours", {}, python=args.python)
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info)
    runner.run_job(job, **kw)  # populate the numba cache
    runs = [runner.run_job(job, **kw)[0] for _ in range(args.runs)]
    bad = [r for r in runs if "error" in r]
    if bad:
        return bad[0]
    for r in runs:
        r["wall_including_interpreter"] = r["wall_time"]
    row = {k: v for k, v in runs[-1].items() if k not in STEPS}
    row["loadavg_start"] = runs[0]["loadavg_start"]
    row["runs"] = [{k: r[k] for k in STEPS} for r in runs]
    row.update({k: statistics.median(r[k] for r in runs) for k in STEPS})
    return row


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header(
        "LMNN cold start (fresh process, numba cache populated)", stem, rows,
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
        lines += [f"{n_runs} runs; load 1m {'–' if load is None else load} at start, "
                  f"{load_end} at end.", "",
                  "| step | median (s) | min (s) | max (s) |", "|---|---|---|---|"]
        for k in STEPS:
            vals = [r[k] for r in runs]
            low = min(vals) if vals else row["min"][k]  # rows transcribed from markdown
            high = max(vals) if vals else row["max"][k]
            lines.append(f"| {k} | {row[k]:.3f} | {low:.3f} | {high:.3f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=300, repeat=False,
                                output=STEM)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if not args.report:
        runner.save_rows(args.output, [measure(args)])
    print(runner.write_markdown(args.output, render(runner.load_rows(args.output), args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
