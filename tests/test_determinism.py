"""Determinism and robustness of every public estimator.

* same data, same ``random_state``: bit-identical results, also with a
  different numba thread count (the numba kernels with ``parallel=True``
  must not depend on the number of threads).  The registry's problems are
  small, so by default they run on their numpy paths (LMNN, SCML and the
  exact k-NN ranking; ITML, ITML_Supervised, ProjectAndForget,
  MetricNearness and CorrelationClustering through the Bregman engine's;
  MLKR; LODML); every such test runs on both paths, the numba one forced
  by ``conftest.numba_paths()``;
* pickle / joblib round trips keep ``transform`` identical; ``clone`` of a
  fitted estimator is unfitted;
* a numba cache directory that cannot be written (read-only install) is not
  an error;
* float32 input is fitted in float64: the result equals that of the same
  values in float64, and ``transform`` of float32 input is float32.
"""

import io
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import joblib
import numba
import numpy as np
import pytest
from conftest import (
    BY_NAME,
    learners,
    numba_paths,
    pairs_data,
    signed_graph,
    supervised_data,
)
from conftest import symmetric_dissimilarity as _dissimilarity
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from metric_estimators import (
    LMNN,
    CorrelationClustering,
    MetricNearness,
    _backend,
)

ROOT = Path(__file__).resolve().parents[1]

# The learners of a linear map, from the registry (tests/conftest.py), by
# name.  tests/fingerprint.py hashes ``_fit(name).components_`` for every
# name here and the fitted results of the matrix and graph entries, on both
# paths (compare its output before and after a refactoring).
LEARNERS = {e.name: e.make
            for e in learners("supervised", "chunks", "unsupervised", "pairs",
                              "triplets", "quadruplets")}
_xy = supervised_data
_pairs = pairs_data
_signed = signed_graph


def _fit(name, X=None, y=None):
    est = LEARNERS[name]()
    # triplets / quadruplets: fit(tuples) alone, no y
    args = BY_NAME[name].data() if X is None else (X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args)


def _points_for(name):
    X, _ = _xy()
    return X


#: the two paths of small problems: the default (numpy, below each numpy
#: path's limit) and the numba kernels forced for every size
PATHS = {"numpy": None, "numba": -1}


@pytest.fixture(params=list(PATHS))
def path(request):
    """Run the test on the numpy path (default) or with the numba kernels forced."""
    threshold = PATHS[request.param]
    if threshold is None:
        yield request.param
    else:
        with numba_paths():
            yield request.param


def test_the_paths_differ_where_they_should():
    """The registry's LMNN and SCML problems are small enough for the numpy
    path, so the two paths of the tests below are different code."""
    X, _ = _xy()
    assert _backend.within_limits("lmnn", *X.shape)
    assert _backend.choose("lmnn", *X.shape) is _backend.NUMPY
    with numba_paths():
        assert _backend.choose("lmnn", *X.shape) is _backend.NUMBA


@pytest.mark.parametrize("name", list(LEARNERS))
def test_same_random_state_bit_identical(name, path):
    a = _fit(name).components_
    b = _fit(name).components_
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", ["LMNN", "LMNN-subgradient", "ITML_Supervised",
                                  "ProjectAndForget", "SCML_Supervised", "LSML_Supervised"])
def test_bit_identical_across_numba_thread_counts(name, path):
    n_max = numba.config.NUMBA_NUM_THREADS
    if n_max < 2:
        pytest.skip("numba has a single thread here")
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _fit(name).components_
        numba.set_num_threads(n_max)
        many = _fit(name).components_
    finally:
        numba.set_num_threads(old)
    assert one.tobytes() == many.tobytes()


def test_nearness_bit_identical_across_numba_thread_counts():
    D, A = _dissimilarity(), _signed()
    n_max = numba.config.NUMBA_NUM_THREADS
    if n_max < 2:
        pytest.skip("numba has a single thread here")
    old = numba.get_num_threads()
    results = []
    try:
        for threads in (1, n_max, 1):
            numba.set_num_threads(threads)
            mn = MetricNearness(oracle="triangle").fit(D)
            sp = MetricNearness(oracle="shortest_path").fit(D)
            cc = CorrelationClustering(random_state=0).fit(A)
            results.append((mn.metric_.tobytes(), sp.metric_.tobytes(),
                            cc.lp_solution_.tobytes(), cc.labels_.tobytes()))
    finally:
        numba.set_num_threads(old)
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize("name", list(LEARNERS))
def test_pickle_joblib_round_trip_and_clone(name):
    est = _fit(name)
    X = _points_for(name)
    Z = est.transform(X)
    for loaded in (pickle.loads(pickle.dumps(est)), _joblib_round_trip(est)):
        assert loaded.transform(X).tobytes() == Z.tobytes()
        np.testing.assert_array_equal(loaded.get_mahalanobis_matrix(),
                                      est.get_mahalanobis_matrix())
    metric = pickle.loads(pickle.dumps(est.get_metric()))
    assert metric(X[0], X[1]) == est.get_metric()(X[0], X[1])
    fresh = clone(est)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    with pytest.raises(NotFittedError):
        fresh.transform(X)
    assert fresh.get_params() == est.get_params()
    check_is_fitted(est)  # the original is untouched


def test_itml_clone_keeps_preprocessor_params():
    pairs, _ = _pairs()
    est = _fit("ITML")
    fresh = clone(est)
    assert not hasattr(fresh, "threshold_")
    with pytest.raises(NotFittedError):
        fresh.predict(pairs)
    assert est.predict(pairs).tobytes() == pickle.loads(pickle.dumps(est)).predict(pairs).tobytes()


