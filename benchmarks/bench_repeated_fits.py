"""Repeated fits from a fresh installation: does every fit reach the compiled speed by itself?

    python benchmarks/bench_repeated_fits.py                      # every scenario
    python benchmarks/bench_repeated_fits.py --scenarios gridsearch-lmnn-digits --n-jobs 1,2

Each scenario of :data:`benchmarks.workers.repeated_fits.SCENARIOS` runs in a
fresh process twice: on an **empty** numba cache (a fresh directory: a new
installation on which nobody ran the warm-up command) and on a **warm**
installation (a cache that ``python -m metric_estimators.warmup`` filled
once at the start of the command; its CPU time is reported).  The grid
search runs once per ``--n-jobs`` value.  Every fit's wall and CPU time and
the tier it ran on (numpy twins or compiled kernels, and why) are recorded
(``benchmarks/workers/repeated_fits.py``), so the table shows when the cold
process switched tiers.

Targets, for the grid search with ``n_jobs=1``: the whole search on an
empty cache costs at most 2x the same search on a warm installation, and
its last five fits each run within 1.5x of the warm fits of the same
parameters.  With ``n_jobs=2`` each family is compiled once, not once per
worker (``compilations``).  The loops of the other estimators show the same
behaviour.  Nothing here is a test: machines are noisy, and each row notes
its load average.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.repeated_fits import SCENARIOS  # noqa: E402

STEM = "repeated_fits"
#: fits per loop scenario: enough to outlast the family's background
#: compilation (the dense graph families compile for longer than 12 fits take)
LOOP_FITS = {"loop-cc-100": 30, "loop-mn-200": 40}
WORKER = "repeated_fits"
GRID = "gridsearch-lmnn-digits"


def _warm_cache(python: str) -> tuple[str, dict]:
    """A fresh directory filled by the warm-up command; its directory and cost."""
    directory = tempfile.mkdtemp(prefix="repeated_fits_warm_")
    env = dict(os.environ, NUMBA_CACHE_DIR=directory)
    start = time.perf_counter()
    before = os.times()
    subprocess.run([python, "-m", "metric_estimators.warmup"], check=True, env=env,
                   stdout=subprocess.DEVNULL, cwd=runner.REPO_ROOT)
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return directory, {"warmup_wall": time.perf_counter() - start, "warmup_cpu": cpu}


def measure(args) -> list[dict]:
    rows = []
    warm, cost = (None, {})
    if "warm" in args.caches:
        warm, cost = _warm_cache(args.python)
        print(f"warm-up: {cost['warmup_cpu']:.1f} s CPU, {cost['warmup_wall']:.1f} s wall",
              flush=True)
    info = runner.run_info()
    try:
        for name in args.scenarios:
            settings = ([{"n_jobs": n} for n in args.n_jobs] if name == GRID
                        else [{"fits": args.fits or LOOP_FITS.get(name, 12)}])
            for setting in settings:
                pair = {}
                for cache in args.caches:
                    directory = warm if cache == "warm" else tempfile.mkdtemp(
                        prefix="repeated_fits_empty_")
                    job = runner.Job(WORKER, name, "ours", {"cache": cache, **setting},
                                     python=args.python,
                                     extra={"numba_cache_dir": directory})
                    row = runner.run_job(job, timeout=args.timeout, threads=args.threads,
                                         run_info=info)[0]
                    if cache == "warm":
                        row.update(cost)
                    rows.append(row)
                    pair[cache] = row
                    print(runner.progress_line(row) + f"  total {row.get('total_wall', 0):.1f} s",
                          flush=True)
                    runner.save_rows(args.output, [row])
                    if cache != "warm":
                        shutil.rmtree(directory, ignore_errors=True)
                cold, warm_row = pair.get("empty"), pair.get("warm")
                if cold and warm_row and "error" not in cold and "error" not in warm_row:
                    # the comparison lives in the empty-cache row (the docs' table reads it)
                    c = compare(cold, warm_row)
                    cold.update(warm_total=c["warm_total"], ratio=c["ratio"],
                                last5_max_ratio=max(c["last5_ratios"]),
                                first_kernels_fit=c["first_kernels_fit"],
                                compilations_n=sum(c["compilations"].values()),
                                setting=_setting(cold),
                                n_fits=len(cold["fits"]))
                    runner.save_rows(args.output, [cold])
    finally:
        if warm is not None:
            shutil.rmtree(warm, ignore_errors=True)
    return rows


# ------------------------------------------------------------------- rendering


def _setting(row: dict) -> str:
    p = row["params"]
    return f"n_jobs={p['n_jobs']}" if "n_jobs" in p else f"{p['fits']} fits"


def _key(row: dict) -> tuple:
    p = dict(row["params"])
    p.pop("cache", None)
    return row["dataset"], runner.canonical(p)


def _tier(fit: dict) -> str:
    return "kernels" if fit["tier"][0] == "numba" else "twins"


def compare(cold: dict, warm: dict) -> dict:
    """The targets' numbers of one scenario: totals, ratios, last five fits, compilations."""
    out = {"cold_total": cold["total_wall"], "warm_total": warm["total_wall"],
           "ratio": cold["total_wall"] / warm["total_wall"]}
    warm_fits = warm["fits"]
    warm_mean = statistics.mean(f["wall"] for f in warm_fits)
    last = cold["fits"][-5:]
    out["last5_ratios"] = [f["wall"] / warm_mean for f in last]
    out["warm_mean_fit"] = warm_mean
    out["first_kernels_fit"] = next((i for i, f in enumerate(cold["fits"])
                                     if f["tier"][0] == "numba"), None)
    families = {}
    for family, _, _ in cold.get("compilations", []):
        families[family] = families.get(family, 0) + 1
    out["compilations"] = families
    return out


