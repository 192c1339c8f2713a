"""MetricNearness / Project and Forget (Sonthalia & Gilbert, JMLR 2022)."""

import pickle

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from metric_estimators import _backend
from metric_estimators._kernels.edges import edge_id, matrix_to_edges
from metric_estimators._kernels.shortest_paths import apsp
from metric_estimators.metric_nearness import MetricNearness
from metric_estimators.solvers.active_sets import CycleConstraints
from metric_estimators.solvers.oracles import DenseShortestPathOracle


def random_dissimilarity(n, seed=0, kind="normal"):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        A = np.abs(rng.standard_normal((n, n)))
    else:
        A = rng.random((n, n))
    A = np.triu(A, 1)
    return A + A.T


def triples(n):
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n),
                          indexing="ij")
    keep = (i < j) & (k != i) & (k != j)
    return i[keep], j[keep], k[keep]


def cvxpy_nearness(cp, D, W=None):
    n = D.shape[0]
    d = matrix_to_edges(D)
    w = np.ones_like(d) if W is None else matrix_to_edges(W)
    i, j, k = triples(n)
    eid = np.vectorize(lambda a, b: edge_id(a, b, n))
    a, b, c = eid(i, j), eid(i, k), eid(k, j)
    x = cp.Variable(d.size)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.square(x - d)))),
                      [x[a] <= x[b] + x[c]])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11,
               tol_feas=1e-11)
    return prob.value, x.value


def max_triangle_violation(M):
    # max_{i,j,k} M_ij - M_ik - M_kj
    return float(np.max(M[:, :, None] - M[:, None, :] - M.T[None, :, :]))


@pytest.mark.parametrize("oracle", ["triangle", "shortest_path"])
@pytest.mark.parametrize("n,seed", [(8, 0), (20, 1), (30, 2)])
def test_objective_matches_cvxpy(n, seed, oracle, cp):
    D = random_dissimilarity(n, seed)
    est = MetricNearness(tol=1e-9, oracle=oracle).fit(D)
    ref, _ = cvxpy_nearness(cp, D)
    assert est.converged_
    assert abs(est.objective_ - ref) <= 1e-6 * ref
    M = est.metric_
    assert max_triangle_violation(M) <= 1e-9 * D.max() * 1.01
    np.testing.assert_allclose(M, M.T)
    assert np.all(np.diag(M) == 0)


@pytest.mark.parametrize("n,seed", [(10, 3), (25, 4)])
def test_weighted_objective_matches_cvxpy(n, seed, cp):
    # weighted, on 0/1-like data with ties (many equal distances)
    D = random_dissimilarity(n, seed)
    rng = np.random.default_rng(seed + 100)
    W = rng.uniform(0.1, 5.0, (n, n))
    W = (W + W.T) / 2
    est = MetricNearness(tol=1e-9).fit(D, sample_weight=W)
    ref, _ = cvxpy_nearness(cp, D, W)
    assert abs(est.objective_ - ref) <= 1e-6 * ref
    assert max_triangle_violation(est.metric_) <= 1e-9 * D.max() * 1.01
    # the weights matter: the unweighted solution is worse for this objective
    M0 = MetricNearness(tol=1e-9).fit_transform(D)
    iu = np.triu_indices(n, 1)
    obj0 = np.sum(W[iu] * (M0[iu] - D[iu]) ** 2)
    assert obj0 > est.objective_ * (1 + 1e-4)


@pytest.mark.slow
def test_objective_matches_cvxpy_n40_weighted(cp):
    n = 40
    D = random_dissimilarity(n, 7, kind="uniform")
    W = np.random.default_rng(8).uniform(0.5, 2.0, (n, n))
    W = (W + W.T) / 2
    est = MetricNearness(tol=1e-9).fit(D, sample_weight=W)
    ref, _ = cvxpy_nearness(cp, D, W)
    assert abs(est.objective_ - ref) <= 1e-6 * ref


