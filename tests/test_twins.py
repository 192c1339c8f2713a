"""Every numpy twin against its numba kernel, module by module.

:mod:`metric_estimators._kernels.numpy` holds a twin of each kernel module
of :mod:`metric_estimators._kernels`: the same function names, arguments
and outputs, in numpy.  Each twin must give its kernel's results: bit for
bit where its module docstring says so (hashes, pair selections, the k-NN
ranking, the constraint store, the local moves, the sparse searches), to
rounding elsewhere, also at extreme scales and on degenerate inputs
(duplicates, ties, empty inputs, nothing violated); and the solver objects
that take ``kernels`` (active sets, oracles, problems) must give the same
results on either.  Which path a fit takes, and that whole fits agree on
both paths, is ``tests/test_backends.py``'s topic.
"""

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import _backend
from metric_estimators._kernels import bregman as nb_bregman
from metric_estimators._kernels import cc_pair_projections as nb_cc
from metric_estimators._kernels import constraint_store as nb_store
from metric_estimators._kernels import correlation_clustering as nb_moves
from metric_estimators._kernels import cycle_projections as nb_cycles
from metric_estimators._kernels import edges as nb_edges
from metric_estimators._kernels import lmnn as nb_lmnn
from metric_estimators._kernels import lsml as nb_lsml
from metric_estimators._kernels import mlkr as nb_mlkr
from metric_estimators._kernels import nca as nb_nca
from metric_estimators._kernels import neighbours as nb_neighbours
from metric_estimators._kernels import ordinal as nb_ordinal
from metric_estimators._kernels import pair_oracle as nb_pairs
from metric_estimators._kernels import scml as nb_scml
from metric_estimators._kernels import short_edge_triangles as nb_short
from metric_estimators._kernels import shortest_paths as nb_sp
from metric_estimators._kernels import sparse_graph as nb_graph
from metric_estimators._kernels import stochastic as nb_stochastic
from metric_estimators._kernels.numpy import bregman as np_bregman
from metric_estimators._kernels.numpy import cc_pair_projections as np_cc
from metric_estimators._kernels.numpy import constraint_store as np_store
from metric_estimators._kernels.numpy import correlation_clustering as np_moves
from metric_estimators._kernels.numpy import cycle_projections as np_cycles
from metric_estimators._kernels.numpy import edges as np_edges
from metric_estimators._kernels.numpy import lmnn as np_lmnn
from metric_estimators._kernels.numpy import lsml as np_lsml
from metric_estimators._kernels.numpy import mlkr as np_mlkr
from metric_estimators._kernels.numpy import nca as np_nca
from metric_estimators._kernels.numpy import neighbours as np_neighbours
from metric_estimators._kernels.numpy import ordinal as np_ordinal
from metric_estimators._kernels.numpy import pair_oracle as np_pairs
from metric_estimators._kernels.numpy import scml as np_scml
from metric_estimators._kernels.numpy import short_edge_triangles as np_short
from metric_estimators._kernels.numpy import shortest_paths as np_sp
from metric_estimators._kernels.numpy import sparse_graph as np_graph
from metric_estimators._kernels.numpy import stochastic as np_stochastic
from metric_estimators._problems.lmnn import LMNNObjective, target_neighbors
from metric_estimators._problems.neighbours import nearest, nearest_in_groups
from metric_estimators.solvers.active_sets import (
    CycleConstraints,
    LogDetPairConstraints,
    LogDetPointPairConstraints,
)
from metric_estimators.solvers.cc_local_search import local_search
from metric_estimators.solvers.impostors import ImpostorSet
from metric_estimators.solvers.oracles import (
    DenseTriangleOracle,
    FixedListOracle,
    LabelPairOracle,
    ShortEdgeTriangleOracle,
    SparseShortestPathOracle,
)
from metric_estimators.solvers.oracles.sparse import _SparseGraph

NUMBA, NUMPY = _backend.NUMBA, _backend.NUMPY
SCALES = (1.0, 1e-150, 1e150)


