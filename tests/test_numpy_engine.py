"""The numpy path of the Bregman engine, MLKR and LODML against their numba kernels.

Small problems run the Bregman engine's projections and oracles
(:mod:`metric_estimators.solvers.numpy_kernels`), MLKR's element-wise pass
(:func:`metric_estimators._problems.mlkr.mlkr_block_numpy`) and LODML's
hinge (:func:`metric_estimators._problems.ordinal.triplet_hinge_numpy`) in
numpy, so that their first fit never compiles a numba kernel.  Each numpy
function must give the kernel's results (to rounding), each estimator the
same solution on both paths (to its tolerance), and a small fit must not
load numba at all.
"""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    ITML,
    LODML,
    MLKR,
    ITML_Supervised,
    ProjectAndForget,
)
from metric_estimators._kernels import bregman as nb_bregman
from metric_estimators._kernels.mlkr import mlkr_block
from metric_estimators._kernels.ordinal import triplet_hinge
from metric_estimators._problems import mlkr as mlkr_problem
from metric_estimators._problems import ordinal as ordinal_problem
from metric_estimators.ranking import make_ordinal
from metric_estimators.solvers import numpy_kernels as npk
from metric_estimators.solvers.oracles import FixedListOracle, LabelPairOracle


def _logdet_problem(seed, d=5, m=40, scale=1.0):
    rng = np.random.RandomState(seed)
    B = rng.randn(d, d)
    A = (B @ B.T + d * np.eye(d)) * scale ** -2
    V = rng.randn(m, d) * scale
    V[3] = 0.0                                  # p == 0: skipped
    delta = np.where(rng.rand(m) < 0.5, 1.0, -1.0)
    p = np.einsum("ij,jk,ik->i", V, A, V)
    xi = np.where(delta > 0, 0.5, 2.0) * np.maximum(p, 1e-3)  # all violated
    xi[3] = 1.0
    lam = np.where(rng.rand(m) < 0.3, rng.rand(m), 0.0)
    return A, V, delta, xi, lam


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("gamma", [1.0, 0.3, np.inf])
@pytest.mark.parametrize("scale", [1.0, 1e-60, 1e60])
def test_logdet_sweep_matches_the_kernel(seed, gamma, scale):
    A, V, delta, xi, lam = _logdet_problem(seed, scale=scale)
    rng = np.random.RandomState(seed)
    idx = np.concatenate((rng.permutation(V.shape[0]), [5, 5, 7])).astype(np.int64)
    states = [[A.copy(), xi.copy(), lam.copy()] for _ in range(2)]
    outs = []
    for (A_, xi_, lam_), sweep in zip(states, (npk.logdet_sweep, nb_bregman.logdet_sweep)):
        w, wn = np.empty(A.shape[0]), np.empty(A.shape[0])
        outs.append(sweep(A_, V, delta, xi_, lam_, idx, gamma, w, wn))
    (ca, va, ua), (cb, vb, ub) = outs
    # a repeated projection right after the first has theta ~ 0: whether it
    # counts as an update is decided by the last bit
    assert ub > 30 and abs(ua - ub) <= 3
    np.testing.assert_allclose([ca, va], [cb, vb], rtol=1e-9)
    for a, b in zip(states[0], states[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max())
    A_np = states[0][0]
    assert np.array_equal(A_np, A_np.T)         # exactly symmetric
    assert np.all(states[0][2] >= 0)
    out_a, out_b = np.empty(idx.size), np.empty(idx.size)
    npk.logdet_violations(A_np, V, delta, states[0][1], idx, out_a)
    nb_bregman.logdet_violations(A_np, V, delta, states[0][1], idx, out_b)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-9, atol=1e-12)


def test_logdet_sweep_of_nothing():
    A, V, delta, xi, lam = _logdet_problem(0)
    assert npk.logdet_sweep(A, V, delta, xi, lam, np.empty(0, np.int64), 1.0) == (0.0, 0.0, 0)


