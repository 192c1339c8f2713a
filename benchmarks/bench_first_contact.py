"""First contact: every estimator's first fit on a fresh install, a warm cache, and warm.

    python benchmarks/bench_first_contact.py                 # -> results/first_contact.{json,md}
    python benchmarks/bench_first_contact.py --cases cliff   # -> results/first_contact_cliff.{json,md}
    python benchmarks/bench_first_contact.py --kernels       # -> results/first_contact_kernels.{json,md}

The command for the first fits of every estimator in a fresh process (and
of the twins' evidence, ``--modes``); every job runs the first-fit worker,
``benchmarks/workers/first_contact.py``, through the runner.  (Two other
commands run the same worker: ``bench_cold_start.py``, LMNN's imports and
first fit on iris against scikit-learn's NCA, and ``bench_coldwarm.py``,
numba's start-up timed apart from a first fit on digits.)  ``--cases``
picks what is fitted:

* ``classic`` (default): the 17 cases of the worker's ``CASES``, each
  estimator on the data set a new user tries first (scikit-learn's bundled
  sets at full size, a 60-node matrix, a 400-node sparse graph);
* ``cliff``: for each kernel family of ``metric_estimators._backend.FAMILIES``
  that a public estimator exercises (the worker's ``CLIFF_FAMILIES``), that
  estimator on generated data just above the family's limit, at twice and at
  four times it (the first component of the size scaled, the others at or
  below their limits; the limits are read from ``FAMILIES`` when the command
  runs): where a first fit leaves the numpy twins and compiles the family's
  kernels;
* ``all``: both; or a comma-separated list of case names (the further
  cases of ``EXTRA_CASES``, ``cliff-<family>``).

Per case, each from fresh processes started by the runner:

1. **empty cache**: a fresh process with its own new, empty
   ``NUMBA_CACHE_DIR``: import, load the data, fit once (every kernel the
   fit needs is compiled);
2. **warm cache**: a fresh process on a cache directory that the warm-up
   command filled (a warm installation): the first fit of a process once
   the kernels are cached (``--no-warm-cache`` leaves these rows and the
   warm-up out);
3. **warm**: the best of up to ``--warm`` (default 3) more fits in that second
   process.

Each figure is given as CPU seconds (every thread of the fitting process,
not its children) and wall seconds. The headline CPU figure of 1. and 2. is
the CPU time of the whole process at the end of the first fit, interpreter
start and imports included (what a user waits for); the fit alone is given
too. The targets: at most 5 s CPU per case (a case under it is *met*) and at
most 30 s summed over the 17 classic cases with an empty cache. A row times
the work of ``python -m metric_estimators.warmup`` on an empty cache, the one
that fills the warm runs' cache (``--no-warmup`` leaves the row out).

``--modes auto,numpy,numba`` runs every case once per mode of
``METRIC_ESTIMATORS_BACKEND`` (``auto``, the package's rule, is the
default; a forced mode is part of the row's key and its rows have their
own table): the cold side of the twins' limits, e.g.
``--cases LMNN,MLKR,SCML_Supervised,LODML,LSML_Supervised --modes
auto,numpy,numba --no-warm-cache --output first_contact_modes``.

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
from benchmarks.workers.first_contact import (  # noqa: E402
    CASES,
    CLIFF_FAMILIES,
    CLIFF_SCALES,
    EXTRA_CASES,
    WARMUP,
    cliff_sizes,
)

STEM = "first_contact"
CLIFF_STEM = "first_contact_cliff"  # the default output of --cases cliff
KERNEL_STEM = "first_contact_kernels"
CPU_TARGET, SUM_TARGET = 5.0, 30.0
CLIFF = "cliff-"


def family_limits() -> dict:
    """``family -> limits`` of the package's table, read now (the command's run time)."""
    from metric_estimators._backend import FAMILIES

    return {family: tuple(FAMILIES[family].limits) for family in CLIFF_FAMILIES}


def select_cases(text: str, families=None, scales=None, limits=None) -> list:
    """``[(case, extra params), ...]`` for ``--cases`` (see the module docstring).

    A cliff case is one entry per scale, with its family's size in the
    params; ``families`` / ``scales`` (None: all) narrow the cliff cases;
    ``limits`` (None: :func:`family_limits`) is the table they are read from.
    """
    names = {"classic": list(CASES), "cliff": [CLIFF + f for f in CLIFF_FAMILIES],
             "all": list(CASES) + [CLIFF + f for f in CLIFF_FAMILIES]}.get(text)
    if names is None:
        names = runner.csv(text)
    out = []
    for name in names:
        if not name.startswith(CLIFF):
            if name not in CASES and name not in EXTRA_CASES:
                raise SystemExit(f"unknown case {name!r}")
            out.append((name, {}))
            continue
        family = name[len(CLIFF):]
        if family not in CLIFF_FAMILIES:
            raise SystemExit(f"no cliff case for family {family!r}")
        if families and family not in families:
            continue
        if limits is None:
            limits = family_limits()
        for scale, size in cliff_sizes(family, limits[family]):
            if not scales or scale in scales:
                out.append((name, {"family": family, "scale": scale, "size": size,
                                   "limit": list(limits[family])}))
    return out


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
    stem = KERNEL_STEM if args.kernels else args.output
    cases = select_cases(args.cases, set(runner.csv(args.families or "")),
                         set(runner.csv(args.scales or "")))
    modes = runner.csv(args.modes)
    warm_cache = (None if args.kernels or not args.warm_cache
                  else tempfile.mkdtemp(prefix="first_contact_warm_"))

    def run(case, params, cache):
        # the cache directory reaches the worker in its environment and its job
        job = runner.Job("first_contact", case, "ours", params, python=args.python,
                         extra={"numba_cache_dir": cache})
        row = runner.run_job(job, env={"NUMBA_CACHE_DIR": cache}, **kw)[0]
        print(_progress(row), file=sys.stderr, flush=True)
        rows.append(row)
        return row

    def with_options(params, cache, mode):
        params = {"cache": cache, **params}
        if mode != "auto":
            params["mode"] = mode
        if args.warm != 3:
            params["warm"] = args.warm
        return params

    try:
        if warm_cache is not None:
            row = run(WARMUP, {"cache": "empty"}, warm_cache)
            if args.warmup:
                runner.save_rows(stem, [row])
        for case, extra in cases:
            for mode in modes:
                cache = tempfile.mkdtemp(prefix="first_contact_numba_")
                try:
                    if args.kernels:
                        runner.save_rows(stem, [run(case, {**with_options(extra, "empty", mode),
                                                           "kernels": True}, cache)])
                        continue
                    runner.save_rows(stem, [run(case, with_options(extra, "empty", mode),
                                                cache)])
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                if warm_cache is not None:
                    runner.save_rows(stem, [run(case, with_options(extra, "warm", mode),
                                                warm_cache)])
    finally:
        if warm_cache is not None:
            shutil.rmtree(warm_cache, ignore_errors=True)
    return rows


def _label(row):
    p = row.get("params", {})
    parts = [row["dataset"], p.get("scale"), p.get("mode"), p.get("cache")]
    return " ".join(str(x) for x in parts if x)


def _progress(row):
    if "error" in row:
        return f"{_label(row):>44s}  ERROR {row['error']}"
    if row["dataset"] == WARMUP:
        return (f"{WARMUP:>44s}  process CPU {row['process_cpu']:6.2f} s  wall "
                f"{row['wall_time']:6.1f} s  compiled {row['cache_misses']}")
    return (f"{_label(row):>44s}  "
            f"process CPU {row['process_cpu']:6.2f} s  fit CPU {row['first_fit_cpu']:6.2f} s"
            f"  wall {row['wall_time']:6.1f} s  warm fit {_f(row.get('warm_fit_cpu'), 3)} s  "
            f"compiled {row['cache_misses']}  load {row['loadavg_start'][0]:.2f}")


def _f(value, digits=2):
    return "–" if value is None else f"{value:.{digits}f}"


def met(row) -> bool:
    """A case is met when its process CPU at the end of the first fit is within the target."""
    return "error" not in row and (row.get("process_cpu") or 0.0) <= CPU_TARGET


def render(rows: list, stem: str = STEM) -> str:
    """The three figures per case, the sums and the targets; the cliff and mode tables."""
    # the classic table: rows of the package's own rule, three warm fits, no cliff size
    plain = [r for r in rows if set(r.get("params") or {}) <= {"cache", "warm"}]
    by = {(r["dataset"], r["params"].get("cache")): r for r in plain}
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
    if not any(case in CASES or case in EXTRA_CASES for case, _ in by):
        return "\n".join(lines + _warmup_lines(by, []) + render_cliff(rows)
                         + render_modes(rows, by)) + "\n"
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
    lines += _warmup_lines(by, errors)
    lines += render_cliff(rows) + render_modes(rows, by)
    lines += [f"error: {e}" for e in errors]
    return "\n".join(lines) + "\n"


def _warmup_lines(by: dict, errors: list) -> list:
    """The warm-up command's row as a sentence (its error appended to ``errors``)."""
    wu = by.get((WARMUP, "empty"))
    if wu and "error" not in wu:
        return [f"`python -m metric_estimators.warmup` on an empty cache (its work, in a "
                f"fresh process): **{wu['process_cpu']:.1f} s CPU**, "
                f"{wu['wall_time']:.1f} s wall, "
                f"{wu['cache_misses']} specialisations compiled; load "
                f"{runner.load_1m(wu)}.", ""]
    if wu:
        errors.append(f"warmup: {wu['error']}")
    return []


