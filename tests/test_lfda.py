"""LFDA against a plain numpy computation of Sugiyama's (2007) scatter matrices."""

import warnings

import numpy as np
import pytest
from scipy import linalg

from metric_estimators import LFDA
from metric_estimators._problems import lfda as lfda_problem


def reference_scatter(X, y, k):
    """S_w and S_b written as in the paper (eq. 11-14), with n x n matrices."""
    n = X.shape[0]
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    sigma = np.zeros(n)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        kc = min(k, idx.size - 1)
        if kc >= 1:
            # row sorted: [0 (itself), 1st neighbour, ...]
            sigma[idx] = np.sqrt(np.sort(D2[np.ix_(idx, idx)], axis=1)[:, kc])
    W = np.zeros((n, n))
    B = np.full((n, n), 1.0 / n)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        n_c = idx.size
        scale = np.outer(sigma[idx], sigma[idx])
        with np.errstate(divide="ignore", invalid="ignore"):
            A = np.where(scale > 0, np.exp(-D2[np.ix_(idx, idx)] / scale), 0.0)
        W[np.ix_(idx, idx)] = A / n_c
        B[np.ix_(idx, idx)] = A * (1.0 / n - 1.0 / n_c)
    diff = X[:, None, :] - X[None, :, :]
    S_w = 0.5 * np.einsum("ij,ijk,ijl->kl", W, diff, diff)
    S_b = 0.5 * np.einsum("ij,ijk,ijl->kl", B, diff, diff)
    return S_w, S_b


def _data(seed=0, n=60, d=4):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 3
    # multimodal classes: two clusters per class
    X = rng.randn(n, d) + 3.0 * np.c_[y, (np.arange(n) // 3) % 2, np.zeros((n, d - 2))]
    return X, y


@pytest.mark.parametrize("k", [1, 3, 7])
def test_scatter_matrices_equal_the_paper(k):
    X, y = _data()
    S_w, S_b = lfda_problem.local_scatter(X, y, k)
    R_w, R_b = reference_scatter(X, y, k)
    np.testing.assert_allclose(S_w, R_w, rtol=1e-10, atol=1e-10 * np.abs(R_w).max())
    np.testing.assert_allclose(S_b, R_b, rtol=1e-10, atol=1e-10 * np.abs(R_b).max())


def test_blocked_computation_is_the_same(monkeypatch):
    X, y = _data(n=90)
    full = lfda_problem.local_scatter(X, y, 3)
    monkeypatch.setattr(lfda_problem, "BLOCK", 50)  # rows of 1-2 points
    blocked = lfda_problem.local_scatter(X, y, 3)
    for a, b in zip(full, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(a).max())


def test_plain_embedding_solves_the_generalized_eigenproblem():
    X, y = _data()
    lfda = LFDA(k=3, embedding_type="plain").fit(X, y)
    R_w, R_b = reference_scatter(X, y, 3)
    lam_ref = linalg.eigh(R_b, R_w, eigvals_only=True)[::-1]
    np.testing.assert_allclose(lfda.eigenvalues_, lam_ref, rtol=1e-8)
    V = lfda.components_.T
    np.testing.assert_allclose(R_b @ V, R_w @ V * lfda.eigenvalues_, rtol=1e-7,
                               atol=1e-8 * np.abs(R_b @ V).max())
    np.testing.assert_allclose(V.T @ R_w @ V, np.eye(4), atol=1e-8)


def test_embedding_types():
    X, y = _data()
    plain = LFDA(k=3, n_components=2, embedding_type="plain").fit(X, y)
    weighted = LFDA(k=3, n_components=2).fit(X, y)
    ortho = LFDA(k=3, n_components=2, embedding_type="orthonormalized").fit(X, y)
    np.testing.assert_allclose(
        weighted.components_, plain.components_ * np.sqrt(plain.eigenvalues_)[:, None],
        rtol=1e-12)
    Q = ortho.components_
    np.testing.assert_allclose(Q @ Q.T, np.eye(2), atol=1e-12)
    # same span as the plain eigenvectors
    P = plain.components_.T
    proj = Q.T @ (Q @ P)
    np.testing.assert_allclose(proj, P, atol=1e-8 * np.abs(P).max())


def test_default_k_is_metric_learn_s():
    X, y = _data(d=4)
    assert LFDA().fit(X, y).k_ == 3
    X, y = _data(d=12)
    assert LFDA().fit(X, y).k_ == 7


def test_small_classes_use_what_they_have_and_warn():
    rng = np.random.RandomState(1)
    X = rng.randn(23, 3)
    y = np.r_[np.zeros(20, int), [1, 1], [2]]
    with pytest.warns(UserWarning, match=r"at most k=5 samples"):
        lfda = LFDA(k=5, embedding_type="plain").fit(X, y)
    R_w, R_b = reference_scatter(X, y, 5)  # the reference caps k per class
    lam_ref = linalg.eigh(R_b, R_w, eigvals_only=True)[::-1]
    np.testing.assert_allclose(lfda.eigenvalues_, lam_ref, rtol=1e-8)
    assert np.all(np.isfinite(lfda.components_))


def test_singular_within_scatter_and_rank_deficient_data():
    """A constant feature: no error, a zero row at the end; a feature that
    separates the classes perfectly (no within-class spread) gets a huge
    eigenvalue instead of a division by zero."""
    X, y = _data()
    Xc = np.c_[X, np.full(len(X), 5.0)]
    lfda = LFDA(k=3).fit(Xc, y)
    assert np.all(np.isfinite(lfda.components_))
    np.testing.assert_array_equal(lfda.components_[-1], 0.0)
    np.testing.assert_allclose(lfda.components_[:, -1], 0.0, atol=1e-8)
    Xs = np.c_[X, y.astype(float)]
    lfda = LFDA(k=3).fit(Xs, y)
    assert np.all(np.isfinite(lfda.components_))
    assert lfda.eigenvalues_[0] > 1e6


def test_scale_invariance_of_the_embedding():
    X, y = _data()
    a = LFDA(k=3).fit(X, y).transform(X)
    b = LFDA(k=3).fit(X * 1e120, y).transform(X * 1e120)
    np.testing.assert_allclose(np.abs(a), np.abs(b), rtol=1e-6, atol=1e-9)


def test_bad_parameters():
    X, y = _data()
    with pytest.raises(ValueError, match="'embedding_type' parameter"):
        LFDA(embedding_type="foo").fit(X, y)
    with pytest.raises(ValueError, match="'k' parameter"):
        LFDA(k=0).fit(X, y)
    with pytest.raises(ValueError, match="n_components=5 must be <= n_features=4"):
        LFDA(n_components=5).fit(X, y)


def test_preprocessor_indices():
    X, y = _data()
    a = LFDA(k=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = LFDA(k=3, preprocessor=X).fit(np.arange(len(X)), y)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(b.transform(np.arange(3)), a.transform(X[:3]))
