"""The one backend rule, the options without a twin, and every fit on both paths.

:mod:`metric_estimators._backend` chooses, once per fit, the numba kernels or
their numpy twins (:mod:`metric_estimators._kernels.numpy`; each twin
against its kernel: ``tests/test_twins.py``).  Here:

* the rule: the modes, the families' limits and evidence, the cache check
  (:func:`~metric_estimators._compilation.kernels_ready`) and the lists of
  kernels per family against what the numba paths really compile;
* the tiers: a cold fit runs on the twins and starts a background
  compilation of its family (:mod:`metric_estimators._background`, once per
  machine), a tiny one stays on the twins until the kernels are loaded, a
  fit above the limits waits for the compilation;
* the options without a twin (:data:`~metric_estimators._backend.NO_TWIN`),
  and the same algorithm on both paths where a twin exists;
* fresh processes with their own ``NUMBA_CACHE_DIR``: a first small fit on
  an empty cache imports no numba; after the warm-up command the same fits
  run the kernels, compiling nothing;
* the contract a user relies on: the two paths give the same solution to
  the solver's tolerance.  :func:`test_same_result_on_both_paths` fits
  every entry of the registry (``conftest.REGISTRY``) that asks the backend
  once on each path, checks that the two runs took different paths, and
  compares what they learned; the estimator tests below compare fits on
  other data (scales, weights, options) with the tolerances of their
  solvers.
"""

import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import REGISTRY, learner_params
from fresh_process import assert_no_numba
from scipy import sparse
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    ITML,
    LMNN,
    LODML,
    MLKR,
    CorrelationClustering,
    ITML_Supervised,
    LSML_Supervised,
    MetricNearness,
    ProjectAndForget,
    SCML_Supervised,
    _backend,
    _background,
    _compilation,
)
from metric_estimators._kernels.numpy import shortest_paths as np_sp
from metric_estimators._problems.correlation_clustering import clustering_cost
from metric_estimators.ranking import make_ordinal
from metric_estimators.solvers.cc_rounding import round_pivots
from metric_estimators.solvers.oracles import (
    DenseShortestPathOracle,
    DenseTriangleOracle,
    SparseShortestPathOracle,
)

ROOT = Path(__file__).resolve().parents[1]
NUMBA, NUMPY = _backend.NUMBA, _backend.NUMPY


# ---------------------------------------------------------------------------
# the rule


def test_modes_and_their_validation(monkeypatch):
    old = _backend.mode()
    try:
        assert _backend.mode("numba") == old
        assert _backend.choose("cycles", 10) is _backend.NUMBA
        _backend.mode("numpy")
        # forced twins: every size
        assert _backend.choose("cycles", 10 ** 9) is _backend.NUMPY
        with pytest.raises(ValueError, match="mode must be one of"):
            _backend.mode("fastest")
        with _backend.use("numba"):
            assert _backend.mode() == "numba"
        assert _backend.mode() == "numpy"
        # auto, background compilation off: the twins within the limits
        # while a kernel is not compiled, the kernels above them
        _backend.mode("auto")
        monkeypatch.setattr(_background, "enabled", lambda: False)
        monkeypatch.setattr(_background, "compiling", lambda family, parallel=False: False)
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: False)
        for family, spec in _backend.FAMILIES.items():
            assert _backend.choose(family, *spec.limits) is _backend.NUMPY, family
            above = [lim + 1 for lim in spec.limits]
            assert _backend.choose(family, *above) is _backend.NUMBA, family
        # compiled and loaded in this process: the kernels at every size
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: True)
        monkeypatch.setattr(_compilation, "kernels_loaded", lambda names: True)
        for family, spec in _backend.FAMILIES.items():
            assert _backend.choose(family, *spec.limits) is _backend.NUMBA, family
        with pytest.raises(ValueError, match="unknown kernel family"):
            _backend.choose("no_such_family", 1)
        with pytest.raises(ValueError, match="size of"):
            _backend.choose("cycles", 1, 2)
    finally:
        _backend.mode(old)


def test_every_family_names_its_evidence():
    """Each family's sizes point at a section of the benchmarks README that maps their measurements."""
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    for family, spec in _backend.FAMILIES.items():
        path, _, section = spec.evidence.partition(", section ")
        assert (ROOT / path).is_file(), (family, spec.evidence)
        assert f"### {section.strip(chr(39))}" in readme, (family, spec.evidence)
        assert spec.kernels and all(k.count(".") == 1 for k in spec.kernels), family
        assert len(spec.size.split(",")) == len(spec.limits), family


def test_kernels_objects_pickle_as_themselves():
    import pickle

    for kernels in (_backend.NUMBA, _backend.NUMPY):
        assert pickle.loads(pickle.dumps(kernels)) is kernels
    with pytest.raises(ValueError, match="path must be"):
        _backend.Kernels("fortran")
    with pytest.raises(AttributeError):
        _backend.NUMPY._private


