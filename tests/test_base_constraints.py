"""Tests of the shared machinery: MahalanobisMixin helpers, validation and
the label-derived constraints."""

import pickle

import numpy as np
import pytest
from scipy.spatial.distance import mahalanobis

from metric_estimators._linalg import initialize_components
from metric_estimators._validation import check_init, check_n_components, validate_pairs
from metric_estimators.base import MahalanobisDistance, components_from_matrix
from metric_estimators.constraints import (
    Constraints,
    _decode_combination,
    knn_triplets,
    pairs_from_labels,
    positive_negative_pairs,
)

# --------------------------------------------------------------- factorisation


@pytest.mark.parametrize("seed", range(3))
def test_components_from_pd_matrix(seed):
    rng = np.random.RandomState(seed)
    A = rng.randn(6, 6)
    M = A @ A.T + 0.1 * np.eye(6)
    L = components_from_matrix(M)
    np.testing.assert_allclose(L.T @ L, M, rtol=1e-10, atol=1e-12)


def test_components_from_singular_psd_matrix_uses_eigh():
    rng = np.random.RandomState(0)
    A = rng.randn(5, 2)
    M = A @ A.T  # rank 2: Cholesky fails
    L = components_from_matrix(M)
    assert np.all(np.isfinite(L))
    np.testing.assert_allclose(L.T @ L, M, atol=1e-10)


def test_components_from_indefinite_matrix_is_an_error():
    with pytest.raises(ValueError, match="not positive semi-definite"):
        components_from_matrix(np.diag([1.0, -1.0]))


def test_mahalanobis_distance_matches_scipy_and_pickles():
    rng = np.random.RandomState(1)
    L = rng.randn(3, 4)
    metric = MahalanobisDistance(L)
    u, v = rng.randn(4), rng.randn(4)
    assert metric(u, v) == pytest.approx(mahalanobis(u, v, L.T @ L))
    assert metric(u, v, squared=True) == pytest.approx(mahalanobis(u, v, L.T @ L) ** 2)
    again = pickle.loads(pickle.dumps(metric))
    assert again(u, v) == metric(u, v)
    with pytest.raises(ValueError, match="4 features"):
        metric(u[:3], v[:3])


def test_initialize_components_variants():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 5)
    y = np.repeat([0, 1, 2], 10)
    assert initialize_components("identity", X, y, None, 0).shape == (5, 5)
    assert initialize_components("pca", X, y, 3, 0).shape == (3, 5)
    assert initialize_components("lda", X, y, 2, 0).shape == (2, 5)
    assert initialize_components("auto", X, y, 2, 0).shape == (2, 5)
    np.testing.assert_array_equal(initialize_components("identity", X, y, None, 0), np.eye(5))
    # pca: an orthonormal basis of the top-3 principal subspace
    pca = initialize_components("pca", X, y, 3, 0)
    np.testing.assert_allclose(pca @ pca.T, np.eye(3), atol=1e-12)
    top = np.linalg.eigh(np.cov(X, rowvar=False))[1][:, -3:]
    np.testing.assert_allclose(pca.T @ pca, top @ top.T, atol=1e-10)
    # lda: spans the top-2 generalised eigenvectors of (between, within) scatter
    from scipy.linalg import eigh
    means = np.array([X[y == c].mean(0) for c in range(3)])
    Sw = sum((X[y == c] - means[c]).T @ (X[y == c] - means[c]) for c in range(3))
    Sb = 10 * (means - X.mean(0)).T @ (means - X.mean(0))
    V2 = eigh(Sb, Sw)[1][:, -2:]
    lda = initialize_components("lda", X, y, 2, 0)
    coef = np.linalg.lstsq(V2, lda.T, rcond=None)[0]
    np.testing.assert_allclose(V2 @ coef, lda.T, atol=1e-10 * np.abs(lda).max())
    # auto: lda when n_components <= n_classes - 1, else pca, else identity
    np.testing.assert_array_equal(initialize_components("auto", X, y, 2, 0), lda)
    np.testing.assert_array_equal(initialize_components("auto", X, y, 4, 0),
                                  initialize_components("pca", X, y, 4, 0))
    np.testing.assert_array_equal(initialize_components("auto", X, y, None, 0), np.eye(5))
    # auto_lda=False: the same rule without its LDA branch
    np.testing.assert_array_equal(initialize_components("auto", X, y, 2, 0, auto_lda=False),
                                  initialize_components("pca", X, y, 2, 0))
    np.testing.assert_array_equal(initialize_components("auto", X, y, None, 0, auto_lda=False),
                                  np.eye(5))
    np.testing.assert_array_equal(
        initialize_components("random", X, y, 4, 7), initialize_components("random", X, y, 4, 7)
    )
    with pytest.raises(ValueError, match="init has 3 columns"):
        check_init(np.eye(3), X.shape[1], None)


