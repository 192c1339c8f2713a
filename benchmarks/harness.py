"""Run benchmark jobs in isolated subprocesses and write the result tables.

Every (implementation, data set) pair runs in a fresh process started with
that implementation's interpreter (a peer venv from :mod:`peers`, or the
project's interpreter for ``ours`` and ``euclidean``), under a wall-clock
timeout and an address-space limit. The runners live in ``benchmarks/peers/``
and share ``benchmarks/peers/_common.py``.

``bench_lmnn.py`` and ``bench_itml.py`` are thin front ends to :func:`cli`.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import peers

BENCH_DIR = Path(__file__).resolve().parent
RUNNER_DIR = BENCH_DIR / "peers"
RESULTS_DIR = BENCH_DIR / "results"
PROJECT_IMPLS = ("ours", "euclidean")  # run in the project's interpreter
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")
OOM_MARKERS = ("MemoryError", "bad_alloc", "Unable to allocate", "Cannot allocate memory")


def default_project_python() -> str:
    """The project's interpreter: the repository's ``.venv`` if any, else this one."""
    venv_python = BENCH_DIR.parent / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


def interpreter_for(impl: str, project_python: str | None = None) -> str:
    """The Python executable an implementation's runner is started with."""
    if impl in PROJECT_IMPLS:
        return project_python or default_project_python()
    return str(peers.ensure(impl, log=lambda msg: print(msg, file=sys.stderr)))