def test_twin_modules_mirror_their_kernels():
    """Every twin module has a numba module of the same name, and each public twin
    function a kernel of the same name; no twin imports numba."""
    twins = sorted(p.stem for p in (ROOT / "metric_estimators/_kernels/numpy").glob("*.py")
                   if p.stem != "__init__")
    assert twins, "no twin modules"
    import importlib
    import inspect

    for name in twins:
        twin = importlib.import_module(f"metric_estimators._kernels.numpy.{name}")
        source = inspect.getsource(twin)
        assert "import numba" not in source and "from numba" not in source, name
        kernel_path = ROOT / "metric_estimators/_kernels" / f"{name}.py"
        assert kernel_path.is_file(), name
        kernel_source = kernel_path.read_text()
        public = [f for f, obj in vars(twin).items()
                  if inspect.isfunction(obj) and obj.__module__ == twin.__name__
                  and not f.startswith("_")]
        for function in public:
            assert f"def {function}(" in kernel_source, (name, function)


def test_a_bad_environment_value_warns_and_means_auto():
    code = """
        import json, warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            from metric_estimators import _backend
        print(json.dumps([_backend.mode(), [str(x.message) for x in w]]))
        """
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{_backend.VARIABLE: "fastest"})
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                         capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    mode, messages = json.loads(out.stdout.strip().splitlines()[-1])
    assert mode == "auto"
    assert any(_backend.VARIABLE in m for m in messages)


