"""The numpy twins of the gradient-based learners' kernels against the kernels.

LMNN, MLKR, SCML, LODML, LSML and the exact k-NN ranking they share run on
:mod:`metric_estimators._kernels.numpy` twins when
:func:`metric_estimators._backend.choose` says so.  Each twin must give its
kernel's results: bit for bit where the twin says so (the k-NN ranking, the
pair hashes and searches, the AdaGrad step), to rounding elsewhere, also at
extreme scales and on degenerate inputs (duplicates, a class of exactly
``k`` points, no impostors, no active triplet); and each estimator the same
solution on both paths.
"""

import warnings

import numpy as np
import pytest
from fresh_process import assert_no_numba, modules_after
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, LODML, MLKR, LSML_Supervised, SCML_Supervised, _backend
from metric_estimators._kernels import lmnn as nb_lmnn
from metric_estimators._kernels import lsml as nb_lsml
from metric_estimators._kernels import mlkr as nb_mlkr
from metric_estimators._kernels import neighbours as nb_neighbours
from metric_estimators._kernels import ordinal as nb_ordinal
from metric_estimators._kernels import scml as nb_scml
from metric_estimators._kernels import stochastic as nb_stochastic
from metric_estimators._kernels.numpy import lmnn as np_lmnn
from metric_estimators._kernels.numpy import lsml as np_lsml
from metric_estimators._kernels.numpy import mlkr as np_mlkr
from metric_estimators._kernels.numpy import neighbours as np_neighbours
from metric_estimators._kernels.numpy import ordinal as np_ordinal
from metric_estimators._kernels.numpy import scml as np_scml
from metric_estimators._kernels.numpy import stochastic as np_stochastic
from metric_estimators._problems.neighbours import nearest, nearest_in_groups
from metric_estimators.ranking import make_ordinal

SCALES = (1.0, 1e-150, 1e150)


def _close(a, b, rtol=1e-10):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(np.abs(b).max(initial=0.0), np.finfo(float).tiny)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


# ------------------------------------------------------------- neighbours


@pytest.mark.parametrize("scale", SCALES)
def test_rank_candidates_twin_is_bit_identical(scale):
    rng = np.random.RandomState(0)
    R = rng.randn(80, 5) * scale
    R[7] = R[3]                       # duplicates: ties broken by index
    R[20:25] = R[19]
    Q = R[::3]
    rows = np.arange(Q.shape[0])
    D = ((Q[:, None] - R[None]) ** 2).sum(-1)
    D[rows, 3 * rows] = np.inf        # the query itself, as the search sets it
    for k in (1, 4, 10):
        kth = np.partition(D, k - 1, axis=1)[:, k - 1]
        for slack in (kth * 0.5 + 1e-300, np.zeros(rows.size)):
            a = np_neighbours.rank_candidates(Q, R, rows, D, slack, k)
            b = nb_neighbours.rank_candidates(Q, R, rows, D, slack, k)
            assert a.dtype == b.dtype == np.int64
            np.testing.assert_array_equal(a, b)
            # against a plain sort by (exact distance, index) of every column
            # within the k-th smallest screened distance plus the slack
            for a_row, row in zip(a, rows):
                cand = np.flatnonzero(D[row] <= kth[row] + slack[row])
                exact = ((Q[row] - R[cand]) ** 2).sum(-1)
                want = cand[np.lexsort((cand, exact))][:k]
                assert list(a_row) == list(want)


def test_rank_listed_twin_is_bit_identical():
    rng = np.random.RandomState(1)
    X = rng.randn(60, 4)
    X[5] = X[2]
    rows = np.arange(60)
    cand = np.array([rng.permutation(60)[:12] for _ in rows], dtype=np.int64)
    cand[:, 0] = rows                 # the point itself: excluded
    for k in (1, 5, 11):
        a = np_neighbours.rank_listed(X, X, rows, cand, rows, k)
        b = nb_neighbours.rank_listed(X, X, rows, cand, rows, k)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_knn_searches_same_on_both_paths():
    rng = np.random.RandomState(2)
    X = np.round(rng.randn(150, 3), 1)   # many ties
    groups = rng.randint(0, 3, 150)
    groups[:4] = 3                       # a group of exactly k + 1 points
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        got = nearest_in_groups(X, groups, 3, kernels=kernels)
        far = nearest(X[:40], X[40:], 7, kernels=kernels)
        if kernels is _backend.NUMPY:
            ref = (got, far)
    np.testing.assert_array_equal(ref[0], got)
    np.testing.assert_array_equal(ref[1], far)


# ------------------------------------------------------------------- LMNN