def _limit_memory(mem_limit_gb: float):
    """A preexec_fn capping the child's address space (RLIMIT_AS)."""
    limit = int(mem_limit_gb * 1024 ** 3)

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _last_json_line(text: str) -> dict | None:
    """The last stdout line that parses as a JSON object, if any."""
    for line in reversed(text.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _failure_text(returncode: int, stderr: str, mem_limit_gb: float) -> str:
    """Describe a runner that died without printing its result line.

    Native code often dies by a signal (SIGSEGV, SIGABRT) when an allocation
    hits the address-space cap, so the cap is named next to the signal.
    """
    tail = (stderr.strip().splitlines() or [""])[-1]
    if returncode == -signal.SIGKILL:
        return "out of memory (killed)"
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return f"crashed ({name}, address-space cap {mem_limit_gb:g} GB) {tail}".strip()
    return f"exit {returncode}: {tail}"[:300]


def _classify(error: str, stderr: str) -> str:
    """Report every allocation failure, from Python or C++, as 'out of memory'."""
    if error.startswith(("out of memory", "timeout")):
        return error
    if any(marker in error or marker in stderr for marker in OOM_MARKERS):
        return "out of memory"
    return error


def thread_env(threads: int | None) -> dict:
    """The child environment; with ``threads`` every thread pool is capped."""
    env = dict(os.environ)
    if threads:
        env.update({var: str(threads) for var in THREAD_VARS})
    return env


def run_job(impl: str, job: dict, timeout: float, mem_limit_gb: float,
            project_python: str | None = None, threads: int | None = None) -> dict:
    """Run one job in a subprocess and return its result row.

    The child runs in its own process group, which is killed as a whole on
    timeout. The row always has ``impl``, ``algo``, ``dataset``, ``wall_time``
    and ``loadavg_start``/``loadavg_end`` (``os.getloadavg()``), and has
    ``error`` when anything went wrong ("timeout", "out of memory", ...).
    ``threads`` caps the BLAS/OpenMP/numba pools (None: library defaults).
    """
    row = {"impl": impl, "algo": job["algo"], "dataset": job["dataset"]}
    try:
        python = interpreter_for(impl, project_python)
    except peers.SetupError as exc:
        return {**row, "error": f"setup failed: {str(exc).splitlines()[0]}"}
    cmd = [python, str(RUNNER_DIR / f"run_{impl}.py"), json.dumps(job)]
    row["loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=thread_env(threads), start_new_session=True, preexec_fn=_limit_memory(mem_limit_gb))
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        row["error"] = f"timeout ({timeout:g} s)"
    row["wall_time"] = round(time.perf_counter() - start, 3)
    row["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    result = _last_json_line(stdout)
    if result is not None:
        row.update(result)
    elif "error" not in row:
        row["error"] = _failure_text(proc.returncode, stderr, mem_limit_gb)
    if "error" in row:
        row["error"] = _classify(row["error"], stderr)
        row["stderr_tail"] = stderr.strip().splitlines()[-5:]
    return row


def _best_of(rows: list[dict]) -> dict:
    """Collapse repeats: the successful run with the smallest fit time."""
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return rows[-1]
    best = dict(min(ok, key=lambda r: r["fit_time"]))
    best["fit_times"] = [r["fit_time"] for r in ok]
    return best


def _fatal(row: dict) -> bool:
    """Errors after which larger data sets are not worth trying."""
    error = row.get("error", "")
    return error.startswith("timeout") or error.startswith("out of memory")


def run_all(algo: str, datasets: list[str], impls: list[str], *, timeout: float,
            mem_limit_gb: float, repeat: int = 1, params: dict | None = None,
            project_python: str | None = None, threads: int | None = None,
            skip_after_failure: bool = True) -> list[dict]:
    """Run every implementation on every data set, in the order given.

    With ``skip_after_failure`` an implementation that timed out or ran out of
    memory is not run on the data sets listed after (assumed larger).
    """
    rows, blocked = [], {}
    for dataset in datasets:
        for impl in impls:
            if impl in blocked:
                rows.append({"impl": impl, "algo": algo, "dataset": dataset,
                             "error": f"skipped ({blocked[impl]})"})
                continue
            job = {"algo": algo, "dataset": dataset, "params": (params or {}).get(impl, {})}
            tries = [run_job(impl, job, timeout, mem_limit_gb, project_python, threads)
                     for _ in range(repeat)]
            row = _best_of(tries)
            print(_progress_line(row), file=sys.stderr, flush=True)
            rows.append(row)
            if skip_after_failure and _fatal(row):
                blocked[impl] = f"{row['error']} on {dataset}"
    return rows


def _progress_line(row: dict) -> str:
    """One human-readable line per finished job."""
    if "error" in row:
        return f"{row['dataset']:>18s} {row['impl']:>12s}  ERROR {row['error']}"
    return (f"{row['dataset']:>18s} {row['impl']:>12s}  fit {row['fit_time']:9.3f} s  "
            f"acc {row['accuracy']:.4f}  peak {row.get('peak_rss_mb', 0):8.1f} MB")


def add_ratios(rows: list[dict]) -> None:
    """Set ``vs_fastest_peer``: fit time / fastest successful peer's fit time."""
    fastest = {}
    for row in rows:
        if row["impl"] in peers.PEERS and "error" not in row and row["fit_time"] > 0:
            ds = row["dataset"]
            fastest[ds] = min(fastest.get(ds, float("inf")), row["fit_time"])
    for row in rows:
        base = fastest.get(row["dataset"])
        if base and "error" not in row and row["impl"] != "euclidean":
            row["vs_fastest_peer"] = round(row["fit_time"] / base, 3)


def _cell(value, fmt: str = "{}") -> str:
    """Format a table cell; missing values become an en dash."""
    return "–" if value is None else fmt.format(value)


def markdown_table(rows: list[dict]) -> str:
    """The result rows as a GitHub markdown table."""
    head = ("| dataset | n_train × d | impl | version | fit time (s) | × fastest peer "
            "| 3-NN accuracy | peak RSS (MB) | RSS before fit (MB) | n_iter | load 1m | note |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        shape = f"{r['n_train']} × {r['n_features']}" if "n_train" in r else None
        fit = None if r["impl"] == "euclidean" else r.get("fit_time")
        load = r.get("loadavg_start", [None])[0]
        lines.append("| " + " | ".join([
            r["dataset"], _cell(shape), r["impl"], _cell(r.get("version")),
            _cell(fit, "{:.3f}"), _cell(r.get("vs_fastest_peer"), "{:.2f}"),
            _cell(r.get("accuracy"), "{:.4f}"), _cell(r.get("peak_rss_mb"), "{:.0f}"),
            _cell(r.get("rss_before_fit_mb"), "{:.0f}"), _cell(r.get("n_iter")),
            _cell(load, "{:.2f}"), r.get("error", ""),
        ]) + " |")
    return "\n".join(lines) + "\n"


def cpu_calibration(n: int = 10 ** 7) -> float:
    """Seconds for a fixed pure-Python loop: compares machine speed between runs."""
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    return round(time.perf_counter() - start, 3)


def host_info() -> dict:
    """Where and when the benchmark ran."""
    return {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "driver_python": platform.python_version(),
    }


def _write_atomic(path: Path, text: str) -> None:
    """Write via a ``.tmp`` sibling so a crash never leaves a half table."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def write_results(rows: list[dict], stem: str, title: str, meta: dict) -> tuple[Path, Path]:
    """Write ``results/<stem>.md`` and ``results/<stem>.json``; return both paths."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    info = {**host_info(), **meta}
    md = [f"# {title}", ""]
    md += [f"- {key}: `{value}`" for key, value in info.items()]
    md += ["", "Fit time only (best of the repeats); accuracy = 3-NN on the 30 % test split;",
           "peak RSS = ru_maxrss of the runner process after fit. Load 1m = 1-minute load",
           "average when the job started (the machine is shared).", "",
           markdown_table(rows)]
    md_path, json_path = RESULTS_DIR / f"{stem}.md", RESULTS_DIR / f"{stem}.json"
    _write_atomic(md_path, "\n".join(md))
    _write_atomic(json_path, json.dumps({"meta": info, "rows": rows}, indent=1) + "\n")
    return md_path, json_path


def _csv(text: str) -> list[str]:
    """Split a comma-separated CLI value."""
    return [item.strip() for item in text.split(",") if item.strip()]


def cli(algo: str, *, datasets: str, impls: str, stem: str, title: str,
        argv: list[str] | None = None) -> int:
    """Shared command line of the benchmark front ends."""
    parser = argparse.ArgumentParser(description=title)
    parser.add_argument("--datasets", default=datasets, help="comma-separated, smallest first")
    parser.add_argument("--impls", default=impls, help="comma-separated implementations")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--mem-limit-gb", type=float, default=12, help="address-space cap per run")
    parser.add_argument("--repeat", type=int, default=1, help="runs per job (best fit time kept)")
    parser.add_argument("--output", default=stem, help="result file stem in benchmarks/results/")
    parser.add_argument("--project-python", default=default_project_python(),
                        help="interpreter for 'ours' and 'euclidean' "
                             "(default: <repo>/.venv/bin/python if present, else this one)")
    parser.add_argument("--threads", type=int, default=None,
                        help="cap BLAS/OpenMP/numba threads in every runner (default: unset)")
    parser.add_argument("--params", type=json.loads, default={},
                        help='per-impl learner overrides, JSON: {"ours": {"max_iter": 50}}')
    parser.add_argument("--no-skip", action="store_true",
                        help="keep running an implementation after a timeout/out-of-memory")
    args = parser.parse_args(argv)

    calibration_start = cpu_calibration()
    rows = run_all(algo, _csv(args.datasets), _csv(args.impls), timeout=args.timeout,
                   mem_limit_gb=args.mem_limit_gb, repeat=args.repeat, params=args.params,
                   project_python=args.project_python, threads=args.threads,
                   skip_after_failure=not args.no_skip)
    add_ratios(rows)
    meta = {"algo": algo, "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
            "timeout_s": args.timeout, "mem_limit_gb": args.mem_limit_gb,
            "repeat": args.repeat, "threads": args.threads or "library defaults",
            "project_python": args.project_python,
            "cpu_calibration_s (start, end)": [calibration_start, cpu_calibration()]}
    for path in write_results(rows, args.output, title, meta):
        print(path)
    return 0
