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

import warnings

import numpy as np
import pytest
from fresh_process import assert_no_numba, modules_after
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    LODML,
    MLKR,
    CorrelationClustering,
    MetricNearness,
)
from metric_estimators._kernels import cc_pair_projections as nb_cc
from metric_estimators._kernels import constraint_store as nb_store
from metric_estimators._kernels import correlation_clustering as nb_moves
from metric_estimators._kernels import cycle_projections as nb_cycles
from metric_estimators._kernels import edges as nb_edges
from metric_estimators._kernels import shortest_paths as nb_sp
from metric_estimators._kernels.mlkr import mlkr_block
from metric_estimators._kernels.ordinal import triplet_hinge
from metric_estimators._problems import mlkr as mlkr_problem
from metric_estimators._problems import ordinal as ordinal_problem
from metric_estimators.ranking import make_ordinal
from metric_estimators.solvers import numpy_kernels as npk
from metric_estimators.solvers.oracles import DenseTriangleOracle


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


# ---------------------------------------------------------------------------
# cycle constraints (MetricNearness)



def _random_paths(seed, m=40, k=300, max_len=4):
    rng = np.random.RandomState(seed)
    lens = rng.randint(1, max_len + 1, k)
    ptr = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    edge = np.empty(k, np.int64)
    path = np.empty(ptr[-1], np.int32)
    for c in range(k):
        vars_ = rng.choice(m, lens[c] + 1, replace=False)
        edge[c] = vars_[0]
        path[ptr[c]:ptr[c + 1]] = vars_[1:]
    return edge, ptr, path


def test_edges_and_hashes_are_bit_identical():
    rng = np.random.RandomState(0)
    D = rng.randn(9, 9)
    np.testing.assert_array_equal(npk.matrix_to_edges(D), nb_edges.matrix_to_edges(D))
    x = rng.randn(36)
    a, b = np.full((9, 9), 7.0), np.full((9, 9), 7.0)
    npk.edges_to_matrix(x, 9, a)
    nb_edges.edges_to_matrix(x, 9, b)
    np.testing.assert_array_equal(a, b)
    i, j = np.array([0, 3, 8, 5]), np.array([1, 7, 2, 5 - 1])
    assert list(npk.edge_id(i, j, 9)) == [nb_edges.edge_id(p, q, 9) for p, q in zip(i, j)]
    edge, ptr, path = _random_paths(1)
    np.testing.assert_array_equal(npk.constraint_hashes(edge, ptr, path),
                                  nb_store.constraint_hashes(edge, ptr, path))


@pytest.mark.parametrize("seed", range(3))
def test_disjoint_batches_cover_once_and_share_no_variable(seed):
    edge, ptr, path = _random_paths(seed)
    batches = npk.disjoint_batches(edge, ptr, path)
    allc = np.concatenate(batches)
    assert np.array_equal(np.sort(allc), np.arange(edge.size))
    for b in batches:
        used = np.concatenate([np.concatenate(([edge[c]], path[ptr[c]:ptr[c + 1]]))
                               for c in b])
        assert np.unique(used).size == used.size


@pytest.mark.parametrize("kl", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-120, 1e120])
def test_a_batch_pass_equals_the_kernel_in_that_order(kl, scale):
    # projections of variable-disjoint constraints commute: the batch pass
    # equals the kernel's pass over the constraints taken batch by batch
    edge, ptr, path = _random_paths(3)
    rng = np.random.RandomState(3)
    x0 = (rng.rand(40) + 0.05) * scale
    winv = rng.rand(40) + 0.5
    zscale = 1.0 if kl else scale               # KL duals are in log units
    z0 = np.where(rng.rand(edge.size) < 0.4, rng.rand(edge.size) * zscale, 0.0)
    batches = npk.disjoint_batches(edge, ptr, path)
    order = np.concatenate(batches)
    # the kernel's storage order = the batches' order
    lens = np.diff(ptr)
    sel = np.concatenate([path[ptr[c]:ptr[c + 1]] for c in order]).astype(np.int32)
    ptr_o = np.concatenate(([0], np.cumsum(lens[order]))).astype(np.int64)
    x_a, z_a = x0.copy(), z0.copy()
    x_b, z_b = x0.copy(), z0[order].copy()
    ra = npk.project_cycles(x_a, winv, edge, ptr, path, z_a, batches, kl=kl)
    if kl:
        rb = nb_cycles.project_paths_kl(x_b, edge[order], ptr_o, sel, z_b, 0, edge.size)
    else:
        rb = nb_cycles.project_paths_l2(x_b, winv, edge[order], ptr_o, sel, z_b, 0,
                                        edge.size)
    np.testing.assert_allclose(x_a, x_b, rtol=1e-12)
    np.testing.assert_allclose(z_a[order], z_b, rtol=1e-12, atol=1e-13 * zscale)
    assert ra == pytest.approx(rb, rel=1e-12)
    assert np.all(z_a >= 0)


