"""The numpy path of the Bregman engine, MLKR and LODML against their numba kernels.

Small problems run the Bregman engine's projections and oracles
(:mod:`metric_estimators._kernels.numpy`), MLKR's element-wise pass
(:func:`metric_estimators._problems.mlkr.mlkr_block_numpy`) and LODML's
hinge (:func:`metric_estimators._problems.ordinal.triplet_hinge_numpy`) in
numpy, so that their first fit never compiles a numba kernel.  Each numpy
function must give the kernel's results (to rounding), each estimator the
same solution on both paths (to its tolerance), and a small fit must not
load numba at all.
"""

import warnings

import numpy as np
import pytest
from fresh_process import assert_no_numba, modules_after
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    LODML,
    MLKR,
    _backend,
)
from metric_estimators._kernels.mlkr import mlkr_block
from metric_estimators._kernels.ordinal import triplet_hinge
from metric_estimators._problems import mlkr as mlkr_problem
from metric_estimators._problems import ordinal as ordinal_problem
from metric_estimators.ranking import make_ordinal


def _both_paths(make, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _backend.use("numpy"):
            a = make().fit(*args)
        with _backend.use("numba"):
            b = make().fit(*args)
    return a, b


def _standardised(load, scale=1.0):
    X, y = load(return_X_y=True)
    return StandardScaler().fit_transform(X) * scale, y


@pytest.mark.parametrize("n, scale", [(60, 1.0), (200, 1.0), (90, 1e3), (90, 1e-4)])
def test_mlkr_block_matches_the_kernel(n, scale):
    rng = np.random.RandomState(n)
    Z = rng.randn(n, 3) * scale
    Z[1] = Z[0]                                 # a duplicate: distance 0
    y = rng.randn(n)
    sq = np.einsum("ij,ij->i", Z, Z)
    for start, stop in ((0, n), (n // 3, n // 3 + 17)):
        outs = []
        for block in (mlkr_problem.mlkr_block_numpy, mlkr_block):
            G = Z[start:stop] @ Z.T
            yhat, rsum = np.zeros(n), np.zeros(n)
            loss = block(G, sq, y, start, yhat, rsum, True)
            outs.append((loss, G, yhat[start:stop], rsum))
        for a, b in zip(*outs):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max())


def test_mlkr_same_on_both_paths():
    X, y = _standardised(load_wine)
    y = y.astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = MLKR(random_state=0, max_iter=60).fit(X, y)
        saved = mlkr_problem.NUMPY_MAX_SAMPLES
        mlkr_problem.NUMPY_MAX_SAMPLES = -1
        try:
            b = MLKR(random_state=0, max_iter=60).fit(X, y)
        finally:
            mlkr_problem.NUMPY_MAX_SAMPLES = saved
    np.testing.assert_allclose(a.loss_curve_[:20], b.loss_curve_[:20], rtol=1e-6)
    assert a.loss_curve_[-1] == pytest.approx(b.loss_curve_[-1], rel=1e-4)


def test_triplet_hinge_numpy_matches_the_kernel():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 3))
    ti, tj, tl = (rng.integers(0, 30, 100_000) for _ in range(3))  # several chunks
    a = ordinal_problem.triplet_hinge_numpy(Z, ti, tj, tl, 0.5)
    b = triplet_hinge(Z, ti, tj, tl, 0.5)
    assert a[0] == pytest.approx(b[0], rel=1e-12)
    assert a[1].dtype == b[1].dtype == np.uint8
    np.testing.assert_array_equal(a[1], b[1])
    empty = np.empty(0, np.int64)
    loss, active = ordinal_problem.triplet_hinge_numpy(Z, empty, empty, empty, 0.5)
    assert loss == 0.0 and active.size == 0


def test_lodml_same_on_both_paths():
    X, y = make_ordinal(n_samples=120, n_informative=3, n_noise=2, n_levels=4,
                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = LODML(random_state=0).fit(X, y)
        saved = ordinal_problem.NUMPY_MAX_TRIPLETS
        ordinal_problem.NUMPY_MAX_TRIPLETS = -1
        try:
            b = LODML(random_state=0).fit(X, y)
        finally:
            ordinal_problem.NUMPY_MAX_TRIPLETS = saved
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-8,
                               atol=1e-10 * np.abs(b.components_).max())


def test_small_fits_do_not_load_numba():
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from sklearn.datasets import load_iris\n"
        "import metric_estimators as me\n"
        "from metric_estimators.ranking import make_ordinal\n"
        "X, y = load_iris(return_X_y=True)\n"
        "me.ITML_Supervised(random_state=0).fit(X, y)\n"
        "me.ProjectAndForget(random_state=0).fit(X[::2], y[::2])\n"
        "me.MLKR(random_state=0, max_iter=20).fit(X, y + 0.5)\n"
        "Xo, yo = make_ordinal(n_samples=100, n_informative=3, n_noise=2,"
        " n_levels=4, random_state=0)\n"
        "me.LODML(random_state=0).fit(Xo, yo)\n"
    )
    mods = modules_after(code)
    assert {"metric_estimators.itml", "metric_estimators.project_and_forget",
            "metric_estimators.mlkr", "metric_estimators.ordinal"} <= mods
    assert_no_numba(mods)
