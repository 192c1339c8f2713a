"""The component-level cycle oracle of sparse graphs (``search="components"``).

:func:`~metric_estimators._kernels.sparse_graph.component_violated_cycles`
runs one multi-source Dijkstra per component of the short edges (length
``max(x, 0) <= eps``) and expands paths inside a component along a BFS
spanning forest.  Checked here against independent references: scipy's
connected components and all-pairs Dijkstra, and a plain walk along every
returned path (the paths are simple: no node repeats).
"""

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse import csgraph
from sparse_graphs import exact_distances, random_lengths_graph

from metric_estimators import _backend
from metric_estimators._kernels.sparse_graph import (
    bounded_violated_cycles,
    component_violated_cycles,
    short_edge_forest,
)
from metric_estimators.solvers.oracles import SparseShortestPathOracle


def _graph(n, p, seed):
    # many exact zeros, 1, 0.5, noise on some, a few negative lengths
    return random_lengths_graph(n, p, seed, values=(0.0, 0.0, 1.0, 0.5),
                                noisy=0.4, negative=0.05, negative_value=-0.02)


def _kernel(oracle, x, eps, threshold, cap):
    g = oracle.graph
    return component_violated_cycles(x, g.indptr, g.indices, g.eid,
                                     float(eps), float(threshold),
                                     np.int64(cap))


def _walk(rows, cols, e, edges):
    """Walk ``edges`` from one end of ``e``; return the nodes visited (asserting a walk to the other end)."""
    a, b = int(rows[e]), int(cols[e])
    start = a
    first = edges[0]
    if b in (rows[first], cols[first]) and a not in (rows[first], cols[first]):
        start = b
    nodes = [start]
    for f in edges:
        cur = nodes[-1]
        assert cur in (rows[f], cols[f]), "consecutive edges do not meet"
        nodes.append(int(cols[f] if rows[f] == cur else rows[f]))
    assert {nodes[0], nodes[-1]} == {a, b}
    return nodes


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("eps", [0.0, 0.04, 0.3])
def test_forest_spans_the_short_edge_components(seed, eps):
    n = 60
    rows, cols, x = _graph(n, 0.06, seed)
    oracle = SparseShortestPathOracle(n, rows, cols, search="components", kernels=_backend.NUMBA)
    g = oracle.graph
    comp, order, cptr, tparent, tedge, depth = short_edge_forest(
        x, g.indptr, g.indices, g.eid, eps)
    short = np.maximum(x, 0.0) <= eps
    S = sparse.coo_matrix((np.ones(short.sum()), (rows[short], cols[short])),
                          shape=(n, n))
    k, ref = csgraph.connected_components(S, directed=False)
    assert cptr.size == k + 1
    # the same partition (ids may differ)
    pairs = set(zip(comp.tolist(), ref.tolist()))
    assert len(pairs) == k
    np.testing.assert_array_equal(np.sort(order), np.arange(n))
    for c in range(k):
        members = order[cptr[c]:cptr[c + 1]]
        assert np.all(comp[members] == c)
        root = members[0]
        assert tparent[root] == -1 and depth[root] == 0
        for v in members[1:]:
            e, p = tedge[v], tparent[v]
            assert short[e] and {rows[e], cols[e]} == {v, p}
            assert comp[p] == c and depth[v] == depth[p] + 1


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("eps", [0.0, 0.04, 0.3])
@pytest.mark.parametrize("cap", [0, 1, 4])
@pytest.mark.parametrize("threshold", [1e-3, 0.2])
def test_constraints_are_real_violated_simple_paths(seed, eps, cap, threshold):
    n = 50
    rows, cols, x = _graph(n, 0.1, seed)
    oracle = SparseShortestPathOracle(n, rows, cols, search="components", kernels=_backend.NUMBA)
    ce, ptr, path, maxv = _kernel(oracle, x, eps, threshold, cap)
    assert ce.size == np.unique(ce).size  # one constraint per edge at most
    assert ptr[0] == 0 and ptr[-1] == path.size and np.all(np.diff(ptr) >= 1)
    for k, e in enumerate(ce):
        edges = path[ptr[k]:ptr[k + 1]]
        assert e not in edges
        nodes = _walk(rows, cols, e, edges)
        assert len(set(nodes)) == len(nodes)  # a simple path
        viol = x[e] - np.maximum(x[edges], 0.0).sum()
        assert viol > threshold
    # the largest violation is never underestimated beyond the threshold
    D = exact_distances(n, rows, cols, x)
    true = float(np.max(x - D[rows, cols], initial=0.0))
    if true > threshold:
        assert maxv >= true - 1e-12
    assert ce.size > 0 or true <= threshold or cap > 0 or eps > 0


