"""The numpy twins of the cycle-constraint kernels against their numba kernels.

MetricNearness and CorrelationClustering (dense and sparse) run on the
kernels of :mod:`metric_estimators._kernels` or on their numpy twins
(:mod:`metric_estimators._kernels.numpy`), chosen once per fit by
:func:`metric_estimators._backend.choose`.  Each twin function must give
its kernel's results (bit for bit where its docstring says so, to rounding
otherwise, at extreme scales and on degenerate inputs too), each estimator
the same solution on both paths (to its tolerance), and a small first fit
must not load numba at all.
"""

import warnings

import numpy as np
import pytest
from fresh_process import assert_no_numba, modules_after
from scipy import sparse

from metric_estimators import CorrelationClustering, MetricNearness, _backend
from metric_estimators._kernels import cc_pair_projections as nb_cc
from metric_estimators._kernels import constraint_store as nb_store
from metric_estimators._kernels import correlation_clustering as nb_moves
from metric_estimators._kernels import cycle_projections as nb_cycles
from metric_estimators._kernels import edges as nb_edges
from metric_estimators._kernels import short_edge_triangles as nb_short
from metric_estimators._kernels import shortest_paths as nb_sp
from metric_estimators._kernels import sparse_graph as nb_graph
from metric_estimators._kernels.numpy import cc_pair_projections as np_cc
from metric_estimators._kernels.numpy import constraint_store as np_store
from metric_estimators._kernels.numpy import correlation_clustering as np_moves
from metric_estimators._kernels.numpy import cycle_projections as np_cycles
from metric_estimators._kernels.numpy import edges as np_edges
from metric_estimators._kernels.numpy import short_edge_triangles as np_short
from metric_estimators._kernels.numpy import shortest_paths as np_sp
from metric_estimators._kernels.numpy import sparse_graph as np_graph
from metric_estimators.solvers.active_sets import CycleConstraints
from metric_estimators.solvers.cc_local_search import local_search
from metric_estimators.solvers.oracles import (
    DenseTriangleOracle,
    ShortEdgeTriangleOracle,
    SparseShortestPathOracle,
)
from metric_estimators.solvers.oracles.sparse import _SparseGraph

NUMBA, NUMPY = _backend.NUMBA, _backend.NUMPY