def _lmnn_case(scale, n=70, k=3, seed=0):
    rng = np.random.RandomState(seed)
    Z = rng.randn(n, 4) * scale
    Z[1] = Z[0]
    y = rng.randint(0, 3, n)
    targets = np.array([rng.choice(np.flatnonzero(y == y[i]), k) for i in range(n)])
    targets[::7, -1] = -1                           # padded rows (small classes)
    a, b = np.nonzero(y[:, None] != y[None, :])
    return Z, y, targets, a.astype(np.int32), b.astype(np.int32)


@pytest.mark.parametrize("scale", SCALES)
def test_lmnn_distance_and_loss_twins(scale):
    Z, y, targets, a, b = _lmnn_case(scale)
    _close(np_lmnn.target_sqdist(Z, targets), nb_lmnn.target_sqdist(Z, targets))
    _close(np_lmnn.pair_sqdist(Z, a, b), nb_lmnn.pair_sqdist(Z, a, b))
    td = nb_lmnn.target_sqdist(Z, targets) / scale ** 2
    d = nb_lmnn.pair_sqdist(Z, a, b) / scale ** 2
    for squared in (True, False):
        ra = np_lmnn.triplet_loss_weights(td, targets, a, d, 0.5, squared)
        rb = nb_lmnn.triplet_loss_weights(td, targets, a, d, 0.5, squared)
        for u, v in zip(ra[:3], rb[:3]):
            _close(u, v)
        assert ra[3] == rb[3]
        X = Z / scale
        _close(np_lmnn.laplacian_product(X, targets, ra[1], a, b, ra[2]),
               nb_lmnn.laplacian_product(X, targets, rb[1], a, b, rb[2]))


def test_lmnn_no_impostors_and_no_active_triplets():
    Z, y, targets, a, b = _lmnn_case(1.0)
    empty = np.empty(0, dtype=np.int32)
    td = nb_lmnn.target_sqdist(Z, targets)
    for mod in (np_lmnn, nb_lmnn):
        loss, w_t, w_i, n_active = mod.triplet_loss_weights(
            td, targets, empty, np.empty(0), 0.5, True)
        assert loss == 0.0 and n_active == 0 and w_i.size == 0 and not w_t.any()
        lap = mod.laplacian_product(Z, targets, w_t, empty, empty, w_i)
        assert not lap.any()
    # impostors far beyond every margin: no active triplet
    far = np.full(a.size, 1e6)
    ra = np_lmnn.triplet_loss_weights(td, targets, a, far, 0.5, False)
    rb = nb_lmnn.triplet_loss_weights(td, targets, a, far, 0.5, False)
    assert ra[0] == rb[0] == 0.0 and ra[3] == rb[3] == 0


def test_lmnn_hashes_and_searches_are_bit_identical():
    Z, y, targets, a, b = _lmnn_case(1.0)
    hashes = nb_lmnn.point_hashes(Z.shape[0], 12345)
    np.testing.assert_array_equal(np_lmnn.point_hashes(Z.shape[0], 12345), hashes)
    np.testing.assert_array_equal(np_lmnn.pair_uniform(a, b, hashes),
                                  nb_lmnn.pair_uniform(a, b, hashes))
    rho = np.full(Z.shape[0], 6.0)
    rho[::5] = 0.0
    for fraction in (1.0, 0.3):
        rows, cols = np.arange(30), np.arange(30, 70)
        sq = np.einsum("ij,ij->i", Z, Z)
        G = Z[rows] @ Z[cols].T
        for symmetric in (True, False):
            args = (G, sq[rows], sq[cols], rho[rows], rho[cols], rows, cols,
                    symmetric, hashes, fraction)
            for u, v in zip(np_lmnn.threshold_block(*args), nb_lmnn.threshold_block(*args)):
                np.testing.assert_array_equal(u, v)
        args = (Z, y, hashes, fraction, rho, 0, Z.shape[0], 16)
        for u, v in zip(np_lmnn.sampled_pairs_within(*args),
                        nb_lmnn.sampled_pairs_within(*args)):
            np.testing.assert_array_equal(u, v)
    for u, v in zip(np_lmnn.pairs_within(Z, a, b, rho), nb_lmnn.pairs_within(Z, a, b, rho)):
        np.testing.assert_array_equal(u, v)


def test_lmnn_near_pairs_twin_is_a_superset_with_the_same_loss():
    Z, y, targets, a, b = _lmnn_case(1.0)
    td = nb_lmnn.target_sqdist(Z, targets)
    R = td.max(axis=1) + 1.0
    root_a = np.empty(a.size, dtype=np.float32)
    root_b = np.empty(a.size, dtype=np.float32)
    pa = np_lmnn.near_pairs(Z, a, b, R, Z, root_a, True)
    pb = nb_lmnn.near_pairs(Z, a, b, R, Z, root_b, True)
    np.testing.assert_allclose(root_a, root_b, rtol=1e-6)
    assert pa[0].size >= pb[0].size and not np_lmnn.exact_near_pairs
    la = np_lmnn.triplet_loss_weights(td, targets, pa[0], pa[2], 0.5, True)[0]
    lb = nb_lmnn.triplet_loss_weights(td, targets, pb[0], pb[2], 0.5, True)[0]
    assert la == pytest.approx(lb, rel=1e-12)