@pytest.mark.parametrize("cap", [3, 1000])
@pytest.mark.parametrize("with_skip", [False, True])
def test_label_pair_scan_matches_the_kernel(cap, with_skip):
    rng = np.random.RandomState(cap)
    n = 70
    X = rng.randn(n, 3)
    X[5] = X[4]                                 # identical points
    y = rng.randint(0, 3, n)
    oracle = LabelPairOracle(X, y, 2.0, 6.0, block_size=16)
    skip = np.empty(0, np.int64)
    if with_skip:
        skip = np.unique(rng.randint(0, n * n, 300))
        skip = skip[skip // n < skip % n]
    Z = X @ rng.randn(3, 3)
    ref = oracle._scan(Z, skip, 0.05)           # the numba kernel (oracle.numpy False)
    got = npk.scan_label_pairs(Z, oracle.y, 2.0, 6.0, 0.05, skip, cap)
    assert got[4] == ref[4] > 50                # every violated pair is counted
    assert got[3] == pytest.approx(ref[3], rel=1e-12)
    oracle.numpy = True
    big = oracle._scan(Z, skip, 0.05)
    assert big[4] == ref[4]
    pairs = lambda r: set(zip(r[0].tolist(), r[1].tolist()))  # noqa: E731
    assert pairs(big) == pairs(ref)             # the kernel's cap is large here
    if cap == 1000:
        assert pairs(got) == pairs(ref)
        order = np.lexsort((ref[1], ref[0]))
        np.testing.assert_allclose(np.sort(got[2]), np.sort(ref[2][order]), rtol=1e-12)
    else:
        # the last ``cap`` violated pairs of each row, as the kernel's ring buffer
        rows = {}
        for i, j in sorted(pairs(ref)):
            rows.setdefault(i, []).append(j)
        want = {(i, j) for i, js in rows.items() for j in js[-cap:]}
        assert pairs(got) == want


def test_the_driver_picks_the_path_by_size():
    small = FixedListOracle(np.ones((10, 4)), np.ones(10), np.ones(10))
    assert npk.use_numpy(small)
    assert not npk.use_numpy(FixedListOracle(
        np.ones((npk.LOGDET_NUMPY_MAX_LISTED + 1, 4)), np.ones(1), np.ones(1)))
    assert not npk.use_numpy(FixedListOracle(
        np.ones((10, npk.LOGDET_NUMPY_MAX_DIM + 1)), np.ones(10), np.ones(10)))
    X = np.random.RandomState(0).randn(150, 4)
    assert npk.use_numpy(LabelPairOracle(X, np.arange(150) % 3, 1.0, 2.0))
    big = np.random.RandomState(0).randn(200, 4)
    assert not npk.use_numpy(LabelPairOracle(big, np.arange(200) % 3, 1.0, 2.0))
    with npk.numpy_limits(-1):
        assert not npk.use_numpy(small)
    assert npk.use_numpy(small)
    assert not npk.use_numpy(object())


def _both_paths(make, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = make().fit(*args)
        with npk.numpy_limits(-1):
            b = make().fit(*args)
    return a, b


def _standardised(load, scale=1.0):
    X, y = load(return_X_y=True)
    return StandardScaler().fit_transform(X) * scale, y


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


@pytest.mark.parametrize("scale", [1.0, 1e-80])
def test_project_and_forget_same_on_both_paths(scale):
    X, y = _standardised(load_iris, scale)
    a, b = _both_paths(lambda: ProjectAndForget(random_state=0), X, y)
    assert a.converged_ and b.converged_
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    # the two paths may add constraints in another order: same fixed point,
    # to the solver's tolerance (relative violations and dual change 1e-3)
    np.testing.assert_allclose(Ma, Mb, rtol=0, atol=1e-3 * np.abs(Mb).max())
    assert a.loss_curve_[-1] == pytest.approx(b.loss_curve_[-1], rel=1e-3)


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
        "me.ProjectAndForget(random_state=0).fit(X, y)\n"
        "me.MLKR(random_state=0, max_iter=20).fit(X, y + 0.5)\n"
        "Xo, yo = make_ordinal(n_samples=100, n_informative=3, n_noise=2,"
        " n_levels=4, random_state=0)\n"
        "me.LODML(random_state=0).fit(Xo, yo)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True, timeout=600).stdout
    mods = set(out.split())
    assert {"metric_estimators.itml", "metric_estimators.project_and_forget",
            "metric_estimators.mlkr", "metric_estimators.ordinal"} <= mods
    assert "numba" not in mods
    assert not any(m.startswith("metric_estimators._kernels") for m in mods)