def _both_paths(make, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _backend.use("numpy"):
            a = make().fit(*args, **kwargs)
        with _backend.use("numba"):
            b = make().fit(*args, **kwargs)
    return a, b


# ---------------------------------------------------------------------------
# edges, hashes and the constraint store


def _random_paths(seed, m=40, k=300, max_len=4):
    rng = np.random.RandomState(seed)
    lens = rng.randint(1, max_len + 1, k)
    ptr = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    edge = np.empty(k, np.int32)
    path = np.empty(ptr[-1], np.int32)
    for c in range(k):
        vars_ = rng.choice(m, lens[c] + 1, replace=False)
        edge[c] = vars_[0]
        path[ptr[c]:ptr[c + 1]] = vars_[1:]
    return edge, ptr, path


def _random_triangles(seed, m=60, k=200):
    rng = np.random.RandomState(seed)
    edge = rng.randint(0, m, k).astype(np.int32)
    path = rng.randint(0, m, 2 * k).astype(np.int32)
    edge[k // 2:] = edge[:k - k // 2]          # duplicates within the batch
    path[k:] = path[:k]
    return edge, path


def test_edges_and_hashes_are_bit_identical():
    rng = np.random.RandomState(0)
    D = rng.randn(9, 9)
    np.testing.assert_array_equal(np_edges.matrix_to_edges(D),
                                  nb_edges.matrix_to_edges(D))
    x = rng.randn(36)
    a, b = np.full((9, 9), 7.0), np.full((9, 9), 7.0)
    np_edges.edges_to_matrix(x, 9, a)
    nb_edges.edges_to_matrix(x, 9, b)
    np.testing.assert_array_equal(a, b)
    i, j = np.array([0, 3, 8, 5]), np.array([1, 7, 2, 4])
    assert list(np_edges.edge_id(i, j, 9)) == [nb_edges.edge_id(p, q, 9)
                                               for p, q in zip(i, j)]
    assert np_edges.edge_id(7, 2, 9) == nb_edges.edge_id(7, 2, 9)
    edge, ptr, path = _random_paths(1)
    np.testing.assert_array_equal(np_store.constraint_hashes(edge, ptr, path),
                                  nb_store.constraint_hashes(edge, ptr, path))
    # extreme ids (the multiplications wrap around, as the kernel's)
    big = np.array([2**31 - 1, 0, 2**30], dtype=np.int32)
    bptr = np.array([0, 1, 3, 3], dtype=np.int64)
    bpath = np.array([2**31 - 2, 5, 2**31 - 1], dtype=np.int32)
    np.testing.assert_array_equal(np_store.constraint_hashes(big, bptr, bpath),
                                  nb_store.constraint_hashes(big, bptr, bpath))
    assert np_store.constraint_hashes(big[:0], bptr[:1], bpath[:0]).size == 0
    assert np_store.all_triangles(np.array([0, 2, 4])) is True
    assert np_store.all_triangles(np.array([0, 2, 5])) is False
    assert nb_store.all_triangles(np.array([0, 2, 5])) is False


def test_table_twins_insert_and_delete_as_the_kernel():
    # the twin's table has its own layout; the masks it returns, and the
    # set it holds, must be the kernel's through inserts and deletions
    edge, ptr, path = _random_paths(2, m=12, k=400, max_len=2)  # many repeats
    h = nb_store.constraint_hashes(edge, ptr, path)
    ta, tb = np.zeros(2048, np.uint64), np.zeros(2048, np.uint64)
    held = np.zeros(0, np.uint64)
    for lo, hi in ((0, 150), (100, 300), (0, 400)):
        ka = np_store.table_insert_new(ta, h[lo:hi])
        kb = nb_store.table_insert_new(tb, h[lo:hi])
        np.testing.assert_array_equal(ka, kb)
        held = np.union1d(held, h[lo:hi])
        np.testing.assert_array_equal(np.sort(ta[ta != 0]), held)
    keep = np.random.RandomState(0).rand(held.size) < 0.5
    np_store.table_delete(ta, held, keep)
    nb_store.table_delete(tb, held, keep)
    np.testing.assert_array_equal(np.sort(ta[ta != 0]), np.sort(tb[tb != 0]))
    np.testing.assert_array_equal(np.sort(ta[ta != 0]), held[keep])
    # a deleted hash is new again, a kept one is not
    np.testing.assert_array_equal(np_store.table_insert_new(ta, held),
                                  nb_store.table_insert_new(tb, held))
    np.testing.assert_array_equal(np.sort(ta[ta != 0]), held)


def test_triangle_table_twins_as_the_kernel():
    edge, path = _random_triangles(3)
    ta, tb = np.zeros(1024, np.uint64), np.zeros(1024, np.uint64)
    ka = np_store.table_insert_triangles(ta, edge, path)
    kb = nb_store.table_insert_triangles(tb, edge, path)
    np.testing.assert_array_equal(ka, kb)
    assert not ka.all()                          # duplicates found
    ptr = np.arange(0, 2 * edge.size + 1, 2, dtype=np.int64)
    np.testing.assert_array_equal(np.sort(ta[ta != 0]),
                                  np.unique(np_store.constraint_hashes(edge, ptr, path)))
    # append, then forget half of what was appended
    k0 = 3
    dst = [np.full(k0 + edge.size, -1, np.int32), np.full(2 * (k0 + edge.size), -1, np.int32),
           np.full(k0 + edge.size, 9.0)]
    got = [d.copy() for d in dst]
    assert (np_store.append_triangles(*got, k0, edge, path, ka)
            == nb_store.append_triangles(*dst, k0, edge, path, kb))
    for u, v in zip(got, dst):
        np.testing.assert_array_equal(u, v)
    k = k0 + int(ka.sum())
    e = dst[0][:k].copy()
    p = dst[1][:2 * k].copy()
    z = np.random.RandomState(1).rand(k)
    keep = z > 0.5
    sa, sb = [e.copy(), p.copy(), z.copy()], [e.copy(), p.copy(), z.copy()]
    na = np_store.table_delete_triangles(ta, sa[0][:k], sa[1][:2 * k], keep)
    nb = nb_store.table_delete_triangles(tb, sb[0][:k], sb[1][:2 * k], keep)
    assert na is None and nb is None
    np.testing.assert_array_equal(np.sort(ta[ta != 0]), np.sort(tb[tb != 0]))
    assert (np_store.compact_triangles(*sa, keep)
            == nb_store.compact_triangles(*sb, keep) == keep.sum())
    for u, v in zip(sa, sb):
        np.testing.assert_array_equal(u, v)


def test_compact_in_place_is_bit_identical():
    edge, ptr, path = _random_paths(4)
    z = np.where(np.random.RandomState(4).rand(edge.size) < 0.5, 1.0, 0.0)
    h = nb_store.constraint_hashes(edge, ptr, path)
    a = [edge.copy(), ptr.copy(), path.copy(), z.copy(), h.copy()]
    b = [edge.copy(), ptr.copy(), path.copy(), z.copy(), h.copy()]
    keep = z > 0
    ra = np_store.compact_in_place(*a, keep)
    rb = nb_store.compact_in_place(*b, keep)
    assert tuple(map(int, ra)) == tuple(map(int, rb))
    k, p = rb
    for u, v, n in zip(a, b, (k, k + 1, p, k, k)):
        np.testing.assert_array_equal(u[:n], v[:n])


@pytest.mark.parametrize("paths", [False, True])
def test_the_store_holds_the_same_constraints_on_both_paths(paths):
    # add (with duplicates), forget, add again: the store's logic is shared,
    # its kernels differ: the same constraints in the same order
    rng = np.random.RandomState(5)
    x = rng.rand(60)
    stores = [CycleConstraints(x.copy(), np.ones(60), kernels=k)
              for k in (NUMPY, NUMBA)]
    for step in range(4):
        if paths:
            edge, ptr, path = _random_paths(step, m=60, k=80, max_len=3)
        else:
            edge, path = _random_triangles(step, k=80)
            ptr = np.arange(0, 2 * edge.size + 1, 2, dtype=np.int64)
        added = [s.add(edge, ptr, path) for s in stores]
        assert added[0] == added[1] > 0
        for s in stores:
            s.z[:] = np.where(np.arange(len(s)) % 3 == 0, 0.0, 1.0)
        assert stores[0].forget() == stores[1].forget()
        a, b = stores
        assert a.triangles == b.triangles == (not paths)
        np.testing.assert_array_equal(a.edge, b.edge)
        np.testing.assert_array_equal(a.path, b.path)
        np.testing.assert_array_equal(a.ptr, b.ptr)
        np.testing.assert_array_equal(a.hashes, b.hashes)
    # a remembered constraint is not added twice
    assert [s.add(s.edge.copy(), s.ptr.copy(), s.path.copy()) for s in stores] == [0, 0]


# ---------------------------------------------------------------------------
# Hildreth passes


@pytest.mark.parametrize("seed", range(3))
def test_disjoint_batches_cover_once_and_share_no_variable(seed):
    edge, ptr, path = _random_paths(seed)
    batches = np_cycles._disjoint_batches(edge, ptr, path)
    allc = np.concatenate(batches)
    assert np.array_equal(np.sort(allc), np.arange(edge.size))
    for b in batches:
        used = np.concatenate([np.concatenate(([edge[c]], path[ptr[c]:ptr[c + 1]]))
                               for c in b])
        assert np.unique(used).size == used.size


def _in_batch_order(edge, ptr, path, start=0):
    """The constraints ``start ..`` reordered batch by batch, as the twin projects them."""
    batches = np_cycles._disjoint_batches(edge[start:], ptr[start:] - ptr[start],
                                          path[ptr[start]:])
    order = np.concatenate(batches) + start
    lens = np.diff(ptr)
    sel = np.concatenate([path[ptr[c]:ptr[c + 1]] for c in order]).astype(np.int32)
    ptr_o = np.concatenate(([0], np.cumsum(lens[order]))).astype(np.int64)
    return order, ptr_o, sel


def _batched_l2(x, winv, edge, ptr, path, z, start, stop):
    # the twin's batch-by-batch pass, which it takes on large sets
    return np_cycles._batched_l2(x, winv, z,
                                 np_cycles._batches(edge, ptr, path, start, stop))


@pytest.mark.parametrize("scale", [1.0, 1e-120, 1e120])
@pytest.mark.parametrize("start,stop", [(0, 300), (100, 300), (7, 8), (5, 5),
                                        (0, 120)])
@pytest.mark.parametrize("many_vars", [False, True])
def test_a_small_l2_pass_is_the_kernels_bit_for_bit(scale, start, stop, many_vars):
    # few constraints, or small batches: the kernel's pass in storage order
    edge, ptr, path = _random_paths(4)
    rng = np.random.RandomState(4)
    m = 4000 if many_vars else 40
    x0 = (rng.rand(m) + 0.05) * scale
    x0[::5] = 0.0
    winv = rng.rand(m) + 0.5
    z0 = np.where(rng.rand(edge.size) < 0.4, rng.rand(edge.size) * scale, 0.0)
    for _ in range(2):
        x_a, z_a, x_b, z_b = x0.copy(), z0.copy(), x0.copy(), z0.copy()
        ra = np_cycles.project_paths_l2(x_a, winv, edge, ptr, path, z_a, start, stop)
        rb = nb_cycles.project_paths_l2(x_b, winv, edge, ptr, path, z_b, start, stop)
        assert ra == rb
        np.testing.assert_array_equal(x_a, x_b)
        np.testing.assert_array_equal(z_a, z_b)
        x0, z0 = x_a, z_a


@pytest.mark.parametrize("kl", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-120, 1e120])
@pytest.mark.parametrize("start", [0, 100])
def test_a_batch_pass_equals_the_kernel_in_that_order(kl, scale, start):
    # projections of variable-disjoint constraints commute: the twin's pass
    # equals the kernel's pass over the constraints taken batch by batch
    edge, ptr, path = _random_paths(3)
    rng = np.random.RandomState(3)
    x0 = (rng.rand(40) + 0.05) * scale
    winv = rng.rand(40) + 0.5
    zscale = 1.0 if kl else scale               # KL duals are in log units
    z0 = np.where(rng.rand(edge.size) < 0.4, rng.rand(edge.size) * zscale, 0.0)
    order, ptr_o, sel = _in_batch_order(edge, ptr, path, start)
    k = edge.size
    x_a, z_a = x0.copy(), z0.copy()
    x_b, z_b = x0.copy(), z0[order].copy()
    if kl:
        ra = np_cycles.project_paths_kl(x_a, edge, ptr, path, z_a, start, k)
        rb = nb_cycles.project_paths_kl(x_b, edge[order], ptr_o, sel, z_b, 0,
                                        order.size)
    else:
        ra = _batched_l2(x_a, winv, edge, ptr, path, z_a, start, k)
        rb = nb_cycles.project_paths_l2(x_b, winv, edge[order], ptr_o, sel, z_b,
                                        0, order.size)
    np.testing.assert_allclose(x_a, x_b, rtol=1e-12)
    np.testing.assert_allclose(z_a[order], z_b, rtol=1e-12, atol=1e-13 * zscale)
    np.testing.assert_array_equal(z_a[:start], z0[:start])   # not projected
    assert ra == pytest.approx(rb, rel=1e-12)
    assert np.all(z_a >= 0)
    # a second pass on the same set (the twin keeps its batches) as well
    ra = (np_cycles.project_paths_kl(x_a, edge, ptr, path, z_a, start, k) if kl
          else _batched_l2(x_a, winv, edge, ptr, path, z_a, start, k))
    rb = (nb_cycles.project_paths_kl(x_b, edge[order], ptr_o, sel, z_b, 0, order.size)
          if kl else nb_cycles.project_paths_l2(x_b, winv, edge[order], ptr_o, sel,
                                                z_b, 0, order.size))
    np.testing.assert_allclose(x_a, x_b, rtol=1e-12)
    assert ra == pytest.approx(rb, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150])
