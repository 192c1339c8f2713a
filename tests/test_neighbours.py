"""The one exact kNN search: its tie rule (lower index first) against brute force."""

import numpy as np
import pytest

from metric_estimators import _backend
from metric_estimators._problems.neighbours import (
    knn_edges,
    knn_indices,
    nearest,
    nearest_in_groups,
)
from metric_estimators.constraints import knn_triplets


def brute_force(Q, R, k, self_index=None):
    """Sort every reference point by (squared distance, index), plain numpy.

    The distance is summed over the features in order, as the search does.
    """
    D = np.zeros((Q.shape[0], R.shape[0]))
    for f in range(Q.shape[1]):
        D += (Q[:, None, f] - R[None, :, f]) ** 2
    out = np.empty((Q.shape[0], k), dtype=int)
    for i in range(Q.shape[0]):
        cand = [j for j in range(R.shape[0])
                if self_index is None or j != self_index[i]]
        cand.sort(key=lambda j: (D[i, j], j))
        out[i] = cand[:k]
    return out


def _data(kind, rng):
    if kind == "grid":  # many exactly equal distances
        return rng.integers(0, 3, size=(45, 2)).astype(float)
    if kind == "duplicates":  # every point three times, floats
        X = rng.standard_normal((15, 3))
        return X[rng.permutation(np.repeat(np.arange(15), 3))]
    if kind == "offset":  # far from the origin: the Gram form cancels
        return rng.standard_normal((40, 4)) * 1e-3 + 1e4
    if kind == "decimals":  # ties in decimal, near-ties in binary
        return np.round(rng.uniform(0, 1, size=(60, 12)), 1)
    return rng.standard_normal((50, 5))


@pytest.mark.parametrize("kind", ["grid", "duplicates", "offset", "decimals", "random"])
@pytest.mark.parametrize("block", [1, 97, 1 << 21])
def test_knn_indices_equals_brute_force(kind, block):
    rng = np.random.default_rng(0)
    X = _data(kind, rng)
    n = X.shape[0]
    for k in (1, 2, 7, n - 1):
        np.testing.assert_array_equal(
            knn_indices(X, k, block=block, kernels=_backend.NUMPY), brute_force(X, X, k, np.arange(n))
        )


def test_duplicates_come_first_in_index_order():
    # point 0 has copies 3 and 5, and points 1, 2, 4 are at equal distance 1
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0],
                  [-1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(knn_indices(X, 4, kernels=_backend.NUMPY)[0], [3, 5, 1, 2])
    np.testing.assert_array_equal(knn_indices(X, 4, kernels=_backend.NUMPY)[5], [0, 3, 1, 2])
    np.testing.assert_array_equal(nearest(X[:1], X, 3, kernels=_backend.NUMPY)[0], [0, 3, 5])


def test_nearest_between_sets_and_groups():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(60, 2)).astype(float)
    Q = rng.integers(0, 4, size=(9, 2)).astype(float)
    np.testing.assert_array_equal(nearest(Q, X, 6, block=5, kernels=_backend.NUMPY), brute_force(Q, X, 6))
    groups = rng.integers(0, 4, size=60)
    groups[groups == 3] = 2
    groups[0] = 7  # a group of one point: no neighbours
    got = nearest_in_groups(X, groups, 5, kernels=_backend.NUMPY)
    assert np.all(got[0] == -1)
    for g in np.unique(groups):
        m = np.flatnonzero(groups == g)
        k = min(5, m.size - 1)
        if k:
            np.testing.assert_array_equal(
                got[m, :k], m[brute_force(X[m], X[m], k, np.arange(m.size))]
            )
        assert np.all(got[m, k:] == -1)
    rows, cols = knn_edges(X, 5, groups, kernels=_backend.NUMPY)
    assert np.all(groups[rows] == groups[cols]) and np.all(rows != cols)
    assert rows.size == (got >= 0).sum()


def test_bad_k():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="k=4"):
        knn_indices(X, 4, kernels=_backend.NUMPY)
    assert knn_indices(X, 0, kernels=_backend.NUMPY).shape == (4, 0)


def test_knn_triplets_use_the_tie_rule():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    X = np.vstack([X, X[:10]])  # duplicates across the whole set
    y = np.concatenate([rng.integers(0, 2, size=40), rng.integers(0, 2, size=10)])
    t = knn_triplets(X, y, k_genuine=2, k_impostor=3)
    assert np.all(t[:, 0] != t[:, 1])
    for c in (0, 1):
        same, diff = np.flatnonzero(y == c), np.flatnonzero(y != c)
        gen = same[brute_force(X[same], X[same], 2, np.arange(same.size))]
        imp = diff[brute_force(X[same], X[diff], 3)]
        want = {(int(i), int(j), int(l)) for a, i in enumerate(same)
                for j in gen[a] for l in imp[a]}
        got = {tuple(r) for r in t[np.isin(t[:, 0], same)].tolist()}
        assert got == want


@pytest.mark.parametrize("kind", ["grid", "duplicates", "offset", "decimals", "random"])
@pytest.mark.parametrize("extra", [0, 8])
def test_sklearn_candidates_give_the_same_neighbours(kind, extra, monkeypatch):
    """Large sets take candidates from scikit-learn's NearestNeighbors: same
    result, ties included (rows with too many ties fall back)."""
    import metric_estimators._problems.neighbours as mod

    calls = []
    nearest_blocks = mod.nearest

    def spy(*args, **kwargs):
        calls.append(args[0].shape[0])
        return nearest_blocks(*args, **kwargs)

    monkeypatch.setattr(mod, "SKLEARN_MIN_REFS", 0)
    monkeypatch.setattr(mod, "_EXTRA", extra)
    monkeypatch.setattr(mod, "nearest", spy)
    rng = np.random.default_rng(0)
    X = _data(kind, rng)
    n = X.shape[0]
    for k in (1, 2, 7, n - 1):
        np.testing.assert_array_equal(
            knn_indices(X, k, kernels=_backend.NUMPY), brute_force(X, X, k, np.arange(n)))
    if kind == "random" and extra > 0:  # no ties: the candidates suffice
        assert not calls
    if kind == "grid" or extra == 0:  # boundary ties / no spare candidate
        assert calls


def test_block_rows_bounds_the_block():
    """Blocks: never above the cap, at least one row, small ones for small data."""
    from metric_estimators._linalg import BLOCK, MIN_BLOCK_ROWS, SMALL_BLOCK, block_rows

    for n_cols in [1, 7, 100, 1_385, 3_430, 20_000, 70_000, 10**7]:
        rows = block_rows(n_cols)
        assert rows >= 1
        assert rows * n_cols <= max(BLOCK, n_cols)
        # small data: no more than SMALL_BLOCK entries unless MIN_BLOCK_ROWS need more
        assert rows * n_cols <= max(SMALL_BLOCK, MIN_BLOCK_ROWS * n_cols)
    assert block_rows(100, block=7) == 1  # a caller's cap wins
    assert block_rows(1_000) * 1_000 <= SMALL_BLOCK


def test_search_memory_grows_with_the_data_not_with_a_fixed_block():
    """The k-NN search of 2,000 points holds far less than an n x n block.

    A fixed block of 2**21 entries held 16 MB (three copies at once) for any
    n above 1,450; the data here are 64 KB.
    """
    import tracemalloc

    X = np.random.RandomState(0).randn(2_000, 4)
    knn_indices(X, 3, kernels=_backend.NUMPY)  # compile/import outside the measurement
    tracemalloc.start()
    try:
        knn_indices(X, 3, kernels=_backend.NUMPY)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, peak