def test_metric_input_unchanged():
    # a metric is its own nearest metric: nothing to project
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    est = MetricNearness().fit(D)
    np.testing.assert_allclose(est.metric_, D, atol=1e-12)
    assert est.objective_ <= 1e-20
    assert est.n_active_ == 0
    assert est.converged_


def test_three_points_closed_form():
    # D = [[0,1,4],[1,0,1],[4,1,0]]: violation 2 shared equally by the 3 edges
    D = np.array([[0, 1, 4], [1, 0, 1], [4, 1, 0]], dtype=float)
    M = MetricNearness(tol=1e-12).fit_transform(D)
    assert M[0, 2] == pytest.approx(4 - 2 / 3)
    assert M[0, 1] == pytest.approx(1 + 2 / 3)
    assert M[1, 2] == pytest.approx(1 + 2 / 3)


def test_active_set_forgets():
    n = 60
    D = random_dissimilarity(n, 5)
    est = MetricNearness(tol=1e-7).fit(D)
    n_triangle_constraints = 3 * n * (n - 1) * (n - 2) // 6
    assert est.n_active_ > 0
    assert est.n_active_ < 0.05 * n_triangle_constraints
    h = est.history_
    assert sum(h["n_forgotten"]) > 0
    # more constraints were seen than are kept
    assert sum(h["n_added"]) > est.n_active_


def test_stops_only_when_duals_consistent():
    # the last pass found every remembered constraint tight, within tol
    D = random_dissimilarity(40, 6)
    est = MetricNearness(tol=1e-8).fit(D)
    assert est.converged_
    assert est.history_["residual"][-1] <= 1e-8 * D.max()
    assert est.violation_ <= 1e-8


def test_convergence_warning_and_history():
    D = random_dissimilarity(30, 1)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = MetricNearness(max_iter=2, tol=1e-12).fit(D)
    assert est.n_iter_ == 2 and not est.converged_
    assert est.loss_curve_.shape == (2,)
    for key in ("objective", "max_violation", "residual", "n_active", "time"):
        assert len(est.history_[key]) == 2


def test_verbose_table(capsys):
    D = random_dissimilarity(15, 2)
    MetricNearness(verbose=1).fit(D)
    out = capsys.readouterr().out
    assert "Iteration" in out and "Violation" in out and "Active" in out
    assert len(out.strip().splitlines()) >= 3


def test_sparse_graph_matches_cvxpy(cp):
    # graph metric nearness: the edge lengths of a sparse graph; the solution
    # is the restriction of some metric on all nodes (cycle inequalities +
    # non-negativity), computed by cvxpy through a full metric completion
    rng = np.random.default_rng(3)
    n = 14
    A = sparse.random(n, n, density=0.35, random_state=rng, format="coo")
    A = sparse.triu(A, 1)
    A = (A + A.T).tocsr()
    A.data = np.abs(rng.standard_normal(A.nnz)) * 3
    A = ((A + A.T) / 2).tocsr()
    est = MetricNearness(tol=1e-10).fit(A)
    U = sparse.triu(A, 1).tocoo()
    Y = cp.Variable((n, n), symmetric=True)
    i, j, k = triples(n)
    cons = [Y[i, j] <= Y[i, k] + Y[k, j], Y >= 0]
    obj = cp.sum(cp.square(Y[U.row, U.col] - U.data))
    ref = cp.Problem(cp.Minimize(obj), cons)
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11,
              tol_feas=1e-11)
    assert sparse.issparse(est.metric_)
    assert abs(est.objective_ - ref.value) <= 1e-6 * max(ref.value, 1e-12)
    M = est.metric_.tocsr()
    assert (M != M.T).nnz == 0


@pytest.mark.parametrize("bad,match", [
    (np.zeros((3, 4)), "square"),
    (np.array([[0, 1.0], [2.0, 0]]), "symmetric"),
    (np.array([[0, np.nan], [np.nan, 0]]), "NaN"),
    (np.array([[0, np.inf], [np.inf, 0]]), "NaN or infinity"),
    (np.array([[1.0, 1.0], [1.0, 0]]), "zero diagonal"),
    (np.zeros((2, 2, 2)), "square"),
])
def test_bad_input(bad, match):
    with pytest.raises(ValueError, match=match) as exc:
        MetricNearness().fit(bad)
    assert "D" in str(exc.value)