def test_check_n_components_resolves_none_and_refuses_too_many():
    assert check_n_components(None, 4) == 4
    assert check_n_components(2, 4) == 2
    with pytest.raises(ValueError, match="n_components=5 must be <= n_features=4"):
        check_n_components(5, 4)


# ------------------------------------------------------------------ validation


def test_validate_pairs_shapes_and_preprocessor():
    X = np.arange(12.0).reshape(4, 3)
    idx = np.array([[0, 1], [2, 3]])
    pairs = validate_pairs(idx, X)
    np.testing.assert_array_equal(pairs[1, 0], X[2])
    with pytest.raises(ValueError, match="no preprocessor"):
        validate_pairs(idx)
    with pytest.raises(ValueError, match="out of range"):
        validate_pairs(np.array([[0, 4]]), X)
    with pytest.raises(ValueError, match=r"\(n_pairs, 2, n_features\)"):
        validate_pairs(np.zeros((3, 3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        validate_pairs(np.full((2, 2, 3), np.nan))
    with pytest.raises(TypeError, match="numeric"):
        validate_pairs(np.array([[["a", "b"], ["c", "d"]]]))


# ----------------------------------------------------------------- constraints


@pytest.mark.parametrize("m", [2, 3, 7, 50])
def test_decode_combination_enumerates_all_pairs(m):
    k = np.arange(m * (m - 1) // 2)
    i, j = _decode_combination(k, m)
    want = [(a, b) for a in range(m) for b in range(a + 1, m)]
    assert list(zip(i.tolist(), j.tolist())) == want


def test_positive_negative_pairs_are_correct_distinct_and_reproducible():
    rng = np.random.RandomState(0)
    y = rng.randint(4, size=200)
    a, b, c, d = positive_negative_pairs(y, 300, random_state=5)
    assert a.size == 300 and c.size == 300
    assert np.all(y[a] == y[b]) and np.all(a != b)
    assert np.all(y[c] != y[d])
    pos = {tuple(sorted(p)) for p in zip(a.tolist(), b.tolist())}
    neg = {tuple(sorted(p)) for p in zip(c.tolist(), d.tolist())}
    assert len(pos) == 300 and len(neg) == 300
    again = positive_negative_pairs(y, 300, random_state=5)
    for x1, x2 in zip((a, b, c, d), again):
        np.testing.assert_array_equal(x1, x2)
    other = positive_negative_pairs(y, 300, random_state=6)
    assert not np.array_equal(a, other[0])


def test_too_few_pairs_warns_and_returns_all():
    y = np.array([0, 0, 1, 1])
    with pytest.warns(UserWarning, match="Only 2 distinct positive pairs"):
        a, b, c, d = positive_negative_pairs(y, 10, random_state=0)
    assert a.size == 2 and c.size == 4


def test_single_class_has_no_negative_pairs():
    with pytest.raises(ValueError, match="single class"):
        positive_negative_pairs(np.zeros(10), 5, random_state=0)


def test_pairs_from_labels_and_constraints_class():
    y = np.repeat([0, 1, 2], 10)
    pairs, labels = pairs_from_labels(y, 20, random_state=0)
    assert pairs.shape == (40, 2)
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    np.testing.assert_array_equal(same, labels == 1)
    a, b, c, d = Constraints(y).positive_negative_pairs(20, random_state=0)
    np.testing.assert_array_equal(np.column_stack((a, b)), pairs[:20])


def test_knn_triplets():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.repeat([0, 1], 20)
    t = knn_triplets(X, y, k_genuine=2, k_impostor=3)
    assert t.shape == (40 * 2 * 3, 3)
    assert np.all(y[t[:, 0]] == y[t[:, 1]]) and np.all(t[:, 0] != t[:, 1])
    assert np.all(y[t[:, 0]] != y[t[:, 2]])
