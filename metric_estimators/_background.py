"""Compile a family of numba kernels in a background process, once per machine.

The compiled tier of :mod:`metric_estimators._backend` is filled off the
critical path: when a fit on the numpy twins tells the backend that its
family is worth compiling, :func:`start` launches ``python -m
metric_estimators.warmup --family NAME --quiet`` as a detached,
low-priority child process (it lowers its own priority first).  The child fills numba's on-disk cache (the
same directory this process reads, :func:`metric_estimators._compilation.
expected_cache_path`) and exits; the next fit of the family that finds the
cache filled runs on the kernels.

Why a process and not a thread: numba's compiler is Python code that holds
the interpreter lock most of the time, so a compiling thread would slow the
fits it is meant to spare, and its CPU would be charged to the user's
process.  A child process at low priority uses an idle core, never blocks
the parent, and outlives it: a short script leaves a filled cache behind.

Once per machine: the child's lock file (``metric_estimators_compiling.
<family>.lock`` in the cache directory, created with ``O_EXCL``) tells every
process on the machine, the workers of a parallel grid search included,
that the family is being compiled; they do not start another compilation
and keep running on the twins until the lock is gone.  A lock whose process
is dead, or older than :data:`STALE_SECONDS`, is ignored and replaced.  A
process asks at most once per family (and per size class), so a family
whose compilation fails is not retried in a loop.

Switching it off: ``METRIC_ESTIMATORS_BACKGROUND_COMPILE=0`` (also ``off``,
``false``, ``no``) in the environment, or :func:`enable` (``False``) in the
process.  Then nothing runs in the background: problems within their
family's limits run on the twins until the kernels are compiled by other
means (``python -m metric_estimators.warmup``), and larger problems compile
in the foreground.  Do so on single-core machines (where a background
compilation takes the only core from the fits) and on clusters whose
images are built with the warm-up command.

Standard library only: importing this module imports neither numba nor the
kernels.
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["NICENESS", "STALE_SECONDS", "VARIABLE", "compiling", "enable", "enabled",
           "launched", "lock_path", "release", "start", "wait"]

#: The environment variable that switches background compilation off (``0``).
VARIABLE = "METRIC_ESTIMATORS_BACKGROUND_COMPILE"

#: A lock older than this (seconds) belongs to a compilation that hung: ignored.
STALE_SECONDS = 900.0

#: How much the child lowers its priority (``os.nice``): enough that the
#: fits keep their cores, not so much that a busy machine starves the
#: compilation they are waiting for.
NICENESS = 5

_OFF = ("0", "off", "false", "no")

_lock = threading.Lock()
_state = {"enabled": os.environ.get(VARIABLE, "1").strip().lower() not in _OFF}
_asked = set()  # (family, parallel) this process has launched or found under way
_children = []  # the Popen objects this process started (reaped on poll)
#: ``(family, parallel, pid)`` of every compilation this process launched
#: (read by benchmarks and tests that count compilations per machine).
launched = []


def enabled():
    """True when fits may start background compilations in this process."""
    return _state["enabled"]


def enable(value=None):
    """Switch background compilation on or off for this process.

    Returns the previous setting; with ``value=None`` only returns it.
    """
    old = _state["enabled"]
    if value is not None:
        _state["enabled"] = bool(value)
    return old


def _directory():
    from ._compilation import expected_cache_path

    return Path(expected_cache_path())


def lock_path(family, parallel=False, directory=None):
    """The lock file of a background compilation of ``family``."""
    directory = _directory() if directory is None else Path(directory)
    suffix = ".parallel" if parallel else ""
    return directory / f"metric_estimators_compiling.{family}{suffix}.lock"


def _alive(pid):
    if pid <= 0:
        return False
    if sys.platform.startswith("win"):
        return True  # no cheap check: the age of the lock decides
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user
        return True
    return True


def _held(path):
    """True when ``path`` is the lock of a compilation still running."""
    try:
        text = path.read_text().split()
        age = time.time() - path.stat().st_mtime
    except OSError:
        return False
    try:
        pid = int(text[0])
    except (IndexError, ValueError):
        pid = 0  # being written: the creator fills it in at once
        return age < 10.0
    return age < STALE_SECONDS and _alive(pid)


def compiling(family, parallel=False):
    """True when some process on this machine is compiling ``family`` now."""
    _reap()
    return _held(lock_path(family, parallel))


def _reap():
    """Collect the exit status of finished children (no zombies)."""
    with _lock:
        _children[:] = [p for p in _children if p.poll() is None]


def _take(path):
    """Create the lock file ``path`` exclusively; replace it if stale.  True if taken."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if _held(path):
                return False
            try:
                path.unlink()
            except OSError:
                return False
            continue
        except OSError:
            return False
        os.close(fd)
        return True
    return False


def _command(family, parallel, path):
    command = [sys.executable, "-m", "metric_estimators.warmup", "--quiet",
               "--family", family, "--lock", str(path)]
    if parallel:
        command.append("--parallel")
    return command


def start(family, parallel=False):
    """Start compiling ``family`` in a background process, unless under way or asked before.

    Parameters
    ----------
    family : str
        A key of :data:`metric_estimators._backend.FAMILIES`.
    parallel : bool, default=False
        Also compile the parallel kernels that the family's larger problems
        call.

    Returns
    -------
    started : bool
        True when this call started the compilation, or one is under way
        in another process; False when switched off, asked before by this
        process, or when the cache directory cannot be written.
    """
    if not enabled():
        return False
    key = (family, parallel)
    with _lock:
        asked = key in _asked
        _asked.add(key)
    if asked:
        return compiling(family, parallel)
    try:
        directory = _directory()
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    path = lock_path(family, parallel, directory)
    if not _take(path):
        return _held(path)
    env = dict(os.environ)
    env[VARIABLE] = "0"  # the child compiles; it never starts another child
    # the child imports this very package, wherever this process found it
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    kwargs = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
              "stderr": subprocess.DEVNULL, "env": env, "close_fds": True}
    if sys.platform.startswith("win"):
        kwargs["creationflags"] = (subprocess.BELOW_NORMAL_PRIORITY_CLASS
                                   | subprocess.CREATE_NEW_PROCESS_GROUP)
    else:
        kwargs["start_new_session"] = True  # outlives the parent, no signals from its terminal
    try:
        child = subprocess.Popen(_command(family, parallel, path), **kwargs)
    except OSError:
        try:
            path.unlink()
        except OSError:
            pass
        return False
    try:
        path.write_text(f"{child.pid} {os.getpid()}\n")
    except OSError:
        pass
    with _lock:
        _children.append(child)
        launched.append((family, parallel, child.pid))
    return True


def wait(family, ready, parallel=False, timeout=STALE_SECONDS, poll=0.1):
    """Sleep until the background compilation of ``family`` ends, or ``timeout`` seconds.

    ``ready`` is a callable that says whether the kernels are in the cache.
    Returns ``ready()`` at the end: False when the compilation failed, was
    never started or outlasted ``timeout``, and the caller compiles in the
    foreground.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and compiling(family, parallel):
        time.sleep(poll)
    return ready()


def release(path):
    """Remove the lock file ``path`` (the child's last step, also on failure)."""
    try:
        os.unlink(path)
    except OSError:
        pass
