"""numba's side of the package: where compiled kernels are cached, and what a compilation says.

:func:`prepare` runs once, when the first kernel module is imported (from
``metric_estimators/_kernels/__init__.py``, before any kernel is defined):

**Cache location.** numba caches a compiled kernel next to its source file
(``_kernels/__pycache__``) or, when the environment variable
``NUMBA_CACHE_DIR`` is set, under that directory.  On a read-only
installation (a system site-packages, a container image, a shared
environment) ``__pycache__`` cannot be written; then, if ``NUMBA_CACHE_DIR``
is unset, :func:`prepare` sets it to :func:`user_cache_dir` (e.g.
``~/.cache/metric_estimators/numba/<stamp>`` on Linux, under
``$XDG_CACHE_HOME`` when set), so that the kernels are compiled once per user
instead of once per process.  ``<stamp>`` is a hash of the kernel sources:
an upgraded package never meets the cache of another version there.  As
with any ``NUMBA_CACHE_DIR``, the setting holds for the whole process (and
the processes it starts): numba functions of other packages compiled later
in the process are cached there too.  A user's own ``NUMBA_CACHE_DIR`` is
always respected.

**Stale caches.** numba stores next to each compiled kernel a stamp of its
source file (a hash of the file's contents in recent numba, its modification
time and size in older ones) and its own version, and discards the entry
when either differs: a kernel whose file changed is recompiled, never loaded
stale.  numba does not look at the files of the kernels a kernel *calls*,
though, and some of our kernels call kernels of other files.  So
:func:`prepare` also keeps a stamp of all kernel sources (and numba's
version) in ``_kernels/__pycache__`` (or in the cache directory in use) and,
when it differs, removes the package's compiled kernels there before any is
loaded: after an upgrade everything is compiled afresh, once.

**Compile notices.** A cache miss means seconds of compilation, which the
user should not wait through in silence.  Every :class:`~metric_estimators.
_reporting.FitReport` registers itself here while its ``fit`` runs
(:func:`register_fit`); when a kernel of ``metric_estimators._kernels`` is
about to be compiled, the newest running fit says so once: one line
``[Estimator] compiling numba kernels for Estimator (once per installation)``
when ``verbose >= 1``, else a ``logging`` record (logger
``"metric_estimators"``, level INFO).  A compilation outside any fit logs
one record per process.

Standard library only at import: numba is imported by :func:`prepare`.
"""

import hashlib
import importlib.metadata
import logging
import os
import sys
import tempfile
import threading
import weakref
from pathlib import Path

__all__ = ["NOTICE", "announce_tier", "kernels_loaded", "kernels_ready", "logger",
           "prepare", "register_fit", "user_cache_dir"]

logger = logging.getLogger("metric_estimators")

#: the text of a compile notice (``name``: the estimator's class name)
NOTICE = "compiling numba kernels for {name} (once per installation)"

KERNELS_DIR = Path(__file__).resolve().parent / "_kernels"
KERNELS_PACKAGE = "metric_estimators._kernels"
STAMP_FILE = "metric_estimators_kernels.stamp"

_lock = threading.Lock()
_fits = []  # weak references to the FitReports of the fits running now, oldest first
_state = {"prepared": False, "logged_outside_fit": False}


# ----------------------------------------------------------------- cache location


