"""SDML: the graphical-lasso problem against a direct computation, the
diagonal shift where metric-learn fails, and the pairs-classifier face."""

import warnings

import numpy as np
import pytest
from sklearn.covariance import graphical_lasso

import metric_estimators.sdml as sdml_module
from metric_estimators import SDML, SDML_Supervised
from metric_estimators._problems.sdml import SHIFT_MARGIN


def reference_S(pairs, y, prior_inverse, balance):
    """``P + eta * sum_c y_c v_c v_c^T`` written out pair by pair."""
    S = prior_inverse.copy()
    for (a, b), label in zip(pairs, y):
        v = a - b
        S += balance * label * np.outer(v, v)
    return S


def sdml_objective(M, S, alpha):
    """The graphical-lasso objective of the SDML problem (off-diagonal L1)."""
    off = M - np.diag(np.diag(M))
    return np.trace(S @ M) - np.linalg.slogdet(M)[1] + alpha * np.abs(off).sum()


def well_posed_pairs(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    i, j = rng.randint(0, 40, (2, 60))
    keep = i != j
    return (np.stack([X[i[keep]], X[j[keep]]], 1),
            np.where(y[i[keep]] == y[j[keep]], 1, -1))


def test_normal_case_is_the_graphical_lasso_of_S():
    """S positive definite: no shift, and the metric is exactly the graphical
    lasso's precision of S (metric-learn's problem)."""
    pairs, y = well_posed_pairs()
    balance = 0.005
    S = reference_S(pairs, y, np.eye(3), balance)
    assert np.linalg.eigvalsh(S)[0] > 0
    sdml = SDML(balance_param=balance, sparsity_param=0.05).fit(pairs, y)
    assert sdml.shift_ == 0.0
    _, M = graphical_lasso(S, alpha=0.05)
    np.testing.assert_allclose(sdml.get_mahalanobis_matrix(), M, rtol=1e-6,
                               atol=1e-9)
    # M is a minimiser: small symmetric perturbations do not decrease it
    rng = np.random.RandomState(0)
    f = sdml_objective(M, S, 0.05)
    for _ in range(10):
        E = rng.randn(3, 3) * 1e-3
        E = (E + E.T) / 2
        assert sdml_objective(M + E, S, 0.05) >= f - 1e-7


def test_shift_where_metric_learn_fails(iris):
    """Pairs from iris' labels (SDML_Supervised's defaults): S is indefinite;
    scikit-learn's graphical lasso on S returns a matrix that is not PSD,
    which metric-learn 0.7.0 reports as an error.  Here S is shifted by the
    documented amount and the result is the graphical lasso of S + shift I."""
    X, y = iris
    sdml = SDML_Supervised(random_state=0).fit(X, y)
    pairs = X[sdml.pairs_]
    S = reference_S(pairs, sdml.pair_labels_, np.eye(4), 0.5)
    w = np.linalg.eigvalsh(S)
    assert w[0] < 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _, M_raw = graphical_lasso(S, alpha=0.01)
            raw_fails = np.linalg.eigvalsh(M_raw)[0] <= 0
        except FloatingPointError:
            raw_fails = True
    assert raw_fails
    expected = -w[0] + SHIFT_MARGIN * (w[-1] - w[0])
    np.testing.assert_allclose(sdml.shift_, expected, rtol=1e-10)
    np.testing.assert_allclose(np.linalg.eigvalsh(S + sdml.shift_ * np.eye(4))[0],
                               SHIFT_MARGIN * (w[-1] - w[0]), rtol=1e-8)
    _, M = graphical_lasso(S + sdml.shift_ * np.eye(4), alpha=0.01)
    A = sdml.get_mahalanobis_matrix()
    np.testing.assert_allclose(A, M, rtol=1e-6, atol=1e-12)
    assert np.linalg.eigvalsh(A)[0] > 0


def test_prior_covariance_and_array():
    pairs, y = well_posed_pairs(1)
    points = np.unique(pairs.reshape(-1, 3), axis=0)
    C = np.cov(points, rowvar=False)
    sdml = SDML(prior="covariance", balance_param=0.001).fit(pairs, y)
    assert sdml.shift_ == 0.0
    _, M = graphical_lasso(reference_S(pairs, y, C, 0.001), alpha=0.01)
    np.testing.assert_allclose(sdml.get_mahalanobis_matrix(), M, rtol=1e-6,
                               atol=1e-9)
    prior = np.diag([1.0, 2.0, 4.0])
    sdml = SDML(prior=prior, balance_param=0.001).fit(pairs, y)
    np.testing.assert_allclose(sdml.prior_, prior)
    _, M = graphical_lasso(reference_S(pairs, y, np.linalg.inv(prior), 0.001),
                           alpha=0.01)
    np.testing.assert_allclose(sdml.get_mahalanobis_matrix(), M, rtol=1e-6,
                               atol=1e-9)


def test_one_feature_is_the_inverse():
    pairs, y = well_posed_pairs(2)
    pairs = pairs[:, :, :1]
    sdml = SDML(balance_param=0.001).fit(pairs, y)
    S = reference_S(pairs, y, np.eye(1), 0.001)
    np.testing.assert_allclose(sdml.get_mahalanobis_matrix(), 1.0 / S)


def test_pairs_classifier_face_and_calibration(monkeypatch):
    pairs, y = well_posed_pairs()
    sdml = SDML(balance_param=0.005).fit(pairs, y)
    d = sdml.pair_distance(pairs)
    assert sdml.threshold_ > 0
    np.testing.assert_array_equal(sdml.predict(pairs),
                                  np.where(d <= sdml.threshold_, 1, -1))

    def fail(*args, **kwargs):
        raise AssertionError("the solver ran")

    monkeypatch.setattr(sdml_module, "graphical_lasso", fail)
    with pytest.raises(ValueError, match="strategy must be one of"):
        SDML().fit(pairs, y, calibration_params={"strategy": "nope"})


def test_history_and_verbose(capsys):
    pairs, y = well_posed_pairs()
    sdml = SDML(balance_param=0.005, verbose=2).fit(pairs, y)
    assert sdml.n_iter_ == len(sdml.loss_curve_) == len(sdml.dual_gap_curve_)
    out = capsys.readouterr().out
    assert "[SDML]" in out and "shift 0" in out and "Dual gap" in out
