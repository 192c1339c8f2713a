"""Local search of correlation clustering: one-element moves and cluster merges.

References are plain numpy: the cost by its definition over all pairs, and
every possible single move and merge evaluated by recomputing that cost.
"""

import numpy as np
import pytest
from scipy import sparse

from metric_estimators import CorrelationClustering, _backend
from metric_estimators.correlation_clustering import correlation_clustering_cost
from metric_estimators.solvers.cc_local_search import local_search, merge_clusters


def _cost(A, labels):
    """Cost by definition: positive weights split plus negative weights joined."""
    A = A.toarray() if sparse.issparse(A) else np.asarray(A)
    same = labels[:, None] == labels[None, :]
    return float(np.sum(np.triu(np.where(A > 0, A * ~same, -A * same), 1)))


def _random_signed(n, density, seed):
    rng = np.random.default_rng(seed)
    A = np.triu(rng.lognormal(0.0, 1.0, (n, n)) * rng.choice([-1.0, 1.0], (n, n)), 1)
    A *= np.triu(rng.random((n, n)) < density, 1)
    return A + A.T


def _best_improvement(A, labels):
    """Largest cost decrease of any single move or merge (plain numpy, brute force)."""
    base = _cost(A, labels)
    best = 0.0
    ids = np.unique(labels)
    new = labels.max() + 1
    for i in range(labels.size):
        for c in list(ids) + [new]:
            if c != labels[i]:
                lab = labels.copy()
                lab[i] = c
                best = max(best, base - _cost(A, lab))
    for p in ids:
        for q in ids:
            if p < q:
                best = max(best, base - _cost(A, np.where(labels == q, p, labels)))
    return best


def test_merge_joins_clusters_linked_by_positive_weight_only():
    # two 4-node positive cliques joined by one positive edge, no negative edge
    # between them: merged, the cost drops by that edge's weight; a third
    # clique joined by a net negative weight stays apart
    n = 12
    A = np.zeros((n, n))
    for block in (range(0, 4), range(4, 8), range(8, 12)):
        for i in block:
            for j in block:
                if i != j:
                    A[i, j] = 1.0
    A[0, 4] = A[4, 0] = 2.5
    A[1, 8] = A[8, 1] = 1.0
    A[2, 9] = A[9, 2] = -3.0
    labels = np.repeat([0, 1, 2], 4)
    # one-element moves alone cannot improve this clustering
    assert _best_improvement(A, labels) == pytest.approx(2.5)
    for M in (A, sparse.csr_matrix(A)):
        merged, count = merge_clusters(M, labels, 1e-12)
        assert count == 1
        np.testing.assert_array_equal(merged, [0] * 8 + [1] * 4)
        assert _cost(A, merged) == pytest.approx(_cost(A, labels) - 2.5)


@pytest.mark.parametrize("seed", range(4))
def test_local_search_ends_at_a_local_optimum_of_moves_and_merges(seed):
    n = 14
    A = _random_signed(n, 0.4, seed)
    start = np.random.default_rng(seed).integers(0, 3, n)
    for M in (A, sparse.csr_matrix(A)):
        labels, sweeps = local_search(M, start, 100, kernels=_backend.NUMBA)
        assert sweeps >= 1
        assert _cost(A, labels) <= _cost(A, start) + 1e-12
        assert _best_improvement(A, labels) <= 1e-9
        np.testing.assert_array_equal(np.unique(labels), np.arange(labels.max() + 1))


def test_local_search_handles_all_apart_and_all_together():
    A = _random_signed(10, 0.5, 7)
    for start in (np.arange(10), np.zeros(10, dtype=int)):
        labels, _ = local_search(sparse.csr_matrix(A), start, 100, kernels=_backend.NUMBA)
        assert _best_improvement(A, labels) <= 1e-9


def test_estimator_cost_is_that_of_its_labels_and_a_local_optimum():
    A = _random_signed(16, 0.3, 3)
    for M in (A, sparse.csr_matrix(A)):
        cc = CorrelationClustering(random_state=0).fit(M)
        assert cc.cost_ == pytest.approx(_cost(A, cc.labels_))
        assert cc.cost_ == pytest.approx(correlation_clustering_cost(M, cc.labels_))
        assert cc.cost_ <= cc.pivot_cost_ + 1e-12
        assert _best_improvement(A, cc.labels_) <= 1e-9
