"""Grid search on a Dask cluster gives the same result as the local run.

The recipe of ``docs/dask.rst``: ``GridSearchCV`` over a ``Pipeline`` of a
metric learner and ``KNeighborsClassifier``, run under
``joblib.parallel_backend("dask")`` on a ``distributed.LocalCluster`` with two
worker processes.  Checks that

* ``best_params_`` and every cross-validation score equal the local run's,
* the fits really ran in the worker processes (the learner's kernel module
  is loaded there after the search and was not before; for numba kernels,
  they have compiled signatures there and none before the search; LMNN on
  120 points runs on the numpy path, so its evidence is the numpy module),
* the refitted best estimator agrees with the local one and survives pickling.

Needs the ``dask`` extra (``pip install -e ".[test,dask]"``; the ``test``
extra includes it).  One module-scoped cluster is shared by the tests.
"""

import os
import pickle

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.datasets import load_wine
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, ITML_Supervised, _backend

distributed = pytest.importorskip("distributed")


def _kernel_signatures(module_name):
    """Whether a kernel module is loaded in a worker and its numba signatures.

    Runs in a worker through ``Client.run``, without importing the module;
    returns ``(pid, loaded, {name: n})`` (no names for a numpy module).
    """
    import os as _os
    import sys as _sys

    mod = _sys.modules.get(module_name)
    if mod is None:
        return _os.getpid(), False, {}
    if "numba" not in _sys.modules:
        return _os.getpid(), True, {}
    from numba.core.registry import CPUDispatcher

    counts = {
        name: len(obj.signatures)
        for name, obj in vars(mod).items()
        if isinstance(obj, CPUDispatcher)
    }
    return _os.getpid(), True, counts


@pytest.fixture(scope="module")
def data():
    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(X.shape[0], 120, replace=False))
    return X[keep], y[keep]


CASES = {
    "LMNN": (
        "metric_estimators._kernels.numpy.lmnn",  # 120 points: the numpy twins
        lambda: LMNN(max_iter=30, random_state=0),
        {"ml__n_neighbors": [1, 3], "knn__n_neighbors": [1, 7]},
    ),
    "ITML_Supervised": (
        # the numba kernels forced, here and in the workers (the test
        # session pins the numpy twins)
        "metric_estimators._kernels.bregman",
        lambda: ITML_Supervised(n_constraints=1500, max_iter=50, random_state=0),
        {"ml__gamma": [0.1, 10.0], "knn__n_neighbors": [1, 7]},
    ),
}


def _search(learner, grid):
    pipe = Pipeline(
        [("scale", StandardScaler()), ("ml", learner),
         ("knn", KNeighborsClassifier())]
    )
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    return GridSearchCV(pipe, grid, cv=cv, n_jobs=-1)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_grid_search_on_dask_matches_local(client, data, name):
    module, make, grid = CASES[name]
    X, y = data
    mode = "numba" if module == "metric_estimators._kernels.bregman" else _backend.mode()

    # local run first: it also writes the numba cache the workers load from
    local = _search(make(), grid)
    with parallel_backend("sequential"), _backend.use(mode):
        local.fit(X, y)

    before = client.run(_kernel_signatures, module)
    remote = _search(make(), grid)
    worker_modes = client.run(_backend.mode, mode)
    try:
        with parallel_backend("dask"), _backend.use(mode):
            remote.fit(X, y)
    finally:
        for worker, old in worker_modes.items():
            client.run(_backend.mode, old, workers=[worker])
    after = client.run(_kernel_signatures, module)

    assert remote.best_params_ == local.best_params_
    for key in local.cv_results_:
        if key.endswith("_time"):
            continue
        a, b = local.cv_results_[key], remote.cv_results_[key]
        if key.endswith("_score") or key.startswith("rank_"):
            np.testing.assert_array_equal(b, a, err_msg=key)
        else:
            assert list(b) == list(a), key
    # the fits ran in the two worker processes: the learner's numba kernels
    # (none compiled there before this search) now have signatures there, or
    # its numpy kernel module (not loaded there before) is loaded now
    assert len(after) == 2
    assert os.getpid() not in {pid for pid, *_ in after.values()}
    if not module.startswith("metric_estimators._kernels.numpy"):
        assert any(
            sum(after[w][2].values()) > sum(before[w][2].values()) for w in after
        )
    else:
        assert not any(before[w][1] for w in before)
        assert any(after[w][1] for w in after)

    # refit on the whole data happens locally in both cases: same model
    np.testing.assert_allclose(
        remote.best_estimator_["ml"].components_,
        local.best_estimator_["ml"].components_,
        rtol=1e-10, atol=1e-12,
    )
    clone_back = pickle.loads(pickle.dumps(remote.best_estimator_))
    np.testing.assert_array_equal(clone_back.predict(X), remote.predict(X))
