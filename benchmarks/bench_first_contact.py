"""First contact: every estimator's first fit on a fresh install, a warm cache, and warm.

    python benchmarks/bench_first_contact.py                 # -> results/first_contact.{json,md}
    python benchmarks/bench_first_contact.py --kernels       # -> results/first_contact_kernels.{json,md}

For every case of ``benchmarks/workers/first_contact.py`` (each estimator on
the data set a new user tries first: scikit-learn's bundled sets at full
size, a 60-node matrix, a 400-node sparse graph) three figures, each from fresh processes started by
the runner:

1. **empty cache**: a fresh process with its own new, empty
   ``NUMBA_CACHE_DIR``: import, load the data, fit once (every kernel the
   fit needs is compiled);
2. **warm cache**: a fresh process on a cache directory that the warm-up
   command filled (a warm installation): the first fit of a process once
   the kernels are cached;
3. **warm**: the best of up to three more fits in that second process.

Each figure is given as CPU seconds (every thread) and wall seconds. The
headline CPU figure of 1. and 2. is the CPU time of the whole process at the
end of the first fit, interpreter start and imports included (what a user
waits for); the fit alone is given too. The targets: at most 5 s CPU per
case and at most 30 s summed over the 17 cases with an empty cache. A row times the work
of ``python -m metric_estimators.warmup`` on an empty cache, the one that
fills the warm runs' cache (``--no-warmup`` leaves the row out).

``--kernels`` instead runs every case once more on an empty cache with
numba's compile events recorded, and writes which kernels were compiled, how
many specialisations each and how long each took (CPU seconds of the
compiling thread; exclusive of the kernels it compiled on the way).
"""

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.first_contact import CASES, EXTRA_CASES, WARMUP  # noqa: E402

STEM = "first_contact"
KERNEL_STEM = "first_contact_kernels"
CPU_TARGET, SUM_TARGET = 5.0, 30.0


def measure(args) -> list:
    """Per case: an empty-cache run in a new cache directory, then a warm-installation run.

    The warm runs share one cache directory that the warm-up command filled
    first (its row is the ``warmup`` row): what a user meets after
    ``python -m metric_estimators.warmup``, or after larger fits compiled
    the kernels.
    """
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info)
    rows = []
    cases = runner.csv(args.cases)
    warm_cache = None if args.kernels else tempfile.mkdtemp(prefix="first_contact_warm_")

    def run(case, params, cache):
        job = runner.Job("first_contact", case, "ours", params, python=args.python)
        row = runner.run_job(job, env={"NUMBA_CACHE_DIR": cache}, **kw)[0]
        print(_progress(row), file=sys.stderr, flush=True)
        rows.append(row)
        return row

    try:
        if warm_cache is not None:
            row = run(WARMUP, {"cache": "empty"}, warm_cache)
            if args.warmup:
                runner.save_rows(STEM, [row])
        for case in cases:
            cache = tempfile.mkdtemp(prefix="first_contact_numba_")
            try:
                if args.kernels:
                    runner.save_rows(KERNEL_STEM, [run(case, {"cache": "empty", "kernels": True},
                                                       cache)])
                    continue
                runner.save_rows(STEM, [run(case, {"cache": "empty"}, cache)])
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            runner.save_rows(STEM, [run(case, {"cache": "warm"}, warm_cache)])
    finally:
        if warm_cache is not None:
            shutil.rmtree(warm_cache, ignore_errors=True)
    return rows


def _progress(row):
    if "error" in row:
        return f"{row['dataset']:>30s} {row['params']['cache']:>6s}  ERROR {row['error']}"
    if row["dataset"] == WARMUP:
        return (f"{WARMUP:>30s}  process CPU {row['process_cpu']:6.2f} s  wall "
                f"{row['wall_time']:6.1f} s  compiled {row['cache_misses']}")
    return (f"{row['dataset']:>30s} {row['params']['cache']:>6s}  "
            f"process CPU {row['process_cpu']:6.2f} s  fit CPU {row['first_fit_cpu']:6.2f} s"
            f"  wall {row['wall_time']:6.1f} s  warm fit {_f(row.get('warm_fit_cpu'), 3)} s  "
            f"compiled {row['cache_misses']}  load {row['loadavg_start'][0]:.2f}")


