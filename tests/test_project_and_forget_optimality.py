"""ProjectAndForget's convergence criterion against a full scan and against cvxpy.

``converged_`` must mean that the optimality conditions of ITML's problem
over *all* labelled pairs hold to ``tol`` (module docstring of
:mod:`metric_estimators.project_and_forget`): every pair outside the active
set meets its bound, every remembered pair is tight if its dual is positive
and met otherwise.  Here a brute-force scan of every pair checks that at the
returned matrix, and cvxpy solves the same problem (same constraint set,
same slack) on an instance small enough for it.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from metric_estimators import ProjectAndForget, _backend


def _problem(seed=2, n=24, d=3, n_classes=3):
    X, y = make_classification(n, d, n_informative=d, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1,
                               random_state=seed)
    return X, y


def _full_scan(est, X, y):
    """Brute-force optimality residuals of every pair: (outside, active) arrays."""
    n = X.shape[0]
    M = est.get_mahalanobis_matrix()
    low, high = est.bounds_
    i, j = np.triu_indices(n, 1)
    V = X[i] - X[j]
    dist = np.einsum("ij,jk,ik->i", V, M, V)
    delta = np.where(y[i] == y[j], 1.0, -1.0)
    xi = np.where(delta > 0, low, high)
    lam = np.zeros(i.size)
    key = i * n + j
    pos = np.searchsorted(key, est.active_pairs_[:, 0] * n
                          + est.active_pairs_[:, 1])
    assert np.array_equal(key[pos], est.active_pairs_[:, 0] * n
                          + est.active_pairs_[:, 1])
    inside = np.zeros(i.size, bool)
    inside[pos] = True
    xi[pos] = est.slack_
    lam[pos] = est.duals_
    r = (dist - xi) / xi
    resid = np.where(lam > 0, np.abs(r), delta * r)
    return resid[~inside], resid[inside]


@pytest.mark.parametrize("gamma", [1.0, 4.0])
@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_converged_means_a_full_scan_confirms_the_conditions(gamma, tol):
    X, y = _problem()
    est = ProjectAndForget(gamma=gamma, tol=tol, random_state=0).fit(
        X, y, bounds=(1.0, 6.0))
    assert est.converged_
    outside, inside = _full_scan(est, X, y)
    assert outside.size + inside.size == est.n_pairs_
    assert outside.max() <= tol * (1 + 1e-6)
    assert inside.max() <= tol * (1 + 1e-6)
    assert est.violation_ == pytest.approx(max(outside.max(), inside.max()),
                                           rel=1e-6, abs=1e-12)
    assert np.all(est.duals_ > 0) and est.n_active_ > 0
    # the history: one full scan per oracle call, the last one certifying
    h = est.history_
    assert len(h["scan_active"]) == est.n_iter_ + 1
    assert h["scan_violation"][-1] <= tol
    assert h["scan_violated"][-1] == 0 and h["scan_active_violated"][-1] == 0
    assert h["scan_active"][-1] == est.n_active_


def test_not_converged_reports_the_full_scan_of_the_returned_matrix():
    X, y = _problem()
    with pytest.warns(ConvergenceWarning, match="raise max_time or max_iter"):
        est = ProjectAndForget(tol=1e-9, max_iter=2, random_state=0).fit(
            X, y, bounds=(1.0, 6.0))
    assert not est.converged_
    # a last scan checked the last iterate: the returned matrix is the best
    # checked one, and violation_ its largest violation
    h = est.history_
    assert len(h["scan_violation"]) == est.n_iter_ + 1
    assert est.violation_ == min(h["scan_violation"]) > 1e-9


def test_max_time_stops_early_with_a_warning_that_says_so():
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_time"):
        est = ProjectAndForget(tol=1e-12, max_time=1e-3, random_state=0).fit(
            X, y, bounds=(0.5, 20.0))
    assert est.n_iter_ == 1 and not est.converged_
    assert np.all(np.isfinite(est.components_))


def test_memory_limit_admits_the_most_violated_pairs_first():
    X, y = _problem(n=40)
    tol = 1e-3
    # room for 30 pairs in the active set
    est = ProjectAndForget(tol=tol, max_iter=1, random_state=0,
                           memory_limit=30 * 25 / 1e9)
    with pytest.warns(ConvergenceWarning, match="memory_limit"):
        est.fit(X, y, bounds=(1.0, 6.0))
    assert est.history_["n_added"] == [30]
    assert est.history_["scan_violated"][0] > 30


def _cvxpy_solution(X, y, bounds, gamma):
    cp = pytest.importorskip("cvxpy")
    n, d = X.shape
    i, j = np.triu_indices(n, 1)
    V = X[i] - X[j]
    same = y[i] == y[j]
    xi0 = np.where(same, *bounds)
    A = cp.Variable((d, d), PSD=True)
    xi = cp.Variable(i.size)
    # d_A(v) = <A, v v^T>, linear in A
    dist = cp.hstack([cp.sum(cp.multiply(A, np.outer(v, v))) for v in V])
    r = cp.multiply(xi, 1.0 / xi0)
    objective = (cp.trace(A) - cp.log_det(A) - d
                 + gamma * cp.sum(r - cp.log(r) - 1.0))
    cons = [dist[same] <= xi[same], dist[~same] >= xi[~same]]
    prob = cp.Problem(cp.Minimize(objective), cons)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return prob.value, A.value, xi.value, same


@pytest.mark.parametrize("gamma", [1.0, 4.0])
def test_same_problem_as_cvxpy(gamma):
    X, y = _problem()
    bounds = (1.0, 6.0)
    with _backend.use("numba"):
        est = ProjectAndForget(gamma=gamma, tol=1e-7, random_state=0).fit(
            X, y, bounds=bounds)
    assert est.converged_
    value, A, xi, same = _cvxpy_solution(X, y, bounds, gamma)
    # the objective of the learned matrix and slacks
    M = est.get_mahalanobis_matrix()
    d = X.shape[1]
    r = est.slack_ / np.where(
        y[est.active_pairs_[:, 0]] == y[est.active_pairs_[:, 1]], *bounds)
    ours = (np.trace(M) - np.linalg.slogdet(M)[1] - d
            + gamma * np.sum(r - np.log(r) - 1.0))
    assert ours == pytest.approx(value, rel=1e-4)
    np.testing.assert_allclose(M, A, rtol=0, atol=1e-3 * np.abs(A).max())
    # the same constraint set: the pairs that need slack (cvxpy's xi away
    # from its bound) are the active pairs, with the same slack
    n = X.shape[0]
    i, j = np.triu_indices(n, 1)
    xi0 = np.where(same, *bounds)
    needs = np.abs(xi - xi0) > 1e-4 * xi0
    key = i * n + j
    akey = est.active_pairs_[:, 0] * n + est.active_pairs_[:, 1]
    clear = np.abs(xi - xi0) > 1e-2 * xi0       # away from the boundary
    assert set(key[clear]) <= set(akey) <= set(key[needs])
    pos = np.searchsorted(key, akey)
    np.testing.assert_allclose(est.slack_, xi[pos], rtol=1e-3)
    assert clear.sum() > 10 and (~needs).sum() > 10
