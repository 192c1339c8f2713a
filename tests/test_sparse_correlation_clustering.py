"""CorrelationClustering on scipy.sparse signed graphs: the edge LP (sparse path)."""

import functools
import itertools
import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from metric_estimators import CorrelationClustering, _backend
from metric_estimators.correlation_clustering import (
    correlation_clustering_cost,
    pivot_rounding,
)


def random_graph(n, seed, density=0.35, weights="lognormal", k=3, noise=0.15):
    """A sparse symmetric signed graph: planted groups, ``noise`` sign flips."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k, n)
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].size) < density
    r, c = iu[0][keep], iu[1][keep]
    sign = np.where(g[r] == g[c], 1.0, -1.0)
    sign[rng.random(sign.size) < noise] *= -1
    if weights == "lognormal":
        w = rng.lognormal(0.0, 1.0, sign.size)
    elif weights == "extreme":
        w = 10.0 ** rng.uniform(-3, 3, sign.size)
    else:
        w = np.ones(sign.size)
    a = sign * w
    A = sparse.csr_matrix((np.concatenate((a, a)), (np.concatenate((r, c)),
                                                   np.concatenate((c, r)))),
                          shape=(n, n))
    return A, g


def completion(X):
    """Shortest-path completion of a sparse edge solution, capped at 1 (Floyd-Warshall)."""
    n = X.shape[0]
    D = np.full((n, n), np.inf)
    C = X.tocoo()
    D[C.row, C.col] = np.clip(C.data, 0, 1)
    np.fill_diagonal(D, 0.0)
    for k in range(n):
        D = np.minimum(D, D[:, k:k + 1] + D[k:k + 1, :])
    return np.minimum(D, 1.0)


def cvxpy_complete_lp(cp, A):
    """The complete-graph LP: every pair a variable, every triangle, objective on the edges."""
    n = A.shape[0]
    pairs = {p: i for i, p in enumerate(itertools.combinations(range(n), 2))}

    def e(i, j):
        return pairs[(i, j) if i < j else (j, i)]

    ij, ik, kj = [], [], []
    for i, j in pairs:
        for k in range(n):
            if k != i and k != j:
                ij.append(e(i, j))
                ik.append(e(i, k))
                kj.append(e(k, j))
    U = sparse.triu(A, 1).tocoo()
    idx = np.array([e(i, j) for i, j in zip(U.row, U.col)])
    w, d = np.abs(U.data), (U.data < 0).astype(float)
    x = cp.Variable(len(pairs))
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.abs(x[idx] - d)))),
                      [x[ij] <= x[ik] + x[kj], x >= 0, x <= 1])
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("n, seed, weights", [
    (10, 0, "unit"), (12, 1, "lognormal"), (15, 2, "lognormal"),
    (12, 3, "extreme"),
])
def test_sparse_lp_equals_complete_graph_lp(n, seed, weights, cp):
    A, _ = random_graph(n, seed, weights=weights)
    ref = cvxpy_complete_lp(cp, A)
    cc = CorrelationClustering(gamma=1e4, tol=1e-5, gap_tol=1e-6,
                               max_iter=5000, random_state=0).fit(A)
    assert cc.converged_
    assert sparse.issparse(cc.lp_solution_)
    # (cvxpy's own accuracy is about 1e-8 of the total weight)
    atol = 1e-7 * abs(A).sum()
    assert abs(cc.lp_objective_ - ref) <= 1e-4 * ref + atol
    assert cc.lower_bound_ <= ref * (1 + 1e-9) + atol
    assert cc.cost_ >= ref * (1 - 1e-6) - atol
    # the shortest-path completion of the edge solution is a metric that
    # agrees with it on the edges
    D = completion(cc.lp_solution_)
    viol = np.max(D[:, :, None] - D[:, None, :] - D.T[None, :, :])
    assert viol <= 1e-12
    C = cc.lp_solution_.tocoo()
    np.testing.assert_allclose(D[C.row, C.col], C.data, atol=1e-4)


def test_lp_solution_is_on_the_pattern():
    A, _ = random_graph(14, 5)
    cc = CorrelationClustering(random_state=0).fit(A)
    X = cc.lp_solution_
    assert sparse.issparse(X) and X.shape == A.shape
    P = sparse.csr_matrix(A != 0).astype(int)
    Q = sparse.csr_matrix((np.ones(X.nnz), X.indices, X.indptr), shape=X.shape)
    assert (P - Q).nnz == 0
    assert X.data.min() >= 0 and X.data.max() <= 1
    assert (X - X.T).nnz == 0


def test_deterministic():
    A, _ = random_graph(40, 6, density=0.2, weights="lognormal")
    a = CorrelationClustering(random_state=3).fit(A)
    b = CorrelationClustering(random_state=3).fit(A)
    np.testing.assert_array_equal(a.lp_solution_.data, b.lp_solution_.data)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.lower_bound_ == b.lower_bound_ and a.cost_ == b.cost_


def test_planted_partition_recovery():
    A, g = random_graph(150, 7, density=0.3, weights="lognormal", k=3,
                        noise=0.1)
    cc = CorrelationClustering(random_state=0).fit(A)
    assert adjusted_rand_score(g, cc.labels_) >= 0.9
    assert cc.cost_ <= correlation_clustering_cost(A, g) * (1 + 1e-9)
    assert cc.lower_bound_ <= cc.cost_ * (1 + 1e-9)
    assert cc.cost_ <= cc.pivot_cost_ + 1e-9


def test_cost_counts_stored_edges_only():
    A, g = random_graph(30, 8)
    assert correlation_clustering_cost(A, g) == pytest.approx(
        correlation_clustering_cost(A.toarray(), g), rel=1e-12)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, 30)
    assert correlation_clustering_cost(A, labels) == pytest.approx(
        correlation_clustering_cost(A.toarray(), labels), rel=1e-12)


def test_threshold_pivoting_is_the_dense_rounding_of_the_completion():
    A, _ = random_graph(25, 9)
    cc = CorrelationClustering(random_state=0).fit(A)
    X = cc.lp_solution_
    D = completion(X)
    for seed in range(5):
        sp = pivot_rounding(X, np.random.RandomState(seed), "threshold")
        de = pivot_rounding(D, np.random.RandomState(seed), "threshold")
        np.testing.assert_array_equal(sp, de)
    lab = pivot_rounding(X, np.random.RandomState(0), "probabilistic")
    assert lab.shape == (25,) and lab.min() == 0


def test_local_search_over_edges_never_worse():
    A, _ = random_graph(60, 10, density=0.2)
    with_ls = CorrelationClustering(random_state=0).fit(A)
    no_ls = CorrelationClustering(random_state=0, local_search=False).fit(A)
    assert with_ls.cost_ <= no_ls.cost_ + 1e-9
    assert with_ls.cost_ == pytest.approx(
        correlation_clustering_cost(A, with_ls.labels_))


def test_not_converged_returns_a_feasible_point():
    A, _ = random_graph(30, 11, density=0.3)
    with pytest.warns(ConvergenceWarning, match="metric closure"):
        cc = CorrelationClustering(max_iter=1, random_state=0).fit(A)
    assert not cc.converged_
    D = completion(cc.lp_solution_)
    C = cc.lp_solution_.tocoo()
    # every cycle inequality holds: the edge values are shortest paths
    np.testing.assert_allclose(D[C.row, C.col], C.data, atol=1e-12)
    assert cc.lower_bound_ <= cc.lp_objective_ * (1 + 1e-9)


def test_isolated_nodes_and_disconnected_graph_are_fine():
    A, _ = random_graph(12, 12)
    B = sparse.block_diag((A, A, sparse.csr_matrix((3, 3)))).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cc = CorrelationClustering(random_state=0).fit(B)
    assert cc.labels_.shape == (27,)
    # the isolated nodes are singletons
    assert len(set(cc.labels_[-3:])) == 3
    assert not set(cc.labels_[-3:]) & set(cc.labels_[:-3])


def test_no_negative_edge_warns_as_dense():
    A = abs(random_graph(12, 13)[0])
    with pytest.warns(UserWarning, match="no negative entry"):
        CorrelationClustering().fit(A)


def _path(n=5, extra=(), values=None):
    r = list(range(n - 1)) + list(range(1, n))
    c = list(range(1, n)) + list(range(n - 1))
    v = [1.0] * len(r) if values is None else list(values) + [1.0] * (
        len(r) - len(values))
    v[0] = v[n - 1] = -1.0 if values is None else v[0]
    for i, j, val in extra:
        r.append(i)
        c.append(j)
        v.append(val)
    return sparse.csr_matrix((v, (r, c)), shape=(n, n))


@pytest.mark.parametrize("A, match", [
    (_path(extra=[(0, 3, -1.0)]), r"A must be symmetric"),
    (_path(extra=[(0, 3, 0.0), (3, 0, 0.0)]), r"A has an explicit stored zero at \(0, 3\)"),
    (_path(extra=[(2, 2, 1.0)]), r"no self-loops, but node 2 has one"),
    (_path(extra=[(2, 2, 0.0)]), r"A has an explicit stored zero at \(2, 2\)"),
    (_path(values=[np.nan, 1, 1, 1, np.nan]), r"A contains NaN or infinity"),
    (_path(values=[np.inf, 1, 1, 1, np.inf]), r"A contains NaN or infinity"),
    (sparse.csr_matrix(np.ones((3, 4))), r"A must be a square matrix"),
])
def test_bad_sparse_graphs(A, match):
    with pytest.raises(ValueError, match=match):
        CorrelationClustering().fit(A)


def test_oracle_threads_do_not_change_the_result():
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread")
    A, _ = random_graph(50, 14, density=0.2)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = CorrelationClustering(random_state=0).fit(A)
        numba.set_num_threads(2)
        two = CorrelationClustering(random_state=0).fit(A)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one.lp_solution_.data, two.lp_solution_.data)
    np.testing.assert_array_equal(one.labels_, two.labels_)


def test_an_empty_graph_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        CorrelationClustering().fit(sparse.csr_matrix((0, 0)))


@pytest.mark.parametrize("n", [1, 3])
def test_graphs_without_edges(n):
    cc = CorrelationClustering().fit(sparse.csr_matrix((n, n)))
    assert cc.labels_.shape == (n,) and len(set(cc.labels_)) == n
    assert cc.cost_ == 0.0 and cc.converged_
    assert sparse.issparse(cc.lp_solution_) and cc.lp_solution_.nnz == 0


@pytest.mark.parametrize("n, m, seed", [(40, 120, 0), (3000, 12_000, 1)])
def test_closure_on_edges_matches_scipy_dijkstra(n, m, seed):
    # against scipy's all-pairs Dijkstra on the lengths clip(x, 0, 1), on
    # numba's threads (blocks of sources) where it has more than one
    from scipy.sparse import csgraph

    from metric_estimators._problems.sparse_correlation_clustering import (
        closure_on_edges,
    )
    from metric_estimators.solvers.oracles import SparseShortestPathOracle

    rng = np.random.default_rng(seed)
    pairs = np.unique(np.sort(rng.integers(0, n, (m, 2)), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] < pairs[:, 1]]
    rows, cols = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)
    # lengths with exact zeros, values above 1 and below 0 (clipped)
    x = rng.choice([0.0, 0.1, 0.35, 0.6, 1.0, 1.4, -0.2], rows.size) \
        * rng.uniform(0.5, 1.0, rows.size)
    oracle = SparseShortestPathOracle(n, rows, cols, search="bounded", kernels=_backend.NUMBA)
    y = closure_on_edges(x, oracle)
    length = np.clip(x, 0.0, 1.0)
    # scipy drops explicit zeros from a csr matrix: use a tiny positive
    # stand-in and compare at that precision
    G = sparse.csr_matrix((np.maximum(length, 1e-300), (rows, cols)),
                          shape=(n, n))
    src = np.unique(rows)
    D = csgraph.dijkstra(G, directed=False, indices=src)
    pos = np.searchsorted(src, rows)
    expected = np.minimum(length, D[pos, cols])
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-12)


def _lagrangian_by_linprog(a, edge, ptr, path, y):
    """``min over the box of sum_e w_e |x_e - d_e| + y^T (A x)``, by scipy's LP solver.

    An independent evaluation of the Lagrangian (no closed form): the
    objective ``|x - d|`` is written with the split ``x = d + p - q``.
    """
    from scipy.optimize import linprog

    m = a.size
    w, d = np.abs(a), (a <= 0).astype(float)
    rows = np.concatenate((np.arange(edge.size),
                           np.repeat(np.arange(edge.size), np.diff(ptr))))
    cols = np.concatenate((edge, path))
    vals = np.concatenate((np.ones(edge.size), -np.ones(path.size)))
    At = sparse.csr_matrix((vals, (rows, cols)), shape=(edge.size, m))
    g = At.T @ y
    # variables (x, s): minimise w^T s + g^T x, s >= x - d, s >= d - x, 0 <= x <= 1
    c = np.concatenate((g, w))
    eye = sparse.eye(m)
    A_ub = sparse.vstack((sparse.hstack((eye, -eye)), sparse.hstack((-eye, -eye))))
    b_ub = np.concatenate((d, -d))
    res = linprog(c, A_ub=A_ub, b_ub=b_ub,
                  bounds=[(0, 1)] * m + [(0, None)] * m, method="highs")
    return res.fun


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_edge_form_bound_is_a_lagrangian_bound(seed, cp):
    """The bound over x alone: below the LP for random duals, and at least
    the Lagrangian at the unscaled duals (evaluated by an LP solver)."""
    from metric_estimators._problems.correlation_clustering import (
        WeightedCorrelationLP,
    )
    from metric_estimators._problems.sparse_correlation_clustering import (
        SparseSignedGraph,
    )
    from metric_estimators.solvers.active_sets import CycleConstraints
    from metric_estimators.solvers.oracles import SparseShortestPathOracle

    A, _ = random_graph(14, seed, weights="lognormal", k=2, noise=0.25)
    ref = cvxpy_complete_lp(cp, A)
    g = SparseSignedGraph(A)
    problem = WeightedCorrelationLP(
        g.a, 10.0, functools.partial(CycleConstraints, kernels=_backend.NUMBA),
        kernels=_backend.NUMBA)
    oracle = SparseShortestPathOracle(g.n, g.rows, g.cols, search="bounded", kernels=_backend.NUMBA)
    ce, ptr, path, _ = oracle(problem.x, 0.0)
    assert ce.size > 0
    problem.active.add(ce, ptr, path)
    act = problem.active
    rng = np.random.default_rng(seed)
    for scale in (0.01, 1.0, 30.0):
        act.z[:] = scale * rng.exponential(size=len(act))
        bound = problem._edge_form_bound()[0]
        assert bound <= ref * (1 + 1e-9)
        assert problem.lp_lower_bound() >= bound
        y = act.z / problem.gamma
        direct = _lagrangian_by_linprog(g.a, act.edge, act.ptr,
                                        act.path.astype(np.int64), y)
        assert bound >= direct - 1e-7 * (1 + abs(direct))


@pytest.mark.parametrize("seed", [0, 1])
def test_box_form_starts_at_the_edge_form_bound(seed, cp):
    """The LP's box form and starting multipliers give the edge-form bound
    back; the solver's refinement of it stays a bound, at least as large."""
    from metric_estimators._problems.correlation_clustering import (
        WeightedCorrelationLP,
    )
    from metric_estimators._problems.sparse_correlation_clustering import (
        SparseSignedGraph,
    )
    from metric_estimators.solvers.active_sets import CycleConstraints
    from metric_estimators.solvers.cc_solve import certified_lower_bound
    from metric_estimators.solvers.dual_bounds import box_lagrangian
    from metric_estimators.solvers.oracles import SparseShortestPathOracle

    A, _ = random_graph(14, seed, weights="lognormal", k=2, noise=0.25)
    ref = cvxpy_complete_lp(cp, A)
    g = SparseSignedGraph(A)
    problem = WeightedCorrelationLP(
        g.a, 10.0, functools.partial(CycleConstraints, kernels=_backend.NUMBA),
        kernels=_backend.NUMBA)
    oracle = SparseShortestPathOracle(g.n, g.rows, g.cols, search="bounded", kernels=_backend.NUMBA)
    ce, ptr, path, _ = oracle(problem.x, 0.0)
    problem.active.add(ce, ptr, path)
    problem.active.z[:] = np.random.default_rng(seed).exponential(
        size=len(problem.active))
    c, k, M, y0 = problem.box_form()
    assert box_lagrangian(c, k, M.T.tocsr(), y0) == pytest.approx(
        problem._edge_form_bound()[0], rel=1e-12, abs=1e-12)
    plain = certified_lower_bound(problem, refine=False)
    assert plain == problem.lp_lower_bound()
    refined = certified_lower_bound(problem, refine=True)
    assert plain <= refined <= ref * (1 + 1e-9)