def test_lmnn_sampled_push_weights_twin():
    rng = np.random.RandomState(3)
    ZB, ZR = rng.randn(8, 3), rng.randn(40, 3)
    td = np.abs(rng.randn(8, 3))
    valid = rng.rand(8, 3) > 0.2
    yb, yr = rng.randint(0, 3, 8), rng.randint(0, 3, 40)
    args = (ZB @ ZR.T, np.einsum("ij,ij->i", ZB, ZB), np.einsum("ij,ij->i", ZR, ZR),
            td, valid, yb, yr, 2.5)
    for u, v in zip(np_lmnn.sampled_push_weights(*args), nb_lmnn.sampled_push_weights(*args)):
        _close(u, v)


# ------------------------------------------------------------------- MLKR


@pytest.mark.parametrize("n, scale", [(60, 1.0), (200, 1.0), (90, 1e3), (90, 1e-4), (5000, 0.3)])
def test_mlkr_block_twin(n, scale):
    rng = np.random.RandomState(n)
    Z = rng.randn(n, 3) * scale
    Z[1] = Z[0]                                 # a duplicate: distance 0
    y = rng.randn(n)
    sq = np.einsum("ij,ij->i", Z, Z)
    for start, stop in ((0, min(n, 300)), (n // 3, n // 3 + 17)):
        outs = []
        for block in (np_mlkr.mlkr_block, nb_mlkr.mlkr_block):
            G = Z[start:stop] @ Z.T
            yhat, rsum = np.zeros(n), np.zeros(n)
            loss = block(G, sq, y, start, yhat, rsum, True)
            outs.append((loss, G, yhat[start:stop], rsum))
        for a, b in zip(*outs):
            _close(a, b, rtol=1e-9)
        # without the gradient: G untouched, same loss
        G = Z[start:stop] @ Z.T
        G0 = G.copy()
        yhat = np.zeros(n)
        loss = np_mlkr.mlkr_block(G, sq, y, start, yhat, np.zeros(n), False)
        np.testing.assert_array_equal(G, G0)
        assert loss == pytest.approx(outs[1][0], rel=1e-9)


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


# ------------------------------------------------------------------- SCML


@pytest.mark.parametrize("scale", SCALES[:2] + (1e100,))
def test_scml_twins(scale):
    rng = np.random.RandomState(4)
    P = rng.randn(50, 12) * scale
    triplets = rng.randint(0, 50, (9000, 3)).astype(np.intp)   # several chunks
    triplets[:5, 2] = triplets[:5, 0]                         # degenerate: a == c
    w = np.abs(rng.randn(12)) / scale ** 2
    _close(np_scml.triplet_hinges(P, triplets, w), nb_scml.triplet_hinges(P, triplets, w))
    _close(np_scml.triplet_hinges_parallel(P, triplets, w),
           nb_scml.triplet_hinges_parallel(P, triplets, w))
    batch = rng.randint(0, 9000, 64).astype(np.intp)
    ga, gb = np.empty(12), np.empty(12)
    na = np_scml.triplet_batch_gradient(P, triplets, batch, w, ga)
    nb = nb_scml.triplet_batch_gradient(P, triplets, batch, w, gb)
    assert na == nb
    _close(ga, gb)
    # no active triplet (a == b, c far: 1 + w . phi < 0): a zero gradient
    none = np.array([[0, 0, 1], [2, 2, 3]], dtype=np.intp)
    heavy = np.full(12, 1e6) / scale ** 2
    for mod in (np_scml, nb_scml):
        g = np.full(12, 7.0)
        assert mod.triplet_batch_gradient(P, none, np.array([0, 1]), heavy, g) == 0
        assert not g.any()
        assert not mod.triplet_hinges(P, none, heavy).any()


@pytest.mark.parametrize("nonnegative", [True, False])
def test_adagrad_rda_update_twin_is_bit_identical(nonnegative):
    rng = np.random.RandomState(5)
    states = []
    for mod in (np_stochastic, nb_stochastic):
        gs, gq, w = np.zeros(20), np.zeros(20), np.zeros(20)
        rng = np.random.RandomState(5)
        for t in range(1, 30):
            g = rng.randn(20)
            g[:3] = 0.0                 # coordinates never moved: h == 0
            mod.adagrad_rda_update(g, gs, gq, w, float(t), 0.01, 0.05, nonnegative)
        states.append((gs, gq, w))
    for u, v in zip(*states):
        np.testing.assert_array_equal(u + 0.0, v + 0.0)   # -0.0 == 0.0


# ---------------------------------------------------------- LODML, LSML


@pytest.mark.parametrize("scale", SCALES)
def test_ordinal_triplet_hinge_twin(scale):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 3)) * scale
    ti, tj, tl = (rng.integers(0, 30, 100_000) for _ in range(3))  # several chunks
    a = np_ordinal.triplet_hinge(Z, ti, tj, tl, 0.5 * scale ** 2)
    b = nb_ordinal.triplet_hinge(Z, ti, tj, tl, 0.5 * scale ** 2)
    assert a[0] == pytest.approx(b[0], rel=1e-12)
    assert a[1].dtype == b[1].dtype == np.uint8
    np.testing.assert_array_equal(a[1], b[1])
    empty = np.empty(0, np.int64)
    loss, active = np_ordinal.triplet_hinge(Z, empty, empty, empty, 0.5)
    assert loss == 0.0 and active.size == 0


