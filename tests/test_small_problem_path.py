"""Which path a small problem takes: numpy on a cold cache, the kernels once they are compiled.

:func:`metric_estimators._backend.choose` (``"auto"`` by default) and
:func:`metric_estimators._compilation.kernels_ready`.
Fresh processes with their own ``NUMBA_CACHE_DIR`` show both states of the
cache: empty (a small fit loads no numba at all) and filled by the warm-up
command (small fits run the kernels, compiling nothing).  The lists of
kernels per family (``_backend.FAMILIES``) are checked against what the numba paths
really compile.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from metric_estimators import _backend, _compilation

ROOT = Path(__file__).resolve().parents[1]


def _run(code, cache, path="auto", timeout=600):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
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


def test_cold_cache_small_fits_stay_in_numpy_then_warm_cache_runs_the_kernels(tmp_path):
    cache = tmp_path / "cache"
    # empty cache: no kernel is ready, every small fit stays in numpy
    cold = _run(_FITS, cache)
    assert not any(cold["ready"].values())
    assert not cold["dense_numba"] and not cold["dense_compiled"]
    # the same in a second process: the numpy path compiled nothing to find
    again = _run(_FITS, cache)
    assert not any(again["ready"].values()) and not again["dense_numba"]
    assert not again["compiled"]
    # the warm-up command fills the cache with every kind's kernels ...
    warm = _run("""
        import json
        from metric_estimators.warmup import warm_up
        warm_up(verbose=False)
        from metric_estimators import _backend, _compilation
        print(json.dumps({k: _compilation.kernels_ready(f.kernels)
                          for k, f in _backend.FAMILIES.items()}))
        """, cache)
    assert all(warm.values()), warm
    # ... so that a fresh process runs small fits on the kernels, compiling nothing
    hot = _run(_FITS, cache)
    assert all(hot["ready"].values()), hot["ready"]
    assert hot["dense_numba"] and not hot["compiled"]
    for kind, value in hot["results"].items():
        assert value == pytest.approx(cold["results"][kind], rel=1e-4), kind
    # the explicit override keeps the numpy path on the warm cache
    pinned = _run(_FITS, cache, path="numpy")
    assert not pinned["dense_numba"]
    assert pinned["results"] == cold["results"]


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
