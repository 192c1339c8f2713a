"""The adaptive-step subgradient driver and the L-BFGS helpers on small problems."""

import numpy as np
import pytest
from scipy.optimize import minimize

from metric_estimators.solvers.lbfgs import lbfgs, lbfgs_with_restarts
from metric_estimators.solvers.subgradient import (
    GROW,
    SHRINK,
    STEP_FLOOR,
    adaptive_subgradient,
)


def l1_plus_quadratic(c):
    """f(x) = ||x - c||_1 + ||x - c||^2 / 2, minimised at c."""
    def value(x):
        r = x - c
        return np.abs(r).sum() + 0.5 * r @ r, np.sign(r) + r
    return value


def test_converges_to_the_known_minimiser():
    c = np.array([1.0, -2.0, 0.5, 3.0])
    res = adaptive_subgradient(l1_plus_quadratic(c), np.zeros(4), step=0.1,
                               max_iter=5000, tol=0.0)
    assert res.converged and res.n_iter < 5000
    np.testing.assert_allclose(res.x, c, atol=1e-6)


def test_projected_onto_the_nonnegative_orthant():
    c = np.array([1.0, -2.0, 0.5, -3.0])

    def value(x):
        r = x - c
        return 0.5 * r @ r, r

    res = adaptive_subgradient(value, np.ones(4), step=0.3, max_iter=2000,
                               tol=1e-14, project=lambda y: np.maximum(y, 0.0))
    assert res.converged
    np.testing.assert_allclose(res.x, np.maximum(c, 0.0), atol=1e-6)


def test_step_grows_on_success_and_rolls_back_halved_on_failure():
    calls = []

    def value(x):
        return abs(x[0]), np.array([1.0 if x[0] >= 0 else -1.0])

    def callback(n_iter, x, f, accepted, step):
        calls.append((n_iter, float(x[0]), f, accepted, step))

    adaptive_subgradient(value, np.array([1.0]), step=3.0, max_iter=4,
                         tol=0.0, callback=callback)
    # 1 - 3 = -2 is worse: x stays 1, step 1.5; 1 - 1.5 = -0.5 is better:
    # step 1.515; -0.5 + 1.515 = 1.015 is worse: x stays -0.5, step 0.7575;
    # -0.5 + 0.7575 = 0.2575 is better
    expected = [
        (1, 1.0, 1.0, False, 3.0 * SHRINK),
        (2, -0.5, 0.5, True, 1.5 * GROW),
        (3, -0.5, 0.5, False, 1.5 * GROW * SHRINK),
        (4, 0.2575, 0.2575, True, 1.5 * GROW * SHRINK * GROW),
    ]
    assert len(calls) == len(expected)
    for got, want in zip(calls, expected):
        assert got[0] == want[0] and got[3] == want[3]
        assert got[1] == pytest.approx(want[1]) and got[2] == pytest.approx(want[2])
        assert got[4] == pytest.approx(want[4])


def test_step_floor_stops_at_a_kink():
    # f(x) = |x - 1| at its kink x = 1 with the subgradient +1: every trial is
    # worse, so the step halves until step * |g| <= STEP_FLOOR * |x|
    def value(x):
        return abs(x[0] - 1.0), np.array([1.0 if x[0] >= 1.0 else -1.0])

    res = adaptive_subgradient(value, np.array([1.0]), step=1.0,
                               max_iter=1000, tol=0.0)
    assert res.converged
    assert res.x[0] == 1.0
    halvings = int(np.ceil(np.log(STEP_FLOOR) / np.log(SHRINK)))
    assert res.n_iter == halvings
    assert res.step <= STEP_FLOOR < 2 * res.step


def test_zero_subgradient_is_stationary_and_max_iter_is_not_converged():
    res = adaptive_subgradient(lambda x: (0.0, np.zeros(2)), np.ones(2),
                               step=1.0, max_iter=10, tol=0.0)
    assert res.converged and res.n_iter == 1
    res = adaptive_subgradient(l1_plus_quadratic(np.array([5.0])), np.zeros(1),
                               step=1e-3, max_iter=3, tol=0.0)
    assert not res.converged and res.n_iter == 3


def test_confirm_and_callback_refresh_the_objective():
    # the "true" objective's centre is only revealed by confirm (an active
    # set refresh in LMNN); the run goes on from there to the new minimiser
    centre = {"c": np.array([1.0, 1.0])}
    confirms = []

    def value(x):
        r = x - centre["c"]
        return 0.5 * r @ r, r

    def confirm(x):
        confirms.append(x.copy())
        if len(confirms) == 1:
            centre["c"] = np.array([-2.0, 0.0])
            return False
        return True

    res = adaptive_subgradient(value, np.zeros(2), step=0.5, max_iter=5000,
                               tol=1e-12, confirm=confirm)
    assert res.converged and len(confirms) == 2
    np.testing.assert_allclose(confirms[0], [1.0, 1.0], atol=1e-5)
    np.testing.assert_allclose(res.x, [-2.0, 0.0], atol=1e-5)
    # a callback returning True makes the driver re-evaluate at x
    evaluations = []

    def counted(x):
        evaluations.append(x.copy())
        return value(x)

    adaptive_subgradient(counted, np.zeros(2), step=0.5, max_iter=3, tol=0.0,
                         callback=lambda n, x, f, ok, s: n == 2)
    # start, 3 trials, and one re-evaluation at the point after iteration 2
    assert len(evaluations) == 5
    np.testing.assert_array_equal(evaluations[3], evaluations[2])


def test_lbfgs_is_scipy_lbfgsb():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((6, 6))
    H = M @ M.T + np.eye(6)
    b = rng.standard_normal(6)

    def fun(x):
        return 0.5 * x @ H @ x - b @ x, H @ x - b

    seen = []
    res = lbfgs(fun, np.zeros(6), max_iter=100, gtol=1e-10, ftol=1e-15,
                callback=lambda x, f: seen.append(f))
    ref = minimize(fun, np.zeros(6), jac=True, method="L-BFGS-B",
                   options={"maxiter": 100, "gtol": 1e-10, "ftol": 1e-15})
    np.testing.assert_array_equal(res.x, ref.x)
    assert len(seen) == res.nit and seen[-1] == pytest.approx(res.fun)
    np.testing.assert_allclose(res.x, np.linalg.solve(H, b), rtol=1e-6)


def test_lbfgs_restarts_when_the_objective_changes():
    state = {"c": np.array([3.0, -1.0]), "version": 0, "iterations": 0}

    def fun(x):
        r = x - state["c"]
        return 0.5 * r @ r + 0.25 * (r @ r) ** 2, r * (1.0 + r @ r)

    def callback(x, f):
        state["iterations"] += 1
        if state["iterations"] == 2:  # a refresh changes the objective
            state["c"] = np.array([-1.0, 2.0])
            state["version"] += 1

    confirms = []

    def confirm(x):
        confirms.append(x.copy())
        return True

    x, n_iter, converged = lbfgs_with_restarts(
        fun, np.zeros(2), max_iter=200, gtol=1e-10, callback=callback,
        version=lambda: state["version"], confirm=confirm,
    )
    assert converged and len(confirms) == 1
    np.testing.assert_allclose(x, [-1.0, 2.0], atol=1e-6)
    assert n_iter == state["iterations"]
    # the budget is shared by the runs
    x, n_iter, converged = lbfgs_with_restarts(
        fun, np.zeros(2) + 10, max_iter=2, gtol=1e-14,
    )
    assert not converged and n_iter == 2
