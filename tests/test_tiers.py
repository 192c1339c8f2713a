"""Tiered kernels: the twins at once, a background compilation when a family is hot, the kernels after.

The rule (:func:`metric_estimators._backend.choose` in ``auto`` mode) is
tested with the cache's state and the background launcher replaced by
stand-ins, so that each branch is reached on purpose; the launcher
(:mod:`metric_estimators._background`) is tested with a stand-in child; and
one slow end-to-end test fits LMNN repeatedly in a fresh process on an
empty cache until the fits switch to the compiled kernels by themselves.
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from metric_estimators import LMNN, _backend, _background, _compilation


@pytest.fixture
def auto(monkeypatch):
    """``auto`` mode, and a record of the background compilations asked for (none run)."""
    asked = []

    def start(family, parallel=False):
        asked.append((family, parallel))
        return _background.enabled()

    monkeypatch.setattr(_background, "start", start)
    monkeypatch.setattr(_background, "compiling", lambda family, parallel=False: False)
    with _backend.use("auto"):
        yield asked


def _cache(monkeypatch, ready, loaded=False):
    monkeypatch.setattr(_compilation, "kernels_ready", lambda names: ready)
    monkeypatch.setattr(_compilation, "kernels_loaded", lambda names: loaded)


# ------------------------------------------------------------------------ the rule


def test_cold_fit_within_limits_runs_on_twins_and_starts_one_compilation(auto, monkeypatch):
    _cache(monkeypatch, ready=False)
    assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMPY
    assert auto == [("lmnn", False)]
    assert "background" in _backend.last_choice["lmnn"][1]


def test_tiny_cold_fit_runs_on_twins_and_starts_nothing(auto, monkeypatch):
    _cache(monkeypatch, ready=False)
    assert _backend.is_tiny("lmnn", 150, 4)
    assert _backend.choose("lmnn", 150, 4) is _backend.NUMPY
    assert auto == []


def test_tiny_fit_on_a_warm_installation_stays_on_twins_until_kernels_are_loaded(
        auto, monkeypatch):
    _cache(monkeypatch, ready=True, loaded=False)
    assert _backend.choose("lmnn", 150, 4) is _backend.NUMPY
    _cache(monkeypatch, ready=True, loaded=True)
    assert _backend.choose("lmnn", 150, 4) is _backend.NUMBA
    assert auto == []


def test_warm_fit_that_is_not_tiny_runs_on_kernels(auto, monkeypatch):
    _cache(monkeypatch, ready=True, loaded=False)
    assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMBA
    assert auto == []


def test_compilation_under_way_keeps_the_fit_on_twins(auto, monkeypatch):
    _cache(monkeypatch, ready=True)
    monkeypatch.setattr(_background, "compiling", lambda family, parallel=False: True)
    assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMPY


def test_above_the_limit_the_fit_waits_for_the_background_compilation(auto, monkeypatch):
    state = {"ready": False}
    monkeypatch.setattr(_compilation, "kernels_ready", lambda names: state["ready"])
    waited = []

    def wait(family, ready, parallel=False, **kw):
        waited.append(family)
        state["ready"] = True
        return ready()

    monkeypatch.setattr(_background, "wait", wait)
    assert _backend.choose("correlation_clustering", 150) is _backend.NUMBA
    assert waited == ["correlation_clustering"]
    # 150 nodes call the parallel triangle oracle: that size class is compiled
    assert auto == [("correlation_clustering", True)]


def test_background_off_keeps_the_former_rule(auto, monkeypatch):
    _cache(monkeypatch, ready=False)
    old = _background.enable(False)
    try:
        assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMPY
        assert "off" in _backend.last_choice["lmnn"][1]
        # above the limit: compiled in the foreground, nothing waited for
        monkeypatch.setattr(_background, "wait", lambda *a, **k: pytest.fail("waited"))
        assert _backend.choose("lmnn", 5_000, 64) is _backend.NUMBA
    finally:
        _background.enable(old)


def test_pinned_modes_ignore_the_cache(auto, monkeypatch):
    _cache(monkeypatch, ready=False)
    with _backend.use("numba"):
        assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMBA
    with _backend.use("numpy"):
        assert _backend.choose("lmnn", 100_000, 64) is _backend.NUMPY
    assert auto == []


def test_needed_kernels_add_the_parallel_ones_from_their_size():
    from metric_estimators._kernels import _constants

    first = _constants.TRIANGLE_PARALLEL_MIN_NODES
    small = _backend.needed_kernels("cycles", first - 1)
    large = _backend.needed_kernels("cycles", first)
    assert set(small) == set(_backend.FAMILIES["cycles"].kernels)
    assert "triangle_oracle.triangle_argmin" in set(large) - set(small)
    # a family without parallel kernels needs the same list at every size
    assert _backend.needed_kernels("lmnn", 10, 2) == _backend.needed_kernels("lmnn", 10**6, 2)


def test_every_family_declares_consistent_sizes():
    for name, family in _backend.FAMILIES.items():
        assert len(family.limits) == len(family.size.split(",")), name
        if family.tiny:
            assert len(family.tiny) == len(family.limits), name
            assert all(t <= lim for t, lim in zip(family.tiny, family.limits)), name
        for first, kernels in family.parallel:
            assert first > 0 and kernels, name


def test_verbose_fit_says_which_tier_it_runs_on(capsys):
    X = np.random.RandomState(0).randn(40, 3)
    y = np.repeat([0, 1], 20)
    LMNN(verbose=1, max_iter=50).fit(X, y)
    out = capsys.readouterr().out
    assert "[LMNN] runs on the numpy twins" in out


# ----------------------------------------------------------- the background launcher


def _stand_in(monkeypatch, seconds):
    """Background children that sleep ``seconds`` and release their lock, instead of compiling."""
    def command(family, parallel, path):
        code = (f"import os, time; time.sleep({seconds}); "
                f"os.unlink({str(path)!r})")
        return [sys.executable, "-c", code]

    monkeypatch.setattr(_background, "_command", command)
    monkeypatch.setattr(_background, "_asked", set())


def test_start_launches_once_and_the_lock_says_compiling(monkeypatch, tmp_path):
    monkeypatch.setattr(_background, "_directory", lambda: tmp_path)
    _stand_in(monkeypatch, 1.0)
    before = len(_background.launched)
    assert _background.start("lmnn")
    assert _background.compiling("lmnn")
    assert not _background.compiling("lmnn", parallel=True)
    # asked again by the same process: nothing new is launched
    assert _background.start("lmnn")
    assert len(_background.launched) == before + 1
    assert _background.wait("lmnn", lambda: True, timeout=30)
    assert not _background.compiling("lmnn")


def test_a_held_lock_stops_a_second_launch_and_a_dead_one_does_not(monkeypatch, tmp_path):
    monkeypatch.setattr(_background, "_directory", lambda: tmp_path)
    _stand_in(monkeypatch, 0.0)
    lock = _background.lock_path("scml", directory=tmp_path)
    # held by a live process (this one): another process's compilation
    lock.write_text(f"{os.getpid()} {os.getpid()}\n")
    before = len(_background.launched)
    assert _background.start("scml")  # under way elsewhere
    assert len(_background.launched) == before
    # a lock whose process is gone is stale: replaced, and a child launched
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock.write_text(f"{dead.pid} {dead.pid}\n")
    monkeypatch.setattr(_background, "_asked", set())
    assert _background.start("scml")
    assert len(_background.launched) == before + 1
    assert _background.wait("scml", lambda: True, timeout=30)


def test_switched_off_launches_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(_background, "_directory", lambda: tmp_path)
    _stand_in(monkeypatch, 0.0)
    old = _background.enable(False)
    try:
        assert not _background.start("mlkr")
        assert not list(tmp_path.iterdir())
    finally:
        _background.enable(old)


def test_the_environment_variable_switches_it_off():
    code = "from metric_estimators import _background; print(_background.enabled())"
    for value, expected in (("0", "False"), ("off", "False"), ("1", "True")):
        env = dict(os.environ, **{_background.VARIABLE: value})
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        assert out == expected, value


def test_warmup_rejects_an_unknown_family():
    from metric_estimators.warmup import warm_up

    with pytest.raises(ValueError, match="unknown kernel family nope"):
        warm_up(verbose=False, families=["nope"])


# ------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_repeated_fits_switch_to_the_kernels_by_themselves(tmp_path):
    """A fresh process on an empty cache: the first LMNN fit on the twins, later ones compiled."""
    code = textwrap.dedent("""
        import json, time
        from sklearn.datasets import load_digits
        from sklearn.preprocessing import StandardScaler
        from metric_estimators import LMNN, _backend, _background
        X, y = load_digits(return_X_y=True)
        X = StandardScaler().fit_transform(X)[:1000]
        y = y[:1000]
        paths, start = [], time.time()
        while time.time() - start < 240:
            LMNN(max_iter=20).fit(X, y)
            paths.append(_backend.last_choice["lmnn"][0])
            if paths[-1] == "numba":
                break
        print(json.dumps({"paths": paths, "launched": len(_background.launched)}))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env[_backend.VARIABLE] = "auto"
    env.pop(_background.VARIABLE, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, timeout=600).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["paths"][0] == "numpy"
    assert result["paths"][-1] == "numba"
    assert result["launched"] == 1
    # the compilation released its lock
    deadline = time.time() + 60
    while list(tmp_path.rglob("*.lock")) and time.time() < deadline:
        time.sleep(0.2)
    assert not list(tmp_path.rglob("*.lock"))


def test_every_listed_kernel_exists():
    """A misspelt name would make its family look cold for ever (and compile it again and again)."""
    import importlib

    for name, family in _backend.FAMILIES.items():
        listed = list(family.kernels) + [k for _, ks in family.parallel for k in ks]
        for kernel in listed:
            module, function = kernel.split(".")
            mod = importlib.import_module(f"metric_estimators._kernels.{module}")
            assert hasattr(getattr(mod, function, None), "py_func"), (name, kernel)