def _close(a, b, rtol=1e-10):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(np.abs(b).max(initial=0.0), np.finfo(float).tiny)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


# ---------------------------------------------------------------------------
# edges, hashes and the constraint store (edges, constraint_store)


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
# Hildreth passes (cycle_projections, cc_pair_projections)


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


# ---------------------------------------------------------------------------
# dense oracles (triangle_oracle, short_edge_triangles, shortest_paths)


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
# correlation clustering's local moves and cost (correlation_clustering)


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
    la, sa = local_search(A, start, 100, kernels=NUMPY)
    lb, sb = local_search(A, start, 100, kernels=NUMBA)
    assert sa == sb > 1
    np.testing.assert_array_equal(la, lb)


# ---------------------------------------------------------------------------
# sparse graphs: the bounded searches, the closure, the ball pivot (sparse_graph)


def _graph(seed):
    rng = np.random.RandomState(seed)
    n = int(rng.randint(2, 70))
    A = sparse.triu(sparse.random(n, n, density=rng.uniform(0.02, 0.4),
                                  random_state=rng), 1).tocoo()
    g = _SparseGraph(n, A.row, A.col, search="bounded", kernels=_backend.NUMBA)
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
    g = _SparseGraph(4, rows, cols, search="bounded", kernels=_backend.NUMBA)
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
                     search="bounded", kernels=_backend.NUMBA)
    x = np.array([0.2, 0.2, 0.9])
    labels = np_graph.ball_pivot(x, g.indptr, g.indices, g.eid,
                                 np.arange(4), False, 0)
    np.testing.assert_array_equal(labels, [0, 0, 0, 1])

