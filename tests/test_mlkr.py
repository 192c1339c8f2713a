"""MLKR: the loss and gradient against a plain-numpy reference, finite
differences, and the estimator's behaviour."""

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize
from sklearn.exceptions import ConvergenceWarning

from metric_estimators import MLKR, _backend
from metric_estimators._problems.mlkr import MLKRObjective
from metric_estimators.solvers.lbfgs import relative_change


def reference_loss_grad(L, X, y):
    """The paper's formulas with dense n x n x d arrays (small n only)."""
    diff = X[:, None, :] - X[None, :, :]               # (n, n, d)
    Ld = diff @ L.T                                     # (n, n, r)
    D = np.sum(Ld ** 2, axis=2)
    K = np.exp(-D)
    np.fill_diagonal(K, 0.0)
    W = K / K.sum(axis=1, keepdims=True)
    yhat = W @ y
    err = yhat - y
    loss = np.sum(err ** 2)
    # d loss / d D_ij, then dD_ij / dL = 2 L (x_i - x_j)(x_i - x_j)^T
    C = -2.0 * err[:, None] * W * (y[None, :] - yhat[:, None])
    grad = 2.0 * L @ np.einsum("ij,ijk,ijl->kl", C, diff, diff)
    return loss, grad, yhat


@pytest.fixture
def problem():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 4)
    y = np.sin(X[:, 0]) + 0.1 * rng.randn(40)
    L = 0.7 * rng.randn(2, 4)
    return X, y, L


def test_loss_and_gradient_match_reference(problem):
    X, y, L = problem
    obj = MLKRObjective(X, y, 2, _backend.NUMPY)
    loss, grad = obj(L.ravel())
    ref_loss, ref_grad, ref_yhat = reference_loss_grad(L, X, y)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-10)
    np.testing.assert_allclose(grad.reshape(L.shape), ref_grad, rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(obj.predictions(L), ref_yhat, rtol=1e-10)


def test_gradient_finite_differences(problem):
    X, y, L = problem
    obj = MLKRObjective(X, y, 2, _backend.NUMPY)
    err = check_grad(lambda f: obj(f)[0], lambda f: obj(f)[1], L.ravel(),
                     epsilon=1e-6)
    assert err < 1e-5 * max(1.0, np.linalg.norm(obj(L.ravel())[1]))
    # and the reference itself agrees with finite differences
    err_ref = check_grad(
        lambda f: reference_loss_grad(f.reshape(L.shape), X, y)[0],
        lambda f: reference_loss_grad(f.reshape(L.shape), X, y)[1].ravel(),
        L.ravel(), epsilon=1e-6)
    assert err_ref < 1e-5 * max(1.0, np.linalg.norm(obj(L.ravel())[1]))


def test_far_apart_points_stay_finite():
    """exp(-D) underflows to 0 for every pair here; the softmax shift keeps
    the predictions (the nearest neighbour's target) finite."""
    X = np.array([[0.0], [100.0], [250.0], [450.0]])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    obj = MLKRObjective(X, y, 1, _backend.NUMPY)
    loss, grad = obj(np.array([1.0]))
    assert np.isfinite(loss) and np.all(np.isfinite(grad))
    np.testing.assert_allclose(obj.predictions(np.array([[1.0]])),
                               [2.0, 1.0, 2.0, 3.0])


def test_fit_decreases_loss_and_finds_relevant_feature():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 3)
    y = np.sin(2 * X[:, 0])
    mlkr = MLKR(random_state=0).fit(X, y)
    obj = MLKRObjective(X, y, 3, _backend.NUMPY)
    assert obj(mlkr.components_.ravel())[0] < obj(np.eye(3).ravel())[0]
    w = np.linalg.norm(mlkr.components_, axis=0)
    assert w[0] > 2 * max(w[1], w[2])
    assert mlkr.n_iter_ == len(mlkr.loss_curve_)
    assert mlkr.loss_curve_[-1] <= mlkr.loss_curve_[0]


def test_n_components_and_init():
    rng = np.random.RandomState(1)
    X, y = rng.randn(30, 4), rng.randn(30)
    with pytest.warns(ConvergenceWarning):
        est = MLKR(n_components=2, max_iter=5).fit(X, y)
    assert est.components_.shape == (2, 4)
    L0 = rng.randn(2, 4)
    est = MLKR(init=L0, n_components=2, max_iter=1)
    with pytest.warns(ConvergenceWarning):
        est.fit(X, y)
    assert est.components_.shape == (2, 4)
    with pytest.raises(ValueError, match="n_components=5 must be <= n_features=4"):
        MLKR(n_components=5).fit(X, y)
    with pytest.raises(ValueError, match="'init' parameter"):
        MLKR(init="lda").fit(X, y)


