"""Covariance against numpy's covariance and (pseudo-)inverse."""

import numpy as np
import pytest

from metric_estimators import Covariance


def test_metric_is_the_inverse_covariance():
    rng = np.random.RandomState(0)
    X = rng.randn(50, 4) @ rng.randn(4, 4)
    cov = Covariance().fit(X)
    np.testing.assert_allclose(cov.get_mahalanobis_matrix(),
                               np.linalg.inv(np.cov(X, rowvar=False)), rtol=1e-9)
    L = cov.components_
    np.testing.assert_allclose(L, L.T, atol=1e-12)  # symmetric square root
    Z = cov.transform(X)
    np.testing.assert_allclose(np.cov(Z, rowvar=False), np.eye(4), atol=1e-9)
    assert cov.rank_ == 4


def test_singular_covariance_uses_the_pseudo_inverse():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 3)
    X = np.c_[X, X[:, 0] + X[:, 1], np.full(30, 7.0)]  # collinear + constant
    cov = Covariance().fit(X)
    np.testing.assert_allclose(
        cov.get_mahalanobis_matrix(),
        np.linalg.pinv(np.cov(X, rowvar=False), rcond=1e-10, hermitian=True),
        rtol=1e-8, atol=1e-10)
    assert cov.rank_ == 3


def test_fewer_samples_than_features():
    X = np.random.RandomState(1).randn(4, 6)
    cov = Covariance().fit(X)
    assert cov.rank_ == 3
    assert np.all(np.isfinite(cov.components_))


def test_y_is_ignored():
    X = np.random.RandomState(0).randn(20, 3)
    a = Covariance().fit(X).components_
    b = Covariance().fit(X, np.arange(20)).components_
    np.testing.assert_array_equal(a, b)


def test_constant_data_is_an_error():
    with pytest.raises(ValueError, match="zero variance"):
        Covariance().fit(np.ones((10, 3)))


def test_scale():
    X = np.random.RandomState(0).randn(20, 3)
    a = Covariance().fit(X).transform(X)
    b = Covariance().fit(X * 1e150).transform(X * 1e150)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