def test_sparse_bound_is_tight_at_convergence(cp):
    """At a converged fit the certified bound is within 1 % of the exact LP."""
    A, _ = random_graph(15, 4, weights="lognormal")
    ref = cvxpy_complete_lp(cp, A)
    cc = CorrelationClustering(gamma=10.0, tol=1e-4, gap_tol=1e-5,
                               max_iter=5000, random_state=0).fit(A)
    assert cc.converged_
    assert ref * (1 - 1e-2) <= cc.lower_bound_ <= ref * (1 + 1e-9)


def test_sparse_rounding_polishes_every_trial():
    """Every trial is polished: never worse than polishing the cheapest pivot."""
    from metric_estimators.solvers.cc_local_search import local_search

    A, _ = random_graph(60, 5, density=0.12, k=6, noise=0.2)
    cc = CorrelationClustering(random_state=0, n_rounding_trials=8).fit(A)
    rng = np.random.RandomState(0)
    pivots = [pivot_rounding(cc.lp_solution_, rng, "threshold")
              for _ in range(8)]
    costs = [correlation_clustering_cost(A, lab) for lab in pivots]
    assert cc.pivot_cost_ == pytest.approx(min(costs), rel=1e-12)
    polished = [correlation_clustering_cost(A, local_search(A, lab, 100, kernels=_backend.NUMBA)[0])
                for lab in pivots]
    assert cc.cost_ == pytest.approx(min(min(polished), min(costs)), rel=1e-12)
    assert cc.cost_ <= correlation_clustering_cost(
        A, local_search(A, pivots[int(np.argmin(costs))], 100, kernels=_backend.NUMBA)[0]) + 1e-12