def test_tags_say_D_is_a_pairwise_matrix_positive_only_for_kl():
    from sklearn.utils import get_tags

    tags = get_tags(MetricNearness()).input_tags
    assert tags.pairwise and tags.sparse and not tags.positive_only
    tags = get_tags(MetricNearness(divergence="kl")).input_tags
    assert tags.pairwise and tags.sparse and tags.positive_only


def signed_normal(n, seed):
    """Sonthalia & Gilbert's type 1: symmetric, signed N(0, 1) entries."""
    A = np.triu(np.random.default_rng(seed).standard_normal((n, n)), 1)
    return A + A.T


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n,seed", [(8, 0), (10, 1), (12, 2)])
def test_signed_D_matches_cvxpy(n, seed, weighted, cp):
    # negative entries: the triangle inequalities over distinct triples imply
    # M >= 0, so cvxpy's QP (triangles only, no explicit M >= 0) is the
    # problem MetricNearness solves
    D = signed_normal(n, seed)
    assert D.min() < 0
    W = None
    if weighted:
        W = np.random.default_rng(seed + 50).lognormal(0.0, 1.0, (n, n))
        W = (W + W.T) / 2
    est = MetricNearness(tol=1e-9, max_iter=5000).fit(D, sample_weight=W)
    ref, xref = cvxpy_nearness(cp, D, W)
    assert est.converged_
    assert abs(est.objective_ - ref) <= 1e-6 * ref
    M = est.metric_
    np.testing.assert_allclose(matrix_to_edges(M), xref, atol=1e-5)
    assert M.min() >= 0.0
    assert np.array_equal(M, M.T) and np.all(np.diag(M) == 0)
    assert max_triangle_violation(M) <= 1e-9 * np.abs(D).max() * 1.01
    # a pair whose D is negative ends at 0 or above, never below
    assert np.all(M[D < 0] >= 0.0)


def test_signed_sparse_graph_matches_cvxpy(cp):
    # graph edges with negative lengths: M_e >= 0 is an explicit constraint
    n = 10
    D = signed_normal(n, 4)
    rng = np.random.default_rng(5)
    keep = np.triu(rng.random((n, n)) < 0.5, 1)
    keep = keep | keep.T
    G = sparse.csr_matrix(np.where(keep, D, 0.0))
    est = MetricNearness(tol=1e-9, max_iter=5000).fit(G)
    # cvxpy: a full metric on all n nodes, objective on the graph's edges only
    iu = np.triu_indices(n, 1)
    on = keep[iu]
    i, j, k = triples(n)
    eid = np.vectorize(lambda a, b: edge_id(a, b, n))
    a, b, c = eid(i, j), eid(i, k), eid(k, j)
    x = cp.Variable(iu[0].size)
    d = D[iu]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x[on] - d[on])),
                      [x[a] <= x[b] + x[c], x >= 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11,
               tol_feas=1e-11)
    assert est.converged_
    assert abs(est.objective_ - prob.value) <= 1e-6 * prob.value
    assert est.metric_.data.min() >= 0.0


@pytest.mark.parametrize("sparse_input", [False, True])
def test_negative_D_rejected_only_for_kl(sparse_input):
    D = signed_normal(6, 0)
    n_neg = int(np.count_nonzero(np.triu(D, 1) < 0))
    assert n_neg > 0
    G = sparse.csr_matrix(D) if sparse_input else D
    with pytest.raises(ValueError, match=(
            rf"divergence='kl' needs strictly positive dissimilarities.* "
            rf"{n_neg} negative and 0 zero entries.*divergence='l2'")):
        MetricNearness(divergence="kl").fit(G)
    M = MetricNearness().fit_transform(G)
    M = M.toarray() if sparse_input else M
    assert M.min() >= 0.0


