"""The bounded shortest-path oracle of the sparse correlation clustering path.

:func:`~metric_estimators._kernels.sparse_graph.bounded_violated_cycles`
stops each Dijkstra once the targets that could be violated are settled (or
at the shrinking radius ``x_uv - threshold``); checked here against scipy's
exact all-pairs distances, as is the uncapped component search
(:func:`~metric_estimators._kernels.sparse_graph.component_violated_cycles`).  :class:`SparseShortestPathOracle` with a cap
runs capped searches until one finds few constraints, then exact ones for
good.
"""

import numpy as np
import pytest
from sparse_graphs import exact_distances, random_lengths_graph

from metric_estimators import _backend
from metric_estimators._kernels.sparse_graph import (
    bounded_violated_cycles,
    component_violated_cycles,
)
from metric_estimators.solvers.oracles import SparseShortestPathOracle


def _graph(n, p, seed):
    # CC-like lengths: many 0 and 1, some in between, a few negative
    return random_lengths_graph(n, p, seed)


def _exact_search(search, x, oracle, threshold):
    """The uncapped kernel of ``search`` over every node (components: eps 0)."""
    g = oracle.graph
    if search == "bounded":
        return bounded_violated_cycles(x, g.indptr, g.indices, g.eid, 0,
                                       oracle.n, threshold, 0)
    return component_violated_cycles(x, g.indptr, g.indices, g.eid, 0.0,
                                     float(threshold), np.int64(0))


@pytest.mark.parametrize("search, values", [
    ("bounded", None),
    # many exact zeros (components of more than one node), a few negatives
    ("components", dict(values=(0.0, 0.0, 1.0, 0.5), noisy=0.4,
                        negative=0.05, negative_value=-0.02))])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [1e-3, 0.2])
def test_exact_search_finds_exactly_the_violated_edges(search, values, seed,
                                                        threshold):
    """Uncapped: one constraint per violated edge, on a shortest path, and the exact largest violation."""
    n = 50
    rows, cols, x = random_lengths_graph(n, 0.12, seed, **(values or {}))
    oracle = SparseShortestPathOracle(n, rows, cols, search=search, kernels=_backend.NUMBA)
    ce, ptr, path, maxv = _exact_search(search, x, oracle, threshold)
    D = exact_distances(n, rows, cols, x)
    viol = x - D[rows, cols]
    expected = np.flatnonzero(viol > threshold + 1e-12)
    np.testing.assert_array_equal(np.sort(ce), expected)
    assert expected.size > 0
    # every path joins the edge's ends and is a shortest one
    for k, e in enumerate(ce):
        edges = path[ptr[k]:ptr[k + 1]]
        ends = np.concatenate((rows[edges], cols[edges]))
        odd = np.flatnonzero(np.bincount(ends, minlength=n) % 2)
        np.testing.assert_array_equal(odd, sorted((rows[e], cols[e])))
        assert e not in edges
        np.testing.assert_allclose(np.maximum(x[edges], 0).sum(),
                                   D[rows[e], cols[e]], atol=1e-12)
    # the largest violation is exact when above the threshold
    np.testing.assert_allclose(maxv, viol.max(), atol=1e-12)


def test_largest_violation_below_threshold_is_a_bound():
    n = 40
    rows, cols, x = _graph(n, 0.15, 3)
    D = exact_distances(n, rows, cols, x)
    viol = x - D[rows, cols]
    threshold = viol.max() + 0.05
    oracle = SparseShortestPathOracle(n, rows, cols, search="bounded", kernels=_backend.NUMBA)
    g = oracle.graph
    ce, _, _, maxv = bounded_violated_cycles(x, g.indptr, g.indices, g.eid,
                                             0, n, threshold, 0)
    assert ce.size == 0
    assert viol.max() - 1e-12 <= maxv <= threshold


def test_capped_oracle_switches_to_exact_searches_for_good():
    n = 60
    rows, cols, x = _graph(n, 0.2, 7)
    oracle = SparseShortestPathOracle(n, rows, cols, search="bounded", cap=2,
                                      switch=0.01, kernels=_backend.NUMBA)
    exact = SparseShortestPathOracle(n, rows, cols, search="bounded", kernels=_backend.NUMBA)
    ce, _, _, _ = oracle(x, 1e-3)
    assert oracle.last_capped_ and not oracle.exact_
    # a point with almost nothing violated: the capped call finds too little
    y = exact_distances(n, rows, cols, x)[rows, cols].copy()
    y[0] += 0.3
    ce, _, _, maxv = oracle(y, 1e-3)
    assert oracle.exact_ and not oracle.last_capped_
    ref = exact(y, 1e-3)
    np.testing.assert_array_equal(ce, ref[0])
    assert maxv == ref[3]
    # and it stays exact on a point where capped searches would find plenty
    ce, _, _, maxv = oracle(x, 1e-3)
    assert not oracle.last_capped_
    ref = exact(x, 1e-3)
    np.testing.assert_array_equal(ce, ref[0])
    assert maxv == ref[3]
    assert oracle.n_capped_calls_ == 1 and oracle.n_exact_calls_ == 2


