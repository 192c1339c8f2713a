"""The strided triangle store of CycleConstraints against its CSR form.

While every constraint is a triangle the active set keeps ``path[2c:2c+2]``
with no offsets and no stored hashes; these tests run the same batches,
passes and forget steps through a store forced into the CSR form (offsets,
stored hashes: the general layout) and require the same constraints, duals
and iterates bit for bit, the same hashes, and a hash table holding exactly
the stored hashes.
"""

import numpy as np
import pytest

from metric_estimators import _backend
from metric_estimators._kernels.constraint_store import constraint_hashes
from metric_estimators._kernels.cycle_projections import project_paths_l2, project_triangles_l2
from metric_estimators.solvers.active_sets import CycleConstraints


def _batch(rng, m, k, dup_from=None):
    """``k`` random triangles on ``m`` edges in the oracle's CSR form, some repeated."""
    edge = rng.integers(0, m, k).astype(np.int64)
    path = rng.integers(0, m, 2 * k).astype(np.int32)
    if dup_from is not None and len(dup_from):
        # re-send some stored constraints (an oracle may return them again)
        pick = rng.integers(0, len(dup_from), k // 4)
        edge[:pick.size] = dup_from.edge[pick]
        path.reshape(-1, 2)[:pick.size] = dup_from.path.reshape(-1, 2)[pick]
    # and a duplicate inside the batch
    edge[-1], path[-2:] = edge[0], path[:2]
    return edge, np.arange(0, 2 * k + 1, 2, dtype=np.int64), path


def _table_set(active):
    t = active._table
    return set(t[t != 0].tolist())


def _pair(m, seed, uniform):
    rng = np.random.default_rng(seed)
    x0 = rng.random(m)
    winv = np.full(m, 0.5) if uniform else rng.uniform(0.2, 3.0, m)
    strided = CycleConstraints(x0.copy(), winv, kernels=_backend.NUMBA)
    csr = CycleConstraints(x0.copy(), winv, kernels=_backend.NUMBA)
    csr._to_csr()  # the general layout from the start
    return rng, strided, csr


def _same(a, b):
    assert len(a) == len(b)
    np.testing.assert_array_equal(a.edge, b.edge)
    np.testing.assert_array_equal(a.path, b.path)
    np.testing.assert_array_equal(a.ptr, b.ptr)
    np.testing.assert_array_equal(a.z, b.z)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.hashes, b.hashes)
    assert _table_set(a) == set(a.hashes.tolist()) == _table_set(b)


@pytest.mark.parametrize("uniform", [True, False])
def test_strided_store_matches_the_csr_layout(uniform):
    m = 400
    rng, strided, csr = _pair(m, 3, uniform)
    assert strided._strided and not csr._strided
    for step in range(6):
        edge, ptr, path = _batch(rng, m, 300, dup_from=strided)
        start = len(strided)
        assert strided.add(edge, ptr, path) == csr.add(edge, ptr, path) > 0
        _same(strided, csr)
        assert strided.project(start) == csr.project(start)
        for _ in range(3):
            assert strided.project(0) == csr.project(0)
        _same(strided, csr)
        # forget a random half of the positive duals too (the driver forgets
        # the zero ones; more deletions exercise the table)
        drop = rng.random(len(strided)) < 0.3
        strided.z[drop] = 0.0
        csr.z[drop] = 0.0
        assert strided.forget() == csr.forget()
        _same(strided, csr)
        assert strided._strided
    # the strided form holds fewer bytes
    assert strided.nbytes < csr.nbytes


def test_a_longer_path_turns_the_store_into_csr():
    m = 300
    rng, strided, csr = _pair(m, 5, uniform=False)
    edge, ptr, path = _batch(rng, m, 200)
    strided.add(edge, ptr, path)
    csr.add(edge, ptr, path)
    strided.project(0)
    csr.project(0)
    # a batch with one path of three edges
    edge = np.array([7, 8], dtype=np.int64)
    ptr = np.array([0, 2, 5], dtype=np.int64)
    path = np.array([1, 2, 3, 4, 5], dtype=np.int32)
    assert strided.add(edge, ptr, path) == csr.add(edge, ptr, path) == 2
    assert not strided.triangles and not strided._strided
    _same(strided, csr)
    np.testing.assert_array_equal(strided.path[strided.ptr[-2]:], [3, 4, 5])
    for _ in range(3):
        assert strided.project(0) == csr.project(0)
    strided.z[::3] = 0.0
    csr.z[::3] = 0.0
    assert strided.forget() == csr.forget()
    _same(strided, csr)


def test_triangle_kernels_match_the_general_ones():
    rng = np.random.default_rng(0)
    m, k = 500, 2000
    edge = rng.integers(0, m, k).astype(np.int32)
    path = rng.integers(0, m, 2 * k).astype(np.int32)
    ptr = np.arange(0, 2 * k + 1, 2, dtype=np.int64)
    np.testing.assert_array_equal(
        constraint_hashes(edge, ptr, path),
        constraint_hashes(edge.astype(np.int64), ptr, path))
    x = rng.normal(size=m)
    winv = rng.uniform(0.1, 5.0, m)
    z = np.where(rng.random(k) < 0.5, rng.random(k), 0.0)
    x1, z1, x2, z2 = x.copy(), z.copy(), x.copy(), z.copy()
    for start in (0, 17):
        r1 = project_triangles_l2(x1, winv, edge, path, z1, start, k)
        r2 = project_paths_l2(x2, winv, edge, ptr, path, z2, start, k)
        assert r1 == r2
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(z1, z2)


def test_hash_table_stays_below_its_load_limit():
    m = 10_000
    rng, strided, _ = _pair(m, 9, uniform=True)
    for _ in range(5):
        strided.add(*_batch(rng, m, 3000))
        assert len(strided) <= CycleConstraints.MAX_LOAD * strided._table.size
        assert _table_set(strided) == set(strided.hashes.tolist())