def _cycle_rows(seed, m=40, r=60):
    """A random box LP of the cycle form: ``(c, k, A)``, each row +1 on one
    variable and -1 on two to four others."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=m) * rng.lognormal(size=m)
    k = float(np.abs(c[c < 0]).sum())
    rows, cols, vals = [], [], []
    for i in range(r):
        e = rng.choice(m, size=int(rng.integers(3, 6)), replace=False)
        rows += [i] * e.size
        cols += list(e)
        vals += [1.0] + [-1.0] * (e.size - 1)
    return c, k, sparse.csr_matrix((vals, (rows, cols)), shape=(r, m))


def _restricted_lp(cp, c, k, A):
    """``min k + c^T x`` over ``A x <= 0``, ``0 <= x <= 1``, by cvxpy."""
    x = cp.Variable(A.shape[1])
    prob = cp.Problem(cp.Minimize(k + c @ x), [A @ x <= 0, x >= 0, x <= 1])
    prob.solve(solver="CLARABEL")
    return prob.value


def test_refined_duals_certify_and_reach_the_restricted_lp(cp):
    """L-BFGS-B on the smoothed Lagrangian: never below the start, never
    above the LP, and at the optimum of the LP restricted to the rows
    (checked against cvxpy on those rows alone)."""
    from metric_estimators.solvers.dual_bounds import (
        box_lagrangian,
        refine_box_duals,
    )

    c, k, A = _cycle_rows(0)
    lp = _restricted_lp(cp, c, k, A)
    y0 = np.zeros(A.shape[0])
    start = box_lagrangian(c, k, A.T.tocsr(), y0)
    bound, y = refine_box_duals(c, k, A, y0)
    assert np.all(y >= 0)
    assert bound == pytest.approx(box_lagrangian(c, k, A.T.tocsr(), y))
    assert start <= bound <= lp + 1e-9 * abs(lp)
    assert bound >= lp - 1e-3 * (1 + abs(lp))


@pytest.mark.parametrize("seed", range(3))
def test_refinement_stopped_at_a_deadline_stays_certified(monkeypatch, cp,
                                                          seed):
    """A deadline after ``N`` evaluations of the smoothed Lagrangian (a
    clock that ticks once per evaluation): the bound is ``L`` at the
    multipliers returned, never below the start nor above the LP (cvxpy),
    and it never decreases as ``N`` grows; without a deadline, or with one
    never reached, it is the whole schedule's."""
    from metric_estimators.solvers import dual_bounds

    c, k, A = _cycle_rows(seed)
    At = A.T.tocsr()
    lp = _restricted_lp(cp, c, k, A)
    y0 = np.zeros(A.shape[0])
    full, _ = dual_bounds.refine_box_duals(c, k, A, y0)
    clock = {"t": 0}

    def tick():
        clock["t"] += 1
        return clock["t"]

    monkeypatch.setattr(dual_bounds.time, "perf_counter", tick)
    last = -np.inf
    for n_evals in (0, 1, 2, 5, 20, 100, 10**9):
        clock["t"] = 0
        bound, y = dual_bounds.refine_box_duals(c, k, A, y0,
                                                deadline=n_evals + 1)
        assert np.all(y >= 0)
        assert bound == dual_bounds.box_lagrangian(c, k, At, y)
        assert bound <= lp + 1e-9 * abs(lp)
        assert bound >= last
        last = bound
        if n_evals == 0:
            # nothing evaluated: the starting multipliers
            assert bound == dual_bounds.box_lagrangian(c, k, At, y0)
            np.testing.assert_array_equal(y, y0)
    assert bound == pytest.approx(full, rel=1e-12, abs=1e-12)
    assert full >= lp - 1e-3 * (1 + abs(lp))