def test_bad_weights():
    D = random_dissimilarity(4)
    with pytest.raises(ValueError, match="sample_weight.*shape"):
        MetricNearness().fit(D, sample_weight=np.ones((3, 3)))
    W = np.ones((4, 4))
    W[0, 1] = W[1, 0] = -1
    with pytest.raises(ValueError, match="sample_weight.*non-negative"):
        MetricNearness().fit(D, sample_weight=W)
    W = np.ones((4, 4))
    W[0, 1] = 2
    with pytest.raises(ValueError, match="sample_weight.*symmetric"):
        MetricNearness().fit(D, sample_weight=W)
    W = np.ones((4, 4))
    W[2, 3] = W[3, 2] = np.nan
    with pytest.raises(ValueError, match="sample_weight.*NaN"):
        MetricNearness().fit(D, sample_weight=W)
    with pytest.raises(TypeError, match="D must be a real numeric"):
        MetricNearness().fit(np.array([["a", "b"], ["c", "d"]]))


def test_bad_params():
    D = random_dissimilarity(4)
    with pytest.raises(ValueError, match="tol"):
        MetricNearness(tol=-1).fit(D)
    with pytest.raises(ValueError, match="max_iter"):
        MetricNearness(max_iter=0).fit(D)
    with pytest.raises(ValueError, match="oracle"):
        MetricNearness(oracle="bfs").fit(D)


def test_zero_one_data_both_oracles_agree(cp):
    # 0/1 dissimilarities (many zero distances: long shortest paths)
    rng = np.random.default_rng(4)
    L = rng.random((25, 4)) < 0.3
    D = np.where((L.astype(int) @ L.T.astype(int)) > 0, 0.0, 1.0)
    np.fill_diagonal(D, 0)
    a = MetricNearness(tol=1e-9, oracle="triangle").fit(D)
    b = MetricNearness(tol=1e-9, oracle="shortest_path").fit(D)
    ref, _ = cvxpy_nearness(cp, D)
    assert abs(a.objective_ - ref) <= 1e-6 * ref
    assert abs(b.objective_ - ref) <= 1e-6 * ref


def test_clone_pickle_deterministic():
    D = random_dissimilarity(25, 9)
    a = MetricNearness(tol=1e-7).fit(D)
    b = pickle.loads(pickle.dumps(clone(a))).fit(D)
    np.testing.assert_array_equal(a.metric_, b.metric_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.metric_, c.metric_)


def test_tiny_inputs():
    for n in (1, 2):
        D = np.zeros((n, n))
        if n == 2:
            D[0, 1] = D[1, 0] = 3.0
        M = MetricNearness().fit_transform(D)
        np.testing.assert_array_equal(M, D)
    M = MetricNearness().fit_transform(np.zeros((5, 5)))
    np.testing.assert_array_equal(M, 0)


