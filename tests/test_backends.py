"""The one backend rule, and every estimator of the registry fitted on both paths.

:mod:`metric_estimators._backend` chooses, once per fit, the numba kernels or
their numpy twins (:mod:`metric_estimators._kernels.numpy`).  The contract a
user relies on: the two paths give the same solution to the solver's
tolerance.  :func:`test_same_result_on_both_paths` fits every entry of the
registry (``conftest.REGISTRY``) once on each path and compares what it
learned; estimators without twins must agree exactly.

Fresh processes with their own ``NUMBA_CACHE_DIR`` show both states of the
cache: empty (a fit within the limits loads no numba at all) and filled by the
warm-up command (the same fits run the kernels, compiling nothing); the lists
of kernels per family (``_backend.FAMILIES[...].kernels``) are checked
against what the numba paths really compile.
"""

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import learner_params

from metric_estimators import _backend, _compilation

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------- the rule


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
        # auto: the twins within the limits while a kernel is not compiled
        _backend.mode("auto")
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: False)
        for family, spec in _backend.FAMILIES.items():
            assert _backend.choose(family, *spec.limits) is _backend.NUMPY, family
            above = [lim + 1 for lim in spec.limits]
            assert _backend.choose(family, *above) is _backend.NUMBA, family
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: True)
        for family, spec in _backend.FAMILIES.items():
            assert _backend.choose(family, *spec.limits) is _backend.NUMBA, family
        with pytest.raises(ValueError, match="unknown kernel family"):
            _backend.choose("no_such_family", 1)
        with pytest.raises(ValueError, match="size of"):
            _backend.choose("cycles", 1, 2)
    finally:
        _backend.mode(old)


def test_every_family_names_its_evidence():
    """Each limit's measurement is a results file of the repository."""
    for family, spec in _backend.FAMILIES.items():
        assert (ROOT / spec.evidence).is_file(), (family, spec.evidence)
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


# ------------------------------------------------- every estimator, both paths


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


def _fit(entry, data, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _backend.use(path):
            return entry.make().fit(*data)


#: how close the two paths must be, relative to the size of the result: the
#: iterative solvers stop within their tolerance of the solution, from
#: iterates that differ by rounding, so their results agree to about that
#: tolerance (the default tol of these solvers is 1e-5 or tighter)
RTOL = 1e-4


@pytest.mark.parametrize("entry", learner_params())
def test_same_result_on_both_paths(entry):
    data = entry.data()
    a, b = _fit(entry, data, "numpy"), _fit(entry, data, "numba")
    la, lb = _learned(a), _learned(b)
    assert la.keys() == lb.keys() and la, entry.name
    for key in la:
        scale = max(np.abs(lb[key]).max(), 1e-12)
        err = np.abs(la[key] - lb[key]).max() / scale
        assert err <= RTOL, (entry.name, key, err)
    if hasattr(b, "labels_"):
        # the same clustering (labels up to renaming) or one of equal cost
        same = np.array_equal(a.labels_[:, None] == a.labels_[None],
                              b.labels_[:, None] == b.labels_[None])
        assert same or np.isclose(a.cost_, b.cost_), entry.name
