"""The Python searches of small sparse graphs against the numba kernels they stand for.

:mod:`metric_estimators.solvers.small_graphs` must return the kernels'
results bit for bit (constraints, paths, largest violation, labels), on
ties, zero and negative lengths, capped searches and both roundings; a
sparse correlation-clustering fit must give the same labels and LP on both
paths.
"""

import numpy as np
import pytest
from scipy import sparse

from metric_estimators import CorrelationClustering
from metric_estimators._kernels import sparse_graph as nb_graph
from metric_estimators.solvers import numpy_kernels as npk
from metric_estimators.solvers import small_graphs
from metric_estimators.solvers.oracles import SparseShortestPathOracle
from metric_estimators.solvers.oracles.sparse import _SparseGraph


def _graph(seed):
    rng = np.random.RandomState(seed)
    n = int(rng.randint(2, 70))
    A = sparse.triu(sparse.random(n, n, density=rng.uniform(0.02, 0.4),
                                  random_state=rng), 1).tocoo()
    g = _SparseGraph(n, A.row, A.col, search="bounded")
    m = A.row.size
    kind = seed % 3
    if kind == 0:    # many ties: lengths 0, 0.5, 1
        x = rng.randint(0, 3, m) / 2.0
    elif kind == 1:  # negative lengths too (searched as 0)
        x = rng.rand(m) * 1.2 - 0.1
    else:
        x = np.round(rng.rand(m), 1)
    return rng, n, g, x


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("threshold", [0.0, 0.05])
@pytest.mark.parametrize("cap", [0, 3])
def test_bounded_violated_cycles_gives_the_kernels_bits(seed, threshold, cap):
    _, n, g, x = _graph(seed)
    args = (x, g.indptr, g.indices, g.eid)
    want = nb_graph.bounded_violated_cycles(*args, 0, n, threshold, cap)
    got = small_graphs.bounded_violated_cycles(*args, 0, n, threshold, cap)
    for a, b in zip(got[:3], want[:3]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert got[3] == want[3]
    # a block of sources, as the executors ask for
    s0, s1 = n // 3, n - n // 3
    want = nb_graph.bounded_violated_cycles(*args, s0, s1, threshold, cap)
    got = small_graphs.bounded_violated_cycles(*args, s0, s1, threshold, cap)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_bounded_violated_cycles_finds_a_known_cycle():
    # a square 0-1-2-3 with x_03 = 5 and unit lengths elsewhere: x_03 > 3
    rows, cols = np.array([0, 1, 2, 0]), np.array([1, 2, 3, 3])
    g = _SparseGraph(4, rows, cols, search="bounded")
    x = np.array([1.0, 1.0, 1.0, 5.0])
    ce, ptr, path, maxv = small_graphs.bounded_violated_cycles(
        x, g.indptr, g.indices, g.eid, 0, 4, 0.0)
    np.testing.assert_array_equal(ce, [3])
    np.testing.assert_array_equal(ptr, [0, 3])
    assert sorted(path.tolist()) == [0, 1, 2]
    assert maxv == 2.0


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("probabilistic", [False, True])
def test_ball_pivot_gives_the_kernels_labels(seed, probabilistic):
    rng, n, g, x = _graph(seed)
    order = rng.permutation(n).astype(np.int64)
    args = (x, g.indptr, g.indices, g.eid, order, probabilistic, seed + 11)
    want = nb_graph.ball_pivot(*args)
    got = small_graphs.ball_pivot(*args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_ball_pivot_threshold_rounding_by_hand():
    # path 0 - 1 - 2 - 3 with lengths 0.2, 0.2, 0.9: pivot 0 takes 1 and 2
    g = _SparseGraph(4, np.array([0, 1, 2]), np.array([1, 2, 3]),
                     search="bounded")
    x = np.array([0.2, 0.2, 0.9])
    labels = small_graphs.ball_pivot(x, g.indptr, g.indices, g.eid,
                                     np.arange(4), False, 0)
    np.testing.assert_array_equal(labels, [0, 0, 0, 1])


def test_oracle_engine_is_validated():
    with pytest.raises(ValueError, match="engine"):
        SparseShortestPathOracle(3, [0], [1], search="bounded", engine="C")


def _sparse_signed(n, seed=0, degree=8):
    rng = np.random.RandomState(seed)
    truth = rng.randint(0, 4, n)
    keep = np.triu(rng.rand(n, n) < degree / n, 1)
    S = np.where(truth[:, None] == truth[None, :], 1.0, -1.0)
    S[rng.rand(n, n) < 0.1] *= -1
    A = sparse.csr_matrix(np.where(keep, S, 0.0))
    return A + A.T


@pytest.mark.parametrize("rounding", ["threshold", "probabilistic"])
def test_sparse_correlation_clustering_same_on_both_paths(monkeypatch, rounding):
    # the per-node searches on both sides (larger graphs search per
    # component by default: another search, compared in
    # test_component_oracle.py)
    import metric_estimators.correlation_clustering as ccmod

    A = _sparse_signed(150)
    n = A.shape[0]

    def per_node(*args, **kw):
        kw["search"] = "bounded"
        return SparseShortestPathOracle(*args, **kw)

    monkeypatch.setattr(ccmod, "SparseShortestPathOracle", per_node)

    def fit(limit):
        monkeypatch.setattr(npk, "CC_SPARSE_NUMPY_MAX_NODES", limit)
        return CorrelationClustering(random_state=0, rounding=rounding).fit(A)

    a, b = fit(n), fit(n - 1)   # Python / numpy twins, then the kernels
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.lp_objective_ == b.lp_objective_
    assert a.cost_ == b.cost_
    assert a.n_iter_ == b.n_iter_
