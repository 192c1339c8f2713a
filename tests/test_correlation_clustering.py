"""CorrelationClustering: Veldt et al.'s regularised LP + LP-KwikCluster."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score

from metric_estimators import _backend
from metric_estimators._kernels.edges import edge_id, matrix_to_edges
from metric_estimators.correlation_clustering import (
    CorrelationClustering,
    correlation_clustering_cost,
    pivot_rounding,
)


def planted(n, k, p_flip, seed, density=1.0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k, n)
    S = np.where(g[:, None] == g[None], 1.0, -1.0)
    S[rng.random((n, n)) < p_flip] *= -1
    S *= rng.uniform(0.5, 2, (n, n))
    S[rng.random((n, n)) > density] = 0
    S = np.triu(S, 1)
    return S + S.T, g


def cvxpy_lp(cp, A):
    n = A.shape[0]
    a = matrix_to_edges(A)
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n),
                          indexing="ij")
    keep = (i < j) & (k != i) & (k != j)
    eid = np.vectorize(lambda u, v: edge_id(u, v, n))
    ea, eb, ec = eid(i[keep], j[keep]), eid(i[keep], k[keep]), eid(k[keep], j[keep])
    x = cp.Variable(a.size)
    w = np.abs(a)
    d = (a < 0).astype(float)
    p = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.abs(x - d)))),
                   [x[ea] <= x[eb] + x[ec], x >= 0, x <= 1])
    p.solve(solver="CLARABEL")
    return p.value


@pytest.mark.parametrize("n,seed,density", [(30, 0, 1.0), (24, 1, 0.5)])
def test_lp_matches_cvxpy(n, seed, density, cp):
    A, _ = planted(n, 3, 0.2, seed, density)
    # gamma 500, was 50: the regulariser is now centred at d (Veldt et al.),
    # which at gamma = 50 leaves 0.24 % between the QP solution and the LP
    cc = CorrelationClustering(gamma=500, tol=1e-4, max_iter=3000,
                               random_state=0).fit(A)
    ref = cvxpy_lp(cp, A)
    assert cc.converged_
    assert abs(cc.lp_objective_ - ref) <= 1e-3 * ref
    # the lower bound is valid and tight-ish; the rounding is no better than
    # the LP (up to the solve's accuracy) and within the LP-KwikCluster range
    assert cc.lower_bound_ <= ref * (1 + 1e-9)
    assert cc.lower_bound_ >= 0.95 * ref
    assert cc.cost_ >= ref * (1 - 1e-6)
    assert cc.cost_ <= 2.5 * ref
    X = cc.lp_solution_
    viol = np.max(X[:, :, None] - X[:, None, :] - X.T[None, :, :])
    assert viol <= 2e-4 * 1.01
    assert X.min() >= 0 and X.max() <= 1


def test_lower_bound_below_lp_for_any_gamma(cp):
    A, _ = planted(20, 2, 0.3, 3)
    ref = cvxpy_lp(cp, A)
    for gamma in (1.0, 5.0):
        cc = CorrelationClustering(gamma=gamma, tol=1e-5, random_state=0).fit(A)
        assert cc.lower_bound_ <= ref * (1 + 1e-9)
        assert cc.lp_objective_ >= ref * (1 - 1e-3)


def test_recovers_planted_partition():
    A, g = planted(60, 3, 0.05, 4)
    labels = CorrelationClustering(random_state=0).fit_predict(A)
    assert adjusted_rand_score(g, labels) > 0.95
    assert labels.shape == (60,)


def test_sparse_input_and_cost():
    # a sparse A takes the sparse path (the edge LP): the same clustering as
    # the dense path on this graph (cluster ids are numbered in pivot order,
    # which differs), the same LP within the solves' accuracy
    A, _ = planted(30, 3, 0.1, 5, density=0.4)
    cc1 = CorrelationClustering(random_state=0).fit(A)
    cc2 = CorrelationClustering(random_state=0).fit(sparse.csr_matrix(A))
    assert adjusted_rand_score(cc1.labels_, cc2.labels_) == 1.0
    assert cc2.cost_ == pytest.approx(cc1.cost_, rel=1e-12)
    assert cc2.lp_objective_ == pytest.approx(cc1.lp_objective_, rel=3e-2)
    assert cc1.cost_ == pytest.approx(correlation_clustering_cost(A, cc1.labels_))


def test_cost_function():
    A = np.array([[0, 1, -2], [1, 0, 3], [-2, 3, 0]], dtype=float)
    assert correlation_clustering_cost(A, [0, 0, 0]) == 2.0
    assert correlation_clustering_cost(A, [0, 1, 2]) == 4.0
    assert correlation_clustering_cost(A, [0, 0, 1]) == 3.0


def test_pivot_rounding_integral_solution():
    # an integral LP solution is reproduced exactly by both roundings
    g = np.array([0, 0, 1, 1, 1, 2])
    X = (g[:, None] != g[None]).astype(float)
    for rounding in ("threshold", "probabilistic"):
        labels = pivot_rounding(X, np.random.default_rng(0), rounding)
        assert adjusted_rand_score(g, labels) == 1.0


def test_reproducible_and_clone():
    A, _ = planted(25, 2, 0.2, 6)
    a = CorrelationClustering(random_state=3, rounding="threshold").fit(A)
    b = clone(a).fit(A)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.lp_objective_ == b.lp_objective_


@pytest.mark.parametrize("bad,match,exc", [
    (np.zeros((2, 3)), "square", ValueError),
    (np.array([[0, 1.0], [-1.0, 0]]), "symmetric", ValueError),
    (np.array([[0, np.nan], [np.nan, 0]]), "NaN", ValueError),
    (np.array([[1.0, 0], [0, 0]]), "diagonal", ValueError),
    (np.array([["a"]]), "numeric", TypeError),
])
def test_bad_input(bad, match, exc):
    with pytest.raises(exc, match=match):
        CorrelationClustering().fit(bad)


def test_bad_params():
    A, _ = planted(5, 2, 0.0, 0)
    with pytest.raises(ValueError, match="gamma"):
        CorrelationClustering(gamma=0).fit(A)
    with pytest.raises(ValueError, match="rounding"):
        CorrelationClustering(rounding="best").fit(A)


def _brute_best_move_gain(A, labels):
    # largest cost decrease of one single-node move (numpy reference)
    base = correlation_clustering_cost(A, labels)
    best = 0.0
    ids = list(np.unique(labels)) + [labels.max() + 1]
    for i in range(len(labels)):
        for c in ids:
            if c == labels[i]:
                continue
            trial = labels.copy()
            trial[i] = c
            best = max(best, base - correlation_clustering_cost(A, trial))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_local_search_is_a_local_optimum_and_never_worse(seed):
    from metric_estimators._kernels.correlation_clustering import best_one_element_moves
    rng = np.random.default_rng(seed)
    n = 25
    A = rng.normal(size=(n, n))
    A = np.triu(A, 1)
    A = A + A.T
    labels = rng.integers(0, 4, n).astype(np.int64)
    before = correlation_clustering_cost(A, labels)
    out = labels.copy()
    sweeps = best_one_element_moves(A, out, 100, 1e-12)
    after = correlation_clustering_cost(A, out)
    assert 1 <= sweeps < 100
    assert after < before
    # no single move (to any cluster or a new singleton) helps any more
    assert _brute_best_move_gain(A, out) <= 1e-9


def test_local_search_in_estimator():
    A, truth = planted(60, 4, 0.35, 3, 1.0)
    plain = CorrelationClustering(local_search=False, random_state=0).fit(A)
    ls = CorrelationClustering(random_state=0).fit(A)
    assert plain.n_local_sweeps_ == 0
    assert plain.cost_ == plain.pivot_cost_
    assert ls.pivot_cost_ == plain.cost_
    assert ls.cost_ <= ls.pivot_cost_
    assert ls.cost_ == pytest.approx(correlation_clustering_cost(A, ls.labels_))
    assert ls.cost_ >= ls.lower_bound_ * (1 - 1e-9)
    assert set(np.unique(ls.labels_)) == set(range(ls.labels_.max() + 1))


# --- the W-weighted regularised problem centred at d --------------

def weighted_instance(kind, n, seed):
    """Signed instances around a planted partition (20 % of signs flipped)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, max(2, n // 5), n)
    sign = np.where(g[:, None] == g[None], 1.0, -1.0)
    sign[rng.random((n, n)) < 0.2] *= -1
    if kind == "lognormal":
        mag = rng.lognormal(0.0, 1.0, (n, n))
    elif kind == "half_zero":
        mag = rng.lognormal(0.0, 1.0, (n, n)) * (rng.random((n, n)) < 0.5)
    else:  # extreme ratios, log-uniform in [1e-3, 1e3]
        mag = 10.0 ** rng.uniform(-3, 3, (n, n))
    A = np.triu(sign * mag, 1)
    return A + A.T


def cvxpy_weighted(cp, A, gamma=None):
    """cvxpy: exact LP (``gamma=None``) or the documented regularised QP."""
    n = A.shape[0]
    a = matrix_to_edges(A)
    w = np.abs(a)
    d = (a <= 0).astype(float)
    tri = [(edge_id(i, j, n), edge_id(min(i, k), max(i, k), n),
            edge_id(min(k, j), max(k, j), n))
           for i in range(n) for j in range(i + 1, n) for k in range(n)
           if k != i and k != j]
    tri = np.array(tri)
    x = cp.Variable(a.size)
    f = cp.Variable(a.size)
    cons = [x[tri[:, 0]] <= x[tri[:, 1]] + x[tri[:, 2]], f >= x - d,
            f >= d - x]
    if gamma is None:
        obj = w @ f
        cons += [x >= 0, x <= 1]
    else:
        r = np.where(w > 0, w, w[w > 0].min())  # floor: smallest weight
        obj = w @ f + (cp.sum(cp.multiply(r, cp.square(x - d)))
                       + cp.sum(cp.multiply(w, cp.square(f)))) / (2 * gamma)
    p = cp.Problem(cp.Minimize(obj), cons)
    p.solve(solver="CLARABEL")
    return np.asarray(x.value), float(np.sum(w * np.abs(x.value - d)))


def _all_triangle_violation(X):
    return float(np.max(X[:, :, None] - X[:, None, :] - X.T[None, :, :]))


@pytest.mark.parametrize("kind", ["lognormal", "half_zero", "extreme"])
@pytest.mark.parametrize("gamma", [1.0, 10.0])
def test_weighted_qp_solution_matches_cvxpy(kind, gamma, cp):
    n = 14
    A = weighted_instance(kind, n, 0)
    xq, _ = cvxpy_weighted(cp, A, gamma)
    cc = CorrelationClustering(gamma=gamma, tol=1e-7, gap_tol=1e-10,
                               max_iter=3000, random_state=0).fit(A)
    assert cc.converged_
    x = cc.lp_solution_[np.triu_indices(n, 1)]
    # |x - x*|^2 <= 2 gamma gap / r_min bounds the distance to the QP optimum
    tol = 2e-3 if kind == "extreme" else 2e-4
    np.testing.assert_allclose(x, np.clip(xq, 0, 1), atol=tol)
    assert _all_triangle_violation(cc.lp_solution_) <= 1e-6


@pytest.mark.parametrize("kind,seed", [
    ("lognormal", 0), ("lognormal", 1), ("half_zero", 0), ("half_zero", 1),
    ("extreme", 0),
    # weight ratios of 1e6 make Hildreth slow: ~3 min on a shared machine
    pytest.param("extreme", 1, marks=pytest.mark.slow),
])
def test_weighted_lp_objective_at_large_gamma(kind, seed, cp):
    n = 14
    A = weighted_instance(kind, n, seed)
    _, ref = cvxpy_weighted(cp, A)
    cc = CorrelationClustering(gamma=1000, tol=1e-5, gap_tol=1e-7,
                               max_iter=3000, random_state=0).fit(A)
    assert cc.converged_
    np.testing.assert_array_equal(cc.gamma_stages_, [1, 10, 100, 1000])
    assert abs(cc.lp_objective_ - ref) <= 1e-4 * ref
    assert cc.lower_bound_ <= ref * (1 + 1e-7)
    assert cc.lower_bound_ >= ref * (1 - 1e-2)
    assert cc.cost_ >= ref * (1 - 1e-6)
    assert _all_triangle_violation(cc.lp_solution_) <= 2e-5


def test_unconverged_run_returns_metric_and_bracket(cp):
    from sklearn.exceptions import ConvergenceWarning

    A = weighted_instance("lognormal", 14, 2)
    _, ref = cvxpy_weighted(cp, A)
    with pytest.warns(ConvergenceWarning, match="metric closure"):
        cc = CorrelationClustering(gamma=1000, tol=1e-6, max_iter=3,
                                   random_state=0).fit(A)
    assert not cc.converged_
    X = cc.lp_solution_
    # the closure is a metric: every triangle holds (rounding only)
    assert _all_triangle_violation(X) <= 1e-12
    assert X.min() >= 0 and X.max() <= 1
    # so its LP value is an upper bound, and the dual bound a lower one
    assert cc.lp_objective_ >= ref * (1 - 1e-9)
    assert cc.lower_bound_ <= ref * (1 + 1e-9)


def test_zero_weight_pairs_change_nothing_in_the_lp(cp):
    # pairs of zero weight carry no LP term: the LP value is that of the
    # graph without them, whatever the regulariser's floor
    A = weighted_instance("half_zero", 12, 3)
    assert np.count_nonzero(np.triu(A, 1) == 0) > 20
    _, ref = cvxpy_weighted(cp, A)
    cc = CorrelationClustering(gamma=1000, tol=1e-6, gap_tol=1e-8,
                               max_iter=3000, random_state=0).fit(A)
    assert abs(cc.lp_objective_ - ref) <= 1e-4 * ref


def test_short_edge_oracle_falls_back_to_dense():
    from metric_estimators.solvers.oracles import ShortEdgeTriangleOracle

    rng = np.random.default_rng(0)
    n = 20
    m = n * (n - 1) // 2
    sparse_x = np.where(rng.random(m) < 0.05, rng.random(m) * 0.3, 1.0)
    dense_x = rng.random(m)
    oracle = ShortEdgeTriangleOracle(n, dense_fraction=0.25, kernels=_backend.NUMBA)
    oracle(sparse_x, 1e-3)
    assert oracle.n_short_calls_ == 1 and oracle.n_dense_calls_ == 0
    out = oracle(dense_x, 1e-3)
    assert oracle.n_dense_calls_ == 1
    from metric_estimators.solvers.oracles import DenseTriangleOracle
    ref = DenseTriangleOracle(n, kernels=_backend.NUMBA)(dense_x, 1e-3)
    for a, b in zip(out[:3], ref[:3]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n", [1, 2, 7, 1500])
def test_dense_clustering_cost_matches_the_pairwise_sum(n):
    """The blockwise cost (no n^2 temporaries) against the sum over pairs i < j."""
    from metric_estimators._problems.correlation_clustering import dense_clustering_cost
    rng = np.random.default_rng(n)
    A = np.triu(rng.lognormal(size=(n, n)) * rng.choice([-1.0, 1.0], (n, n)), 1)
    A[rng.random((n, n)) < 0.1] = 0.0
    A = A + A.T
    labels = rng.integers(0, 4, n)
    i, j = np.triu_indices(n, 1)
    a = A[i, j]
    same = labels[i] == labels[j]
    ref = np.sum(np.where(a > 0, a * ~same, -a * same))
    assert dense_clustering_cost(A, labels) == pytest.approx(ref, rel=1e-12,
                                                             abs=1e-12)