@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("eps, threshold", [(0.0, 0.0), (0.0, 0.05), (0.1, 0.0)])
@pytest.mark.parametrize("cap", [0, 2])
def test_component_violated_cycles_gives_the_kernels_bits(seed, eps, threshold, cap):
    _, n, g, x = _graph(seed)
    args = (x, g.indptr, g.indices, g.eid)
    for blk in ((0, -1), (n // 3, n - n // 3)):       # all roots, a block of them
        want = nb_graph.component_violated_cycles(*args, eps, threshold, cap, *blk)
        got = np_graph.component_violated_cycles(*args, eps, threshold, cap, *blk)
        for a, b in zip(got[:3], want[:3]):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
        assert got[3] == want[3]
    for a, b in zip(np_graph.short_edge_forest(*args, eps),
                    nb_graph.short_edge_forest(*args, eps)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_component_search_on_planted_communities_gives_the_kernels_bits():
    # whole communities at length 0: large components, many targets each
    rng, A = _planted_sparse(200, seed=4)
    U = sparse.triu(A, 1).tocoo()
    g = _SparseGraph(200, U.row, U.col, search="components", kernels=NUMBA)
    x = np.where(U.data > 0, 0.0, 1.0)
    for lengths in (x, x + 0.05 * rng.rand(x.size)):
        for cap in (0, 16):
            args = (lengths, g.indptr, g.indices, g.eid, 0.0, 0.01, cap)
            want = nb_graph.component_violated_cycles(*args)
            got = np_graph.component_violated_cycles(*args)
            assert want[0].size > 0
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)


def test_sparse_oracle_and_closure_same_on_both_kernels():
    rng, A = _planted_sparse(60, seed=3)
    U = sparse.triu(A, 1).tocoo()
    x = np.where(U.data > 0, 0.0, 1.0) + 0.1 * rng.rand(U.data.size)
    for search in ("bounded", "components"):
        out = [SparseShortestPathOracle(60, U.row, U.col, search=search, cap=4,
                                        growth=4, kernels=k) for k in (NUMPY, NUMBA)]
        for _ in range(2):                       # capped, then as the cap grows
            a, b = (o(x, 1e-3) for o in out)
            for u, v in zip(a, b):
                np.testing.assert_array_equal(u, v)
        np.testing.assert_array_equal(out[0].closure(x), out[1].closure(x))


# ---------------------------------------------------------------------------
# LogDet sweeps and checks (bregman)


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

def _both_sweeps(A, V, delta, xi, lam, idx, gamma):
    states = [[A.copy(), xi.copy(), lam.copy()] for _ in range(2)]
    outs = []
    for (A_, xi_, lam_), mod in zip(states, (np_bregman, nb_bregman)):
        w, wn = np.empty(A.shape[0]), np.empty(A.shape[0])
        outs.append(mod.logdet_sweep(A_, V, delta, xi_, lam_, idx, gamma, w, wn))
    return outs, states

@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("gamma", [1.0, 0.3, np.inf])
@pytest.mark.parametrize("scale", [1.0, 1e-60, 1e60])
def test_logdet_sweep_matches_the_kernel(seed, gamma, scale):
    A, V, delta, xi, lam = _logdet_problem(seed, scale=scale)
    rng = np.random.RandomState(seed)
    idx = np.concatenate((rng.permutation(V.shape[0]), [5, 5, 7])).astype(np.int64)
    ((ca, va, ua), (cb, vb, ub)), states = _both_sweeps(A, V, delta, xi, lam,
                                                         idx, gamma)
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
    np_bregman.logdet_violations(A_np, V, delta, states[0][1], idx, out_a)
    nb_bregman.logdet_violations(A_np, V, delta, states[0][1], idx, out_b)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-9, atol=1e-12)

@pytest.mark.parametrize("d", [1, 13, 64])
def test_logdet_sweep_matches_the_kernel_over_many_sweeps(d):
    # a long chain of rank-one updates (ProjectAndForget's active sets)
    rng = np.random.RandomState(d)
    m = 600
    V = rng.randn(m, d)
    delta = np.where(rng.rand(m) < 0.3, 1.0, -1.0)
    xi = np.where(delta > 0, 0.3, 3.0) * d
    A, lam = np.eye(d), np.zeros(m)
    states = [[A.copy(), xi.copy(), lam.copy()] for _ in range(2)]
    for sweep in range(5):
        idx = rng.permutation(m).astype(np.int64)
        outs = []
        for (A_, xi_, lam_), mod in zip(states, (np_bregman, nb_bregman)):
            outs.append(mod.logdet_sweep(A_, V, delta, xi_, lam_, idx, 1.0,
                                         np.empty(d), np.empty(d)))
        np.testing.assert_allclose(outs[0][:2], outs[1][:2], rtol=1e-8)
        assert abs(outs[0][2] - outs[1][2]) <= 2
    for a, b in zip(*states):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * np.abs(b).max())
    assert np.array_equal(states[0][0], states[0][0].T)

def test_logdet_sweep_of_nothing():
    A, V, delta, xi, lam = _logdet_problem(0)
    w = np.empty(A.shape[0])
    for mod in (np_bregman, nb_bregman):
        A_ = A.copy()
        assert mod.logdet_sweep(A_, V, delta, xi, lam, np.empty(0, np.int64),
                                1.0, w, w.copy()) == (0.0, 0.0, 0)
        assert np.array_equal(A_, A)

def test_logdet_sweep_that_changes_nothing_leaves_the_bits():
    # every constraint satisfied and every dual zero: no projection moves A
    A, V, delta, xi, lam = _logdet_problem(1)
    p = np.einsum("ij,jk,ik->i", V, A, V)
    xi = np.where(delta > 0, 2.0, 0.5) * np.maximum(p, 1e-3)
    lam = np.zeros_like(lam)
    idx = np.arange(V.shape[0], dtype=np.int64)
    ((ca, va, ua), (cb, vb, ub)), states = _both_sweeps(A, V, delta, xi, lam,
                                                         idx, 1.0)
    assert (ca, ua, cb, ub) == (0.0, 0, 0.0, 0)
    assert va == vb == 0.0
    for a, b in zip(*states):
        assert np.array_equal(a, b)
    assert np.array_equal(states[0][0], A)

