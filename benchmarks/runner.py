"""The one benchmark runner: a subprocess per measurement, results kept as JSON.

Every measurement is a *job* ``(worker, dataset, impl, params)``. The runner
starts ``<python> -m benchmarks.workers.<worker> '<job JSON>'`` from the
repository root (so the working tree's ``metric_estimators`` is the one
measured, and a peer's virtual environment can run the same worker), in its
own process group, under a wall-clock timeout and optionally an address-space
cap, and reads back the one result line the worker prints
(:mod:`benchmarks.workers._protocol`). To the worker's own numbers it adds:

* ``wall_time`` (the whole subprocess, interpreter start included),
* ``child_maxrss_mb``: the child's peak resident set size over its whole
  life, from ``os.wait4`` (the kernel's ``ru_maxrss`` of exactly that child),
* ``loadavg_start`` / ``loadavg_end``: ``os.getloadavg()`` around the job (the
  1-minute value is the first entry; the machine may be shared),
* ``error`` when the job failed: ``timeout (N s)``, ``out of memory``, the
  worker's exception, or the exit status,
* ``run``: when, with which command and at which git revision,
* with ``--lock PATH``: ``lock`` (the path) and ``lock_wait_s``, the seconds
  the job waited for the exclusive ``flock`` on it (taken around each job,
  so that timed jobs of all sessions using the same lock file run one at a
  time; a lock already held by an ancestor process, e.g. ``flock PATH
  python benchmarks/...``, counts as held).

Results live in ``benchmarks/results/<stem>.json`` as ``{"benchmark": stem,
"rows": [...]}``. A new row replaces the stored row with the same key
``(dataset, impl, params)`` and leaves every other row alone, so a command that
re-measures part of a table merges into it. The markdown next to it is always
rendered from that JSON (``--report`` does only that).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import fcntl
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from benchmarks.workers import _protocol

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
RESULT_MARK = "@@bench-result@@ "  # also in workers/_protocol.py (which must not import this)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")
OOM_MARKERS = ("MemoryError", "bad_alloc", "Unable to allocate", "Cannot allocate memory",
               "out of memory", "failed to map segment")  # the last: RLIMIT_AS hit by dlopen
PEER_IMPLS = ("metric_learn", "pylmnn", "mlpack", "pydml")  # each runs in its own venv (peers.py)
KEY_FIELDS = ("dataset", "impl", "params")


# --------------------------------------------------------------------------- jobs


@dataclass
class Job:
    """One measurement: which worker runs which implementation on which data.

    ``params`` are everything else that changes the measured number (learner
    parameters, tolerance, seed, ...); together with ``dataset`` and ``impl``
    they key the result row. ``python`` is the interpreter (None: the
    project's); ``extra`` is passed to the worker but is not part of the key;
    ``timeout`` (seconds) overrides the run's ``--timeout`` for this job.
    """

    worker: str
    dataset: str
    impl: str
    params: dict = field(default_factory=dict)
    python: str | None = None
    extra: dict = field(default_factory=dict)
    timeout: float | None = None

    def payload(self) -> dict:
        """What the worker receives as JSON."""
        return {"dataset": self.dataset, "impl": self.impl, "params": self.params,
                **self.extra}


def default_python() -> str:
    """The project's interpreter: the repository's ``.venv`` if any, else this one."""
    venv_python = REPO_ROOT / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


def interpreter_for(impl: str, project_python: str | None = None) -> str:
    """The interpreter for ``impl``: a peer's venv (created on demand) or the project's."""
    if impl in PEER_IMPLS:
        from benchmarks import peers

        return str(peers.ensure(impl, log=lambda msg: print(msg, file=sys.stderr)))
    return project_python or default_python()


def thread_env(threads: int | None, extra: dict | None = None) -> dict:
    """The child's environment; with ``threads`` every BLAS/OpenMP/numba pool is capped."""
    env = dict(os.environ)
    if threads:
        env.update({var: str(threads) for var in THREAD_VARS})
    env.update(extra or {})
    return env


def _limit_memory(mem_limit_gb: float | None):
    """A preexec_fn capping the child's address space (RLIMIT_AS), or None."""
    if not mem_limit_gb:
        return None
    limit = int(mem_limit_gb * 1024 ** 3)

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def parse_result(stdout: str):
    """The payload of the last result line a worker printed, or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    return None


def describe_failure(returncode: int, stderr: str, mem_limit_gb: float | None) -> str:
    """One-line text for a worker that exited without a result line."""
    tail = (stderr.strip().splitlines() or [""])[-1]
    if any(marker in stderr for marker in OOM_MARKERS):
        return "out of memory"
    if returncode == -signal.SIGKILL:
        return "out of memory (killed)"
    if returncode < 0:
        cap = f", address-space cap {mem_limit_gb:g} GB" if mem_limit_gb else ""
        return f"crashed ({signal.Signals(-returncode).name}{cap}) {tail}".strip()
    return f"exit {returncode}: {tail}"[:300]


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_job(job: Job, *, timeout: float, mem_limit_gb: float | None = None,
            threads: int | None = None, env: dict | None = None,
            run_info: dict | None = None) -> list[dict]:
    """Run one job in a fresh subprocess; return its result row(s).

    A worker normally returns one result (one row); it may return a list, one
    row per element (each may set its own ``dataset``/``impl``/``params``,
    the job's are the defaults). Every row gets the runner's fields listed in
    the module docstring.
    """
    base = {"dataset": job.dataset, "impl": job.impl, "params": job.params}
    runner_fields = {"worker": job.worker, "run": dict(run_info or {})}
    try:
        python = job.python or interpreter_for(job.impl)
    except Exception as exc:  # peers.SetupError, or no interpreter
        return [{**base, **runner_fields,
                 "error": f"setup failed: {(str(exc).splitlines() or [''])[0]}"}]
    cmd = [python, "-m", f"benchmarks.workers.{job.worker}", json.dumps(job.payload())]
    runner_fields.update(python=python, threads=threads or "library defaults",
                         loadavg_start=_loadavg())
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=REPO_ROOT,
                                env=thread_env(threads, env), start_new_session=True,
                                preexec_fn=_limit_memory(mem_limit_gb))
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if not timed_out:  # the worker is gone; stop what it may have left behind
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    runner_fields.update(wall_time=round(wall, 3), loadavg_end=_loadavg(),
                         child_maxrss_mb=round(usage.ru_maxrss / 1024.0, 1))
    result = parse_result(stdout)
    if timed_out:
        result, error = None, f"timeout ({timeout:g} s)"
    elif result is None:
        error = describe_failure(proc.returncode, stderr, mem_limit_gb)
    else:
        error = None
    results = result if isinstance(result, list) else [result or {}]
    rows = []
    for res in results:
        row = {**base, **res, **runner_fields}
        if error and "error" not in row:
            row["error"] = error
        if "error" in row:
            if any(marker in row["error"] or marker in stderr for marker in OOM_MARKERS) \
                    and not row["error"].startswith("timeout"):
                row["error"] = "out of memory"
            row["stderr_tail"] = stderr.strip().splitlines()[-5:]
        rows.append(row)
    return rows


def _ancestors() -> set[int]:
    """This process and its ancestors (from ``/proc``; just this one elsewhere)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _held_by_ancestor(path: str) -> bool:
    """Whether an ancestor process holds a ``flock`` on ``path`` (``/proc/locks``)."""
    try:
        ino = os.stat(path).st_ino
        with open("/proc/locks") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return False
    mine = _ancestors()
    for line in lines:
        parts = line.split()
        if "->" in parts or len(parts) < 6 or parts[1] != "FLOCK":
            continue
        try:
            if int(parts[5].rsplit(":", 1)[1]) == ino and int(parts[4]) in mine:
                return True
        except (ValueError, IndexError):
            continue
    return False


@contextlib.contextmanager
def job_lock(path: str | None):
    """Hold an exclusive ``flock`` on ``path`` (None: no lock); yields the fields for the row."""
    if not path:
        yield {}
        return
    if _held_by_ancestor(path):
        yield {"lock": path, "lock_wait_s": 0.0}
        return
    start = time.perf_counter()
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield {"lock": path, "lock_wait_s": round(time.perf_counter() - start, 1)}
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def best_of(tries: list[dict], key: str = "fit_time") -> dict:
    """Collapse repeats of one job: the successful run with the smallest ``key``.

    Every successful run's ``key`` is kept in ``<key>s`` (e.g. ``fit_times``).
    """
    ok = [r for r in tries if "error" not in r and key in r]
    if not ok:
        return tries[-1]
    best = dict(min(ok, key=lambda r: r[key]))
    best[key + "s"] = [r[key] for r in ok]
    return best


def summarise_runs(runs: list[dict], kept: Iterable[str], per_run: Callable[[dict], dict],
                   reduce: Callable, keys: Iterable[str]) -> dict:
    """One row from repeated runs of a job: its first failure, or every run and a summary.

    The row keeps the fields ``kept`` of the last run, the load average
    when the first started, ``runs`` (``per_run`` of each run) and, for each
    of ``keys`` the runs have, ``reduce`` over them (``statistics.median``,
    ``min``).
    """
    bad = [r for r in runs if "error" in r]
    if bad:
        return bad[0]
    row = {k: runs[-1][k] for k in kept if k in runs[-1]}
    row["loadavg_start"] = runs[0]["loadavg_start"]
    row["runs"] = [per_run(r) for r in runs]
    row.update({k: reduce(r[k] for r in row["runs"]) for k in keys if k in row["runs"][0]})
    return row


def fatal(row: dict) -> bool:
    """Errors after which larger data sets are not worth trying."""
    return row.get("error", "").startswith(("timeout", "out of memory"))


def run_jobs(jobs: Iterable[Job], *, timeout: float, mem_limit_gb: float | None = None,
             threads: int | None = None, repeat: int = 1, best_key: str = "fit_time",
             skip_after_failure: bool = True, on_rows: Callable | None = None,
             run_info: dict | None = None, progress: Callable | None = None,
             lock: str | None = None) -> list[dict]:
    """Run jobs in order; ``repeat`` > 1 keeps the best by ``best_key``.

    With ``lock`` (a file path) each job runs under an exclusive ``flock`` on
    it (:func:`job_lock`); its rows record the path and the wait.

    With ``skip_after_failure`` an implementation that timed out or ran out of
    memory is not run on the jobs listed after it (assumed larger); its rows say
    ``skipped (...)``. ``on_rows(rows)`` is called after every job (to save
    incrementally).
    """
    out, blocked = [], {}
    for job in jobs:
        if job.impl in blocked:
            rows = [{"dataset": job.dataset, "impl": job.impl, "params": job.params,
                     "worker": job.worker, "run": dict(run_info or {}),
                     "error": f"skipped ({blocked[job.impl]})"}]
        else:
            tries = []
            for _ in range(repeat):
                with job_lock(lock) as held:
                    rows = run_job(job, timeout=job.timeout or timeout,
                                   mem_limit_gb=mem_limit_gb, threads=threads,
                                   run_info=run_info)
                tries.append([{**row, **held} for row in rows])
            if repeat > 1 and all(len(t) == 1 for t in tries):
                rows = [best_of([t[0] for t in tries], best_key)]
            else:
                rows = [row for t in tries for row in t]
            if skip_after_failure and any(fatal(r) for r in rows):
                blocked[job.impl] = f"{rows[0]['error']} on {job.dataset}"
        for row in rows:
            print((progress or progress_line)(row), file=sys.stderr, flush=True)
        out.extend(rows)
        if on_rows is not None:
            on_rows(rows)
    return out


def progress_line(row: dict) -> str:
    """One human-readable line per finished row."""
    params = canonical(row.get("params"))
    head = f"{row['dataset']:>18s} {row['impl']:>20s} {params[:40]:40s}"
    if "error" in row:
        return f"{head}  ERROR {row['error']}"
    fit = row.get("fit_time")
    fit = f"fit {fit:9.3f} s" if isinstance(fit, (int, float)) else ""
    return (f"{head}  {fit}  wall {row.get('wall_time', 0):7.1f} s  "
            f"maxrss {row.get('child_maxrss_mb', 0):7.0f} MB  "
            f"load {row.get('loadavg_start', [0])[0]:.2f}")


# ------------------------------------------------------------------- result files


def canonical(params: dict) -> str:
    """A stable text form of ``params`` (sorted keys) for keys and display."""
    return json.dumps(params or {}, sort_keys=True)


def row_key(row: dict) -> tuple[str, str, str]:
    """The identity of a row: ``(dataset, impl, canonical params)``."""
    return (str(row["dataset"]), str(row["impl"]), canonical(row.get("params")))


def merge_rows(old: list[dict], new: list[dict]) -> list[dict]:
    """``old`` with every row that has a key in ``new`` replaced, in place, by it.

    Rows of ``new`` with unseen keys are appended in their order; if ``new``
    holds one key twice, the later row wins.
    """
    latest = {row_key(r): r for r in new}
    merged, seen = [], set()
    for row in old:
        key = row_key(row)
        if key in latest:
            if key not in seen:
                merged.append(latest[key])
                seen.add(key)
        else:
            merged.append(row)
    for row in new:
        key = row_key(row)
        if key not in seen:
            merged.append(latest[key])
            seen.add(key)
    return merged


def result_path(stem: str, suffix: str = ".json", results_dir: Path | None = None) -> Path:
    """``benchmarks/results/<stem><suffix>`` (or under ``results_dir``)."""
    return Path(results_dir or RESULTS_DIR) / f"{stem}{suffix}"


def load_rows(stem: str, results_dir: Path | None = None) -> list[dict]:
    """The rows stored for ``stem`` (empty if there is no file yet)."""
    path = result_path(stem, results_dir=results_dir)
    if not path.exists():
        return []
    return json.loads(path.read_text())["rows"]


def _write_atomic(path: Path, text: str) -> None:
    """Write via a ``.tmp`` sibling so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def save_rows(stem: str, new_rows: list[dict], results_dir: Path | None = None) -> list[dict]:
    """Merge ``new_rows`` into ``<stem>.json``; return all stored rows."""
    rows = merge_rows(load_rows(stem, results_dir), new_rows)
    _write_atomic(result_path(stem, results_dir=results_dir),
                  json.dumps({"benchmark": stem, "rows": rows}, indent=1) + "\n")
    return rows


def write_markdown(stem: str, text: str, results_dir: Path | None = None) -> Path:
    """Write ``<stem>.md``; return its path."""
    path = result_path(stem, ".md", results_dir)
    _write_atomic(path, text if text.endswith("\n") else text + "\n")
    return path


# ------------------------------------------------------------------------ markdown


@dataclass
class Column:
    """A report column: header, how to get the value from a row, how to print it.

    ``get`` is a row key or a callable ``row -> value``; ``fmt`` a format
    string or a callable ``value -> str``. Missing values print as an en dash.
    """

    header: str
    get: str | Callable
    fmt: str | Callable = "{}"

    def cell(self, row: dict) -> str:
        value = self.get(row) if callable(self.get) else row.get(self.get)
        if value is None or value == "":
            return "–"
        if callable(self.fmt):
            return self.fmt(value)
        try:
            return self.fmt.format(value)
        except (ValueError, TypeError):
            return str(value)


def markdown_table(rows: list[dict], columns: list[Column]) -> str:
    """The rows as a GitHub markdown table."""
    lines = ["| " + " | ".join(c.header for c in columns) + " |",
             "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(c.cell(row).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines) + "\n"


def load_1m(row: dict):
    """The 1-minute load average when the row's job started."""
    load = row.get("loadavg_start")
    return load[0] if load else None


def error_note(row: dict) -> str:
    """The row's error, or empty."""
    return row.get("error", "")


def params_text(row: dict) -> str:
    """The row's params as ``k=v, ...`` (empty for none)."""
    return ", ".join(f"{k}={v}" for k, v in sorted((row.get("params") or {}).items()))


def commands_run(rows: list[dict]) -> list[str]:
    """The distinct commands that produced ``rows``, oldest first."""
    seen = {}
    for row in rows:
        run = row.get("run") or {}
        if run.get("command"):
            seen.setdefault(run["command"], run.get("date", ""))
    return [cmd for cmd, _ in sorted(seen.items(), key=lambda kv: kv[1])]


def report_header(title: str, stem: str, rows: list[dict],
                  notes: Iterable[str] = ()) -> list[str]:
    """Title, the commands that produced the rows, and free-text notes."""
    lines = [f"# {title}", "",
             f"Rendered from `benchmarks/results/{stem}.json` (add `--report` to the "
             "command to re-render without running anything). The rows were produced by:",
             ""]
    lines += [f"    {cmd}" for cmd in commands_run(rows)] or ["    (no command recorded)"]
    dates = sorted({(r.get("run") or {}).get("date", "")[:10] for r in rows} - {""})
    if dates:
        lines += ["", f"Measured on: {', '.join(dates)}."]
    lines.append("")
    for note in notes:
        lines += [note, ""]
    return lines


# ----------------------------------------------------------------------- commands


def cpu_calibration(n: int = 10 ** 7) -> float:
    """Seconds for a fixed pure-Python loop: compares machine speed between runs."""
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    return round(time.perf_counter() - start, 3)


def git_revision() -> str:
    """Short commit of the working tree ('-dirty' if modified), or ''."""
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def run_info(argv: list[str] | None = None, calibrate: bool = True) -> dict:
    """What every row of this invocation records about the run itself."""
    script = Path(sys.argv[0])
    shown = f"benchmarks/{script.name}" if script.suffix == ".py" else script.name
    args = sys.argv[1:] if argv is None else argv
    info = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["python", shown, *args]),
        "revision": git_revision(),
        "host": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.platform()}",
    }
    if calibrate:
        info["cpu_calibration_s"] = cpu_calibration()
    return info