def render(rows: list[dict], stem: str = STEM) -> str:
    lines = runner.report_header(
        "Repeated fits from a fresh installation: empty cache against warm installation",
        stem, rows,
        notes=["Each scenario runs in a fresh process on an empty numba cache (a new "
               "installation, nobody ran the warm-up) and on a warm installation (a cache "
               "filled by `python -m metric_estimators.warmup`).  *Total*: wall seconds of "
               "the whole search or loop; *last five / warm*: each of the cold run's last "
               "five fits against the warm run's mean fit (wall); *first on kernels*: the "
               "index of the cold run's first fit on the compiled kernels; "
               "*compilations*: background compilations launched, by family, over all "
               "processes.  Targets for the grid search, `n_jobs=1`: ratio <= 2, every "
               "last-five ratio <= 1.5; `n_jobs=2`: one compilation per family."])
    by = {}
    for row in rows:
        if "error" in row:
            lines.append(f"- {row['dataset']} ({_setting(row)}, {row['params']['cache']}): "
                         f"error: {row['error']}")
            continue
        by.setdefault(_key(row), {})[row["params"]["cache"]] = row
    lines += ["", "| scenario | setting | empty cache: total (s) | warm: total (s) | ratio | "
              "last five / warm | first on kernels | compilations | load |",
              "|---|---|---:|---:|---:|---|---:|---|---|"]
    details = []
    for (name, _), pair in sorted(by.items()):
        cold, warm = pair.get("empty"), pair.get("warm")
        if cold is None or warm is None:
            continue
        c = compare(cold, warm)
        comp = ", ".join(f"{k}: {v}" for k, v in sorted(c["compilations"].items())) or "none"
        load = f"{runner.load_1m(cold)} / {runner.load_1m(warm)}"
        lines.append(
            f"| {name} | {_setting(cold)} | {c['cold_total']:.1f} | {c['warm_total']:.1f} | "
            f"{c['ratio']:.2f} | {', '.join(f'{r:.2f}' for r in c['last5_ratios'])} | "
            f"{c['first_kernels_fit'] if c['first_kernels_fit'] is not None else 'never'} | "
            f"{comp} | {load} |")
        details += ["", f"### {name}, {_setting(cold)}", "", SCENARIOS[name][0], "",
                    "| fit | empty cache: wall (s) | CPU (s) | tier | warm: wall (s) | CPU (s) | tier |",
                    "|---:|---:|---:|---|---:|---:|---|"]
        for i in range(max(len(cold["fits"]), len(warm["fits"]))):
            a = cold["fits"][i] if i < len(cold["fits"]) else None
            b = warm["fits"][i] if i < len(warm["fits"]) else None
            cells = []
            for f in (a, b):
                cells += ([f"{f['wall']:.2f}", f"{f['cpu']:.2f}", _tier(f)] if f
                          else ["", "", ""])
            details.append(f"| {i} | " + " | ".join(cells) + " |")
    warmup = [r for r in rows if "warmup_cpu" in r]
    if warmup:
        lines += ["", f"The warm installation's cache was filled by `python -m "
                  f"metric_estimators.warmup`: {warmup[-1]['warmup_cpu']:.1f} s CPU, "
                  f"{warmup[-1]['warmup_wall']:.1f} s wall."]
    return "\n".join(lines + details) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800.0, repeat=False,
                                output=STEM)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"comma-separated, of: {', '.join(SCENARIOS)}")
    parser.add_argument("--n-jobs", default="1,2", help="the grid search's n_jobs values")
    parser.add_argument("--fits", type=int, default=None,
                        help="fits per loop scenario (default: 12, more for the dense "
                             "graph families, LOOP_FITS)")
    parser.add_argument("--caches", default="empty,warm")
    args = parser.parse_args(argv)
    args.scenarios = runner.csv(args.scenarios)
    args.n_jobs = [int(n) for n in runner.csv(args.n_jobs)]
    args.caches = runner.csv(args.caches)
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if not args.report:
        with runner.job_lock(args.lock):
            measure(args)
    rows = runner.load_rows(args.output)
    print(runner.write_markdown(args.output, render(rows, args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
