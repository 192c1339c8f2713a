"""LMNN's and SCML's numpy twins and fits against the numba kernels (cold start).

Within the limits of their families (:data:`metric_estimators._backend.FAMILIES`)
and while the kernels are not compiled, LMNN, SCML and the exact k-NN
ranking run on the twins of :mod:`metric_estimators._kernels.numpy`, so
that a first fit never loads numba.  Both paths must agree: bit for bit
where no floating-point sum is reordered (hashes, pair selections, the k-NN
ranking), to rounding elsewhere; and a small fit must not import numba.
"""

import warnings

import numpy as np
import pytest
from fresh_process import assert_no_numba, modules_after
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, _backend, _compilation
from metric_estimators._kernels import lmnn as nb
from metric_estimators._kernels.neighbours import rank_candidates
from metric_estimators._kernels.numpy import lmnn as npk
from metric_estimators._kernels.numpy.neighbours import rank_candidates as rank_candidates_numpy
from metric_estimators._problems.lmnn import (
    LMNNObjective,
    find_target_neighbors,
)
from metric_estimators._problems.neighbours import nearest
from metric_estimators.solvers.impostors import ImpostorSet


def _problem(seed, n=60, d=4, c=3, k=3, ties=False):
    """Embedded points, padded targets and impostor pairs of a random problem."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    if ties:
        X = np.round(X, 1)
        X[1] = X[0]  # a duplicated point: distance exactly 0
        X[2] = X[0]
    Z = X @ rng.randn(c, d).T
    targets = rng.randint(0, n, (n, k)).astype(np.int64)
    targets[rng.rand(n, k) < 0.2] = -1  # padded rows, some all -1
    targets[:3] = -1
    m = 5 * n
    imp_i = rng.randint(0, n, m).astype(np.int32)
    imp_l = rng.randint(0, n, m).astype(np.int32)
    return X, Z, targets, imp_i, imp_l


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("squared", [True, False])
def test_loss_kernels_agree(seed, ties, squared):
    X, Z, targets, imp_i, imp_l = _problem(seed, ties=ties)
    td_a, td_b = npk.target_sqdist(Z, targets), nb.target_sqdist(Z, targets)
    np.testing.assert_allclose(td_a, td_b, rtol=1e-13, atol=0)
    assert np.all(td_a[targets < 0] == 0)
    d_a, d_b = npk.pair_sqdist(Z, imp_i, imp_l), nb.pair_sqdist(Z, imp_i, imp_l)
    np.testing.assert_allclose(d_a, d_b, rtol=1e-13, atol=0)
    # hinges right at 0 would make the active sets depend on the last bit
    out_a = npk.triplet_loss_weights(td_b, targets, imp_i, d_b, 0.3, squared)
    out_b = nb.triplet_loss_weights(td_b, targets, imp_i, d_b, 0.3, squared)
    assert out_a[3] == out_b[3] > 0  # active triplets
    np.testing.assert_allclose(out_a[0], out_b[0], rtol=1e-12)
    np.testing.assert_allclose(out_a[1], out_b[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out_a[2], out_b[2], rtol=1e-12, atol=1e-14)
    _, w_t, w_i, _ = out_b
    w_t[0, 0] = 0.0  # zero weights are skipped by the kernel
    lap_a = npk.laplacian_product(X, targets, w_t, imp_i, imp_l, w_i)
    lap_b = nb.laplacian_product(X, targets, w_t, imp_i, imp_l, w_i)
    np.testing.assert_allclose(lap_a, lap_b, rtol=1e-12, atol=1e-12 * np.abs(lap_b).max())


def test_loss_kernels_without_impostors_or_targets():
    X, Z, targets, _, _ = _problem(0)
    none = np.empty(0, dtype=np.int32)
    for kernels in (npk, nb):
        loss, w_t, w_i, n_active = kernels.triplet_loss_weights(
            kernels.target_sqdist(Z, targets), targets, none, np.empty(0), 0.5, True)
        assert (loss, n_active, w_i.size) == (0.0, 0, 0)
        assert w_t.dtype == np.float64 and not w_t.any()
        lap = kernels.laplacian_product(X, targets, w_t, none, none, np.empty(0))
        assert lap.shape == X.shape and not lap.any()
    empty = np.full_like(targets, -1)
    assert not npk.target_sqdist(Z, empty).any()


@pytest.mark.parametrize("seed", [0, 5])
def test_hashes_and_pair_selections_are_bit_identical(seed):
    X, Z, targets, imp_i, imp_l = _problem(seed, n=80, ties=True)
    n = Z.shape[0]
    H = npk.point_hashes(n, seed + 7)
    assert H.dtype == np.uint64 and np.array_equal(H, nb.point_hashes(n, seed + 7))
    np.testing.assert_array_equal(npk.pair_uniform(imp_i, imp_l, H),
                                  nb.pair_uniform(imp_i, imp_l, H))
    rho = np.abs(np.random.RandomState(seed).randn(n)) * 8.0
    rho[:4] = -np.inf  # anchors without targets
    for a, b in zip(npk.pairs_within(Z, imp_i, imp_l, rho),
                    nb.pairs_within(Z, imp_i, imp_l, rho)):
        np.testing.assert_array_equal(a, b)
    sq = np.einsum("ij,ij->i", Z, Z)
    rows, cols = np.arange(0, 30), np.arange(30, n)
    G = Z[rows] @ Z[cols].T
    for symmetric in (True, False):
        for fraction in (1.0, 0.4):
            got = npk.threshold_block(G, sq[rows], sq[cols], rho[rows], rho[cols],
                                      rows, cols, symmetric, H, fraction)
            want = nb.threshold_block(G, sq[rows], sq[cols], rho[rows], rho[cols],
                                      rows, cols, symmetric, H, fraction)
            assert got[0].dtype == want[0].dtype == np.int32
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
            assert got[0].size > 0
    y = np.arange(n) % 3
    got = npk.sampled_pairs_within(Z, y, H, 0.3, rho, 10, 50, 16)
    want = nb.sampled_pairs_within(Z, y, H, 0.3, rho, 10, 50, 16)
    assert got[0].size > 0
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_knn_ranking_is_bit_identical(ties, k):
    rng = np.random.RandomState(k)
    X = rng.randn(120, 6)
    if ties:
        X = np.round(X, 0)  # many equal distances
        X[10:14] = X[3]
    got = nearest(X, X, k, self_index=np.arange(120), kernels=_backend.NUMPY)
    want = nearest(X, X, k, self_index=np.arange(120), kernels=_backend.NUMBA)
    np.testing.assert_array_equal(got, want)
    # the two ranking functions directly, on a block with the threshold above all
    D = np.zeros((5, 120))
    rows = np.arange(5)
    a = rank_candidates_numpy(X, X, rows, D, np.ones(5), k)
    b = rank_candidates(X, X, rows, D, np.ones(5), k)
    np.testing.assert_array_equal(a, b)
    if ties:
        # duplicates of row 3 come first, in increasing index
        assert list(nearest(X, X, 4, self_index=np.arange(120))[3]) == [10, 11, 12, 13]


def test_the_rule_chooses_the_path(monkeypatch):
    """Cold kernels: the twins within the limits, numba above; warm: numba."""
    limits = _backend.FAMILIES["lmnn"].limits
    with _backend.use("auto"):
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: False)
        assert _backend.choose("lmnn", *limits) is _backend.NUMPY
        assert _backend.choose("lmnn", limits[0] + 1, 2) is _backend.NUMBA
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: True)
        assert _backend.choose("lmnn", 2, 2) is _backend.NUMBA
    with _backend.use("numba"):
        assert _backend.choose("lmnn", 2, 2) is _backend.NUMBA
    with _backend.use("numpy"):
        assert _backend.choose("lmnn", 10 ** 9, 10 ** 9) is _backend.NUMPY


@pytest.mark.parametrize("squared", [True, False])
def test_objectives_agree(squared):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    L = np.random.RandomState(0).randn(5, X.shape[1]).ravel()
    values = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**9, kernels)
        obj = LMNNObjective(X, targets, imps, 0.5, squared, 5)
        imps.refresh(*obj.search_point(L))
        values.append(obj(L))
        assert imps.imp_i.size > 0 and obj.n_active > 0
    (fa, ga), (fb, gb) = values
    np.testing.assert_allclose(fa, fb, rtol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-10 * np.abs(gb).max())


def _fit_on_both_paths(make, load):
    """``make()`` fitted on ``load``'s standardised data on the numpy path, then on numba's."""
    X, y = load(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _backend.use("numpy"):
            a = make().fit(X, y)
        with _backend.use("numba"):
            b = make().fit(X, y)
    return a, b


def test_small_fits_agree_with_the_numba_path():
    a, b = _fit_on_both_paths(lambda: LMNN(random_state=0, max_iter=200), load_iris)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.target_neighbors_, b.target_neighbors_)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-9, atol=1e-10)


def _modules_loaded_by(loader, statements):
    """The modules a fresh process has loaded after ``statements`` on ``loader``'s data."""
    code = (
        "import sys, warnings\n"
        f"from sklearn.datasets import {loader}\n"
        "import metric_estimators as me\n"
        f"X, y = {loader}(return_X_y=True)\n"
        "warnings.simplefilter('ignore')\n"
        + "".join(f"{line}\n" for line in statements)
    )
    return modules_after(code, timeout=300)