def _wall(row):
    """Wall seconds of the process at the end of its first fit (the runner's if unknown)."""
    return row.get("process_wall", row.get("wall_time"))


def render_cliff(rows: list) -> list:
    """The cliff cases: per family and scale, the empty-cache and the warm-cache first fit."""
    cliff = [r for r in rows if r["dataset"].startswith(CLIFF) and "mode" not in r["params"]]
    if not cliff:
        return []
    by = {}
    for r in cliff:
        p = r["params"]
        by.setdefault((p["family"], p["scale"], tuple(p["size"])), {})[p.get("cache")] = r
    lines = ["## Cliff cases: first fits above the twins' limits", "",
             "Per family of `metric_estimators._backend.FAMILIES` that a public estimator "
             "exercises, that estimator's first fit in a fresh process on generated data "
             "just above the family's limit, at 2 x and at 4 x it (the first component of "
             "the size scaled; the limits as they were when the command ran). *Size*: "
             "what the fit sees (for ProjectAndForget, all pairs of the fewest points "
             "that reach the scaled number). *Process CPU*: user + system CPU of the "
             "fitting process (not its children) at the end of the first fit; *wall*: "
             "seconds since the process started, at the same moment (it includes any "
             "wait for a compilation in another process). *Compiled*: specialisations "
             "compiled in the fitting process itself. *Met*: process CPU "
             f"<= {CPU_TARGET:g} s on an empty cache.", "",
             "| family | estimator | scale | size | limit | empty cache: process CPU (s) "
             "| wall (s) | met | compiled | warm cache: process CPU (s) | wall (s) "
             "| warm fit CPU (s) |",
             "|---|---|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    order = {f: i for i, f in enumerate(CLIFF_FAMILIES)}
    scales = {s: i for i, s in enumerate(CLIFF_SCALES)}
    n_met = n = 0
    for (family, scale, size), pair in sorted(
            by.items(), key=lambda kv: (order.get(kv[0][0], 99), scales.get(kv[0][1], 9),
                                        kv[0][2])):
        e, w = pair.get("empty", {}), pair.get("warm", {})
        shown = e.get("fit_size") or w.get("fit_size") or list(size)
        limit = (e or w)["params"].get("limit")
        if e:
            n += 1
            n_met += met(e)
        ok = ("–" if not e else "error: " + e["error"][:60] if "error" in e
              else "met" if met(e) else "**not met**")
        lines.append(
            f"| {family} | {CLIFF_FAMILIES[family][0]} | {scale} | "
            f"{' x '.join(f'{v:,}' for v in shown)} | "
            f"{' x '.join(f'{v:,}' for v in limit) if limit else '–'} | "
            f"{_f(e.get('process_cpu'))} | {_f(_wall(e), 1)} | {ok} | "
            f"{e.get('cache_misses', '–')} | {_f(w.get('process_cpu'))} | "
            f"{_f(_wall(w), 1)} | {_f(w.get('warm_fit_cpu'), 3)} |")
    lines += ["", f"Met on {n_met} of {n} cliff cases measured on an empty cache.", ""]
    return lines


def render_modes(rows: list, plain: dict) -> list:
    """First fits per backend mode: the ``auto`` row next to the forced ones."""
    moded = [r for r in rows if (r.get("params") or {}).get("mode")
             and not r["dataset"].startswith(CLIFF)]
    if not moded:
        return []
    lines = ["## First fits per backend mode", "",
             "The same cases with `METRIC_ESTIMATORS_BACKEND` forced (`numpy`: the twins "
             "wherever they exist; `numba`: the kernels, compiled on the empty cache); "
             "`auto` is the row of the table above.", "",
             "| case | cache | mode | process CPU (s) | fit CPU (s) | wall (s) | numba loaded "
             "| warm fit CPU (s) |", "|---|---|---|---:|---:|---:|---|---:|"]
    cases = list(dict.fromkeys(r["dataset"] for r in moded))
    for case in cases:
        for cache in ("empty", "warm"):
            mine = [r for r in moded if r["dataset"] == case and r["params"]["cache"] == cache]
            auto = plain.get((case, cache))
            for r in ([auto] if auto else []) + mine:
                mode = r["params"].get("mode", "auto")
                if "error" in r:
                    lines.append(f"| {case} | {cache} | {mode} | error: {r['error'][:60]} "
                                 "| | | | |")
                    continue
                loaded = r.get("numba_loaded")
                lines.append(
                    f"| {case} | {cache} | {mode} | {_f(r.get('process_cpu'))} | "
                    f"{_f(r.get('first_fit_cpu'))} | {_f(_wall(r), 1)} | "
                    f"{'–' if loaded is None else 'yes' if loaded else 'no'} | "
                    f"{_f(r.get('warm_fit_cpu'), 3)} |")
    return lines + [""]


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
    # the classic cases in their order, then every other case as measured
    # (a cliff case once per scale, a forced mode once per mode)
    order = {case: i for i, case in enumerate(CASES)}
    for r in sorted(rows, key=lambda r: order.get(r["dataset"], len(order))):
        case = _label(r).replace(" empty", "")
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
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=600, repeat=False,
                                output=STEM)
    parser.add_argument("--cases", default="classic",
                        help="classic (the 17 of CASES, default), cliff (the families' "
                             "limits), all, or comma-separated case names (further: "
                             f"{', '.join(EXTRA_CASES)}, cliff-<family>)")
    parser.add_argument("--families", default=None,
                        help="comma-separated: only these families' cliff cases "
                             f"(default: all of {', '.join(CLIFF_FAMILIES)})")
    parser.add_argument("--scales", default=None,
                        help=f"comma-separated: only these cliff scales "
                             f"(default: all of {', '.join(CLIFF_SCALES)})")
    parser.add_argument("--modes", default="auto",
                        help="comma-separated modes of METRIC_ESTIMATORS_BACKEND, one job "
                             "per case and mode (default: auto)")
    parser.add_argument("--warm", type=int, default=3,
                        help="warm fits after the first, in the warm-cache process "
                             "(default 3)")
    parser.add_argument("--no-warm-cache", dest="warm_cache", action="store_false",
                        help="no warm-installation rows (and no warm-up)")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false",
                        help="skip the warm-up command's row")
    parser.add_argument("--kernels", action="store_true",
                        help="record the compilation per kernel instead "
                             f"(-> {KERNEL_STEM}.{{json,md}})")
    parser.set_defaults(output=None)
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = CLIFF_STEM if args.cases == "cliff" else STEM
    if not args.report:
        measure(args)
    if args.kernels:
        text = render_kernels(runner.load_rows(KERNEL_STEM))
        print(runner.write_markdown(KERNEL_STEM, text))
    else:
        print(runner.write_markdown(args.output, render(runner.load_rows(args.output),
                                                        args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