def test_logdet_sweep_refuses_a_matrix_it_would_not_update_in_place():
    A, V, delta, xi, lam = _logdet_problem(0)
    idx = np.arange(V.shape[0], dtype=np.int64)
    w = np.empty(A.shape[0])
    with pytest.raises(ValueError, match="C-contiguous"):
        np_bregman.logdet_sweep(np.asfortranarray(A + 1e-3 * np.ones_like(A)),
                                V, delta, xi, lam, idx, 1.0, w, w.copy())

def test_logdet_violations_and_helpers_match_the_kernel():
    A, V, delta, xi, _ = _logdet_problem(2, scale=1e30)
    idx = np.array([0, 3, 7, 7, 39], dtype=np.int64)
    out_a, out_b = np.full(idx.size, np.nan), np.full(idx.size, np.nan)
    np_bregman.logdet_violations(A, V, delta, xi, idx, out_a)
    nb_bregman.logdet_violations(A, V, delta, xi, idx, out_b)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-12, atol=1e-15)
    empty = np.empty(0, np.int64)
    np_bregman.logdet_violations(A, V, delta, xi, empty, np.empty(0))
    u, v = np.empty(5), np.empty(5)
    np_bregman.sym_matvec(A, V[1], u)
    nb_bregman.sym_matvec(A, V[1], v)
    np.testing.assert_allclose(u, v, rtol=1e-12)
    for z, theta in ((0.0, -1.0), (0.5, 0.2), (0.5, 0.7), (0.3, 0.3)):
        assert np_bregman.hildreth_correction(z, theta) == \
            nb_bregman.hildreth_correction.py_func(z, theta)

def test_active_set_runs_on_the_kernels_it_is_given():
    A, V, delta, xi, _ = _logdet_problem(0)
    sets = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        act = LogDetPairConstraints(A, 1.0, random_state=0, kernels=kernels)
        act.add(np.arange(V.shape[0]), V, delta, xi)
        for _ in range(4):
            act.project()
        act.forget()
        sets.append(act)
    a, b = sets
    assert a.kernels is _backend.NUMPY and b.kernels is _backend.NUMBA
    np.testing.assert_array_equal(a.key, b.key)
    np.testing.assert_allclose(a.A, b.A, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.violations(), b.violations(), rtol=1e-9,
                               atol=1e-12)

def test_fixed_list_oracle_same_on_both_paths():
    A, V, delta, xi, _ = _logdet_problem(3)
    got = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        act = LogDetPairConstraints(A, 1.0, kernels=kernels)
        act.add(np.array([1, 2]), V[1:3], delta[1:3], xi[1:3])
        got.append(FixedListOracle(V, delta, xi, kernels=kernels)(A, 0.0, act))
    for x, z in zip(*got):
        np.testing.assert_allclose(x, z, rtol=1e-12)


# ---------------------------------------------------------------------------
# the labelled-pair scan (pair_oracle)


def _scan_inputs(seed, n=70, d=3, scale=1.0, n_skip=300):
    rng = np.random.RandomState(seed)
    Z = rng.randn(n, d) * scale
    if n > 5:
        Z[5] = Z[4]                             # identical points
    y = rng.randint(0, 3, n).astype(np.int64)
    skip = np.unique(rng.randint(0, n * n, n_skip))
    skip = skip[skip // n < skip % n]
    srow, scol = skip // n, (skip % n).astype(np.int64)
    start = np.searchsorted(srow, np.arange(n + 1)).astype(np.int64)
    sq = np.einsum("ij,ij->i", Z, Z)
    return Z, sq, y, start, scol

def _both_scans(Z, sq, y, i0, i1, low, high, tol, start, cols, cap):
    outs = []
    for mod in (np_pairs, nb_pairs):
        B = i1 - i0
        ki = np.full((B, cap), -1, np.int64)
        kj = np.full((B, cap), -1, np.int64)
        kv = np.full((B, cap), np.nan)
        counts = np.full(B, -1, np.int64)
        rowmax = np.full(B, np.nan)
        mod.scan_pair_block(Z, sq, y, i0, i1, low, high, tol, start, cols,
                            ki, kj, kv, counts, rowmax)
        outs.append((ki, kj, kv, counts, rowmax))
    return outs

@pytest.mark.parametrize("cap", [1, 3, 1000])
@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e100])
@pytest.mark.parametrize("with_skip", [False, True])
def test_scan_pair_block_matches_the_kernel(cap, scale, with_skip):
    Z, sq, y, start, cols = _scan_inputs(cap, scale=scale,
                                         n_skip=300 if with_skip else 0)
    low, high = 2.0 * scale ** 2, 6.0 * scale ** 2
    for i0, i1 in ((0, 70), (0, 16), (16, 32), (64, 70), (69, 70)):
        a, b = _both_scans(Z, sq, y, i0, i1, low, high, 0.05, start, cols, cap)
        np.testing.assert_array_equal(a[3], b[3])           # counts
        assert b[3][:i1 - i0 - 1].sum() > 0 or i1 - i0 == 1
        np.testing.assert_allclose(a[4], b[4], rtol=1e-12)  # row maxima
        # the ring buffers: the same pairs in the same slots
        filled = np.arange(cap)[None, :] < np.minimum(b[3], cap)[:, None]
        np.testing.assert_array_equal(a[0][filled], b[0][filled])
        np.testing.assert_array_equal(a[1][filled], b[1][filled])
        np.testing.assert_allclose(a[2][filled], b[2][filled], rtol=1e-12)