def user_cache_dir(environ=None, platform=None, home=None):
    """The per-user directory for our compiled kernels when the package's is read-only.

    ``$XDG_CACHE_HOME/metric_estimators/numba`` (``~/.cache/...`` when the
    variable is unset or not absolute) on Linux and other Unixes,
    ``~/Library/Caches/metric_estimators/numba`` on macOS and
    ``%LOCALAPPDATA%\\metric_estimators\\numba`` on Windows; then a
    sub-directory named by :func:`sources_stamp`.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    home = Path(home) if home is not None else Path.home()
    if platform.startswith("win"):
        base = Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif platform == "darwin":
        base = home / "Library" / "Caches"
    else:
        xdg = environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else home / ".cache"
    return base / "metric_estimators" / "numba" / sources_stamp()[:16]


def sources_stamp(kernels_dir=KERNELS_DIR):
    """Hex digest of every kernel source file (names and contents) and numba's version."""
    digest = hashlib.sha256()
    for path in sorted(Path(kernels_dir).glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(_numba_version().encode())
    return digest.hexdigest()


def _numba_version():
    """numba's version, from its installed metadata (without importing numba)."""
    try:
        return importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        from numba import __version__

        return __version__


def writable(directory):
    """True if ``directory`` exists or can be made, and a file can be written in it.

    The test numba itself applies before caching next to a source file.
    """
    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError:
        return False
    return True


def cache_dir(environ=None, kernels_dir=KERNELS_DIR):
    """The directory to set as ``NUMBA_CACHE_DIR``, or None to leave numba's choice.

    None when ``NUMBA_CACHE_DIR`` is set (the user's choice) or when the
    kernels' own ``__pycache__`` is writable (numba's default); else
    :func:`user_cache_dir`, if it is writable (None if not: numba then
    tries its own fallbacks).
    """
    environ = os.environ if environ is None else environ
    if environ.get("NUMBA_CACHE_DIR"):
        return None
    if writable(Path(kernels_dir) / "__pycache__"):
        return None
    path = user_cache_dir(environ)
    return path if writable(path) else None


def _clear_if_stale(directory, stamp):
    """Remove our compiled kernels in ``directory`` unless its stamp file says ``stamp``.

    Returns the number of files removed (0 when the stamp matched or the
    directory cannot be written).
    """
    directory = Path(directory)
    marker = directory / STAMP_FILE
    try:
        if marker.read_text() == stamp:
            return 0
    except OSError:
        pass
    if not writable(directory):  # also makes it: the stamp is written before any kernel
        return 0
    modules = {p.stem for p in KERNELS_DIR.glob("*.py")}
    removed = 0
    for path in directory.iterdir():
        # numba's files: <module>.<function>-<line>.py<XY>.nbi / .<i>.nbc
        if path.suffix in (".nbi", ".nbc") and path.name.split(".", 1)[0] in modules:
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    try:
        tmp = marker.with_name(f"{marker.name}.{os.getpid()}")
        tmp.write_text(stamp)
        tmp.replace(marker)
    except OSError:
        pass
    return removed


def _kernels_cache_path():
    """Where numba will cache the kernels of ``_kernels/`` (its own locator's choice)."""
    from numba.core import caching, config

    source = str(KERNELS_DIR / "__init__.py")
    if config.CACHE_DIR:
        return Path(config.CACHE_DIR) / caching._CacheLocator.get_suitable_cache_subpath(source)
    return KERNELS_DIR / "__pycache__"


# ------------------------------------------------------- are these kernels compiled?


def kernels_ready(names):
    """True when every kernel of ``names`` can run without being compiled.

    ``names``: ``"module.function"`` under ``metric_estimators._kernels``.
    A kernel is ready when its dispatcher holds a compiled specialisation in
    this process, or when numba's on-disk cache holds it: its index file
    (``<module>.<function>-<line>.py<XY>.nbi``) is in the directory where
    numba will look for it (:func:`expected_cache_path`) and the package's
    stamp there is that of the current kernel sources and numba (else
    :func:`prepare` will clear the directory).  Nothing is imported or
    compiled to answer, numba included: one directory listing and one
    small file read.  The answer can be wrong in one direction only, and
    rarely: an index written for other argument types or another CPU
    counts as ready, and the fit then compiles what it needs.
    """
    missing = _not_loaded(names)
    if not missing:
        return True
    directory = expected_cache_path()
    try:
        if (directory / STAMP_FILE).read_text() != _current_stamp():
            return False
        files = os.listdir(directory)
    except OSError:
        return False
    tag = f".py{sys.version_info[0]}{sys.version_info[1]}"
    indexed = {f.split("-", 1)[0] for f in files
               if f.endswith(".nbi") and tag in f}
    return all(name in indexed for name in missing)


def _not_loaded(names):
    """The kernels of ``names`` that hold no compiled specialisation in this process."""
    missing = []
    for name in names:
        module, function = name.split(".")
        loaded = sys.modules.get(f"{KERNELS_PACKAGE}.{module}")
        if not getattr(getattr(loaded, function, None), "signatures", None):
            missing.append(name)
    return missing


def kernels_loaded(names):
    """True when every kernel of ``names`` is compiled or loaded in this process already.

    Then a fit on them pays neither numba's import nor the loading of
    cached code.  Imports nothing.
    """
    return not _not_loaded(names)


_stamps = {}


def _current_stamp():
    """:func:`sources_stamp`, computed once per process (the sources do not change under it)."""
    if "stamp" not in _stamps:
        _stamps["stamp"] = sources_stamp()
    return _stamps["stamp"]


def expected_cache_path():
    """Where numba caches (or will cache) the kernels, without importing numba.

    :func:`_kernels_cache_path` once :func:`prepare` has run; before, the
    same choice made from the environment: under ``NUMBA_CACHE_DIR`` (set
    by the user, or the one :func:`prepare` will set) in numba's
    sub-directory for the kernels' folder, else ``_kernels/__pycache__``.
    """
    if _state["prepared"]:
        return _kernels_cache_path()
    base = os.environ.get("NUMBA_CACHE_DIR") or cache_dir()
    if not base:
        return KERNELS_DIR / "__pycache__"
    # numba's _CacheLocator.get_suitable_cache_subpath of a kernel's file
    folder = os.path.abspath(KERNELS_DIR)
    hashed = hashlib.sha1(folder.encode()).hexdigest()
    return Path(base) / f"{os.path.split(folder)[-1]}_{hashed}"


# ------------------------------------------------------------------ compile notices


def register_fit(report):
    """Record ``report`` (a FitReport) as a fit running now, until it is garbage."""
    with _lock:
        _fits[:] = [ref for ref in _fits if ref() is not None]
        _fits.append(weakref.ref(report))


def _newest_fit():
    with _lock:
        live = [ref() for ref in _fits]
        live = [r for r in live if r is not None]
        _fits[:] = [weakref.ref(r) for r in live]
    return live[-1] if live else None


def announce_compilation():
    """Say, once per running fit, that kernels are being compiled (see module docstring)."""
    report = _newest_fit()
    if report is not None:
        report.compiling()
        return
    with _lock:
        if _state["logged_outside_fit"]:
            return
        _state["logged_outside_fit"] = True
    logger.info(NOTICE.format(name="metric_estimators"))


def announce_tier(text):
    """Say which tier (twins or kernels) the newest running fit runs on, and why.

    A phase line of the fit's report when its ``verbose >= 1``, else a
    ``logging`` record at DEBUG level (logger ``"metric_estimators"``).
    """
    report = _newest_fit()
    if report is not None and report.verbose:
        report.phase(text)
    else:
        name = report.name if report is not None else "metric_estimators"
        logger.debug("[%s] %s", name, text)


def _install_listener():
    from numba.core import event

    class _CompileListener(event.Listener):
        """Calls :func:`announce_compilation` when one of our kernels starts compiling."""

        def on_start(self, ev):
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            if getattr(func, "__module__", "").startswith(KERNELS_PACKAGE):
                announce_compilation()

        def on_end(self, ev):
            pass

    event.register("numba:compile", _CompileListener())


def prepare():
    """Set the cache location, clear stale kernels, listen to compilations (once)."""
    with _lock:
        if _state["prepared"]:
            return
        _state["prepared"] = True
    from numba.core import config

    path = cache_dir()
    if path is not None:
        os.environ["NUMBA_CACHE_DIR"] = str(path)
        config.CACHE_DIR = str(path)
    try:
        _clear_if_stale(_kernels_cache_path(), sources_stamp())
    except Exception:  # never let housekeeping stop the kernels from loading
        logger.debug("could not check the kernel cache's stamp", exc_info=True)
    _install_listener()