def test_a_triangle_batch_pass_equals_the_kernel_in_that_order(unit, scale):
    rng = np.random.RandomState(7)
    m, k = 50, 120
    edge = np.empty(k, np.int32)
    path = np.empty(2 * k, np.int32)
    for c in range(k):
        edge[c], path[2 * c], path[2 * c + 1] = rng.choice(m, 3, replace=False)
    ptr = np.arange(0, 2 * k + 1, 2, dtype=np.int64)
    order, _, sel = _in_batch_order(edge, ptr, path)
    x0 = rng.rand(m) * scale
    winv = np.full(m, 0.5) if unit else rng.rand(m) + 0.5
    z0 = np.where(rng.rand(k) < 0.4, rng.rand(k) * scale, 0.0)
    x_a, z_a, x_b, z_b = x0.copy(), z0.copy(), x0.copy(), z0[order].copy()
    if unit:
        ra = np_cycles.project_triangles_unit(x_a, 0.5, edge, path, z_a, 0, k)
        rb = nb_cycles.project_triangles_unit(x_b, 0.5, edge[order], sel, z_b, 0, k)
    else:
        ra = np_cycles.project_triangles_l2(x_a, winv, edge, path, z_a, 0, k)
        rb = nb_cycles.project_triangles_l2(x_b, winv, edge[order], sel, z_b, 0, k)
    np.testing.assert_allclose(x_a, x_b, rtol=1e-12)
    np.testing.assert_allclose(z_a[order], z_b, rtol=1e-12, atol=1e-13 * scale)
    assert ra == pytest.approx(rb, rel=1e-12)
    # nothing to project
    assert np_cycles.project_triangles_l2(x_a, winv, edge, path, z_a, k, k) == 0.0