def test_scan_pair_block_of_a_block_without_pairs():
    Z, sq, y, start, cols = _scan_inputs(0, n=4)
    # the last row has no pair i < j: nothing counted, nothing kept
    a, b = _both_scans(Z, sq, y, 3, 4, 1.0, 2.0, 0.0, start, cols, 5)
    for x in (a, b):
        assert x[3][0] == 0 and x[4][0] == 0.0
        assert np.all(x[0] == -1)

@pytest.mark.parametrize("with_skip", [False, True])
@pytest.mark.parametrize("max_new", [40, None])
def test_label_pair_oracle_same_pairs_on_both_paths(with_skip, max_new):
    rng = np.random.RandomState(1)
    n = 70
    X = rng.randn(n, 3)
    X[5] = X[4]
    y = rng.randint(0, 3, n)
    A = np.cov(rng.randn(3, 10)) + np.eye(3)
    found = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        oracle = LabelPairOracle(X, y, 2.0, 6.0, block_size=16,
                                 max_new=max_new, kernels=kernels)
        act = LogDetPointPairConstraints(np.eye(3), 1.0, X, (2.0, 6.0),
                                         random_state=0, kernels=kernels)
        if with_skip:
            I, J, delta, _ = oracle(A, 0.05, act)
            act.add(I[::3], J[::3], delta[::3])
            act.project()
        found.append((oracle(A, 0.05, act), dict(oracle.log)))
    (a, la), (b, lb) = found
    assert la["n_violated"] == lb["n_violated"]
    assert la["n_active_violated"] == lb["n_active_violated"]
    assert lb["n_violated"][-1] > 40
    # the 40 most violated (or all), in scan order
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    assert a[0].size == (40 if max_new else lb["n_violated"][-1])
    assert a[3] == pytest.approx(b[3], rel=1e-12)