def test_small_lmnn_fit_does_not_load_numba():
    mods = _modules_loaded_by("load_iris", [
        "me.LMNN(random_state=0).fit(X, y).transform(X)",
        "me.LMNN(solver='subgradient', random_state=0, max_iter=5).fit(X, y)",
    ])
    assert "metric_estimators.lmnn" in mods
    assert_no_numba(mods)


@pytest.mark.parametrize("nonnegative", [True, False])
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_adagrad_rda_update_numpy_equals_the_kernel(nonnegative, l1):
    from metric_estimators._kernels.numpy.stochastic import (
        adagrad_rda_update as adagrad_rda_update_numpy,
    )
    from metric_estimators._kernels.stochastic import adagrad_rda_update

    rng = np.random.RandomState(1)
    states = [[np.zeros(9), np.zeros(9), np.zeros(9)] for _ in range(2)]
    for t in range(1, 30):
        grad = rng.randn(9) * (rng.rand(9) < 0.6)  # some coordinates never move
        grad *= 10.0 ** rng.randint(-8, 4, 9)  # and many scales
        grad[0] = 0.0
        for (gs, gq, w), update in zip(states, (adagrad_rda_update_numpy,
                                                adagrad_rda_update)):
            update(grad, gs, gq, w, float(t), 0.3, l1, nonnegative)
        for a, b in zip(*states):
            np.testing.assert_array_equal(a, b)
    assert np.any(states[0][2] != 0) and states[0][2][0] == 0