def test_nonnegative_pass_is_bit_identical():
    rng = np.random.RandomState(0)
    x0, winv = rng.randn(50), rng.rand(50) + 0.5
    x0[::9] = 0.0
    z0 = np.where(rng.rand(50) < 0.5, rng.rand(50), 0.0)
    xa, za, xb, zb = x0.copy(), z0.copy(), x0.copy(), z0.copy()
    assert (np_cycles.project_nonnegative(xa, winv, za)
            == nb_cycles.project_nonnegative(xb, winv, zb))
    np.testing.assert_array_equal(xa, xb)
    np.testing.assert_array_equal(za, zb)
    assert np_cycles.project_nonnegative(xa[:0], winv[:0], za[:0]) == 0.0


# ---------------------------------------------------------------------------
# dense oracles


def _violations(x, res):
    e, path = res[0], res[2].reshape(-1, 2)
    return x[e] - x[path[:, 0]] - x[path[:, 1]]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150])
def test_triangle_oracle_matches_the_kernel(seed, scale):
    rng = np.random.RandomState(seed)
    n = 25
    x = np.abs(rng.randn(n * (n - 1) // 2)) * scale
    x[::7] = 0.0                                # ties and zero lengths
    mask = rng.rand(x.size) < 0.9
    got = DenseTriangleOracle(n, mask, kernels=NUMPY)
    want = DenseTriangleOracle(n, mask, kernels=NUMBA)
    a, b = got(x, 1e-3 * scale), want(x, 1e-3 * scale)
    np.testing.assert_array_equal(a[0], b[0])   # the same violated edges
    np.testing.assert_array_equal(a[1], b[1])
    assert a[3] == pytest.approx(b[3], rel=1e-12)
    # the apexes may differ on ties; the violations may not
    np.testing.assert_allclose(_violations(x, a), _violations(x, b), rtol=1e-12)


def test_triangle_oracle_of_tiny_and_satisfied_problems():
    for n in (0, 1, 2):
        out = DenseTriangleOracle(n, kernels=NUMPY)(np.zeros(n * (n - 1) // 2), 0.0)
        assert out[0].size == 0 and out[3] == 0.0
    x = np.ones(10)                              # a metric: nothing violated
    a = DenseTriangleOracle(5, kernels=NUMPY)(x, 0.0)
    b = DenseTriangleOracle(5, kernels=NUMBA)(x, 0.0)
    assert a[0].size == b[0].size == 0 and a[3] == b[3] == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_short_edge_search_matches_the_kernel(seed):
    rng = np.random.RandomState(seed)
    n = 30
    x = np.where(rng.rand(n * (n - 1) // 2) < 0.8, 1.0, rng.rand(n * (n - 1) // 2))
    x[::11] -= 0.05                             # a few negative overshoots
    a = np_short.short_edge_triangles(x, n, 1e-3)
    b = nb_short.short_edge_triangles(x, n, 1e-3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    xp = np.maximum(x, 0.0)
    np.testing.assert_allclose(_violations(xp, a), _violations(xp, b), rtol=1e-12)
    assert a[3] == pytest.approx(b[3], rel=1e-12)
    assert a[4] == b[4]                         # the same number of short edges
    # through the oracle: short or dense, the same constraints
    oa = ShortEdgeTriangleOracle(n, kernels=NUMPY)(x, 1e-3)
    np.testing.assert_array_equal(oa[0], b[0])


def test_floyd_warshall_matches_the_kernel():
    rng = np.random.RandomState(0)
    X = np.abs(rng.randn(30, 30))
    X = X + X.T
    np.fill_diagonal(X, 0.0)
    a, b = X.copy(), X.copy()
    np_sp.apsp(a)
    nb_sp.apsp(b)
    np.testing.assert_allclose(a, b, rtol=1e-14)
    assert np.all(a <= X)


# ---------------------------------------------------------------------------
# MetricNearness on both paths


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
    a, b = _both_paths(lambda: MetricNearness(**kwargs), D, **fit_kw)
    top = np.abs(D).max()
    assert a.violation_ <= 1e-6 and b.violation_ <= 1e-6
    # the same optimum, to the tolerance (relative to max |D|)
    np.testing.assert_allclose(a.metric_, b.metric_, rtol=0, atol=1e-5 * top)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-5, abs=1e-12 * top ** 2)
    if case == "metric":
        np.testing.assert_allclose(a.metric_, D, atol=1e-12)


def test_metric_nearness_options_without_twin_run_on_numba(monkeypatch):
    # several triangles per edge and the shortest-path oracle have no twin:
    # the fit chooses the kernels whatever the mode
    import metric_estimators.metric_nearness as mn

    made = []
    real = mn.DenseShortestPathOracle

    def spy(*args, **kw):
        made.append(kw.get("kernels"))
        return real(*args, **kw)

    monkeypatch.setattr(mn, "DenseShortestPathOracle", spy)
    D = _noisy_distances(12)
    with _backend.use("numpy"):
        MetricNearness(oracle="shortest_path").fit(D)
    assert made == [NUMBA]


def test_small_metric_nearness_does_not_load_numba():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import metric_estimators as me\n"
        "rng = np.random.RandomState(0)\n"
        "D = np.abs(rng.randn(30, 30)); D = D + D.T; np.fill_diagonal(D, 0)\n"
        "me.MetricNearness().fit(D)\n"
        "me.MetricNearness(divergence='kl').fit(D + 1 - np.eye(30))\n"
        "W = np.ones((30, 30)) + np.eye(30)\n"
        "me.MetricNearness().fit(D, sample_weight=W)\n"
    )
    mods = modules_after(code)
    assert "metric_estimators.metric_nearness" in mods
    assert "metric_estimators._kernels.numpy.cycle_projections" in mods
    assert_no_numba(mods)


# ---------------------------------------------------------------------------
# correlation clustering (dense): pairs, moves, both paths


@pytest.mark.parametrize("subset", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150])
def test_pair_pass_is_bit_identical(subset, scale):
    rng = np.random.RandomState(0)
    m = 200
    x, f = rng.rand(m), rng.randn(m)
    d = (rng.rand(m) < 0.5).astype(float)
    w = np.where(rng.rand(m) < 0.2, 0.0, rng.rand(m) * 3 * scale)  # zero-weight pairs
    zA = np.where(rng.rand(m) < 0.5, rng.rand(m), 0.0) * scale
    zB = np.where(rng.rand(m) < 0.5, rng.rand(m), 0.0) * scale
    edges = np.sort(rng.choice(m, 80, replace=False)).astype(np.int64)
    a = [v.copy() for v in (x, f, zA, zB)]
    b = [v.copy() for v in (x, f, zA, zB)]
    if subset:
        ra = np_cc.project_pairs_w_subset(a[0], a[1], d, w, a[2], a[3], edges)
        rb = nb_cc.project_pairs_w_subset(b[0], b[1], d, w, b[2], b[3], edges)
    else:
        ra = np_cc.project_pairs_w(a[0], a[1], d, w, a[2], a[3])
        rb = nb_cc.project_pairs_w(b[0], b[1], d, w, b[2], b[3])
    assert ra == rb > 0
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert np_cc.project_pairs_w(x[:0], f[:0], d[:0], w[:0], zA[:0], zB[:0]) == 0.0


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
    sa = np_moves.best_one_element_moves(A, la, 50, 1e-12)
    sb = nb_moves.best_one_element_moves(A, lb, 50, 1e-12)
    assert sa == sb
    np.testing.assert_array_equal(la, lb)


def _sparse_moves_graph(seed, n=60):
    rng = np.random.RandomState(seed)
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
    return rng, A


@pytest.mark.parametrize("seed", range(5))
def test_sparse_one_element_moves_give_the_kernels_labels(seed):
    rng, A = _sparse_moves_graph(seed)
    n = A.shape[0]
    labels0 = rng.randint(0, 5 if seed else n, n).astype(np.int64)
    la, lb = labels0.copy(), labels0.copy()
    args = (A.indptr.astype(np.int64), A.indices.astype(np.int64),
            np.ascontiguousarray(A.data))
    sa = np_moves.sparse_one_element_moves(*args, la, 50, 1e-12)
    sb = nb_moves.sparse_one_element_moves(*args, lb, 50, 1e-12)
    assert sa == sb
    assert sa > 1                               # some moves were made
    np.testing.assert_array_equal(la, lb)
    # one sweep only
    la, lb = labels0.copy(), labels0.copy()
    assert (np_moves.sparse_one_element_moves(*args, la, 1, 1e-12)
            == nb_moves.sparse_one_element_moves(*args, lb, 1, 1e-12) == 1)
    np.testing.assert_array_equal(la, lb)


@pytest.mark.parametrize("eps", [1e-12, 0.05, 0.3, 0.0])
@pytest.mark.parametrize("seed", range(3))
def test_sparse_one_element_moves_near_ties(seed, eps):
    # weights on a coarse grid, some nudged by about eps: the sums of a row
    # tie or differ by less than eps, where the scan order decides
    rng, A = _sparse_moves_graph(seed, n=120)
    A = A.tocoo()
    w = np.round(A.data * 2) / 2
    w += rng.choice([0.0, 0.5 * eps, eps, -eps], size=w.size)
    upper = A.row < A.col
    A = sparse.coo_matrix((w[upper], (A.row[upper], A.col[upper])), A.shape)
    A = (A + A.T).tocsr()
    A.sort_indices()
    n = A.shape[0]
    args = (A.indptr.astype(np.int64), A.indices.astype(np.int64),
            np.ascontiguousarray(A.data))
    for start in (np.arange(n), rng.randint(0, 7, n), np.zeros(n, int)):
        la = start.astype(np.int64)
        lb = la.copy()
        sa = np_moves.sparse_one_element_moves(*args, la, 50, eps)
        sb = nb_moves.sparse_one_element_moves(*args, lb, 50, eps)
        assert sa == sb
        np.testing.assert_array_equal(la, lb)


def test_sparse_one_element_moves_degenerate():
    indptr = np.zeros(4, np.int64)
    empty = np.zeros(0, np.int64)
    for sweeps in (0, 1, 5):
        la = np.array([0, 0, 1], np.int64)
        lb = la.copy()
        assert (np_moves.sparse_one_element_moves(indptr, empty, empty * 1.0,
                                                  la, sweeps, 1e-12)
                == nb_moves.sparse_one_element_moves(indptr, empty,
                                                     empty * 1.0, lb, sweeps,
                                                     1e-12))
        np.testing.assert_array_equal(la, lb)
    # huge weights whose sums overflow, a negative eps
    rng, A = _sparse_moves_graph(1)
    with np.errstate(over="ignore"):
        huge = np.ascontiguousarray(A.data) * 1e308
    args = (A.indptr.astype(np.int64), A.indices.astype(np.int64), huge)
    for eps in (1e-12 * 1e308, -0.5):
        la = rng.randint(0, 4, A.shape[0]).astype(np.int64)
        lb = la.copy()
        assert (np_moves.sparse_one_element_moves(*args, la, 50, eps)
                == nb_moves.sparse_one_element_moves(*args, lb, 50, eps))
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
    got = np_moves.sparse_cost(rows, cols, a, labels)
    want = nb_moves.sparse_cost(rows, cols, a, labels)
    assert got == want
    same = labels[rows] == labels[cols]
    assert np.isclose(got, a[(a > 0) & ~same].sum() - a[(a < 0) & same].sum())
    assert np_moves.sparse_cost(rows[:0], cols[:0], a[:0], labels) == 0.0


def _planted_sparse(n, seed=7, density=0.1):
    rng = np.random.RandomState(seed)
    truth = rng.randint(0, 4, n)
    A = np.triu(sparse.random(n, n, density=density, random_state=rng).toarray() > 0, 1)
    S = np.where(truth[:, None] == truth[None, :], 1.0, -1.0)
    S[rng.rand(n, n) < 0.1] *= -1
    A = sparse.csr_matrix(np.where(A, np.triu(S, 1), 0.0))
    return rng, A + A.T


def test_sparse_local_search_same_labels_on_both_paths():
    rng, A = _planted_sparse(80)
    start = rng.randint(0, 80, 80)
    la, sa = local_search(A, start, 100, NUMPY)
    lb, sb = local_search(A, start, 100, NUMBA)
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


def test_a_stopped_dense_fit_closes_the_iterate_on_both_paths():
    A = _signed(30, seed=2)
    a, b = _both_paths(lambda: CorrelationClustering(random_state=0, max_iter=2), A)
    for est in (a, b):
        assert not est.converged_
        # the closure is a metric: its shortest paths are itself
        X = est.lp_solution_
        D = X.copy()
        np_sp.apsp(D)
        np.testing.assert_allclose(D, X, atol=1e-12)
    np.testing.assert_allclose(a.lp_solution_, b.lp_solution_, atol=0.05)


def test_small_correlation_clustering_does_not_load_numba():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from scipy import sparse\n"
        "import metric_estimators as me\n"
        "rng = np.random.RandomState(0)\n"
        "A = np.sign(rng.randn(30, 30)); A = np.triu(A, 1); A = A + A.T\n"
        "me.CorrelationClustering(random_state=0).fit(A)\n"
        "S = sparse.csr_matrix(A * (rng.rand(30, 30) < 0.2))\n"
        "S = sparse.csr_matrix(np.triu(S.toarray(), 1)); S = S + S.T\n"
        "me.CorrelationClustering(random_state=0, max_iter=3).fit(S)\n"
        "from metric_estimators.correlation_clustering import correlation_clustering_cost\n"
        "correlation_clustering_cost(S, np.zeros(30, int))\n"
    )
    mods = modules_after(code)
    assert "metric_estimators.correlation_clustering" in mods
    assert "metric_estimators._kernels.numpy.sparse_graph" in mods
    assert_no_numba(mods)


# ---------------------------------------------------------------------------
# sparse graphs: the bounded searches, the closure and the ball pivot


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
    got = np_graph.bounded_violated_cycles(*args, 0, n, threshold, cap)
    for a, b in zip(got[:3], want[:3]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert got[3] == want[3]
    # a block of sources, as the executors ask for
    s0, s1 = n // 3, n - n // 3
    want = nb_graph.bounded_violated_cycles(*args, s0, s1, threshold, cap)
    got = np_graph.bounded_violated_cycles(*args, s0, s1, threshold, cap)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_bounded_violated_cycles_finds_a_known_cycle():
    # a square 0-1-2-3 with x_03 = 5 and unit lengths elsewhere: x_03 > 3
    rows, cols = np.array([0, 1, 2, 0]), np.array([1, 2, 3, 3])
    g = _SparseGraph(4, rows, cols, search="bounded")
    x = np.array([1.0, 1.0, 1.0, 5.0])
    ce, ptr, path, maxv = np_graph.bounded_violated_cycles(
        x, g.indptr, g.indices, g.eid, 0, 4, 0.0)
    np.testing.assert_array_equal(ce, [3])
    np.testing.assert_array_equal(ptr, [0, 3])
    assert sorted(path.tolist()) == [0, 1, 2]
    assert maxv == 2.0


@pytest.mark.parametrize("seed", range(12))
def test_graph_closure_gives_the_kernels_bits(seed):
    _, n, g, x = _graph(seed)
    x = np.maximum(x, 0.0)
    ya, yb = x.copy(), x.copy()
    np_graph.graph_closure(x, g.indptr, g.indices, g.eid, 0, n, ya)
    nb_graph.graph_closure(x, g.indptr, g.indices, g.eid, 0, n, yb)
    np.testing.assert_array_equal(ya, yb)
    assert np.all(ya <= x)


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("probabilistic", [False, True])
def test_ball_pivot_gives_the_kernels_labels(seed, probabilistic):
    rng, n, g, x = _graph(seed)
    order = rng.permutation(n).astype(np.int64)
    args = (x, g.indptr, g.indices, g.eid, order, probabilistic, seed + 11)
    want = nb_graph.ball_pivot(*args)
    got = np_graph.ball_pivot(*args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_ball_pivot_threshold_rounding_by_hand():
    # path 0 - 1 - 2 - 3 with lengths 0.2, 0.2, 0.9: pivot 0 takes 1 and 2
    g = _SparseGraph(4, np.array([0, 1, 2]), np.array([1, 2, 3]),
                     search="bounded")
    x = np.array([0.2, 0.2, 0.9])
    labels = np_graph.ball_pivot(x, g.indptr, g.indices, g.eid,
                                 np.arange(4), False, 0)
    np.testing.assert_array_equal(labels, [0, 0, 0, 1])


def test_searches_without_twin_refuse_the_twins():
    for search in ("full", "components"):
        with pytest.raises(ValueError, match="no numpy twin"):
            SparseShortestPathOracle(3, [0], [1], search=search, kernels=NUMPY)


def test_sparse_oracle_and_closure_same_on_both_kernels():
    rng, A = _planted_sparse(60, seed=3)
    U = sparse.triu(A, 1).tocoo()
    x = np.where(U.data > 0, 0.0, 1.0) + 0.1 * rng.rand(U.data.size)
    out = [SparseShortestPathOracle(60, U.row, U.col, search="bounded",
                                    kernels=k) for k in (NUMPY, NUMBA)]
    a, b = (o(x, 1e-3) for o in out)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    np.testing.assert_array_equal(out[0].closure(x), out[1].closure(x))


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
    # the per-node searches on both sides (the numba path searches per
    # component by default: another search, compared in
    # test_component_oracle.py); the twins' LP passes project batches, so
    # the LP agrees to its tolerance, the rounding on the same LP solution
    # gives the same labels
    import metric_estimators.correlation_clustering as ccmod

    A = _sparse_signed(150)

    def per_node(*args, **kw):
        kw["search"] = "bounded"
        return SparseShortestPathOracle(*args, **kw)

    monkeypatch.setattr(ccmod, "SparseShortestPathOracle", per_node)
    a, b = _both_paths(lambda: CorrelationClustering(random_state=0,
                                                     rounding=rounding), A)
    assert a.converged_ and b.converged_
    assert a.lp_objective_ == pytest.approx(b.lp_objective_, rel=2e-4)
    slack = 1e-9 * abs(b.lp_objective_)
    assert a.lp_objective_ >= b.lower_bound_ - slack
    assert b.lp_objective_ >= a.lower_bound_ - slack
    assert a.cost_ == pytest.approx(b.cost_, rel=0.05)
    # the rounding and local search of one LP solution: the same on both
    X = b.lp_solution_
    labels = [ccmod.pivot_rounding(X, np.random.RandomState(1), rounding, k)
              for k in (NUMPY, NUMBA)]
    np.testing.assert_array_equal(*labels)
    assert (ccmod.correlation_clustering_cost(A, labels[0], NUMPY)
            == ccmod.correlation_clustering_cost(A, labels[0], NUMBA))