@pytest.mark.parametrize("scale", SCALES)
def test_lsml_twins(scale):
    rng = np.random.RandomState(6)
    V, U = rng.randn(300, 5) * scale, rng.randn(300, 5) * scale
    V[:4] = 0.0                                   # zero differences: d = 0
    A = rng.randn(5, 5)
    M = A @ A.T / scale ** 2
    w = np.full(300, 1 / 300)
    out = []
    for mod in (np_lsml, nb_lsml):
        cv, cu = np.full(300, np.nan), np.full(300, np.nan)
        loss = mod.quadruplet_residuals(V, U, M, w, cv, cu)
        G = np.full((5, 5), np.nan)
        n_active = mod.quadruplet_gradient(V, U, cv, cu, G)
        assert np.array_equal(G, G.T)
        out.append((loss, cv, cu, G, n_active))
    for u, v in zip(out[0][:4], out[1][:4]):
        _close(u, v)
    assert out[0][4] == out[1][4]
    # nothing active: zero gradient
    for mod in (np_lsml, nb_lsml):
        G = np.full((5, 5), np.nan)
        assert mod.quadruplet_gradient(V, U, np.zeros(300), np.zeros(300), G) == 0
        assert not G.any()


# ------------------------------------------------- estimators, both paths


def _both(make, *args):
    fits = []
    for path in ("numpy", "numba"):
        with warnings.catch_warnings(), _backend.use(path):
            warnings.simplefilter("ignore")
            fits.append(make().fit(*args))
    return fits


def _same_metric(a, b, rtol):
    Ma = a.components_.T @ a.components_
    Mb = b.components_.T @ b.components_
    np.testing.assert_allclose(Ma, Mb, rtol=rtol, atol=rtol * np.abs(Mb).max())


def test_lmnn_with_a_class_of_exactly_k_points_same_on_both_paths():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = np.concatenate([np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:3]])
    X, y = X[keep], y[keep]                      # class 2: exactly k = 3 points
    a, b = _both(lambda: LMNN(n_neighbors=3, random_state=0), X, y)
    _same_metric(a, b, 1e-4)


def test_lodml_scml_lsml_same_on_both_paths():
    X, y = make_ordinal(n_samples=120, n_informative=3, n_noise=2, n_levels=4,
                        random_state=0)
    a, b = _both(lambda: LODML(random_state=0), X, y)
    assert a.n_iter_ == b.n_iter_
    _same_metric(a, b, 1e-8)
    a, b = _both(lambda: SCML_Supervised(random_state=0, max_iter=2000), X, y)
    _same_metric(a, b, 1e-6)
    a, b = _both(lambda: LSML_Supervised(random_state=0), X, y)
    _same_metric(a, b, 1e-6)


def test_first_fits_within_the_limits_do_not_load_numba():
    """On an empty cache (here: the numpy mode the tests run in), no numba."""
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from sklearn.datasets import load_iris\n"
        "import metric_estimators as me\n"
        "from metric_estimators.ranking import make_ordinal\n"
        "X, y = load_iris(return_X_y=True)\n"
        "me.MLKR(random_state=0, max_iter=20).fit(X, y + 0.5)\n"
        "me.LMNN(random_state=0, max_iter=20).fit(X, y)\n"
        "me.SCML_Supervised(random_state=0, max_iter=200, output_iter=100).fit(X, y)\n"
        "me.LSML_Supervised(random_state=0).fit(X, y)\n"
        "Xo, yo = make_ordinal(n_samples=100, n_informative=3, n_noise=2,"
        " n_levels=4, random_state=0)\n"
        "me.LODML(random_state=0).fit(Xo, yo)\n"
        "me.OMDML().fit(Xo, yo)\n"
    )
    mods = modules_after(code)
    assert {"metric_estimators.mlkr", "metric_estimators.lmnn",
            "metric_estimators.ordinal", "metric_estimators.scml"} <= mods
    assert_no_numba(mods)
