"""What every worker shares: read the job, time, measure memory, print the result.

A worker is run as ``python -m benchmarks.workers.<name> '<job JSON>'`` (the
job may also come on stdin). The job always has ``dataset``, ``impl`` and
``params``. The worker prints exactly one line starting with
:data:`RESULT_MARK` followed by a JSON object (or a list of objects, one per
result row); anything else it or its libraries print is ignored. A failure is
reported as ``{"error": "..."}`` in that line (and the traceback on stderr),
so the runner records it as a row instead of losing it.

Standard library only: this module runs in every peer's virtual environment.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import traceback
from pathlib import Path

RESULT_MARK = "@@bench-result@@ "  # the runner looks for this prefix

#: the environment variable naming the directory of the public data files
#: (``penbased.dat``, ``power.mat``); the commands' ``--data-dir`` sets it
DATA_DIR_VAR = "BENCH_DATA_DIR"
#: its default: ``shared/data`` next to the repository (``<repo>/../shared/data``)
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def read_keel(path: str):
    """``(features, labels)`` of a KEEL file: lists of float rows and of class strings.

    '@' header lines, then '@data' and one comma-separated row per sample,
    numeric features, the class last.  Rows with a missing value
    (``<null>``) are dropped.
    """
    features, labels, in_data = [], [], False
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            if line.startswith("@"):
                in_data = in_data or line.lower().startswith("@data")
                continue
            if in_data:
                *values, label = (v.strip() for v in line.split(","))
                if "<null>" in values:
                    continue
                features.append([float(v) for v in values])
                labels.append(label)
    return features, labels


def data_file(name: str) -> str:
    """The path of the public data file ``name``: in ``$BENCH_DATA_DIR`` if set,
    else in ``<repo>/../shared/data``; a clear error when it is missing."""
    directory = Path(os.environ.get(DATA_DIR_VAR) or DEFAULT_DATA_DIR)
    path = directory / name
    if not path.is_file():
        raise FileNotFoundError(f"{name} not found in {directory}; pass --data-dir DIR "
                                f"or set {DATA_DIR_VAR}")
    return str(path)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux: ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def current_rss_mb() -> float:
    """Resident set size of this process now, in MB (Linux ``/proc/self/statm``).

    Falls back to :func:`peak_rss_mb` where ``/proc`` is missing.
    """
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return round(pages * resource.getpagesize() / 2.0**20, 1)
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


def read_job(argv: list[str]) -> dict:
    """The job from ``argv[1]`` if given, else from stdin."""
    job = json.loads(argv[1] if len(argv) > 1 else sys.stdin.read())
    job.setdefault("params", {})
    return job


def _jsonable(value):
    """JSON fallback for numpy scalars and arrays."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def describe(exc: BaseException) -> str:
    """One-line error text; MemoryError reads 'out of memory'."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    return f"{type(exc).__name__}: {exc}".strip()[:500]


def emit(result) -> None:
    """Print the result line."""
    print(RESULT_MARK + json.dumps(result, default=_jsonable), flush=True)


def main(run, argv: list[str] | None = None) -> int:
    """Worker entry point: ``run(job)`` returns the result; print it; exit status."""
    job = read_job(sys.argv if argv is None else argv)
    try:
        result = run(job)
        code = 0
    except BaseException as exc:  # every failure becomes a row, not just a traceback
        traceback.print_exc(file=sys.stderr)
        result = {"error": describe(exc)}
        code = 1
    emit(result)
    return code