@pytest.mark.parametrize("gamma", [1.0, 0.3, np.inf])
@pytest.mark.parametrize("scale", [1.0, 1e-60, 1e60])
def test_logdet_pair_sweep_matches_the_kernel_and_the_listed_sweep(gamma,
                                                                   scale):
    rng = np.random.RandomState(4)
    n, d, m = 30, 4, 120
    X = rng.randn(n, d) * scale
    X[7] = X[6]                                 # a zero difference: skipped
    I = rng.randint(0, n, m).astype(np.int32)
    J = ((I + 1 + rng.randint(0, n - 1, m)) % n).astype(np.int32)
    I[0], J[0] = 6, 7
    delta = np.where(rng.rand(m) < 0.5, 1, -1).astype(np.int8)
    xi = np.where(delta > 0, 0.3, 3.0) * scale ** 2
    lam = np.where(rng.rand(m) < 0.3, rng.rand(m), 0.0) / scale ** 2
    order = np.concatenate((rng.permutation(m), [5, 5, 9])).astype(np.int32)
    A0 = np.eye(d) + 0.1 * np.ones((d, d))
    states, outs = [], []
    for run in ("numpy", "numba", "listed"):
        A, x, z = A0.copy(), xi.copy(), lam.copy()
        w, wn, v, vn = (np.empty(d) for _ in range(4))
        for _ in range(3):
            if run == "listed":
                out = nb_bregman.logdet_sweep(
                    A, np.ascontiguousarray(X[I] - X[J]),
                    delta.astype(np.float64), x, z, order.astype(np.int64),
                    gamma, w, wn)
            else:
                mod = np_bregman if run == "numpy" else nb_bregman
                out = mod.logdet_pair_sweep(A, X, I, J, delta, x, z, order,
                                            gamma, w, wn, v, vn)
        states.append((A, x, z))
        outs.append(out)
    # the kernel is the listed sweep, bit for bit
    for a, b in zip(states[1], states[2]):
        assert np.array_equal(a, b)
    assert outs[1] == outs[2] and outs[1][2] > 30
    # the twin, to rounding
    for a, b in zip(states[0], states[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9,
                                   atol=1e-12 * np.abs(b).max())
    np.testing.assert_allclose(outs[0][:2], outs[1][:2], rtol=1e-9)
    empty = np.empty(0, np.int32)
    assert np_bregman.logdet_pair_sweep(A0, X, I, J, delta, xi, lam, empty,
                                        1.0, *(np.empty(d),) * 4) == (0.0, 0.0, 0)

@pytest.mark.parametrize("scale", [1.0, 1e-80, 1e80])
def test_active_pair_residuals_match_the_kernel(scale):
    rng = np.random.RandomState(5)
    n, d, m = 40, 3, 200
    Z = rng.randn(n, d) * scale
    I = rng.randint(0, n, m).astype(np.int32)
    J = ((I + 1 + rng.randint(0, n - 1, m)) % n).astype(np.int32)
    delta = np.where(rng.rand(m) < 0.5, 1, -1).astype(np.int8)
    dist = np.sum((Z[I] - Z[J]) ** 2, axis=1)
    xi = dist * np.exp(rng.randn(m) * 0.01)      # near tight
    lam = np.where(rng.rand(m) < 0.5, rng.rand(m), 0.0)
    for tol in (0.0, 1e-3, 1e-2, 1.0):
        a = np_pairs.active_pair_residuals(Z, I, J, delta, xi, lam, tol)
        b = nb_pairs.active_pair_residuals(Z, I, J, delta, xi, lam, tol)
        assert a[1] == b[1]
        assert a[0] == pytest.approx(b[0], rel=1e-12)
    r = (dist - xi) / xi
    ref = np.where(lam > 0, np.abs(r), delta * r)
    assert b[0] == pytest.approx(max(0.0, ref.max()), rel=1e-12)
    for mod in (np_pairs, nb_pairs):
        e = np.empty(0, np.int32)
        assert mod.active_pair_residuals(Z, e, e, np.empty(0, np.int8),
                                         np.empty(0), np.empty(0), 0.1) == (0.0, 0)

def test_point_pair_active_set_runs_on_the_kernels_it_is_given():
    rng = np.random.RandomState(6)
    n, d = 50, 4
    X = rng.randn(n, d)
    I, J = np.triu_indices(n, 1)
    delta = np.where(rng.rand(I.size) < 0.3, 1, -1)
    sets = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        act = LogDetPointPairConstraints(np.eye(d), 1.0, X, (1.0, 8.0),
                                         random_state=0, kernels=kernels)
        act.add(I, J, delta)
        for _ in range(4):
            act.project()
        act.forget()
        sets.append(act)
    a, b = sets
    np.testing.assert_array_equal(a.key, b.key)
    assert 0 < len(b) < I.size
    np.testing.assert_allclose(a.A, b.A, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.violations(), b.violations(), rtol=1e-9,
                               atol=1e-12)
    assert b.nbytes == 25 * len(b)


# ---------------------------------------------------------------------------
# the exact k-NN search (neighbours)


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


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_knn_ranking_of_all_points_is_bit_identical(ties, k):
    rng = np.random.RandomState(k)
    X = rng.randn(120, 6)
    if ties:
        X = np.round(X, 0)  # many equal distances
        X[10:14] = X[3]
    got = nearest(X, X, k, self_index=np.arange(120), kernels=_backend.NUMPY)
    want = nearest(X, X, k, self_index=np.arange(120), kernels=_backend.NUMBA)
    np.testing.assert_array_equal(got, want)
    if ties:
        # duplicates of row 3 come first, in increasing index
        assert list(got[3][:min(k, 4)]) == [10, 11, 12, 13][:k]


# ---------------------------------------------------------------------------
# LMNN (lmnn)


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
    td_a, td_b = np_lmnn.target_sqdist(Z, targets), nb_lmnn.target_sqdist(Z, targets)
    np.testing.assert_allclose(td_a, td_b, rtol=1e-13, atol=0)
    assert np.all(td_a[targets < 0] == 0)
    d_a, d_b = np_lmnn.pair_sqdist(Z, imp_i, imp_l), nb_lmnn.pair_sqdist(Z, imp_i, imp_l)
    np.testing.assert_allclose(d_a, d_b, rtol=1e-13, atol=0)
    # hinges right at 0 would make the active sets depend on the last bit
    out_a = np_lmnn.triplet_loss_weights(td_b, targets, imp_i, d_b, 0.3, squared)
    out_b = nb_lmnn.triplet_loss_weights(td_b, targets, imp_i, d_b, 0.3, squared)
    assert out_a[3] == out_b[3] > 0  # active triplets
    np.testing.assert_allclose(out_a[0], out_b[0], rtol=1e-12)
    np.testing.assert_allclose(out_a[1], out_b[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out_a[2], out_b[2], rtol=1e-12, atol=1e-14)
    _, w_t, w_i, _ = out_b
    w_t[0, 0] = 0.0  # zero weights are skipped by the kernel
    lap_a = np_lmnn.laplacian_product(X, targets, w_t, imp_i, imp_l, w_i)
    lap_b = nb_lmnn.laplacian_product(X, targets, w_t, imp_i, imp_l, w_i)
    np.testing.assert_allclose(lap_a, lap_b, rtol=1e-12, atol=1e-12 * np.abs(lap_b).max())


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

def test_lmnn_no_impostors_no_targets_and_no_active_triplets():
    Z, y, targets, a, b = _lmnn_case(1.0)
    empty = np.empty(0, dtype=np.int32)
    td = nb_lmnn.target_sqdist(Z, targets)
    for mod in (np_lmnn, nb_lmnn):
        loss, w_t, w_i, n_active = mod.triplet_loss_weights(
            td, targets, empty, np.empty(0), 0.5, True)
        assert loss == 0.0 and n_active == 0 and w_i.size == 0 and not w_t.any()
        assert w_t.dtype == np.float64
        lap = mod.laplacian_product(Z, targets, w_t, empty, empty, w_i)
        assert lap.shape == Z.shape and not lap.any()
        # rows without any target (every entry -1): zero distances
        assert not mod.target_sqdist(Z, np.full_like(targets, -1)).any()
    # impostors far beyond every margin: no active triplet
    far = np.full(a.size, 1e6)
    ra = np_lmnn.triplet_loss_weights(td, targets, a, far, 0.5, False)
    rb = nb_lmnn.triplet_loss_weights(td, targets, a, far, 0.5, False)
    assert ra[0] == rb[0] == 0.0 and ra[3] == rb[3] == 0


@pytest.mark.parametrize("seed", [0, 5])
def test_hashes_and_pair_selections_are_bit_identical(seed):
    X, Z, targets, imp_i, imp_l = _problem(seed, n=80, ties=True)
    n = Z.shape[0]
    H = np_lmnn.point_hashes(n, seed + 7)
    assert H.dtype == np.uint64 and np.array_equal(H, nb_lmnn.point_hashes(n, seed + 7))
    np.testing.assert_array_equal(np_lmnn.pair_uniform(imp_i, imp_l, H),
                                  nb_lmnn.pair_uniform(imp_i, imp_l, H))
    rho = np.abs(np.random.RandomState(seed).randn(n)) * 8.0
    rho[:4] = -np.inf  # anchors without targets
    for a, b in zip(np_lmnn.pairs_within(Z, imp_i, imp_l, rho),
                    nb_lmnn.pairs_within(Z, imp_i, imp_l, rho)):
        np.testing.assert_array_equal(a, b)
    sq = np.einsum("ij,ij->i", Z, Z)
    rows, cols = np.arange(0, 30), np.arange(30, n)
    G = Z[rows] @ Z[cols].T
    for symmetric in (True, False):
        for fraction in (1.0, 0.4):
            got = np_lmnn.threshold_block(G, sq[rows], sq[cols], rho[rows], rho[cols],
                                      rows, cols, symmetric, H, fraction)
            want = nb_lmnn.threshold_block(G, sq[rows], sq[cols], rho[rows], rho[cols],
                                      rows, cols, symmetric, H, fraction)
            assert got[0].dtype == want[0].dtype == np.int32
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
            assert got[0].size > 0
    y = np.arange(n) % 3
    got = np_lmnn.sampled_pairs_within(Z, y, H, 0.3, rho, 10, 50, 16)
    want = nb_lmnn.sampled_pairs_within(Z, y, H, 0.3, rho, 10, 50, 16)
    assert got[0].size > 0
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


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


@pytest.mark.parametrize("squared", [True, False])
def test_objectives_agree(squared):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    _, y_idx = np.unique(y, return_inverse=True)
    targets = target_neighbors(X, y_idx, 3, kernels=NUMPY)
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


# ---------------------------------------------------------------------------
# MLKR (mlkr)


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


# ---------------------------------------------------------------------------
# SCML and its AdaGrad step (scml, stochastic)


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

@pytest.mark.parametrize("nonnegative", [True, False])
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_adagrad_rda_update_twin_is_bit_identical(nonnegative, l1):
    rng = np.random.RandomState(1)
    states = [[np.zeros(9), np.zeros(9), np.zeros(9)] for _ in range(2)]
    for t in range(1, 30):
        grad = rng.randn(9) * (rng.rand(9) < 0.6)  # some coordinates never move
        grad *= 10.0 ** rng.randint(-8, 4, 9)  # and many scales
        grad[0] = 0.0
        for (gs, gq, w), update in zip(states, (np_stochastic.adagrad_rda_update,
                                                nb_stochastic.adagrad_rda_update)):
            update(grad, gs, gq, w, float(t), 0.3, l1, nonnegative)
        for a, b in zip(*states):
            np.testing.assert_array_equal(a, b)
    assert np.any(states[0][2] != 0) and states[0][2][0] == 0


# ---------------------------------------------------------------------------
# LODML and LSML (ordinal, lsml)


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


# ---------------------------------------------------------------------------
# NCA (nca)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 30.0])
def test_nca_softmax_weights_twin(scale):
    rng = np.random.RandomState(0)
    Z = rng.randn(70, 3) * scale
    Z[1] = Z[0]                                 # a duplicate: distance 0
    y = rng.randint(0, 3, 70).astype(np.int64)
    y[5] = 7                                    # a class of one point: p_i = 0
    sq = np.einsum("ij,ij->i", Z, Z)
    Ga, Gb = Z @ Z.T, Z @ Z.T
    pa = np_nca.softmax_weights(Ga, sq, y)
    pb = nb_nca.softmax_weights(Gb, sq, y)
    _close(pa, pb, rtol=1e-9)
    _close(Ga, Gb, rtol=1e-9)
    assert pa[5] == 0.0
    # each row of W sums to p_i (1 - p_i) - (1 - p_i) p_i = 0
    np.testing.assert_allclose(Ga.sum(axis=1), 0.0, atol=1e-12)
