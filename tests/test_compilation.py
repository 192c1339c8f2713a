"""numba set-up of the kernels: compile notices, cache location, stale caches.

The end-to-end tests run fresh interpreters (the set-up happens once per
process, when the first kernel module is imported) on a cheap kernel,
:func:`metric_estimators._kernels.edges.edge_id`, or, for stale caches, on a
copy of the package whose kernel sources they change.
"""

import io
import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from metric_estimators import _compilation
from metric_estimators._reporting import FitReport

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------- compile notices


def test_compiling_prints_one_line_when_verbose():
    out = io.StringIO()
    report = FitReport("Demo", verbose=1, stream=out)
    report.compiling()
    report.compiling()  # once per fit
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "[Demo] compiling numba kernels for Demo (once per installation)")


def test_compiling_logs_when_silent(caplog):
    out = io.StringIO()
    report = FitReport("Demo", verbose=0, stream=out)
    with caplog.at_level(logging.INFO, logger="metric_estimators"):
        report.compiling()
        report.compiling()
    assert out.getvalue() == ""
    records = [r for r in caplog.records if r.name == "metric_estimators"]
    assert len(records) == 1
    assert records[0].levelno == logging.INFO
    assert "compiling numba kernels for Demo" in records[0].getMessage()


def test_announcement_goes_to_the_newest_running_fit(caplog):
    outer_out, inner_out = io.StringIO(), io.StringIO()
    outer = FitReport("Outer", verbose=1, stream=outer_out)
    inner = FitReport("Inner", verbose=1, stream=inner_out)
    _compilation.announce_compilation()
    assert "compiling numba kernels for Inner" in inner_out.getvalue()
    assert outer_out.getvalue() == ""
    del inner  # its fit is over: the next compilation belongs to the outer fit
    _compilation.announce_compilation()
    assert "compiling numba kernels for Outer" in outer_out.getvalue()
    del outer


def test_announcement_outside_any_fit_is_logged_once(caplog, monkeypatch):
    monkeypatch.setattr(_compilation, "_fits", [])
    monkeypatch.setitem(_compilation._state, "logged_outside_fit", False)
    with caplog.at_level(logging.INFO, logger="metric_estimators"):
        _compilation.announce_compilation()
        _compilation.announce_compilation()
    messages = [r.getMessage() for r in caplog.records if r.name == "metric_estimators"]
    assert messages == ["compiling numba kernels for metric_estimators "
                        "(once per installation)"]


def _run(code, env_update, cwd=ROOT, drop=("NUMBA_CACHE_DIR",)):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_update)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


_NOTICE_CODE = """
    import io, json
    from metric_estimators._reporting import FitReport
    out = io.StringIO()
    report = FitReport("Demo", verbose=1, stream=out)
    from metric_estimators._kernels.edges import edge_id
    assert edge_id(1, 2, 5) == edge_id(1, 2, 5)
    stats = edge_id.stats
    print(json.dumps({"out": out.getvalue(),
                      "misses": sum(stats.cache_misses.values()),
                      "hits": sum(stats.cache_hits.values())}))
"""


def test_cache_miss_says_compiling_and_cache_hit_does_not(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    cold = json.loads(_run(_NOTICE_CODE, env).splitlines()[-1])
    assert cold["misses"] == 1
    assert cold["out"].startswith("[Demo] compiling numba kernels for Demo")
    warm = json.loads(_run(_NOTICE_CODE, env).splitlines()[-1])
    assert warm["misses"] == 0 and warm["hits"] == 1
    assert warm["out"] == ""


# ---------------------------------------------------------------- cache location


def test_user_cache_dir_per_platform(tmp_path):
    stamp = _compilation.sources_stamp()[:16]
    home = tmp_path / "home"
    linux = _compilation.user_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg")},
                                        "linux", home)
    assert linux == tmp_path / "xdg" / "metric_estimators" / "numba" / stamp
    # unset or relative XDG_CACHE_HOME: ~/.cache (the XDG specification)
    for environ in ({}, {"XDG_CACHE_HOME": "relative/path"}):
        assert _compilation.user_cache_dir(environ, "linux", home) == \
            home / ".cache" / "metric_estimators" / "numba" / stamp
    assert _compilation.user_cache_dir({}, "darwin", home) == \
        home / "Library" / "Caches" / "metric_estimators" / "numba" / stamp
    assert _compilation.user_cache_dir({"LOCALAPPDATA": str(tmp_path / "local")},
                                       "win32", home) == \
        tmp_path / "local" / "metric_estimators" / "numba" / stamp