def test_long_cycle_through_zero_communities():
    """Communities at length 0 joined in a ring: one edge needs a cycle through all of them.

    With the same cap (settled nodes per node), a per-source search stays
    inside its community and misses the cycle; one ball per component, of
    ``cap * |C|`` nodes, reaches it.
    """
    k, size = 6, 12
    rows, cols, x = [], [], []
    for c in range(k):
        base = c * size
        for i in range(size):
            for j in range(i + 1, size):
                rows.append(base + i)
                cols.append(base + j)
                x.append(0.0)
    # the ring between communities: short links, and one long chord
    for c in range(k - 1):
        rows.append(c * size + size - 1)
        cols.append((c + 1) * size)
        x.append(0.05)
    rows.append(0)
    cols.append((k - 1) * size + 1)
    x.append(1.0)
    rows, cols, x = np.array(rows), np.array(cols), np.array(x)
    order = np.lexsort((cols, rows))
    rows, cols, x = rows[order], cols[order], x[order]
    chord = int(np.flatnonzero(x == 1.0)[0])
    n = k * size
    oracle = SparseShortestPathOracle(n, rows, cols, search="components", kernels=_backend.NUMBA)
    g = oracle.graph
    ce_b = bounded_violated_cycles(x, g.indptr, g.indices, g.eid, 0, n,
                                   0.1, k)[0]
    assert chord not in ce_b
    ce, ptr, path, maxv = _kernel(oracle, x, 0.0, 0.1, k)
    assert chord in ce
    i = int(np.flatnonzero(ce == chord)[0])
    np.testing.assert_allclose(x[path[ptr[i]:ptr[i + 1]]].sum(),
                               0.05 * (k - 1))
    np.testing.assert_allclose(maxv, 1.0 - 0.05 * (k - 1))


def test_oracle_wiring_and_cap_schedule():
    n = 60
    rows, cols, x = _graph(n, 0.08, 3)
    exact = SparseShortestPathOracle(n, rows, cols, search="components", kernels=_backend.NUMBA)
    ce, ptr, path, maxv = exact(x, 1e-3)
    ref = _kernel(exact, x, 0.0, 1e-3, 0)
    np.testing.assert_array_equal(ce, ref[0])
    np.testing.assert_array_equal(path, ref[2])
    assert maxv == max(ref[3], 0.02)  # the negative lengths count too
    # a capped oracle: valid constraints, then exact once low-yield
    capped = SparseShortestPathOracle(n, rows, cols, search="components",
                                      cap=1, switch=1.0, growth=0,
                                      component_eps=0.01, kernels=_backend.NUMBA)
    ce2, _, _, _ = capped(x, 1e-3)
    assert capped.exact_ and capped.cap_ == 0
    assert set(ce2) <= set(range(rows.size))


def test_bad_parameters():
    rows, cols = np.array([0, 1]), np.array([1, 2])
    with pytest.raises(ValueError, match="component_eps"):
        SparseShortestPathOracle(3, rows, cols, search="components",
                                 component_eps=-1.0, kernels=_backend.NUMBA)
    with pytest.raises(ValueError, match="no numpy twin"):
        SparseShortestPathOracle(3, rows, cols, search="full",
                                 kernels=_backend.NUMPY)
    with pytest.raises(ValueError, match="search"):
        SparseShortestPathOracle(3, rows, cols, search="component", kernels=_backend.NUMBA)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_graphs_without_edges(n):
    e = np.empty(0, dtype=np.int64)
    oracle = SparseShortestPathOracle(n, e, e, search="components", kernels=_backend.NUMBA)
    ce, ptr, path, maxv = oracle(np.empty(0), 0.0)
    assert ce.size == 0 and path.size == 0 and maxv == 0.0
    np.testing.assert_array_equal(ptr, [0])