def test_growing_cap_schedule_goes_exact_through_larger_caps():
    n = 60
    rows, cols, x = _graph(n, 0.2, 7)
    y = exact_distances(n, rows, cols, x)[rows, cols].copy()
    y[0] += 0.3  # almost nothing violated: every capped call finds too little
    oracle = SparseShortestPathOracle(n, rows, cols, search="bounded", cap=2,
                                      switch=0.01, growth=4, kernels=_backend.NUMBA)
    exact = SparseShortestPathOracle(n, rows, cols, search="bounded", kernels=_backend.NUMBA)
    ce, _, _, _ = oracle(x, 1e-3)
    assert oracle.last_capped_ and oracle.cap_ == 2
    # a low-yield call at cap 2 is repeated at 8 and 32, then exactly (128 >= n)
    ce, _, _, maxv = oracle(y, 1e-3)
    assert oracle.exact_ and oracle.cap_ == 0 and not oracle.last_capped_
    ref = exact(y, 1e-3)
    np.testing.assert_array_equal(ce, ref[0])
    assert maxv == ref[3]
    assert oracle.n_capped_calls_ == 1 and oracle.n_exact_calls_ == 1


def test_growing_cap_keeps_a_larger_cap_that_finds_enough():
    # cap 1 settles only the source: no path, nothing found; the grown cap finds
    # violated cycles and stays in force for the next calls
    n = 60
    rows, cols, x = _graph(n, 0.2, 7)
    oracle = SparseShortestPathOracle(n, rows, cols, search="bounded", cap=1,
                                      switch=0.01, growth=4, kernels=_backend.NUMBA)
    ce, ptr, path, maxv = oracle(x, 1e-3)
    assert oracle.last_capped_ and oracle.cap_ > 1 and not oracle.exact_
    assert ce.size >= 1
    D = exact_distances(n, rows, cols, x)
    # capped constraints are real violated cycles; the bound is conservative
    for k, e in enumerate(ce):
        assert x[e] - np.maximum(x[path[ptr[k]:ptr[k + 1]]], 0).sum() > 1e-3
    assert maxv >= (x - D[rows, cols]).max() - 1e-12


@pytest.mark.parametrize("search", ["bounded", "components"])
def test_cap_grows_when_the_objective_stalls(search):
    # the capped calls find plenty, but the objective does not move: after
    # STALL_WINDOW + 1 calls at a cap, the next call runs at the grown cap
    from metric_estimators.solvers.oracles.sparse import STALL_WINDOW

    n = 60
    rows, cols, x = _graph(n, 0.2, 7)
    values = []

    def objective(z):
        values.append(z.sum())
        return 5.0 + 1e-5 * len(values)  # relative change 1e-5 per call

    oracle = SparseShortestPathOracle(n, rows, cols, search=search, cap=2,
                                      switch=0.0, growth=2,
                                      stall_objective=objective,
                                      stall_rtol=1e-3, kernels=_backend.NUMBA)
    caps = []
    for _ in range(STALL_WINDOW + 3):
        oracle(x, 1e-3)
        caps.append(oracle.cap_)
    assert caps[:STALL_WINDOW] == [2] * STALL_WINDOW
    assert caps[STALL_WINDOW] == 4 and oracle.n_stall_growths_ == 1
    assert len(values) == STALL_WINDOW + 3  # once per capped call
    # a moving objective never grows the cap
    moving = SparseShortestPathOracle(
        n, rows, cols, search=search, cap=2, switch=0.0, growth=2,
        stall_objective=lambda z, k=[0]: k.append(1) or float(len(k)),
        stall_rtol=1e-3, kernels=_backend.NUMBA)
    for _ in range(STALL_WINDOW + 3):
        moving(x, 1e-3)
    assert moving.cap_ == 2 and moving.n_stall_growths_ == 0


@pytest.mark.parametrize("nt", [0, 1, 2, 7, 16, 17, 60])
def test_targets_sorted_by_decreasing_radius_stably(nt):
    """The search's target order (insertion sort up to 16, mergesort above): numpy's stable sort."""
    from metric_estimators._kernels.sparse_graph import _sort_targets

    rng = np.random.default_rng(nt)
    n = 100
    need = np.zeros(n)
    tlist = np.full(n, -1, dtype=np.int64)
    nodes = rng.permutation(n)[:nt]
    # ties on purpose: radii from a few values
    need[nodes] = rng.choice([0.25, 0.5, 0.75, 1.0], nt)
    tlist[:nt] = nodes
    _sort_targets(tlist, nt, need)
    expected = nodes[np.argsort(-need[nodes], kind="stable")]
    np.testing.assert_array_equal(tlist[:nt], expected)
    assert np.all(tlist[nt:] == -1)