def test_nonnegative_pass_is_bit_identical():
    rng = np.random.RandomState(0)
    x0, winv = rng.randn(50), rng.rand(50) + 0.5
    z0 = np.where(rng.rand(50) < 0.5, rng.rand(50), 0.0)
    xa, za, xb, zb = x0.copy(), z0.copy(), x0.copy(), z0.copy()
    assert npk.project_nonnegative(xa, winv, za) == nb_cycles.project_nonnegative(xb, winv, zb)
    np.testing.assert_array_equal(xa, xb)
    np.testing.assert_array_equal(za, zb)


@pytest.mark.parametrize("seed", range(3))
def test_triangle_oracle_matches_the_kernel(seed):
    rng = np.random.RandomState(seed)
    n = 25
    x = np.abs(rng.randn(n * (n - 1) // 2))
    x[::7] = 0.0                                # ties and zero lengths
    mask = rng.rand(x.size) < 0.9
    got, want = DenseTriangleOracle(n, mask), DenseTriangleOracle(n, mask)
    got.numpy = True
    a, b = got(x, 1e-3), want(x, 1e-3)
    np.testing.assert_array_equal(a[0], b[0])   # the same violated edges
    np.testing.assert_array_equal(a[1], b[1])
    assert a[3] == pytest.approx(b[3], rel=1e-12)
    # the apexes may differ on ties; the violations may not
    def viols(res):
        e, path = res[0], res[2].reshape(-1, 2)
        return x[e] - x[path[:, 0]] - x[path[:, 1]]
    np.testing.assert_allclose(viols(a), viols(b), rtol=1e-12)


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = MetricNearness(**kwargs).fit(D, **fit_kw)
        with npk.numpy_limits(-1):
            b = MetricNearness(**kwargs).fit(D, **fit_kw)
    top = np.abs(D).max()
    assert a.violation_ <= 1e-6 and b.violation_ <= 1e-6
    # the same optimum, to the tolerance (relative to max |D|)
    np.testing.assert_allclose(a.metric_, b.metric_, rtol=0, atol=1e-5 * top)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-5, abs=1e-12 * top ** 2)
    if case == "metric":
        np.testing.assert_allclose(a.metric_, D, atol=1e-12)


def test_small_metric_nearness_does_not_load_numba():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import metric_estimators as me\n"
        "rng = np.random.RandomState(0)\n"
        "D = np.abs(rng.randn(30, 30)); D = D + D.T; np.fill_diagonal(D, 0)\n"
        "me.MetricNearness().fit(D)\n"
        "me.MetricNearness(divergence='kl').fit(D + 1 - np.eye(30))\n"
    )
    mods = modules_after(code)
    assert "metric_estimators.metric_nearness" in mods
    assert_no_numba(mods)


# ---------------------------------------------------------------------------
# correlation clustering (dense)



@pytest.mark.parametrize("subset", [False, True])
def test_pair_pass_is_bit_identical(subset):
    rng = np.random.RandomState(0)
    m = 200
    x, f = rng.rand(m), rng.randn(m)
    d = (rng.rand(m) < 0.5).astype(float)
    w = np.where(rng.rand(m) < 0.2, 0.0, rng.rand(m) * 3)   # zero-weight pairs
    zA = np.where(rng.rand(m) < 0.5, rng.rand(m), 0.0)
    zB = np.where(rng.rand(m) < 0.5, rng.rand(m), 0.0)
    edges = np.sort(rng.choice(m, 80, replace=False)).astype(np.int64)
    a = [v.copy() for v in (x, f, zA, zB)]
    b = [v.copy() for v in (x, f, zA, zB)]
    if subset:
        ra = npk.project_pairs_w(a[0], a[1], d, w, a[2], a[3], edges)
        rb = nb_cc.project_pairs_w_subset(b[0], b[1], d, w, b[2], b[3], edges)
    else:
        ra = npk.project_pairs_w(a[0], a[1], d, w, a[2], a[3])
        rb = nb_cc.project_pairs_w(b[0], b[1], d, w, b[2], b[3])
    assert ra == rb > 0
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_floyd_warshall_matches_the_kernel():
    rng = np.random.RandomState(0)
    X = np.abs(rng.randn(30, 30))
    X = X + X.T
    np.fill_diagonal(X, 0.0)
    a, b = X.copy(), X.copy()
    npk.apsp(a)
    nb_sp.apsp(b)
    np.testing.assert_allclose(a, b, rtol=1e-14)
    assert np.all(a <= X)


@pytest.mark.parametrize("seed", range(4))
def test_one_element_moves_give_the_kernels_labels(seed):
    rng = np.random.RandomState(seed)
    n = 40
    A = rng.randn(n, n)
    A = np.triu(A, 1)
    A = A + A.T
    if seed == 3:
        A = np.round(A)                         # ties
    labels0 = rng.randint(0, 6 if seed else n, n).astype(np.int64)
    la, lb = labels0.copy(), labels0.copy()
    sa = npk.best_one_element_moves(A, la, 50, 1e-12)
    sb = nb_moves.best_one_element_moves(A, lb, 50, 1e-12)
    assert sa == sb
    np.testing.assert_array_equal(la, lb)