def test_cache_dir_falls_back_only_when_the_package_is_read_only(tmp_path, monkeypatch):
    kernels = tmp_path / "pkg" / "_kernels"
    kernels.mkdir(parents=True)
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    # writable package: numba's default (next to the sources)
    assert _compilation.cache_dir(environ, kernels) is None
    # the user's own NUMBA_CACHE_DIR always wins
    assert _compilation.cache_dir({**environ, "NUMBA_CACHE_DIR": "/x"}, kernels) is None
    real = _compilation.writable
    monkeypatch.setattr(_compilation, "writable",
                        lambda path: not str(path).startswith(str(kernels)) and real(path))
    assert _compilation.cache_dir(environ, kernels) == \
        _compilation.user_cache_dir(environ)
    # nowhere to write: leave it to numba
    monkeypatch.setattr(_compilation, "writable", lambda path: False)
    assert _compilation.cache_dir(environ, kernels) is None


def test_writable_is_false_where_a_directory_cannot_be_made(tmp_path):
    (tmp_path / "file").write_text("")
    assert _compilation.writable(tmp_path / "new")
    assert not _compilation.writable(tmp_path / "file" / "sub")


_READ_ONLY_CODE = """
    import json, os
    from metric_estimators import _compilation
    kernels = str(_compilation.KERNELS_DIR)
    real = _compilation.writable
    # the installation is read-only (as for a user without rights on site-packages)
    _compilation.writable = lambda path: not str(path).startswith(kernels) and real(path)
    from metric_estimators._kernels.edges import edge_id
    assert edge_id(0, 1, 4) == 0
    stats = edge_id.stats
    print(json.dumps({"cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
                      "misses": sum(stats.cache_misses.values()),
                      "hits": sum(stats.cache_hits.values())}))
"""


def test_read_only_install_compiles_once_per_user(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(ROOT)}
    first = json.loads(_run(_READ_ONLY_CODE, env).splitlines()[-1])
    expected = tmp_path / "xdg" / "metric_estimators" / "numba"
    assert first["cache_dir"] is not None
    assert Path(first["cache_dir"]).parent == expected
    assert first["misses"] == 1
    assert any(Path(first["cache_dir"]).rglob("edges.edge_id-*.nbi"))
    second = json.loads(_run(_READ_ONLY_CODE, env).splitlines()[-1])
    assert second["cache_dir"] == first["cache_dir"]
    assert second["misses"] == 0 and second["hits"] == 1


# ------------------------------------------------------------------ stale caches


def test_clear_if_stale_removes_only_our_kernels(tmp_path):
    ours = ["edges.edge_id-35.py311.nbi", "edges.edge_id-35.py311.1.nbc"]
    other = ["somebody.f-3.py311.nbi", "notes.txt"]
    for name in ours + other:
        (tmp_path / name).write_text("x")
    assert _compilation._clear_if_stale(tmp_path, "stamp-1") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        other + [_compilation.STAMP_FILE])
    for name in ours:
        (tmp_path / name).write_text("x")
    assert _compilation._clear_if_stale(tmp_path, "stamp-1") == 0  # fresh: kept
    assert _compilation._clear_if_stale(tmp_path, "stamp-2") == 2  # upgraded


_STALE_CODE = """
    import json
    import numpy as np
    from metric_estimators._kernels.triangle_oracle import _collect_triangles
    ce, ptr, path = _collect_triangles(3, np.array([-1, 1, -1], dtype=np.int32))
    stats = _collect_triangles.stats
    print(json.dumps({"path": path.tolist(),
                      "misses": sum(stats.cache_misses.values()),
                      "hits": sum(stats.cache_hits.values())}))
"""


def test_upgrade_of_a_called_kernel_recompiles_its_callers(tmp_path):
    # _collect_triangles (triangle_oracle.py) calls edge_id (edges.py): numba's
    # own stamp covers only the caller's file, ours every kernel file
    pkg = tmp_path / "copy"
    shutil.copytree(ROOT / "metric_estimators", pkg / "metric_estimators",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(pkg)}
    first = json.loads(_run(_STALE_CODE, env, cwd=pkg).splitlines()[-1])
    assert first["misses"] == 1
    again = json.loads(_run(_STALE_CODE, env, cwd=pkg).splitlines()[-1])
    assert again == {**first, "misses": 0, "hits": 1}
    # the "upgrade": edge_id changes, the caller's file does not
    edges = pkg / "metric_estimators" / "_kernels" / "edges.py"
    text = edges.read_text()
    edges.write_text(text + "\n# upgraded\n")
    after = json.loads(_run(_STALE_CODE, env, cwd=pkg).splitlines()[-1])
    assert after["misses"] == 1 and after["hits"] == 0
    assert after["path"] == first["path"]
