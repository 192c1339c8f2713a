"""SDML: the graphical-lasso problem against a direct computation, the
diagonal shift where metric-learn fails, and the pairs-classifier face."""

import warnings

import numpy as np
import pytest
from sklearn.covariance import graphical_lasso

import metric_estimators.sdml as sdml_module
from metric_estimators import SDML, SDML_Supervised
from metric_estimators._problems.sdml import AUTO_FRACTION, AUTO_MAX, SHIFT_MARGIN


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
    """Pairs from iris' labels with metric-learn's default balance_param=0.5:
    S is indefinite;
    scikit-learn's graphical lasso on S returns a matrix that is not PSD,
    which metric-learn 0.7.0 reports as an error.  Here S is shifted by the
    documented amount and the result is the graphical lasso of S + shift I."""
    X, y = iris
    with pytest.warns(UserWarning, match="shift_="):
        sdml = SDML_Supervised(balance_param=0.5, random_state=0).fit(X, y)
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


def reference_largest_balance(pairs, y, prior_inverse):
    """The supremum of eta with P + eta K positive definite, by bisection on
    the smallest eigenvalue of the reference S (independent of the pencil)."""
    def pd(eta):
        return np.linalg.eigvalsh(reference_S(pairs, y, prior_inverse, eta))[0] > 0
    lo, hi = 0.0, 1.0
    while pd(hi):
        lo, hi = hi, 2 * hi
        if hi > 1e12:
            return np.inf
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pd(mid) else (lo, mid)
    return (lo + hi) / 2


def test_auto_balance_needs_no_shift_where_half_shifts(iris):
    """balance_param='auto' (the default) on pairs where metric-learn's 0.5
    needs a shift: half the largest eta keeping S positive definite, no
    shift, no warning, and the graphical lasso of the unshifted S."""
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = SDML_Supervised(random_state=0).fit(X, y)
    assert SDML_Supervised().balance_param == "auto"
    assert auto.shift_ == 0.0
    pairs = X[auto.pairs_]
    limit = reference_largest_balance(pairs, auto.pair_labels_, np.eye(4))
    assert limit < 0.5  # so that 0.5 shifts (below)
    np.testing.assert_allclose(auto.balance_param_, AUTO_FRACTION * limit,
                               rtol=1e-8)
    S = reference_S(pairs, auto.pair_labels_, np.eye(4), auto.balance_param_)
    assert np.linalg.eigvalsh(S)[0] > 0
    _, M = graphical_lasso(S, alpha=0.01)
    np.testing.assert_allclose(auto.get_mahalanobis_matrix(), M, rtol=1e-6,
                               atol=1e-12)
    # the explicit value equal to the one chosen gives the same metric
    same = SDML_Supervised(balance_param=auto.balance_param_,
                           random_state=0).fit(X, y)
    np.testing.assert_array_equal(same.components_, auto.components_)
    # metric-learn's 0.5 on the same pairs still shifts, with the warning
    # that names the limit and 'auto'
    with pytest.warns(UserWarning, match=r"shift_=.*balance_param below "
                                         r".*balance_param='auto'"):
        half = SDML_Supervised(balance_param=0.5, random_state=0).fit(X, y)
    assert half.shift_ > 0 and half.balance_param_ == 0.5
    np.testing.assert_array_equal(half.pairs_, auto.pairs_)


def test_auto_balance_is_capped_where_S_stays_positive_definite():
    """Mostly similar pairs (K positive semidefinite): every eta keeps S
    positive definite and 'auto' is metric-learn's 0.5, the same fit as the
    explicit value.  With a finite limit above 1 it is 0.5 too."""
    pairs, y = well_posed_pairs()
    y = np.ones_like(y)
    auto = SDML(sparsity_param=0.05).fit(pairs, y)
    assert auto.balance_param_ == AUTO_MAX == 0.5 and auto.shift_ == 0.0
    explicit = SDML(balance_param=0.5, sparsity_param=0.05).fit(pairs, y)
    np.testing.assert_array_equal(auto.components_, explicit.components_)
    # similar pairs that differ in the first two features only and one
    # dissimilar pair 0.1 apart in the third: K has the eigenvalue -0.01,
    # the limit is 100
    pairs = pairs.copy()
    pairs[:, 1, 2] = pairs[:, 0, 2]
    y[0] = -1
    pairs[0, 1] = pairs[0, 0] + [0.0, 0.0, 0.1]
    limit = reference_largest_balance(pairs, y, np.eye(3))
    np.testing.assert_allclose(limit, 100.0, rtol=1e-6)
    assert SDML(sparsity_param=0.05).fit(pairs, y).balance_param_ == 0.5


def test_auto_balance_with_a_prior(iris):
    """The limit is relative to the prior's inverse P: 'auto' is half of it
    for a non-identity prior too, and S is positive definite."""
    X, y = iris
    prior = np.diag([1.0, 4.0, 0.25, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = SDML_Supervised(prior=prior, random_state=0).fit(X, y)
    P = np.linalg.inv(prior)
    limit = reference_largest_balance(X[est.pairs_], est.pair_labels_, P)
    np.testing.assert_allclose(est.balance_param_, AUTO_FRACTION * limit,
                               rtol=1e-8)
    assert est.shift_ == 0.0


@pytest.mark.parametrize("value", ["Auto", "half", -0.1, None])
def test_balance_param_validation(value, iris):
    X, y = iris
    with pytest.raises((ValueError, TypeError), match="balance_param"):
        SDML_Supervised(balance_param=value).fit(X, y)
