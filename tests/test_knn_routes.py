"""The fast k-NN routes give the neighbours of the slow get_metric() callable."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, ITML_Supervised


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("make", [
    lambda: LMNN(n_neighbors=3, random_state=0),
    lambda: LMNN(n_neighbors=3, n_components=4, random_state=0),  # rank-deficient M
    lambda: ITML_Supervised(random_state=0, max_iter=50),
])
def test_get_knn_params_same_neighbours_as_get_metric(wine, make):
    X, y = wine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(X, y)
    params = est.get_knn_params()
    assert params["metric"] == "mahalanobis"
    np.testing.assert_allclose(params["metric_params"]["VI"],
                               est.get_mahalanobis_matrix())
    Q, R = X[:40], X[40:]
    slow = NearestNeighbors(n_neighbors=5, metric=est.get_metric()).fit(R)
    fast = NearestNeighbors(n_neighbors=5, **params).fit(R)
    euclid = NearestNeighbors(n_neighbors=5).fit(est.transform(R))
    d_slow, i_slow = slow.kneighbors(Q)
    d_fast, i_fast = fast.kneighbors(Q)
    d_tr, i_tr = euclid.kneighbors(est.transform(Q))
    np.testing.assert_array_equal(i_fast, i_slow)
    np.testing.assert_array_equal(i_tr, i_slow)
    np.testing.assert_allclose(d_fast, d_slow, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d_tr, d_slow, rtol=1e-7, atol=1e-9)


def test_knn_classifier_routes_agree(wine):
    X, y = wine
    est = LMNN(n_neighbors=3, random_state=0).fit(X, y)
    pipe = make_pipeline(LMNN(n_neighbors=3, random_state=0),
                         KNeighborsClassifier(3)).fit(X, y)
    fast = KNeighborsClassifier(3, **est.get_knn_params()).fit(X, y)
    slow = KNeighborsClassifier(3, metric=est.get_metric()).fit(X, y)
    np.testing.assert_array_equal(fast.predict(X), slow.predict(X))
    np.testing.assert_array_equal(pipe.predict(X), slow.predict(X))


def test_get_knn_params_needs_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LMNN().get_knn_params()
