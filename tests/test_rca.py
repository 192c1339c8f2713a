"""RCA against a direct numpy computation of Shental et al.'s (2002) whitening."""

import warnings

import numpy as np
import pytest
from scipy import linalg

from metric_estimators import RCA, Constraints, RCA_Supervised


def within_chunklet_cov(X, chunks):
    """C = 1/p sum_j sum_{x in chunk j} (x - m_j)(x - m_j)^T, plainly."""
    d = X.shape[1]
    C = np.zeros((d, d))
    p = 0
    for j in np.unique(chunks[chunks >= 0]):
        P = X[chunks == j]
        Z = P - P.mean(axis=0)
        C += Z.T @ Z
        p += len(P)
    return C / p


def _data(seed=0, n=60, d=4):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * np.array([1.0, 3.0, 0.5, 2.0])[:d]
    chunks = np.repeat(np.arange(n // 3), 3)
    chunks[::7] = -1  # some points in no chunklet
    return X, chunks


def test_whitening_is_the_inverse_square_root():
    X, chunks = _data()
    rca = RCA().fit(X, chunks)
    C = within_chunklet_cov(X, chunks)
    w, U = np.linalg.eigh(C)
    ref = U @ np.diag(w ** -0.5) @ U.T
    np.testing.assert_allclose(rca.components_, ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(rca.get_mahalanobis_matrix(), np.linalg.inv(C),
                               rtol=1e-9, atol=1e-10)
    # the chunklet scatter is white in the learned space
    L = rca.components_
    np.testing.assert_allclose(L @ C @ L.T, np.eye(4), atol=1e-10)


def test_reduced_dimension_is_the_fisher_like_step():
    X, chunks = _data(d=4)
    rca = RCA(n_components=2).fit(X, chunks)
    C = within_chunklet_cov(X, chunks)
    S_t = np.cov(X, rowvar=False, bias=True)  # all the points
    # smallest generalized eigenvectors of C a = mu S_t a
    mu, A = linalg.eigh(C, S_t)
    A = A[:, :2]
    M_ref = A @ np.linalg.inv(A.T @ C @ A) @ A.T
    np.testing.assert_allclose(rca.get_mahalanobis_matrix(), M_ref, rtol=1e-8,
                               atol=1e-10 * np.abs(M_ref).max())
    L = rca.components_
    np.testing.assert_allclose(L @ C @ L.T, np.eye(2), atol=1e-10)


def test_rank_deficient_chunklets_warn_and_give_a_finite_metric():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 5)
    chunks = -np.ones(30, int)
    chunks[:4] = [0, 0, 1, 1]  # rank(C) <= 2 < 5
    with pytest.warns(UserWarning, match=r"within-chunklet covariance is singular: "
                                         r"3 direction.*more or larger chunklets"):
        rca = RCA().fit(X, chunks)
    assert np.all(np.isfinite(rca.components_))
    # the pseudo-inverse: weight 0 where the chunklets do not vary
    C = within_chunklet_cov(X, chunks)
    np.testing.assert_allclose(rca.get_mahalanobis_matrix(),
                               np.linalg.pinv(C, rcond=1e-10, hermitian=True),
                               rtol=1e-8, atol=1e-8)


def test_constant_feature_gets_weight_zero_without_warning():
    """A constant input column: X has no variance there, so its weight 0
    discards nothing; no warning, and the other features get the same map
    as without the column."""
    X, chunks = _data()
    Xc = np.c_[X, np.full(len(X), 2.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rca = RCA().fit(Xc, chunks)
        sup = RCA_Supervised(random_state=0).fit(Xc, chunks % 3)
    np.testing.assert_allclose(rca.components_[:, -1], 0.0, atol=1e-12)
    np.testing.assert_allclose(rca.components_[-1], 0.0, atol=1e-12)
    np.testing.assert_allclose(rca.components_[:4, :4], RCA().fit(X, chunks).components_,
                               rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(
        sup.components_[:4, :4],
        RCA_Supervised(random_state=0).fit(X, chunks % 3).components_,
        rtol=1e-9, atol=1e-10)


def test_variation_constant_within_every_chunklet_warns():
    """A direction in which X varies but every chunklet is constant: the
    weight would be infinite; the pseudo-inverse gives 0, which discards
    that variation, so it warns.  The map is the pseudo-inverse square root
    of C (plain numpy)."""
    X, chunks = _data()
    # a feature that is a function of the chunklet (varies across them),
    # and 0 for the points in no chunklet
    X = np.c_[X, np.where(chunks >= 0, np.sin(chunks + 1.0), 0.0)]
    with pytest.warns(UserWarning, match=r"within-chunklet covariance is singular: "
                                         r"1 direction"):
        rca = RCA().fit(X, chunks)
    C = within_chunklet_cov(X, chunks)
    w, U = np.linalg.eigh(C)
    inv = np.where(w > 1e-10 * w[-1], 1.0 / np.sqrt(np.clip(w, 1e-300, None)), 0.0)
    np.testing.assert_allclose(rca.components_, (U * inv) @ U.T, rtol=1e-7,
                               atol=1e-9)


def test_supervised_draws_chunks_through_constraints():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    y = np.arange(60) % 3
    sup = RCA_Supervised(n_chunks=15, chunk_size=3, random_state=5).fit(X, y)
    chunks = Constraints(y).chunks(n_chunks=15, chunk_size=3,
                                   random_state=np.random.RandomState(5))
    np.testing.assert_array_equal(sup.chunks_, chunks)
    np.testing.assert_allclose(sup.components_, RCA().fit(X, chunks).components_,
                               rtol=1e-12)


def test_supervised_uses_the_chunklets_it_can_get():
    rng = np.random.RandomState(0)
    X = rng.randn(20, 2)
    y = np.arange(20) % 2
    with pytest.warns(UserWarning, match="only 10 disjoint chunklets"):
        sup = RCA_Supervised(n_chunks=100, random_state=0).fit(X, y)
    assert sup.chunks_.max() == 9


def test_supervised_chunk_size_alone_draws_every_chunklet_without_warning():
    # classes of 7, 6 and 5 points: 3 + 3 + 2 disjoint pairs, one point left
    # in each odd class; chunk_size=2 without n_chunks takes them all, silently
    rng = np.random.RandomState(1)
    y = np.repeat([0, 1, 2], [7, 6, 5])
    X = rng.randn(y.size, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sup = RCA_Supervised(chunk_size=2, random_state=0).fit(X, y)
    ids, counts = np.unique(sup.chunks_[sup.chunks_ >= 0], return_counts=True)
    assert ids.size == 8 and np.all(counts == 2)
    for c in ids:  # every chunklet within one class
        assert np.unique(y[sup.chunks_ == c]).size == 1
    np.testing.assert_allclose(
        sup.components_, RCA().fit(X, sup.chunks_).components_, rtol=1e-12)


def test_supervised_default_whitens_the_pooled_within_class_covariance():
    """Default: every class one chunklet, i.e. C is the pooled within-class
    covariance of all points (plain numpy, class by class); no seed changes
    it, and a one-point class adds nothing."""
    rng = np.random.RandomState(2)
    y = np.repeat(["a", "b", "c", "d"], [9, 12, 7, 1])
    X = rng.randn(y.size, 3) * [1.0, 4.0, 0.3] + (y == "b")[:, None] * 2.0
    C = np.zeros((3, 3))
    for c in np.unique(y):
        Z = X[y == c] - X[y == c].mean(axis=0)
        C += Z.T @ Z
    C /= len(y)
    w, U = np.linalg.eigh(C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = RCA_Supervised(random_state=0).fit(X, y)
        b = RCA_Supervised(random_state=123).fit(X, y)
    np.testing.assert_allclose(a.components_, (U * w ** -0.5) @ U.T, rtol=1e-9)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.chunks_, np.unique(y, return_inverse=True)[1])


def test_supervised_n_chunks_alone_draws_pairs():
    """n_chunks without chunk_size: metric-learn's chunklets of 2."""
    rng = np.random.RandomState(3)
    X = rng.randn(40, 3)
    y = np.arange(40) % 2
    sup = RCA_Supervised(n_chunks=10, random_state=4).fit(X, y)
    ref = RCA_Supervised(n_chunks=10, chunk_size=2, random_state=4).fit(X, y)
    np.testing.assert_array_equal(sup.chunks_, ref.chunks_)
    _, counts = np.unique(sup.chunks_[sup.chunks_ >= 0], return_counts=True)
    assert counts.size == 10 and np.all(counts == 2)


def test_supervised_default_with_only_singleton_classes_is_an_error():
    X = np.random.RandomState(0).randn(4, 2)
    with pytest.raises(ValueError, match="Every class has a single point"):
        RCA_Supervised().fit(X, [0, 1, 2, 3])


@pytest.mark.parametrize("chunks, match", [
    (np.full(12, -1), "at least one chunklet of 2"),
    (np.arange(12), "at least one chunklet of 2"),
    (np.r_[np.zeros(11), -2], "chunks must be >= -1"),
    (np.r_[np.zeros(11), 0.5], "integer chunk indices"),
    (np.array(["a"] * 12), "integer chunk indices"),
])
def test_bad_chunks(chunks, match):
    X = np.random.RandomState(0).randn(12, 2)
    with pytest.raises(ValueError, match=match):
        RCA().fit(X, chunks)


def test_identical_chunklet_points_are_an_error():
    X = np.ones((6, 2))
    with pytest.raises(ValueError, match="all identical"):
        RCA().fit(X, [0, 0, 1, 1, 2, 2])


def test_bad_parameters():
    X, chunks = _data()
    with pytest.raises(ValueError, match="n_components=5 must be <= n_features=4"):
        RCA(n_components=5).fit(X, chunks)
    y = np.arange(60) % 3
    with pytest.raises(ValueError, match="'chunk_size' parameter"):
        RCA_Supervised(chunk_size=1).fit(X, y)
    with pytest.raises(ValueError, match="'n_chunks' parameter"):
        RCA_Supervised(n_chunks=0).fit(X, y)


def test_num_chunks_is_metric_learn_s_name_and_minus_one_is_a_class():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.arange(40) % 2 - 1  # classes -1 and 0
    with pytest.warns(FutureWarning, match="num_chunks is metric-learn's name of n_chunks"):
        a = RCA_Supervised(num_chunks=12, random_state=0).fit(X, y)
    b = RCA_Supervised(n_chunks=12, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert (b.chunks_ >= 0).sum() == 24
    assert set(y[b.chunks_ >= 0]) == {-1, 0}  # points of class -1 are used
