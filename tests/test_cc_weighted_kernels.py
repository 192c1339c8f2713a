"""Kernels of the W-weighted correlation-clustering LP.

The pair projections, the triangle projection and the short-edge oracle.
"""

import numpy as np
import pytest

from metric_estimators import _backend
from metric_estimators._kernels.cc_pair_projections import (
    PARALLEL_MIN_PAIRS,
    _pair_step,
    project_pairs_w,
    project_pairs_w_subset,
)
from metric_estimators._kernels.cycle_projections import project_paths_l2
from metric_estimators._kernels.short_edge_triangles import (
    _edge_ends,
    short_edge_triangles,
)
from metric_estimators.solvers.oracles import DenseTriangleOracle


def _violations(x, ce, path):
    xp = np.maximum(x, 0.0)
    return xp[ce] - xp[path[0::2]] - xp[path[1::2]]


def test_edge_ends_inverts_edge_numbering():
    n = 37
    i, j = _edge_ends(np.arange(n * (n - 1) // 2), n)
    r, c = np.triu_indices(n, 1)
    assert np.array_equal(i, r) and np.array_equal(j, c)


@pytest.mark.parametrize("level", [None, 0.3, 0.7, 1.3])
@pytest.mark.parametrize("seed", range(4))
def test_short_edge_oracle_matches_dense_triangle_oracle(seed, level):
    # CC-like iterates: mostly 1, some short entries, overshoots above 1
    # and below 0; the short-edge oracle must find exactly the pairs the
    # dense min-plus oracle finds, with equally violated triangles
    rng = np.random.default_rng(seed)
    n = 45
    m = n * (n - 1) // 2
    x = np.where(rng.random(m) < 0.15, rng.random(m), 1.0)
    x += (rng.random(m) < 0.05) * rng.random(m) * 0.5
    x -= (rng.random(m) < 0.02) * 0.05
    thr = 1e-3
    ce, ptr, path, maxv, _ = short_edge_triangles(x, n, thr, level=level)
    ce2, ptr2, path2, maxv2 = DenseTriangleOracle(n, kernels=_backend.NUMBA)(x, thr)
    assert np.array_equal(ptr, 2 * np.arange(ce.size + 1))
    assert np.array_equal(ce, ce2)
    np.testing.assert_allclose(_violations(x, ce, path),
                               _violations(x, ce2, path2), atol=1e-12)
    assert np.all(_violations(x, ce, path) > thr)
    assert max(maxv, -x.min()) == pytest.approx(maxv2, abs=1e-12)


def test_pair_projection_is_weight_independent_in_x_and_scales_duals():
    # the W-weighted projection onto f >= |x - d| moves x and f by s / 2
    # whatever the weight; the duals are w times the unit-weight ones
    m = 5
    d = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    out = []
    for w in (np.ones(m), np.array([0.01, 0.1, 1.0, 10.0, 100.0])):
        x = np.zeros(m)
        f = np.full(m, -1.0)
        z_above, z_below = np.zeros(m), np.zeros(m)
        project_pairs_w(x, f, d, w, z_above, z_below)
        out.append((x, f, z_above / w, z_below / w))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b)
    # the result is feasible for the pair constraints
    x, f = out[0][0], out[0][1]
    assert np.all(f >= np.abs(x - d) - 1e-12)


def _pairs_one_by_one(x, f, d, w, z_above, z_below, edges):
    # reference: the pair steps in order, one call each (serial by design)
    resid = 0.0
    for e in edges:
        resid = max(resid, _pair_step.py_func(x, f, d, w, z_above, z_below,
                                              int(e)))
    return resid


@pytest.mark.parametrize("subset", [False, True])
def test_parallel_pair_pass_equals_the_serial_pass(subset):
    # above PARALLEL_MIN_PAIRS the pairs are dealt out to the threads in
    # blocks; the pairs are independent, so the result must be bit-for-bit
    # that of one pair after the other (zero weights, positive duals and a
    # ragged last block included)
    rng = np.random.default_rng(0)
    m = 2 * PARALLEL_MIN_PAIRS + 12345
    d = (rng.random(m) < 0.7).astype(float)
    w = np.where(rng.random(m) < 0.1, 0.0, rng.lognormal(0.0, 1.0, m))
    x = d + rng.normal(0.0, 0.3, m)
    f = rng.normal(0.0, 0.3, m)
    z_above = np.where(rng.random(m) < 0.3, rng.random(m), 0.0)
    z_below = np.where(rng.random(m) < 0.3, rng.random(m), 0.0)
    edges = (np.flatnonzero(rng.random(m) < 0.8) if subset
             else np.arange(m))
    ref = [a.copy() for a in (x, f, z_above, z_below)]
    r_ref = _pairs_one_by_one(*ref[:2], d, w, *ref[2:], edges)
    if subset:
        r = project_pairs_w_subset(x, f, d, w, z_above, z_below, edges)
    else:
        r = project_pairs_w(x, f, d, w, z_above, z_below)
    assert r == r_ref and r > 0.0
    for a, b in zip((x, f, z_above, z_below), ref):
        assert np.array_equal(a, b)


def test_triangle_projection_is_the_weighted_projection():
    # one violated triangle (a cycle constraint with a path of two edges, as
    # the correlation-clustering LP stores them): the W-weighted projection
    # onto x_e - x_f - x_g <= 0 moves each entry by theta / r
    x = np.array([1.0, 0.2, 0.3])
    r = np.array([2.0, 0.5, 4.0])
    z = np.zeros(1)
    project_paths_l2(x, 1.0 / r, np.array([0], np.int64),
                     np.array([0, 2], np.int64), np.array([1, 2], np.int32),
                     z, 0, 1)
    s = 1.0 - 0.2 - 0.3
    theta = s / (1 / 2.0 + 1 / 0.5 + 1 / 4.0)
    np.testing.assert_allclose(x, [1.0 - theta / 2.0, 0.2 + theta / 0.5,
                                   0.3 + theta / 4.0])
    assert abs(x[0] - x[1] - x[2]) < 1e-12
    assert z[0] == pytest.approx(theta)


@pytest.mark.parametrize("seed", range(2))
def test_short_edge_oracle_serial_and_parallel_kernels_agree(monkeypatch, seed):
    # below PARALLEL_MIN_NODES the short-edge passes run serially, from it on
    # in parallel: the same triangles, largest violation and short graph
    from metric_estimators._kernels import short_edge_triangles as kernels

    rng = np.random.default_rng(seed)
    n = 45
    m = n * (n - 1) // 2
    x = np.where(rng.random(m) < 0.15, np.round(rng.random(m), 2), 1.0)
    x += (rng.random(m) < 0.05) * rng.random(m) * 0.5  # long pairs too
    got = []
    for cutoff in (n + 1, n):  # serial, then parallel
        monkeypatch.setattr(kernels, "PARALLEL_MIN_NODES", cutoff)
        got.append(kernels.short_edge_triangles(x, n, 1e-3)
                   + kernels.short_edge_graph(x, n, 0.9))
    assert got[0][0].size > 0
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