def _signed_graph(n, seed, k=3, density=0.35, noise=0.15):
    """A sparse signed graph with planted groups, lognormal weights, ``noise`` sign flips."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k, n)
    r, c = np.triu_indices(n, 1)
    keep = rng.random(r.size) < density
    r, c = r[keep], c[keep]
    a = np.where(g[r] == g[c], 1.0, -1.0) * rng.lognormal(0.0, 1.0, r.size)
    a[rng.random(a.size) < noise] *= -1
    return sparse.csr_matrix((np.r_[a, a], (np.r_[r, c], np.r_[c, r])),
                             shape=(n, n))


def _complete_lp_value(cp, A):
    """The LP over every pair of nodes with every triangle inequality (cvxpy)."""
    n = A.shape[0]
    idx = -np.ones((n, n), dtype=np.int64)
    iu = np.triu_indices(n, 1)
    idx[iu] = np.arange(iu[0].size)
    idx = np.maximum(idx, idx.T)
    tri = [(idx[i, j], idx[i, k], idx[k, j]) for i in range(n)
           for j in range(i + 1, n) for k in range(n) if k not in (i, j)]
    t = np.array(tri)
    U = sparse.triu(A, 1).tocoo()
    x = cp.Variable(iu[0].size)
    e = idx[U.row, U.col]
    obj = cp.sum(cp.multiply(np.abs(U.data),
                             cp.abs(x[e] - (U.data < 0).astype(float))))
    prob = cp.Problem(cp.Minimize(obj), [x[t[:, 0]] <= x[t[:, 1]] + x[t[:, 2]],
                                         x >= 0, x <= 1])
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("n, seed", [(12, 1), (15, 2)])
def test_lp_with_the_component_oracle_reaches_the_lp_value(n, seed, cp,
                                                           monkeypatch):
    """CorrelationClustering's LP solve with the component oracle: the same LP value as the bounded one and cvxpy."""
    import metric_estimators.correlation_clustering as ccmod
    from metric_estimators import CorrelationClustering

    A = _signed_graph(n, seed)
    ref = _complete_lp_value(cp, A)
    params = dict(gamma=1e4, tol=1e-5, gap_tol=1e-6, max_iter=5000,
                  random_state=0)
    bounded = CorrelationClustering(**params).fit(A)

    made = []

    def components_oracle(n, rows, cols, **kw):
        kw.update(search="components", kernels=_backend.NUMBA)
        made.append(SparseShortestPathOracle(n, rows, cols, **kw))
        return made[-1]

    monkeypatch.setattr(ccmod, "SparseShortestPathOracle", components_oracle)
    comp = CorrelationClustering(**params).fit(A)
    assert made and made[0].graph.search == "components"
    assert made[0].n_exact_calls_ + made[0].n_capped_calls_ > 0
    assert bounded.converged_ and comp.converged_
    atol = 1e-7 * abs(A).sum()
    assert abs(comp.lp_objective_ - ref) <= 1e-4 * ref + atol
    assert abs(comp.lp_objective_ - bounded.lp_objective_) <= 1e-4 * ref + atol
    assert comp.lower_bound_ <= ref * (1 + 1e-9) + atol


@pytest.mark.parametrize("cap", [1, 2])
def test_capped_search_bounds_the_violation_it_misses(cap):
    """A target beyond the cap: no constraint, but the largest violation is still bounded from above."""
    k = 3
    rows = np.array([0] + list(range(k)))
    cols = np.array([k] + list(range(1, k + 1)))
    x = np.array([1.0] + [0.1] * k)
    order = np.lexsort((cols, rows))
    rows, cols, x = rows[order], cols[order], x[order]
    oracle = SparseShortestPathOracle(k + 1, rows, cols, search="components", kernels=_backend.NUMBA)
    ce, ptr, path, maxv = _kernel(oracle, x, 0.0, 1e-3, cap)
    chord = int(np.flatnonzero(x == 1.0)[0])
    assert chord not in ce
    assert maxv >= 1.0 - 0.1 * k - 1e-12
    ce, ptr, path, maxv = _kernel(oracle, x, 0.0, 1e-3, 0)
    assert list(ce) == [chord]
    np.testing.assert_allclose(maxv, 1.0 - 0.1 * k)