def test_oracle_finds_shortest_paths():
    # the oracle's path for each violated edge is a shortest path
    n = 25
    D = random_dissimilarity(n, 11)
    x = matrix_to_edges(D)
    oracle = DenseShortestPathOracle(n, kernels=_backend.NUMBA)
    ce, ptr, path, maxv = oracle(x, 0.0)
    from scipy.sparse.csgraph import floyd_warshall
    SP = floyd_warshall(D)
    iu = np.triu_indices(n, 1)
    assert maxv == pytest.approx(np.max(D[iu] - SP[iu]))
    assert ce.size == np.count_nonzero(D[iu] - SP[iu] > 0)
    for c in range(ce.size):
        e = ce[c]
        length = x[path[ptr[c]:ptr[c + 1]]].sum()
        u, v = iu[0][e], iu[1][e]
        assert length == pytest.approx(SP[u, v], rel=1e-12)
        assert e not in path[ptr[c]:ptr[c + 1]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apsp_kernel(dtype):
    from scipy.sparse.csgraph import floyd_warshall
    for n in (5, 130, 300):
        D = random_dissimilarity(n, n)
        R = D.astype(dtype)
        apsp(R)
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(R, floyd_warshall(D), rtol=rtol)


def test_active_set_dedup_and_forget():
    act = CycleConstraints(kernels=_backend.NUMBA)
    ce = np.array([0, 1], np.int64)
    ptr = np.array([0, 2, 4], np.int64)
    path = np.array([1, 2, 0, 2], np.int32)
    assert act.add(ce, ptr, path) == 2
    assert act.add(ce, ptr, path) == 0  # duplicates are not stored twice
    act.z[:] = [0.0, 1.0]
    assert act.forget() == 1
    assert len(act) == 1 and act.edge[0] == 1
    assert act.add(ce, ptr, path) == 1  # forgotten constraints may return


# --- triangle oracle kernel, unit-weight projection, KL divergence ----------

@pytest.mark.parametrize("kernel", ["triangle_argmin", "triangle_argmin_serial"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [3, 17, 130, 301])
def test_triangle_argmin_matches_numpy(n, dtype, kernel):
    # the tiled parallel kernel (large n) and the serial one (small n)
    from metric_estimators._kernels import triangle_oracle
    triangle_argmin = getattr(triangle_oracle, kernel)
    # coarse values, so that ties occur and the first index must win
    X = np.round(random_dissimilarity(n, n), 1).astype(dtype)
    M = np.full((n, n), -1.0, dtype=dtype)
    W = np.full((n, n), -1, dtype=np.int32)
    triangle_argmin(X, M, W)
    S = X[:, :, None] + X[None, :, :]          # S[i, k, j] = X_ik + X_kj
    ref = S.min(axis=1)
    arg = S.argmin(axis=1)                    # first minimiser, as ours
    iu = np.triu_indices(n, 1)
    np.testing.assert_array_equal(M[iu], ref[iu])
    np.testing.assert_array_equal(W[iu], arg[iu])
    # the ties the rule is about do occur: several minimisers k of some
    # (i, j) (k = i and k = j tie whenever they are minimal), and from
    # n = 17 on ties among the other k too
    is_min = S == ref[:, None, :]
    assert np.any(is_min.sum(axis=1)[iu] > 1)
    k = np.arange(n)
    is_min[k, k, :] = False  # k == i
    is_min[:, k, k] = False  # k == j
    assert n < 17 or np.any(is_min.sum(axis=1)[iu] > 1)


def test_unit_weight_triangle_kernel_equals_general_kernel():
    from metric_estimators._kernels.cycle_projections import (
        project_paths_l2,
        project_triangles_unit,
    )
    rng = np.random.default_rng(0)
    m, k = 60, 400
    edge = rng.integers(0, m, k).astype(np.int64)
    path = rng.integers(0, m, 2 * k).astype(np.int32)
    ptr = np.arange(0, 2 * k + 1, 2, dtype=np.int64)
    for winv in (1.0, 0.25):
        x1 = rng.random(m)
        z1 = np.where(rng.random(k) < 0.5, rng.random(k), 0.0)
        x2, z2 = x1.copy(), z1.copy()
        r1 = r2 = 0.0
        for _ in range(3):
            r1 = project_paths_l2(x1, np.full(m, winv), edge, ptr, path, z1,
                                  0, k)
            r2 = project_triangles_unit(x2, winv, edge, path, z2, 0, k)
        np.testing.assert_allclose(x2, x1, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(z2, z1, rtol=1e-12, atol=1e-12)
        assert r1 == pytest.approx(r2, rel=1e-9)
        assert np.all(z2 >= 0)


def cvxpy_kl_nearness(cp, D):
    n = D.shape[0]
    d = matrix_to_edges(D)
    i, j, k = triples(n)
    eid = np.vectorize(lambda a, b: edge_id(a, b, n))
    a, b, c = eid(i, j), eid(i, k), eid(k, j)
    x = cp.Variable(d.size)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.kl_div(x, d))),
                      [x[a] <= x[b] + x[c]])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11,
               tol_feas=1e-11)
    return prob.value, x.value