def _f(value, digits=2):
    return "–" if value is None else f"{value:.{digits}f}"


def render(rows: list, stem: str = STEM) -> str:
    """The three figures per case, the sums and the targets."""
    by = {(r["dataset"], r["params"].get("cache")): r for r in rows}
    loads = [runner.load_1m(r) for r in rows if runner.load_1m(r) is not None]
    lines = runner.report_header(
        "First contact: first fit on an empty numba cache, on a warm cache, and warm",
        stem, rows,
        ["Every figure comes from fresh processes (`benchmarks/workers/first_contact.py`). "
         "*Process CPU*: CPU seconds of the whole process (all threads) at the end of the "
         "first fit, interpreter start, imports and data included; *fit*: the first "
         "`fit` call alone; *wall*: the runner's wall time of the whole process (it also "
         "includes the warm fits). *Warm cache*: a fresh process on a cache that the "
         "warm-up command filled (a warm installation). *Warm fit*: best of up to three "
         "more fits in the warm-cache process. *Compiled*: specialisations compiled during the first fit "
         "(numba cache misses). Targets: empty-cache process CPU <= "
         f"{CPU_TARGET:g} s per case, <= {SUM_TARGET:g} s summed.",
         f"1-minute load average at the start of the jobs: "
         f"{_f(min(loads)) if loads else '–'} - {_f(max(loads)) if loads else '–'}."])
    lines += ["| case | data | empty cache: process CPU (s) | fit CPU (s) | wall (s) | "
              "compiled | warm cache: process CPU (s) | fit CPU (s) | wall (s) | "
              "warm fit CPU (s) | warm fit wall (s) |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    sums = {"empty": 0.0, "warm": 0.0}
    worst = 0.0
    errors = []
    extra = []
    for case, data in {**CASES, **EXTRA_CASES}.items():
        e, w = by.get((case, "empty"), {}), by.get((case, "warm"), {})
        if not e and not w:
            continue
        for r in (e, w):
            if "error" in r:
                errors.append(f"{case} ({r['params']['cache']}): {r['error']}")
        if case in EXTRA_CASES:
            extra.append((case, data, e, w))
            continue
        sums["empty"] += e.get("process_cpu") or 0.0
        sums["warm"] += w.get("process_cpu") or 0.0
        worst = max(worst, e.get("process_cpu") or 0.0)
        flag = " **over**" if (e.get("process_cpu") or 0.0) > CPU_TARGET else ""
        lines.append(
            f"| {case} | {data} | {_f(e.get('process_cpu'))}{flag} | "
            f"{_f(e.get('first_fit_cpu'))} | {_f(e.get('wall_time'), 1)} | "
            f"{e.get('cache_misses', '–')} | {_f(w.get('process_cpu'))} | "
            f"{_f(w.get('first_fit_cpu'))} | {_f(w.get('wall_time'), 1)} | "
            f"{_f(w.get('warm_fit_cpu'), 3)} | {_f(w.get('warm_fit_wall'), 3)} |")
    lines += [f"| **sum** | | **{sums['empty']:.1f}** | | | | **{sums['warm']:.1f}** "
              "| | | | |"]
    for case, data, e, w in extra:  # outside the sum and the targets
        lines.append(
            f"| {case} (extra) | {data} | {_f(e.get('process_cpu'))} | "
            f"{_f(e.get('first_fit_cpu'))} | {_f(e.get('wall_time'), 1)} | "
            f"{e.get('cache_misses', '–')} | {_f(w.get('process_cpu'))} | "
            f"{_f(w.get('first_fit_cpu'))} | {_f(w.get('wall_time'), 1)} | "
            f"{_f(w.get('warm_fit_cpu'), 3)} | {_f(w.get('warm_fit_wall'), 3)} |")
    lines.append("")
    n_cases = sum(1 for case in CASES if (case, "empty") in by)
    met = worst <= CPU_TARGET and sums["empty"] <= SUM_TARGET
    scope = "" if n_cases == len(CASES) else f" (only {n_cases} of {len(CASES)} cases measured)"
    lines += [f"Largest empty-cache process CPU {worst:.2f} s (target {CPU_TARGET:g} s), "
              f"sum {sums['empty']:.1f} s (target {SUM_TARGET:g} s): "
              f"targets {'met' if met else 'not met'}{scope}.", ""]
    wu = by.get((WARMUP, "empty"))
    if wu and "error" not in wu:
        lines += [f"`python -m metric_estimators.warmup` on an empty cache (its work, in a "
                  f"fresh process): **{wu['process_cpu']:.1f} s CPU**, "
                  f"{wu['wall_time']:.1f} s wall, "
                  f"{wu['cache_misses']} specialisations compiled; load "
                  f"{runner.load_1m(wu)}.", ""]
    elif wu:
        errors.append(f"warmup: {wu['error']}")
    lines += [f"error: {e}" for e in errors]
    return "\n".join(lines) + "\n"


def render_kernels(rows: list, stem: str = KERNEL_STEM, top: int = 8) -> str:
    """Per case, the kernels whose compilation cost most."""
    lines = runner.report_header(
        "Kernel compilation per estimator (first fit, empty numba cache)", stem, rows,
        ["Recorded through numba's `numba:compile` event: CPU seconds of the compiling "
         "thread per kernel, *exclusive* of the kernels (or numba library functions) it "
         f"compiled on the way; the {top} costliest per case. *Specialisations*: how "
         "many type signatures of the kernel were compiled. Names are relative to "
         "`metric_estimators._kernels`; `numba.*` are numba's own helpers compiled for "
         "our kernels."])
    by = {r["dataset"]: r for r in rows}
    for case in CASES:
        r = by.get(case)
        if r is None:
            continue
        if "error" in r:
            lines += [f"## {case}", "", f"error: {r['error']}", ""]
            continue
        kernels = r.get("kernels", {})
        ours = sum(v["exclusive_s"] for k, v in kernels.items()
                   if k.startswith("metric_estimators."))
        lines += [f"## {case}", "",
                  f"First fit {r['first_fit_cpu']:.2f} s CPU; compilation "
                  f"{r['compile_s']:.2f} s ({ours:.2f} s in our kernels, the rest in numba's "
                  f"helpers); {r['cache_misses']} specialisations of our kernels compiled; "
                  f"load {runner.load_1m(r)}.", ""]
        if kernels:
            lines += ["| kernel | specialisations | exclusive (s) | inclusive (s) |",
                      "|---|---:|---:|---:|"]
            for name, v in list(kernels.items())[:top]:
                short = name.replace("metric_estimators._kernels.", "")
                lines.append(f"| {short} | {v['specialisations']} | "
                             f"{v['exclusive_s']:.2f} | {v['inclusive_s']:.2f} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=600, repeat=False)
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated cases (default: the 17 of CASES; "
                             f"further: {', '.join(EXTRA_CASES)})")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false",
                        help="skip the warm-up command's row")
    parser.add_argument("--kernels", action="store_true",
                        help="record the compilation per kernel instead "
                             f"(-> {KERNEL_STEM}.{{json,md}})")
    args = parser.parse_args(argv)
    if not args.report:
        measure(args)
    if args.kernels:
        text = render_kernels(runner.load_rows(KERNEL_STEM))
        print(runner.write_markdown(KERNEL_STEM, text))
    else:
        print(runner.write_markdown(STEM, render(runner.load_rows(STEM))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