def test_verbose_table(capsys):
    rng = np.random.RandomState(2)
    X, y = rng.randn(20, 2), rng.randn(20)
    with pytest.warns(ConvergenceWarning):
        MLKR(verbose=2, max_iter=3).fit(X, y)
    out = capsys.readouterr().out
    assert "[MLKR]  Iteration      Objective" in out
    assert "[MLKR] 20 points, 2 features, 2 components" in out


def test_warning_without_the_windowed_test_says_what_to_do():
    rng = np.random.RandomState(3)
    X, y = rng.randn(30, 3), rng.randn(30)
    with pytest.warns(ConvergenceWarning, match=r"\|\|L\|\| grew from .* pass a "
                      r"relative tolerance, e\.g\. the default tol=3e-5"):
        MLKR(max_iter=3, tol=None).fit(X, y)
    # with a tolerance (the default or the user's own): the plain advice
    with pytest.warns(ConvergenceWarning,
                      match=r"Increase max_iter \(now 3\) or tol \(now 3e-05\)"):
        MLKR(max_iter=3).fit(X, y)
    with pytest.warns(ConvergenceWarning, match=r"Increase max_iter \(now 3\) or tol"):
        MLKR(max_iter=3, tol=1e-12).fit(X, y)


def _slow_descent():
    """100 points of scikit-learn's diabetes, standardised: a run of the
    paper's minimisation (tol=None) goes on while the kernel narrows."""
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    X = X[:100]
    return (X - X.mean(0)) / X.std(0), y[:100]


def test_default_tol_ends_the_slow_descent():
    """At the default tol the run stops on the windowed relative decrease
    (quietly, well before max_iter) where tol=None uses up max_iter; it stops
    at the first iteration where the test holds."""
    X, y = _slow_descent()
    with pytest.warns(ConvergenceWarning):
        full = MLKR(tol=None, max_iter=300).fit(X, y)
    assert full.n_iter_ == 300
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MLKR(max_iter=300).fit(X, y)
    assert est.tol == 3e-5
    h = est.loss_curve_
    assert 10 < est.n_iter_ < 300 and len(h) == est.n_iter_
    assert relative_change(h, 10) < est.tol
    assert all(relative_change(h[:k], 10) >= est.tol for k in range(12, len(h)))
    # the same path as tol=None up to the stop
    np.testing.assert_allclose(h, full.loss_curve_[:len(h)], rtol=1e-12)
    # a larger tol stops sooner, by the same test
    loose = MLKR(tol=1e-3, max_iter=300).fit(X, y)
    assert loose.n_iter_ < est.n_iter_
    assert relative_change(loose.loss_curve_, 10) < 1e-3


def test_tol_is_relative_to_the_loss():
    """The windowed test does not depend on the units of y: in units where
    the loss is far below 1 the run still goes on to about the same
    iteration (the same path up to rounding), where a test on the absolute
    decrease would end it at once."""
    X, y = _slow_descent()
    a = MLKR(max_iter=300).fit(X, y)
    b = MLKR(max_iter=300).fit(X, y * 1e-4)
    assert b.loss_curve_[0] < 1e-1
    assert abs(a.n_iter_ - b.n_iter_) <= 0.1 * a.n_iter_
    k = min(a.n_iter_, b.n_iter_) // 2
    np.testing.assert_allclose(a.loss_curve_[:k] * 1e-8, b.loss_curve_[:k],
                               rtol=1e-2)


def test_tol_none_is_scipys_run():
    """tol=None: scipy's L-BFGS-B with its own tests and no other."""
    X, y = _slow_descent()
    L0 = np.eye(X.shape[1])
    est = MLKR(tol=None, max_iter=40).fit(X, y)
    obj = MLKRObjective(X, y, X.shape[1], _backend.NUMPY)
    ref = minimize(obj, L0.ravel(), method="L-BFGS-B", jac=True,
                   options={"maxiter": 40, "gtol": 1e-5})
    np.testing.assert_allclose(est.components_, ref.x.reshape(L0.shape),
                               rtol=1e-7, atol=1e-9)