def test_scml_supervised_paths_agree_and_skip_numba():
    from metric_estimators import SCML_Supervised

    a, b = _fit_on_both_paths(lambda: SCML_Supervised(random_state=0, max_iter=2000), load_wine)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9)
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-9, atol=1e-12)
    mods = _modules_loaded_by("load_wine", [
        "me.SCML_Supervised(random_state=0, max_iter=300, output_iter=100).fit(X, y)"])
    assert "metric_estimators.scml" in mods and "numba" not in mods


def test_scml_without_precomputed_projections_same_on_both_paths():
    """Projections too large to precompute: batches project on the fly, on either path."""
    from metric_estimators._problems import scml as problem

    rng = np.random.RandomState(0)
    X = rng.randn(400, 5)
    T = rng.randint(0, 400, (12_000, 3))
    B = rng.randn(40, 5)
    w = np.abs(rng.randn(40)) * 0.05
    batch = rng.randint(0, T.shape[0], 64)
    out = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(problem, "MAX_PROJECTIONS", 10)
        for kernels in (_backend.NUMPY, _backend.NUMBA):
            prob = problem.TripletHingeProblem(X, T, B, kernels)
            assert prob.P is None
            g = np.empty(40)
            n_active = prob.batch_gradient(batch, w, g)
            out.append((prob.objective(w), n_active, g))
    (fa, na, ga), (fb, nb_, gb) = out
    assert fa[0] == pytest.approx(fb[0], rel=1e-12) and fa[1] == fb[1] and na == nb_
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12 * np.abs(gb).max())


def test_scml_supervised_on_breast_cancer_skips_numba():
    """The benchmarks' 70 % of breast cancer (398 points) is within the scml
    family's limits: no numba start-up on a cold cache, and the same result
    as on numba's path."""
    from sklearn.model_selection import train_test_split

    from metric_estimators import SCML_Supervised

    def load(return_X_y):
        X, y = load_breast_cancer(return_X_y=True)
        return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)[::2]

    a, b = _fit_on_both_paths(lambda: SCML_Supervised(random_state=0, max_iter=2000), load)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-9)
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-9, atol=1e-12)
    mods = _modules_loaded_by("load_breast_cancer", [
        "from sklearn.model_selection import train_test_split",
        "from sklearn.preprocessing import StandardScaler",
        "X, _, y, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)",
        "X = StandardScaler().fit_transform(X)",
        "from metric_estimators import _backend",
        "assert _backend.within_limits('scml', *X.shape)",
        "me.SCML_Supervised(random_state=0).fit(X, y)"])
    assert "metric_estimators.scml" in mods and "numba" not in mods