def test_the_limits_of_the_logdet_families():
    listed, dim = _backend.FAMILIES["logdet_listed"].limits
    pairs, pdim = _backend.FAMILIES["logdet_all_pairs"].limits
    assert _backend.within_limits("logdet_listed", listed, dim)
    assert not _backend.within_limits("logdet_listed", listed + 1, dim)
    assert not _backend.within_limits("logdet_listed", 10, dim + 1)
    # the most points whose pairs fit the limit, and one more
    n = int((1 + np.sqrt(1 + 8 * pairs)) // 2)
    assert n * (n - 1) // 2 <= pairs < n * (n + 1) // 2
    assert _backend.within_limits("logdet_all_pairs", n * (n - 1) // 2, pdim)
    assert not _backend.within_limits("logdet_all_pairs", n * (n + 1) // 2, pdim)
    # ProjectAndForget on wine (15,753 pairs in 13 dimensions) is within
    assert _backend.within_limits("logdet_all_pairs", 15_753, 13)


def test_the_fit_asks_once_with_its_family_and_size(monkeypatch):
    calls = []
    real = _backend.choose

    def spy(family, *size):
        kernels = real(family, *size)
        calls.append((family, size, kernels))
        return kernels

    monkeypatch.setattr(_backend, "choose", spy)
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ITML_Supervised(random_state=0).fit(X, y)
        ProjectAndForget(random_state=0, max_iter=3).fit(X[::2], y[::2])
    # one call per fit: ITML's listed pairs (as many as its constraints) in
    # 4 dimensions, then every labelled pair of ProjectAndForget's 75 points
    assert [c[0] for c in calls] == ["logdet_listed", "logdet_all_pairs"]
    assert calls[0][1][0] > 0 and calls[0][1][1] == 4
    assert calls[1][1] == (75 * 74 // 2, 4)
    assert all(c[2] is _backend.NUMPY for c in calls)   # the tests' mode


def test_kernels_ready_reads_the_cache_directory(tmp_path, monkeypatch):
    """An index file per kernel and the current stamp: ready; else not."""
    monkeypatch.setattr(_compilation, "expected_cache_path", lambda: tmp_path)
    names = ("bregman.logdet_sweep", "edges.no_such_kernel_here")
    assert not _compilation.kernels_ready(names)            # nothing there
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    for name in names:
        (tmp_path / f"{name}-12.{tag}.nbi").write_bytes(b"")
    assert not _compilation.kernels_ready(names)            # no stamp
    (tmp_path / _compilation.STAMP_FILE).write_text("stale")
    assert not _compilation.kernels_ready(names)            # stale stamp
    (tmp_path / _compilation.STAMP_FILE).write_text(_compilation.sources_stamp())
    assert _compilation.kernels_ready(names)
    (tmp_path / f"{names[1]}-12.{tag}.nbi").unlink()
    assert not _compilation.kernels_ready(names)
    # compiled in this process counts without any file
    from metric_estimators._kernels import edges

    edges.edge_id(np.int64(0), np.int64(1), np.int64(3))
    assert _compilation.kernels_ready(("edges.edge_id",))


# ---------------------------------------------------------------------------
# tiers: the twins at once, a background compilation when a family is hot,
# the kernels after (each branch with stand-ins for the cache and the
# launcher; the launcher with a stand-in child; one slow end-to-end run)


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
    monkeypatch.setattr(_backend, "_tiny_fits", {})
    _cache(monkeypatch, ready=False)
    assert _backend.is_tiny("lmnn", 150, 4)
    assert _backend.choose("lmnn", 150, 4) is _backend.NUMPY
    assert auto == []


def test_tiny_fit_on_a_warm_installation_stays_on_twins_until_kernels_are_loaded(
        auto, monkeypatch):
    monkeypatch.setattr(_backend, "_tiny_fits", {})
    _cache(monkeypatch, ready=True, loaded=False)
    assert _backend.choose("lmnn", 150, 4) is _backend.NUMPY
    _cache(monkeypatch, ready=True, loaded=True)
    assert _backend.choose("lmnn", 150, 4) is _backend.NUMBA
    assert auto == []


def test_repeated_tiny_fits_make_the_family_hot(auto, monkeypatch):
    monkeypatch.setattr(_backend, "_tiny_fits", {})
    _cache(monkeypatch, ready=True, loaded=False)
    paths = [_backend.choose("lmnn", 150, 4) for _ in range(_backend.HOT_FITS + 2)]
    assert paths[:_backend.HOT_FITS] == [_backend.NUMPY] * _backend.HOT_FITS
    assert paths[_backend.HOT_FITS:] == [_backend.NUMBA] * 2
    # cold: the hot family's next tiny fit starts its compilation
    monkeypatch.setattr(_backend, "_tiny_fits", {})
    _cache(monkeypatch, ready=False)
    for _ in range(_backend.HOT_FITS + 1):
        assert _backend.choose("lmnn", 150, 4) is _backend.NUMPY
    assert auto == [("lmnn", False)]


def test_warm_fit_that_is_not_tiny_runs_on_kernels(auto, monkeypatch):
    _cache(monkeypatch, ready=True, loaded=False)
    assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMBA
    assert auto == []


def test_a_fit_switches_once_its_kernels_are_in_while_the_compilation_goes_on(
        auto, monkeypatch):
    monkeypatch.setattr(_background, "compiling", lambda family, parallel=False: True)
    _cache(monkeypatch, ready=False)
    assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMPY
    _cache(monkeypatch, ready=True)
    assert _backend.choose("lmnn", 1_437, 64) is _backend.NUMBA


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


# ---------------------------------------------------------------------------
# options without a twin; the same algorithm on both paths where one exists


def test_every_option_without_twin_names_its_family_and_reason():
    for (family, option), reason in _backend.NO_TWIN.items():
        assert family in _backend.FAMILIES, (family, option)
        assert reason and isinstance(reason, str), (family, option)


@pytest.mark.parametrize("mode", _backend.MODES)
def test_an_option_without_twin_runs_on_numba_in_every_mode(mode, monkeypatch):
    # forced modes: whatever the cache holds; auto: once the kernels are
    # compiled (before, the tier rule compiles them: tests/test_tiers.py)
    monkeypatch.setattr(_compilation, "kernels_ready", lambda names: mode == "auto")
    with _backend.use(mode):
        for (family, option) in _backend.NO_TWIN:
            small = [1] * len(_backend.FAMILIES[family].limits)
            assert _backend.choose_for(family, (option,), *small) is NUMBA
        # options with a twin: choose's answer
        assert (_backend.choose_for("cycles", ("oracle='triangle'",), 10)
                is _backend.choose("cycles", 10))
    with pytest.raises(KeyError):
        _backend.check_twin(NUMPY, "cycles", "no such option")


def test_solvers_given_the_twins_for_an_option_without_twin_refuse_them():
    with pytest.raises(ValueError, match="no numpy twin"):
        SparseShortestPathOracle(3, [0], [1], search="full", kernels=NUMPY)
    SparseShortestPathOracle(3, [0], [1], search="full", kernels=NUMBA)
    for search in ("bounded", "components"):                # twins
        SparseShortestPathOracle(3, [0], [1], search=search, kernels=NUMPY)
    with pytest.raises(ValueError, match="no numpy twin"):
        DenseShortestPathOracle(5, kernels=NUMPY)
    with pytest.raises(ValueError, match="no numpy twin"):
        DenseTriangleOracle(5, apexes=3, kernels=NUMPY)
    DenseTriangleOracle(5, kernels=NUMPY)                  # one apex: a twin


@pytest.mark.parametrize("options, sparse_D", [
    (dict(oracle="shortest_path"), False),
    (dict(triangles_per_edge=3), False),
    ({}, True),
])
def test_metric_nearness_options_without_twin_run_on_numba(monkeypatch, options,
                                                           sparse_D):
    """Asked by the fit, the backend answers the kernels whatever the mode."""
    calls = []
    real = _backend.choose_for

    def spy(family, opts, *size):
        kernels = real(family, opts, *size)
        calls.append((family, tuple(opts), kernels))
        return kernels

    monkeypatch.setattr(_backend, "choose_for", spy)
    D = _noisy_distances(12)
    if sparse_D:
        keep = np.triu(np.random.RandomState(0).rand(12, 12) < 0.5, 1)
        D = sparse.csr_matrix(np.where(keep | keep.T, D, 0.0))
    with warnings.catch_warnings(), _backend.use("numpy"):
        warnings.simplefilter("ignore")
        MetricNearness(**options).fit(D)
    assert len(calls) == 1 and calls[0][2] is NUMBA, calls
    assert any((family, o) in _backend.NO_TWIN for family, opts, _ in calls
               for o in opts)


def test_sparse_correlation_clustering_searches_by_components_on_both_paths(monkeypatch):
    """The LP's oracle is the same algorithm on the twins and on the kernels."""
    import metric_estimators.correlation_clustering as ccmod

    searches = []
    real = ccmod.SparseShortestPathOracle

    def spy(*args, **kw):
        searches.append((kw["kernels"], kw["search"]))
        return real(*args, **kw)

    monkeypatch.setattr(ccmod, "SparseShortestPathOracle", spy)
    A = _sparse_signed(40)
    for path in ("numpy", "numba"):
        with warnings.catch_warnings(), _backend.use(path):
            warnings.simplefilter("ignore")
            CorrelationClustering(random_state=0, max_iter=2).fit(A)
    assert searches == [(NUMPY, "components"), (NUMBA, "components")]


# ---------------------------------------------------------------------------
# fresh processes: an empty numba cache, then a warm one


def _run(code, cache, path="auto", timeout=600):
    """``code`` in a fresh process on the numba cache ``cache``, in mode ``path``.

    Nothing compiles in the background there (a compilation would outlive
    the test, and these tests are about the process itself).  Returns the
    JSON value of the last line the process prints.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               METRIC_ESTIMATORS_BACKGROUND_COMPILE="0")
    env[_backend.VARIABLE] = path
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                         capture_output=True, text=True, env=env, timeout=timeout,
                         cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# the small problems of both scripts: iris, distances, a signed graph (dense and sparse)
_DATA = '''
from sklearn.datasets import load_iris
X, y = load_iris(return_X_y=True)
rng = np.random.RandomState(0)
P = rng.rand(30, 2)
D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1)) + 0.05
np.fill_diagonal(D, 0.0)
g = rng.randint(0, 3, 30)
A = np.where(g[:, None] == g[None], 1.0, -1.0)
A = np.triu(np.where(rng.rand(30, 30) < 0.1, -A, A), 1)
A = A + A.T
keep = np.triu(rng.rand(30, 30) < 0.3, 1)
S = sparse.csr_matrix(np.where(keep | keep.T, A, 0.0))
'''


def test_a_first_small_fit_on_an_empty_cache_does_not_import_numba(tmp_path):
    """A fresh process on an empty numba cache: the first small fit of every
    family runs on the twins and imports no numba at all (nor any numba
    kernel module)."""
    code = r'''
import json, sys, warnings
import numpy as np
from scipy import sparse
warnings.simplefilter("ignore")
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler
import metric_estimators as me
from metric_estimators.constraints import knn_triplets
from metric_estimators.correlation_clustering import correlation_clustering_cost
from metric_estimators.ranking import make_ordinal
''' + _DATA + r'''
Xw, yw = load_wine(return_X_y=True)
Xw = StandardScaler().fit_transform(Xw)
Xo, yo = make_ordinal(n_samples=100, n_informative=3, n_noise=2, n_levels=4,
                      random_state=0)
W = np.ones((30, 30)) + np.eye(30)
fits = [
    # wine: every pair (15,753) is within the listed-pairs limit; on breast
    # cancer the default's 50,000 drawn pairs are above it
    lambda: me.ITML_Supervised(random_state=0).fit(Xw, yw),
    lambda: me.ProjectAndForget(random_state=0).fit(Xw, yw),
    lambda: me.MetricNearness().fit(D),
    lambda: me.MetricNearness(divergence="kl").fit(D + 1 - np.eye(30)),
    lambda: me.MetricNearness().fit(D, sample_weight=W),
    lambda: me.CorrelationClustering(random_state=0).fit(A),
    lambda: me.CorrelationClustering(random_state=0, max_iter=3).fit(S),
    lambda: correlation_clustering_cost(S, np.zeros(30, int)),
    lambda: me.LMNN(random_state=0).fit(X, y).transform(X),
    lambda: me.LMNN(solver="subgradient", random_state=0, max_iter=5).fit(X, y),
    lambda: me.MLKR(random_state=0, max_iter=20).fit(X, y + 0.5),
    lambda: me.SCML_Supervised(random_state=0, max_iter=300, output_iter=100).fit(Xw, yw),
    lambda: me.LSML_Supervised(random_state=0).fit(X, y),
    lambda: me.LODML(random_state=0).fit(Xo, yo),
    lambda: me.OMDML().fit(Xo, yo),
    lambda: me.NCA(random_state=0, max_iter=20).fit(X, y),
    lambda: knn_triplets(X, y),
]
for fit in fits:
    fit()
print(json.dumps(sorted(sys.modules)))
'''
    mods = set(_run(code, tmp_path / "cache"))
    assert {"metric_estimators.itml", "metric_estimators.project_and_forget",
            "metric_estimators.metric_nearness", "metric_estimators.correlation_clustering",
            "metric_estimators.lmnn", "metric_estimators.mlkr", "metric_estimators.scml",
            "metric_estimators.lsml", "metric_estimators.ordinal", "metric_estimators.nca",
            "metric_estimators._kernels.numpy.sparse_graph",
            "metric_estimators._kernels.numpy.cycle_projections",
            "metric_estimators._kernels.numpy.nca"} <= mods
    assert_no_numba(mods)


# small fits of every kind, and which path each took
_FITS = r'''
import json, logging, sys, warnings
import numpy as np
from scipy import sparse
warnings.simplefilter("ignore")
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger("metric_estimators").addHandler(Keep())
logging.getLogger("metric_estimators").setLevel(logging.INFO)
import metric_estimators as me
from metric_estimators import _backend, _compilation
''' + _DATA + r'''fits = {
    "logdet_listed": lambda: me.ITML_Supervised(random_state=0).fit(X, y),
    "logdet_all_pairs": lambda: me.ProjectAndForget(random_state=0).fit(X[::3], y[::3]),
    "cycles": lambda: me.MetricNearness().fit(D),
    "correlation_clustering": lambda: me.CorrelationClustering(random_state=0).fit(A),
    "sparse_correlation_clustering":
        lambda: me.CorrelationClustering(random_state=0).fit(S),
}
ready = {k: _compilation.kernels_ready(_backend.FAMILIES[k].kernels) for k in fits}
results = {}
for kind, fit in fits.items():
    if kind == "sparse_correlation_clustering":
        # the dense kinds first: do they load numba at all?
        dense_numba = "numba" in sys.modules
        dense_compiled = any("compiling" in r for r in records)
    est = fit()
    for attr in ("components_", "metric_", "lp_solution_"):
        if hasattr(est, attr):
            value = getattr(est, attr)
            value = value.toarray() if hasattr(value, "toarray") else value
            results[kind] = float(np.abs(value).sum())
print(json.dumps(dict(ready=ready, dense_numba=dense_numba,
                      dense_compiled=dense_compiled,
                      compiled=any("compiling" in r for r in records),
                      results=results)))
'''


def test_a_warm_cache_compiles_nothing_and_agrees_with_the_twins(tmp_path):
    """After the warm-up command every family's kernels are ready, and a
    fresh process fits the small problems compiling nothing, with the
    twins' results to the tolerance; the environment variable keeps the
    twins (no numba at all)."""
    cache = tmp_path / "cache"
    # compiles every family (their serial kernels, as a background
    # compilation of each would): a minute of CPU, more on a busy machine
    warm = _run("""
        import json
        from metric_estimators import _backend, _compilation
        from metric_estimators.warmup import warm_up
        warm_up(verbose=False, families=list(_backend.FAMILIES))
        print(json.dumps({k: _compilation.kernels_ready(f.kernels)
                          for k, f in _backend.FAMILIES.items()}))
        """, cache, timeout=1800)
    assert all(warm.values()), warm
    hot = _run(_FITS, cache)
    assert all(hot["ready"].values()), hot["ready"]
    assert not hot["compiled"]
    pinned = _run(_FITS, cache, path="numpy")
    assert not pinned["dense_numba"]
    for kind, value in hot["results"].items():
        assert value == pytest.approx(pinned["results"][kind], rel=1e-4), kind


_COMPILED = r'''
import json, sys, warnings
import numpy as np
from scipy import sparse
warnings.simplefilter("ignore")
import metric_estimators as me
from metric_estimators import _backend

def compiled():
    out = set()
    for name, mod in list(sys.modules.items()):
        if name.startswith("metric_estimators._kernels."):
            for attr, obj in vars(mod).items():
                func = getattr(obj, "py_func", None)
                if func is not None and func.__module__ == name and obj.signatures:
                    out.add(name.rsplit(".", 1)[1] + "." + attr)
    return out

''' + _DATA + r'''W = rng.rand(30, 30) + 0.5
W = (W + W.T) / 2
pairs = np.stack([X[:50], X[50:100]], axis=1)
py = np.where(y[:50] == y[50:100], 1, -1)
py[:10] = 1
variants = {
    "logdet_listed": [lambda: me.ITML_Supervised(random_state=0).fit(X, y),
                      lambda: me.ITML(random_state=0).fit(pairs, py)],
    "logdet_all_pairs": [lambda: me.ProjectAndForget(random_state=0).fit(X[::2], y[::2])],
    "cycles": [lambda: me.MetricNearness().fit(D),
               lambda: me.MetricNearness().fit(D, sample_weight=W),
               lambda: me.MetricNearness(divergence="kl").fit((D + 0.1) * (1 - np.eye(30)))],
    "correlation_clustering": [
        lambda: me.CorrelationClustering(random_state=0).fit(A),
        lambda: me.CorrelationClustering(random_state=0, rounding="threshold").fit(A * W),
        # not converged: the shortest-path closure of the LP's point
        lambda: me.CorrelationClustering(random_state=0, max_iter=1).fit(A)],
    "sparse_correlation_clustering": [
        lambda: me.CorrelationClustering(random_state=0).fit(S),
        lambda: me.CorrelationClustering(random_state=0, rounding="threshold").fit(S)],
}
out = {}
for kind, fits in variants.items():
    before = compiled()
    with _backend.use("numpy"):
        for fit in fits:
            fit()
    numpy_path = compiled()
    with _backend.use("numba"):
        for fit in fits:
            fit()
    out[kind] = dict(numpy_path=sorted(numpy_path - before),
                     only_numba=sorted(compiled() - numpy_path))
print(json.dumps(out))
'''


# compiles every family's kernels in a fresh cache (about 40 s): a check of
# the lists in _backend.FAMILIES, run with the slow tests
@pytest.mark.slow
def test_kernels_of_lists_what_the_numba_paths_compile(tmp_path):
    """FAMILIES[kind].kernels is what the numba path compiles beyond the numpy path's needs."""
    got = _run(_COMPILED, tmp_path / "cache")
    for kind, family in _backend.FAMILIES.items():
        if kind not in got:
            continue
        kernels = family.kernels
        assert set(got[kind]["only_numba"]) <= set(kernels), kind
        # a kernel of the list already compiled by an earlier kind is fine
        missing = set(kernels) - set(got[kind]["only_numba"])
        earlier = {k for other in got.values() for k in other["only_numba"]
                   + other["numpy_path"]}
        assert missing <= earlier, (kind, missing)
    # small dense problems compile nothing on the numpy path
    for kind in ("logdet_listed", "logdet_all_pairs", "cycles",
                 "correlation_clustering", "sparse_correlation_clustering"):
        assert got[kind]["numpy_path"] == [], kind


# ---------------------------------------------------------------------------
# every entry of the registry that asks the backend, on both paths


def _learned(est):
    """What a fitted estimator learned, as a dict of arrays."""
    out = {}
    if hasattr(est, "components_"):
        M = est.components_.T @ est.components_
        out["M"] = M
    for attr in ("metric_", "lp_solution_"):
        if hasattr(est, attr):
            out[attr] = np.asarray(getattr(est, attr), dtype=float)
    return out


def _fit_recording_paths(entry, data, path, monkeypatch):
    """``entry`` fitted in mode ``path``, and the kernels the backend gave it."""
    given = []
    real_choose, real_for = _backend.choose, _backend.choose_for

    def choose(*args):
        kernels = real_choose(*args)
        given.append(kernels)
        return kernels

    def choose_for(*args):
        kernels = real_for(*args)
        given.append(kernels)
        return kernels

    with monkeypatch.context() as m:
        m.setattr(_backend, "choose", choose)
        m.setattr(_backend, "choose_for", choose_for)
        with warnings.catch_warnings(), _backend.use(path):
            warnings.simplefilter("ignore")
            est = entry.make().fit(*data)
    return est, given


#: the registry entries that never ask the backend (no kernel at all): the
#: both-paths test does not apply to them
NEVER_ASKS = {"MMC", "MMC-diagonal", "MMC_Supervised", "MMC_Supervised-diagonal",
              "SDML", "SDML_Supervised", "LFDA", "LFDA-orthonormalized", "RCA",
              "RCA_Supervised", "Covariance"}
#: how close the two paths must be, relative to the size of the result: the
#: iterative solvers stop within their tolerance of the solution, from
#: iterates that differ by rounding, so their results agree to about that
#: tolerance (the default tol of these solvers is 1e-5 or tighter)
RTOL = 1e-4


#: entries whose solver stops at max_iter before converging, so that the
#: rounding differences of the two paths grow along the iterates: their
#: tolerance (NCA's L-BFGS-B after 50 iterations from a random start)
LOOSER = {"NCA-random-init": 1e-3}


@pytest.mark.parametrize("entry", learner_params(where=lambda e: e.name not in NEVER_ASKS))
def test_same_result_on_both_paths(entry, monkeypatch):
    data = entry.data()
    a, given_a = _fit_recording_paths(entry, data, "numpy", monkeypatch)
    b, given_b = _fit_recording_paths(entry, data, "numba", monkeypatch)
    # the two runs took the two paths
    assert given_a and all(k is NUMPY for k in given_a), (entry.name, given_a)
    assert given_b and all(k is NUMBA for k in given_b), (entry.name, given_b)
    la, lb = _learned(a), _learned(b)
    assert la.keys() == lb.keys() and la, entry.name
    for key in la:
        scale = max(np.abs(lb[key]).max(), 1e-12)
        err = np.abs(la[key] - lb[key]).max() / scale
        assert err <= LOOSER.get(entry.name, RTOL), (entry.name, key, err)
    if hasattr(b, "labels_"):
        # the same clustering (labels up to renaming) or one of equal cost
        same = np.array_equal(a.labels_[:, None] == a.labels_[None],
                              b.labels_[:, None] == b.labels_[None])
        assert same or np.isclose(a.cost_, b.cost_), entry.name


@pytest.mark.parametrize("entry", learner_params(where=lambda e: e.name in NEVER_ASKS))
def test_the_entries_left_out_never_ask_the_backend(entry, monkeypatch):
    _, given = _fit_recording_paths(entry, entry.data(), "numpy", monkeypatch)
    assert given == [], entry.name


def test_never_asks_names_registry_entries():
    assert NEVER_ASKS <= {e.name for e in REGISTRY}


# ---------------------------------------------------------------------------
# estimators on both paths, beyond the registry


def _both_paths(make, *args, **kwargs):
    """``make()`` fitted on the twins, then on the kernels."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in ("numpy", "numba"):
            with _backend.use(path):
                out.append(make().fit(*args, **kwargs))
    return out


def _standardised(load, scale=1.0):
    X, y = load(return_X_y=True)
    return StandardScaler().fit_transform(X) * scale, y


def _same_metric(a, b, rtol):
    Ma = a.components_.T @ a.components_
    Mb = b.components_.T @ b.components_
    np.testing.assert_allclose(Ma, Mb, rtol=rtol, atol=rtol * np.abs(Mb).max())


def _noisy_distances(n, seed=0, scale=1.0):
    rng = np.random.RandomState(seed)
    P = rng.rand(n, 2)
    D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
    D = D + np.abs(rng.randn(n, n)) * 0.1
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0.0)
    return D * scale


@pytest.mark.parametrize("case", ["plain", "weighted", "kl", "tiny", "huge",
                                  "signed", "metric"])
def test_metric_nearness_same_on_both_paths(case):
    D = _noisy_distances(40, scale={"tiny": 1e-150, "huge": 1e150}.get(case, 1.0))
    kwargs, fit_kw = {}, {}
    if case == "weighted":
        W = np.random.RandomState(1).rand(40, 40) + 0.1
        fit_kw["sample_weight"] = (W + W.T) / 2
    if case == "kl":
        kwargs["divergence"] = "kl"
        D = D + 0.01 * (1 - np.eye(40))
    if case == "signed":
        D = D - 0.3 * (1 - np.eye(40))          # negative entries
    if case == "metric":
        P = np.random.RandomState(2).rand(40, 2)
        D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))  # already a metric
    a, b = _both_paths(lambda: MetricNearness(**kwargs), D, **fit_kw)
    top = np.abs(D).max()
    assert a.violation_ <= 1e-6 and b.violation_ <= 1e-6
    # the same optimum, to the tolerance (relative to max |D|)
    np.testing.assert_allclose(a.metric_, b.metric_, rtol=0, atol=1e-5 * top)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-5, abs=1e-12 * top ** 2)
    if case == "metric":
        np.testing.assert_allclose(a.metric_, D, atol=1e-12)


def _signed(n, seed=0, weighted=False, scale=1.0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 4, n)
    A = np.where(labels[:, None] == labels[None, :], 1.0, -1.0)
    A = np.where(rng.rand(n, n) < 0.1, -A, A)
    if weighted:
        A = A * (rng.rand(n, n) + 0.1) * (rng.rand(n, n) < 0.8)
    A = np.triu(A, 1)
    return (A + A.T) * scale


def _assert_same_lp(a, b):
    """Two fits of one signed graph: the same LP optimum to the solver's
    gap (each objective above the other's certified lower bound), and
    clusterings of about the same cost."""
    assert a.lp_objective_ == pytest.approx(b.lp_objective_, rel=2e-4)
    slack = 1e-9 * abs(b.lp_objective_)
    assert a.lp_objective_ >= b.lower_bound_ - slack
    assert b.lp_objective_ >= a.lower_bound_ - slack
    assert a.cost_ == pytest.approx(b.cost_, rel=0.05)


@pytest.mark.parametrize("case", ["plain", "weighted", "tiny", "huge"])
def test_correlation_clustering_same_on_both_paths(case):
    A = _signed(40, weighted=case == "weighted",
                scale={"tiny": 1e-150, "huge": 1e150}.get(case, 1.0))
    a, b = _both_paths(lambda: CorrelationClustering(random_state=0), A)
    assert a.converged_ and b.converged_
    # both stop at a relative gap of gap_tol = 1e-4: the same LP optimum to
    # that, each objective above the other path's certified lower bound
    _assert_same_lp(a, b)


def test_a_stopped_dense_fit_closes_the_iterate_on_both_paths():
    A = _signed(30, seed=2)
    a, b = _both_paths(lambda: CorrelationClustering(random_state=0, max_iter=2), A)
    for est in (a, b):
        assert not est.converged_
        # the closure is a metric: its shortest paths are itself
        X = est.lp_solution_
        D = X.copy()
        np_sp.apsp(D)
        np.testing.assert_allclose(D, X, atol=1e-12)
    np.testing.assert_allclose(a.lp_solution_, b.lp_solution_, atol=0.05)


def _sparse_signed(n, seed=0, degree=8):
    rng = np.random.RandomState(seed)
    truth = rng.randint(0, 4, n)
    keep = np.triu(rng.rand(n, n) < degree / n, 1)
    S = np.where(truth[:, None] == truth[None, :], 1.0, -1.0)
    S[rng.rand(n, n) < 0.1] *= -1
    A = sparse.csr_matrix(np.where(keep, S, 0.0))
    return A + A.T


@pytest.mark.parametrize("rounding", ["threshold", "probabilistic"])
def test_sparse_correlation_clustering_same_on_both_paths(rounding):
    # the same searches on both sides (the same bits); the twins' LP passes
    # project batches, so the LP agrees to its tolerance, the rounding on
    # the same LP solution gives the same labels
    A = _sparse_signed(150)
    a, b = _both_paths(lambda: CorrelationClustering(random_state=0,
                                                     rounding=rounding), A)
    assert a.converged_ and b.converged_
    _assert_same_lp(a, b)
    # the rounding and local search of one LP solution: the same on both
    X = b.lp_solution_
    labels = [round_pivots(X, np.random.RandomState(1), rounding, kernels=k)
              for k in (NUMPY, NUMBA)]
    np.testing.assert_array_equal(*labels)
    assert (clustering_cost(A, labels[0], kernels=NUMPY)
            == clustering_cost(A, labels[0], kernels=NUMBA))


@pytest.mark.parametrize("scale", [1.0, 1e-80, 1e80])
@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_itml_supervised_same_on_both_paths(load, scale):
    X, y = _standardised(load, scale)
    a, b = _both_paths(lambda: ITML_Supervised(random_state=0), X, y)
    assert a.n_iter_ == b.n_iter_
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    np.testing.assert_allclose(Ma, Mb, rtol=1e-9, atol=1e-9 * np.abs(Mb).max())


@pytest.mark.parametrize("gamma, n_pairs", [(1.0, 120), (10.0, 60)])
def test_itml_pairs_same_on_both_paths(gamma, n_pairs):
    X, y = _standardised(load_iris)
    rng = np.random.RandomState(0)
    i, j = rng.randint(0, 150, (2, n_pairs))
    keep = i != j
    pairs = np.stack([X[i[keep]], X[j[keep]]], axis=1)
    labels = np.where(y[i[keep]] == y[j[keep]], 1, -1)
    a, b = _both_paths(lambda: ITML(gamma=gamma, random_state=0, max_iter=3000),
                       pairs, labels)
    assert a.n_iter_ == b.n_iter_ < 3000
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    np.testing.assert_allclose(Ma, Mb, rtol=1e-8, atol=1e-8 * np.abs(Mb).max())


@pytest.mark.parametrize("data, scale", [("iris[::2]", 1.0), ("iris[::2]", 1e-80),
                                         ("wine", 1.0)])
def test_project_and_forget_same_on_both_paths(data, scale):
    X, y = _standardised(load_iris if data.startswith("iris") else load_wine, scale)
    if data == "iris[::2]":
        X, y = X[::2], y[::2]
    a, b = _both_paths(lambda: ProjectAndForget(random_state=0), X, y)
    assert a.converged_ and b.converged_
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    # the two paths may add constraints in another order: same fixed point,
    # to the solver's tolerance (relative violations and dual change 1e-3)
    np.testing.assert_allclose(Ma, Mb, rtol=0, atol=1e-3 * np.abs(Mb).max())
    assert a.loss_curve_[-1] == pytest.approx(b.loss_curve_[-1], rel=1e-3)


def test_lmnn_on_iris_same_on_both_paths():
    a, b = _both_paths(lambda: LMNN(random_state=0, max_iter=200),
                       *_standardised(load_iris))
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.target_neighbors_, b.target_neighbors_)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-9, atol=1e-10)


def test_scml_supervised_same_on_both_paths():
    from metric_estimators import SCML_Supervised

    a, b = _both_paths(lambda: SCML_Supervised(random_state=0, max_iter=2000),
                       *_standardised(load_wine))
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9)
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-9, atol=1e-12)


def test_scml_supervised_on_breast_cancer_same_on_both_paths():
    """The benchmarks' 70 % of breast cancer (398 points) is within the scml
    family's limits, and gives the same result on both paths."""
    from sklearn.model_selection import train_test_split

    def load(return_X_y):
        X, y = load_breast_cancer(return_X_y=True)
        return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)[::2]

    X, y = _standardised(load)
    assert _backend.within_limits("scml", *X.shape)
    a, b = _both_paths(lambda: SCML_Supervised(random_state=0, max_iter=2000), X, y)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9)
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-9, atol=1e-12)


def test_mlkr_same_on_both_paths():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y = y.astype(float)
    fits = []
    for path in ("numpy", "numba"):
        with warnings.catch_warnings(), _backend.use(path):
            warnings.simplefilter("ignore")
            fits.append(MLKR(random_state=0, max_iter=60).fit(X, y))
    a, b = fits
    np.testing.assert_allclose(a.loss_curve_[:20], b.loss_curve_[:20], rtol=1e-6)
    assert a.loss_curve_[-1] == pytest.approx(b.loss_curve_[-1], rel=1e-4)


def test_lmnn_with_a_class_of_exactly_k_points_same_on_both_paths():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = np.concatenate([np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:3]])
    X, y = X[keep], y[keep]                      # class 2: exactly k = 3 points
    a, b = _both_paths(lambda: LMNN(n_neighbors=3, random_state=0), X, y)
    _same_metric(a, b, 1e-4)


def test_lodml_scml_lsml_same_on_both_paths():
    X, y = make_ordinal(n_samples=120, n_informative=3, n_noise=2, n_levels=4,
                        random_state=0)
    a, b = _both_paths(lambda: LODML(random_state=0), X, y)
    assert a.n_iter_ == b.n_iter_
    _same_metric(a, b, 1e-8)
    a, b = _both_paths(lambda: SCML_Supervised(random_state=0, max_iter=2000), X, y)
    _same_metric(a, b, 1e-6)
    a, b = _both_paths(lambda: LSML_Supervised(random_state=0), X, y)
    _same_metric(a, b, 1e-6)