def base_parser(description: str, *, timeout: float, mem_limit_gb: float | None = None,
                repeat: bool = True, output: str | None = None,
                data_dir: bool = False) -> argparse.ArgumentParser:
    """The flags every benchmark command shares (``data_dir``: add ``--data-dir``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--timeout", type=float, default=timeout,
                        help=f"seconds per job (default {timeout:g})")
    parser.add_argument("--mem-limit-gb", type=float, default=mem_limit_gb,
                        help="address-space cap per job (default: "
                             + (f"{mem_limit_gb:g})" if mem_limit_gb else "none)"))
    parser.add_argument("--threads", type=int, default=None,
                        help="cap BLAS/OpenMP/numba threads in every job (default: unset)")
    if repeat:
        parser.add_argument("--repeat", type=int, default=1,
                            help="runs per job, the best is kept (default 1)")
    parser.add_argument("--python", default=default_python(),
                        help="interpreter for this project's jobs "
                             "(default: <repo>/.venv/bin/python if present, else this one)")
    if output is not None:
        parser.add_argument("--output", default=output,
                            help=f"result stem in benchmarks/results/ (default {output})")
    parser.add_argument("--report", action="store_true",
                        help="only re-render <output>.md from <output>.json")
    parser.add_argument("--lock", default=None, metavar="PATH",
                        help="run each job under an exclusive flock on PATH "
                             "(default: none; '' for none)")
    if data_dir:
        parser.add_argument("--data-dir", default=None,
                            help="directory of the public data files, passed to the jobs as "
                                 f"${_protocol.DATA_DIR_VAR} (default: ${_protocol.DATA_DIR_VAR} "
                                 "if set, else <repo>/../shared/data)")
    return parser


def execute(stem: str, jobs: list[Job], args, render: Callable[[list[dict], str], str], *,
            best_key: str = "fit_time", skip_after_failure: bool = True) -> int:
    """Run ``jobs`` with the shared flags, merge into ``<stem>.json``, render ``<stem>.md``.

    ``render(rows, stem)`` returns the markdown. With ``--report`` nothing
    runs; the markdown is re-rendered from the JSON.
    """
    if getattr(args, "data_dir", None):
        os.environ[_protocol.DATA_DIR_VAR] = str(Path(args.data_dir).resolve())
    if not args.report:
        info = run_info()
        run_jobs(jobs, timeout=args.timeout, mem_limit_gb=args.mem_limit_gb,
                 threads=args.threads, repeat=getattr(args, "repeat", 1),
                 best_key=best_key, skip_after_failure=skip_after_failure,
                 on_rows=lambda rows: save_rows(stem, rows), run_info=info,
                 lock=getattr(args, "lock", None))
    rows = load_rows(stem)
    path = write_markdown(stem, render(rows, stem))
    print(path)
    return 0


def csv(text: str) -> list[str]:
    """Split a comma-separated command-line value."""
    return [item.strip() for item in text.split(",") if item.strip()]