@pytest.mark.parametrize("seed", range(5))
def test_sparse_one_element_moves_give_the_kernels_labels(seed):
    from scipy import sparse

    rng = np.random.RandomState(seed)
    n = 60
    A = sparse.random(n, n, density=0.08, random_state=rng,
                      data_rvs=rng.randn).toarray()
    A = np.triu(A, 1)
    if seed == 3:
        A = np.round(A)                         # ties (and explicit zeros)
    A = A + A.T
    A[:5] = A[:, :5] = 0.0                      # isolated nodes
    A = sparse.csr_matrix(A)
    if seed == 3:
        A.data[::3] = 0.0                       # stored zeros
    A.sort_indices()
    labels0 = rng.randint(0, 5 if seed else n, n).astype(np.int64)
    la, lb = labels0.copy(), labels0.copy()
    args = (A.indptr.astype(np.int64), A.indices.astype(np.int64),
            np.ascontiguousarray(A.data))
    sa = npk.sparse_one_element_moves(*args, la, 50, 1e-12)
    sb = nb_moves.sparse_one_element_moves(*args, lb, 50, 1e-12)
    assert sa == sb
    assert sa > 1                               # some moves were made
    np.testing.assert_array_equal(la, lb)



@pytest.mark.parametrize("seed", range(3))
def test_sparse_cost_gives_the_kernels_bits(seed):
    rng = np.random.RandomState(seed)
    m, n = 500, 90
    rows = rng.randint(0, n, m).astype(np.int64)
    cols = rng.randint(0, n, m).astype(np.int64)
    a = rng.randn(m) * 10.0 ** rng.randint(-8, 8, m)
    a[::7] = 0.0
    labels = rng.randint(0, 3 if seed else n, n).astype(np.int64)
    got = npk.sparse_cost(rows, cols, a, labels)
    want = nb_moves.sparse_cost(rows, cols, a, labels)
    assert got == want
    same = labels[rows] == labels[cols]
    assert np.isclose(got, a[(a > 0) & ~same].sum() - a[(a < 0) & same].sum())
    assert npk.sparse_cost(rows[:0], cols[:0], a[:0], labels) == 0.0

def test_sparse_local_search_same_labels_on_both_paths(monkeypatch):
    from scipy import sparse

    from metric_estimators._problems.cc_local_search import local_search

    rng = np.random.RandomState(7)
    n = 80
    truth = rng.randint(0, 4, n)
    A = sparse.random(n, n, density=0.1, random_state=rng).toarray() > 0
    A = np.triu(A, 1)
    A = A + A.T
    S = np.where(truth[:, None] == truth[None, :], 1.0, -1.0)
    S[rng.rand(n, n) < 0.1] *= -1
    S = np.triu(S, 1)
    S = S + S.T
    A = sparse.csr_matrix(np.where(A, S, 0.0))
    start = rng.randint(0, n, n)
    monkeypatch.setattr(npk, "CC_SPARSE_NUMPY_MAX_NODES", n)
    la, sa = local_search(A, start, 100)
    monkeypatch.setattr(npk, "CC_SPARSE_NUMPY_MAX_NODES", n - 1)
    lb, sb = local_search(A, start, 100)
    assert sa == sb > 1
    np.testing.assert_array_equal(la, lb)

def _signed(n, seed=0, weighted=False, scale=1.0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 4, n)
    A = np.where(labels[:, None] == labels[None, :], 1.0, -1.0)
    A = np.where(rng.rand(n, n) < 0.1, -A, A)
    if weighted:
        A = A * (rng.rand(n, n) + 0.1) * (rng.rand(n, n) < 0.8)
    A = np.triu(A, 1)
    return (A + A.T) * scale


@pytest.mark.parametrize("case", ["plain", "weighted", "tiny", "huge"])
def test_correlation_clustering_same_on_both_paths(case):
    A = _signed(40, weighted=case == "weighted",
                scale={"tiny": 1e-150, "huge": 1e150}.get(case, 1.0))
    a, b = _both_paths(lambda: CorrelationClustering(random_state=0), A)
    assert a.converged_ and b.converged_
    # both stop at a relative gap of gap_tol = 1e-4: the same LP optimum to
    # that, each objective above the other path's certified lower bound
    assert a.lp_objective_ == pytest.approx(b.lp_objective_, rel=2e-4)
    slack = 1e-9 * abs(b.lp_objective_)
    assert a.lp_objective_ >= b.lower_bound_ - slack
    assert b.lp_objective_ >= a.lower_bound_ - slack
    assert a.cost_ == pytest.approx(b.cost_, rel=0.05)


def test_small_correlation_clustering_does_not_load_numba():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import metric_estimators as me\n"
        "rng = np.random.RandomState(0)\n"
        "A = np.sign(rng.randn(30, 30)); A = np.triu(A, 1); A = A + A.T\n"
        "me.CorrelationClustering(random_state=0).fit(A)\n"
    )
    mods = modules_after(code)
    assert "metric_estimators.correlation_clustering" in mods
    assert_no_numba(mods)