def _block_results(oracle, x, blocks, threshold, cap):
    from metric_estimators.solvers.oracles.sparse import _merge, _search_sources
    return _merge([_search_sources(oracle.graph, x, a, b, threshold, 0, cap)
                   for a, b in blocks])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("eps, cap", [(0.0, 0), (0.0, 2), (0.06, 0)])
def test_blocks_of_components_concatenate_to_the_whole_call(seed, eps, cap):
    """Blocks of component roots, run separately and merged in order: the whole call's bits."""
    from metric_estimators.solvers.oracles.sparse import _component_blocks

    n = 70
    rows, cols, x = _graph(n, 0.08, seed)
    oracle = SparseShortestPathOracle(n, rows, cols, search="components",
                                      component_eps=eps, kernels=_backend.NUMBA)
    whole = _kernel(oracle, x, eps, 1e-3, cap)
    assert whole[0].size > 0
    for blocks in ([(0, 9), (9, 40), (40, n)], [(0, 1), (1, n)],
                   _component_blocks(oracle.graph, x, 3),
                   _component_blocks(oracle.graph, x, 50)):
        assert blocks[0][0] == 0 and blocks[-1][1] == n
        assert all(b[1] == c[0] and b[0] < b[1]
                   for b, c in zip(blocks, blocks[1:]))
        merged = _block_results(oracle, x, blocks, 1e-3, cap)
        for u, v in zip(whole[:3], merged[:3]):
            np.testing.assert_array_equal(u, v)
        assert merged[3] == whole[3]


def test_component_blocks_balance_nodes_when_roots_crowd_small_ids():
    """Communities of randomly numbered nodes: their roots are small numbers; the blocks still split the nodes evenly."""
    from metric_estimators.solvers.oracles.sparse import _component_blocks

    rng = np.random.default_rng(0)
    k, size = 40, 25
    n = k * size
    perm = rng.permutation(n)
    lab = np.repeat(np.arange(k), size)
    r, c = [], []
    for g in range(k):  # a path through each community, at length 0
        nodes = perm[lab == g]
        r += list(nodes[:-1])
        c += list(nodes[1:])
    r, c = np.array(r), np.array(c)
    rows, cols = np.minimum(r, c), np.maximum(r, c)
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    oracle = SparseShortestPathOracle(n, rows, cols, search="components", kernels=_backend.NUMBA)
    x = np.zeros(rows.size)
    blocks = _component_blocks(oracle.graph, x, 4)
    assert len(blocks) == 4
    comp = short_edge_forest(x, oracle.graph.indptr, oracle.graph.indices,
                             oracle.graph.eid, 0.0)[0]
    roots = np.array([np.flatnonzero(comp == j).min() for j in range(k)])
    assert roots.max() < n // 4  # the crowding the blocks must undo
    nodes = [size * np.sum((roots >= a) & (roots < b)) for a, b in blocks]
    assert max(nodes) <= n / 4 + size and min(nodes) >= n / 4 - size


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threaded_oracle_equals_one_thread(threads, monkeypatch):
    from metric_estimators.solvers.oracles import sparse as sp

    n = 90
    # fewer zero lengths than _graph's: many components, not one giant
    rows, cols, x = random_lengths_graph(n, 0.07, 5,
                                         values=(0.0, 1.0, 0.5, 1.0),
                                         noisy=0.4, negative=0.05)
    monkeypatch.setattr(sp, "_bounded_threads", lambda: 1)
    one = SparseShortestPathOracle(n, rows, cols, search="components",
                                   cap=3, kernels=_backend.NUMBA)(x, 1e-3)
    monkeypatch.setattr(sp, "_bounded_threads", lambda: threads)
    oracle = SparseShortestPathOracle(n, rows, cols, search="components",
                                      cap=3, kernels=_backend.NUMBA)
    assert len(oracle._blocks(x)) == threads  # (threads <= 3 blocks fit)
    many = oracle(x, 1e-3)
    assert one[0].size > 0
    for u, v in zip(one, many):
        np.testing.assert_array_equal(u, v)