@pytest.mark.parametrize("oracle", ["triangle", "shortest_path"])
@pytest.mark.parametrize("n,seed", [(8, 0), (16, 1)])
def test_kl_objective_matches_cvxpy(n, seed, oracle, cp):
    D = random_dissimilarity(n, seed, kind="uniform") + 0.05
    np.fill_diagonal(D, 0.0)
    mn = MetricNearness(divergence="kl", tol=1e-9, oracle=oracle).fit(D)
    ref, xref = cvxpy_kl_nearness(cp, D)
    assert mn.converged_
    assert abs(mn.objective_ - ref) <= 1e-6 * ref
    x = matrix_to_edges(mn.metric_)
    # KL objective as stated, from the returned metric
    d = matrix_to_edges(D)
    assert mn.objective_ == pytest.approx(
        np.sum(x * np.log(x / d) - x + d), rel=1e-12)
    np.testing.assert_allclose(x, xref, atol=1e-4 * D.max())
    assert max_triangle_violation(mn.metric_) <= 1e-8 * D.max()
    assert np.all(x > 0)


def test_kl_differs_from_l2_and_is_relative():
    # KL moves small entries less than L2 does: on one violated triangle
    # (a, b, c) = (4, 1, 1), L2 moves all three by the same amount, KL
    # multiplicatively
    D = np.array([[0, 4, 1], [4, 0, 1], [1, 1, 0]], dtype=float)
    l2 = MetricNearness().fit_transform(D)
    kl = MetricNearness(divergence="kl", tol=1e-10).fit_transform(D)
    np.testing.assert_allclose([l2[0, 1], l2[0, 2], l2[1, 2]],
                               [10 / 3, 5 / 3, 5 / 3], atol=1e-5)
    # closed form: 4 e^-c = 2 e^c  ->  e^c = sqrt(2)
    np.testing.assert_allclose([kl[0, 1], kl[0, 2], kl[1, 2]],
                               [4 / np.sqrt(2), np.sqrt(2), np.sqrt(2)],
                               rtol=1e-8)


def test_kl_sparse_graph_and_scale():
    D = random_dissimilarity(12, 5, kind="uniform") + 0.1
    np.fill_diagonal(D, 0.0)
    dense = MetricNearness(divergence="kl", tol=1e-9).fit(D)
    # a scaled input gives the scaled metric and the scaled divergence
    scaled = MetricNearness(divergence="kl", tol=1e-9).fit(D * 8.0)
    np.testing.assert_allclose(scaled.metric_, 8.0 * dense.metric_,
                               rtol=1e-7)
    assert scaled.objective_ == pytest.approx(8.0 * dense.objective_,
                                              rel=1e-7)
    # the complete graph given as a sparse matrix: same problem (cycle
    # inequalities of K_n = its triangle inequalities)
    sp = MetricNearness(divergence="kl", tol=1e-9).fit(sparse.csr_matrix(D))
    np.testing.assert_allclose(sp.metric_.toarray(), dense.metric_,
                               atol=1e-6)


def test_kl_bad_input():
    D = random_dissimilarity(6, 0)
    D[0, 1] = D[1, 0] = 0.0
    with pytest.raises(ValueError, match="divergence='kl'.*positive"):
        MetricNearness(divergence="kl").fit(D)
    D = random_dissimilarity(6, 0) + 0.1
    np.fill_diagonal(D, 0.0)
    with pytest.raises(ValueError, match="sample_weight.*divergence='kl'"):
        MetricNearness(divergence="kl").fit(D, sample_weight=np.ones((6, 6)))
    with pytest.raises(ValueError, match="divergence"):
        MetricNearness(divergence="entropy").fit(D)


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_triangle_oracle_serial_and_parallel_kernels_agree(monkeypatch, precision):
    # below PARALLEL_MIN_NODES the oracle runs serial kernels, from it on the
    # tiled parallel ones: the same constraints and largest violation
    from metric_estimators._kernels import triangle_oracle
    from metric_estimators.solvers.oracles import DenseTriangleOracle
    n = 90
    x = matrix_to_edges(np.round(random_dissimilarity(n, 3), 1))
    mask = np.random.default_rng(0).random(x.size) < 0.8
    got = {}
    for cutoff in (n + 1, n):  # serial, then parallel
        monkeypatch.setattr(triangle_oracle, "PARALLEL_MIN_NODES", cutoff)
        got[cutoff] = DenseTriangleOracle(n, edge_mask=mask, kernels=_backend.NUMBA)(x, 1e-3, precision=precision)
    assert got[n][0].size > 0
    for a, b in zip(got[n + 1], got[n]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("c", [1e150, 1e-150, 3e38, 1e-40])
def test_triangle_oracle_float32_phase_any_scale(c):
    # the float32 search runs on X / 2^k: no overflow at 1e150, no underflow
    # at 1e-150; it must return the same triangles as the float64 search
    from metric_estimators.solvers.oracles import DenseTriangleOracle
    D = random_dissimilarity(40, 7)
    x = matrix_to_edges(D)
    oracle = DenseTriangleOracle(40, kernels=_backend.NUMBA)
    ref = oracle(x, 1e-9, precision="float64")
    got = oracle(x * c, 1e-9 * c, precision="float32")
    assert ref[0].size > 0
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[2], ref[2])
    assert got[3] == pytest.approx(ref[3] * c, rel=1e-12)