@pytest.mark.parametrize("name", [e.name for e in learners("matrix", "graph")])
def test_nearness_round_trip_and_clone(name):
    entry = BY_NAME[name]

    def make():
        return entry.make().fit(*entry.data())

    est = make()
    for loaded in (pickle.loads(pickle.dumps(est)), _joblib_round_trip(est)):
        for attr in ("metric_", "lp_solution_", "labels_"):
            if hasattr(est, attr):
                assert getattr(loaded, attr).tobytes() == getattr(est, attr).tobytes()
    fresh = clone(est)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    again = make()
    for attr in ("metric_", "lp_solution_", "labels_"):
        if hasattr(est, attr):
            assert getattr(again, attr).tobytes() == getattr(est, attr).tobytes()


def _joblib_round_trip(est):
    buf = io.BytesIO()
    joblib.dump(est, buf)
    buf.seek(0)
    return joblib.load(buf)


# -- float32 ----------------------------------------------------------------

@pytest.mark.parametrize("name", [e.name for e in learners("supervised", "chunks", "unsupervised")])
def test_float32_input_is_fitted_in_float64(name):
    X, y = _xy()
    X32 = X.astype(np.float32)
    a = _fit(name, X32, y)
    b = _fit(name, X32.astype(np.float64), y)
    assert a.components_.dtype == np.float64
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-10,
                               atol=1e-12 * np.abs(b.components_).max())
    # documented: transform keeps float32 input in float32
    Z32 = a.transform(X32)
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, b.transform(X32.astype(np.float64)),
                               rtol=1e-5, atol=1e-5 * np.abs(Z32).max())
    assert a.transform(X).dtype == np.float64


def test_float32_pairs_and_matrices():
    pairs, y = _pairs()
    p32 = pairs.astype(np.float32)
    a = _fit("ITML", p32, y)
    b = _fit("ITML", p32.astype(np.float64), y)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-10, atol=1e-12)
    D = _dissimilarity().astype(np.float32)
    m32 = MetricNearness().fit(D).metric_
    m64 = MetricNearness().fit(D.astype(np.float64)).metric_
    assert m32.dtype == np.float64
    assert m32.tobytes() == m64.tobytes()


# -- numba cache that cannot be written --------------------------------------

_SCRIPT = textwrap.dedent("""
    import warnings
    warnings.simplefilter("error")          # a cache problem must not even warn
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import numpy as np
    import metric_estimators
    import sys
    from metric_estimators import LMNN, MetricNearness
    from metric_estimators import _backend
    print(metric_estimators.__file__)
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3); y = np.arange(40) % 2
    with _backend.use("numba"):  # 40 points: force the numba kernels
        L = LMNN(n_neighbors=3, random_state=0).fit(X, y).components_
    assert "numba" in sys.modules, "the numba path did not run"
    np.save("out_L.npy", L)
    if sys.argv[1] == "all":
        D = np.abs(rng.randn(10, 10)); D = (D + D.T) / 2; np.fill_diagonal(D, 0)
        M = MetricNearness().fit(D).metric_
        np.save("out_M.npy", M)
""")


@pytest.mark.parametrize("which", [
    "lmnn", pytest.param("all", marks=pytest.mark.slow)])
def test_unwritable_numba_cache(tmp_path, which):
    """A read-only install: the package's __pycache__ directories cannot be
    created and NUMBA_CACHE_DIR points below a regular file (so that even
    root cannot create it).  Numba must fall back to compiling in memory,
    with the same results as the normal install."""
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    site = tmp_path / "site"
    pkg = site / "metric_estimators"
    import shutil
    shutil.copytree(ROOT / "metric_estimators", pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for d in [pkg, *[p for p in pkg.rglob("*") if p.is_dir()]]:
        (d / "__pycache__").write_text("")  # a file: no cache dir possible
    env = dict(os.environ, PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1",
               NUMBA_CACHE_DIR=str(blocker / "cache"))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, which], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert str(pkg) in proc.stdout  # the read-only copy was the one imported
    assert not any(p.is_dir() for p in pkg.rglob("__pycache__"))
    # same results as this (normal) process
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.arange(40) % 2
    with _backend.use("numba"):
        L = LMNN(n_neighbors=3, random_state=0).fit(X, y).components_
    np.testing.assert_array_equal(np.load(tmp_path / "out_L.npy"), L)
    if which == "all":
        D = np.abs(rng.randn(10, 10))
        D = (D + D.T) / 2
        np.fill_diagonal(D, 0)
        M = MetricNearness().fit(D).metric_
        np.testing.assert_array_equal(np.load(tmp_path / "out_M.npy"), M)


@pytest.mark.slow
def test_numba_thread_count_in_fresh_processes(tmp_path):
    """NUMBA_NUM_THREADS=1 vs 2 in fresh processes: bit-identical results
    (LMNN's 200 points forced onto the numba path)."""
    script = textwrap.dedent("""
        import sys, numpy as np, warnings
        warnings.simplefilter("ignore")
        from metric_estimators import LMNN, ProjectAndForget, MetricNearness
        from metric_estimators import _backend
        rng = np.random.RandomState(0)
        X = rng.randn(200, 5); y = np.arange(200) % 3
        D = np.abs(rng.randn(40, 40)); D = (D + D.T) / 2; np.fill_diagonal(D, 0)
        with _backend.use("numba"):
            out = [LMNN(random_state=0).fit(X, y).components_,
                   ProjectAndForget(random_state=0).fit(X, y).components_,
                   MetricNearness().fit(D).metric_]
        np.savez(sys.argv[1], *out)
    """)
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        f = tmp_path / f"t{threads}.npz"
        subprocess.run([sys.executable, "-c", script, str(f)], env=env,
                       check=True, timeout=600)
        outs.append(np.load(f))
    for k in outs[0].files:
        assert outs[0][k].tobytes() == outs[1][k].tobytes()