# --- several triangles per violated edge (violated_apexes) -------------------

def brute_force_apexes(D, threshold, cap, rel, depth=0.0):
    """Every (edge, apex) the multi-apex oracle must return, by enumeration."""
    n = D.shape[0]
    found, worst = set(), 0.0
    # the largest violation as the min-plus square sees it: x_uv - (x_uw + x_wv)
    iu = np.triu_indices(n, 1)
    deep = depth * max(0.0, float(np.max(
        D[iu] - (D[:, :, None] + D[None, :, :]).min(axis=1)[iu]))) if n > 2 else 0.0
    for u in range(n):
        for v in range(u + 1, n):
            viol = [(D[u, v] - D[u, w] - D[w, v], w) for w in range(n)]
            best = max(s for s, _ in viol)
            worst = max(worst, best)
            if best <= threshold:
                continue
            keep = sorted(((s, w) for s, w in viol if s > max(threshold, rel * best)),
                          key=lambda t: (-t[0], t[1]))
            if cap > 0:
                keep = keep[:cap]
            sums = [D[u, w] + D[w, v] for w in range(n)]
            if depth > 0 and D[u, v] - min(sums) <= deep:
                # a shallow edge: the min-plus argmin (first minimiser) only
                w = int(np.argmin(sums))
                keep = [(D[u, v] - D[u, w] - D[w, v], w)]
            found |= {(edge_id(u, v, n), edge_id(u, w, n), edge_id(w, v, n))
                      for _, w in keep}
    return found, worst


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("cap,rel,depth", [(0, 0.0, 0.0), (3, 0.0, 0.0),
                                           (0, 0.5, 0.0), (2, 0.3, 0.0),
                                           (1000, 0.0, 0.0), (0, 0.0, 0.5),
                                           (4, 0.5, 0.3)])
@pytest.mark.parametrize("n,seed", [(3, 0), (9, 1), (23, 2)])
def test_apex_oracle_matches_brute_force(n, seed, cap, rel, depth, precision):
    from metric_estimators.solvers.oracles import DenseTriangleOracle
    # coarse values: ties among apexes (and at the cap's cut) occur; the
    # float32 search needs distinct sums to pick the same single triangle
    D = random_dissimilarity(n, seed, kind="uniform")
    if depth == 0.0 or precision == "float64":
        D = np.round(D, 1)
    oracle = DenseTriangleOracle(n, apexes=cap, apex_rel=rel, apex_depth=depth, kernels=_backend.NUMBA)
    ce, ptr, path, maxv = oracle(matrix_to_edges(D), 1e-9, precision=precision)
    np.testing.assert_array_equal(ptr, np.arange(0, 2 * ce.size + 1, 2))
    got = {(int(ce[c]), int(path[2 * c]), int(path[2 * c + 1]))
           for c in range(ce.size)}
    ref, worst = brute_force_apexes(D, 1e-9, cap, rel, depth)
    assert len(got) == ce.size  # no triangle twice
    assert got == ref
    assert maxv == pytest.approx(worst, abs=1e-12)


def test_apex_oracle_supplies_every_apex_of_a_far_pair():
    # one far pair (D = 1) among nodes close to each other (D = 0): every
    # other node is the apex of a violated triangle; one call returns them
    # all (apexes=0), the default oracle one
    from metric_estimators.solvers.oracles import DenseTriangleOracle
    n = 12
    D = np.zeros((n, n))
    D[2, 7] = D[7, 2] = 1.0
    x = matrix_to_edges(D)
    ce, _, path, maxv = DenseTriangleOracle(n, apexes=0, kernels=_backend.NUMBA)(x, 1e-9)
    assert maxv == 1.0
    assert set(ce.tolist()) == {edge_id(2, 7, n)}
    apexes = {w for w in range(n) if w not in (2, 7)}
    assert {(int(path[2 * c]), int(path[2 * c + 1])) for c in range(ce.size)} \
        == {(edge_id(2, w, n), edge_id(w, 7, n)) for w in apexes}
    assert DenseTriangleOracle(n, kernels=_backend.NUMBA)(x, 1e-9)[0].size == 1
    assert DenseTriangleOracle(n, apexes=4, kernels=_backend.NUMBA)(x, 1e-9)[0].size == 4


def label_set_dissimilarity(n, seed, labels=12, keep=4):
    """Sonthalia & Gilbert's type 2 in miniature: 1 for disjoint label sets, else 1e-8."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(labels), size=n)
    top = np.argsort(-P, axis=1, kind="stable")[:, :keep]
    L = np.zeros((n, labels), dtype=int)
    np.put_along_axis(L, top, 1, axis=1)
    D = np.where((L @ L.T) == 0, 1.0, 1e-8)
    np.fill_diagonal(D, 0.0)
    return D


@pytest.mark.parametrize("per_edge", [0, 3, 32])
@pytest.mark.parametrize("kind", ["normal", "labels", "signed"])
def test_several_triangles_per_edge_match_cvxpy(kind, per_edge, cp):
    n = 22
    if kind == "labels":
        D = label_set_dissimilarity(n, 5)
        assert 0 < np.count_nonzero(D == 1.0) < n * n / 2  # some far pairs
    else:
        D = random_dissimilarity(n, 6)
        if kind == "signed":
            signs = np.sign(np.random.default_rng(7).standard_normal((n, n)))
            D = np.triu(D * signs, 1)
            D = D + D.T
            assert D.min() < 0
    ref, _ = cvxpy_nearness(cp, D)
    one = MetricNearness(tol=1e-9).fit(D)
    est = MetricNearness(tol=1e-9, triangles_per_edge=per_edge).fit(D)
    assert est.converged_
    assert abs(est.objective_ - ref) <= 1e-6 * max(ref, 1e-12) + 1e-12
    assert max_triangle_violation(est.metric_) <= 1e-9 * np.abs(D).max() * 1.01
    np.testing.assert_allclose(est.metric_, one.metric_, atol=1e-6)


def test_several_triangles_per_edge_kl_matches_cvxpy(cp):
    D = random_dissimilarity(14, 8) + 0.05
    np.fill_diagonal(D, 0.0)
    ref, _ = cvxpy_kl_nearness(cp, D)
    est = MetricNearness(tol=1e-9, divergence="kl", triangles_per_edge=4).fit(D)
    assert est.converged_
    assert abs(est.objective_ - ref) <= 1e-6 * ref


def test_triangles_per_edge_warns_where_it_does_not_apply():
    D = random_dissimilarity(8, 3)
    with pytest.warns(UserWarning, match="triangles_per_edge=4 is ignored"):
        MetricNearness(oracle="shortest_path", triangles_per_edge=4).fit(D)
    with pytest.warns(UserWarning, match="triangles_per_edge=0 is ignored"):
        MetricNearness(triangles_per_edge=0).fit(sparse.csr_matrix(D))
    with pytest.raises(ValueError, match="triangles_per_edge"):
        MetricNearness(triangles_per_edge=-1).fit(D)
