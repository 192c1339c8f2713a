"""ProjectAndForget learner (Sonthalia & Gilbert, JMLR 2022; ITML objective)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import _backend
from metric_estimators.itml import ITML_Supervised
from metric_estimators.project_and_forget import ProjectAndForget

# scikit-learn's estimator checks: tests/test_sklearn_checks.py


@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_knn_accuracy_at_least_itml(load):
    X, y = load(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y,
                                          random_state=0)

    def acc(est):
        pipe = make_pipeline(StandardScaler(), est, KNeighborsClassifier(3))
        return pipe.fit(Xtr, ytr).score(Xte, yte)

    pf = ProjectAndForget(random_state=0)
    a_pf = acc(pf)
    a_itml = acc(ITML_Supervised(random_state=0))
    assert a_pf >= a_itml
    assert pf.converged_


def _all_pair_violations(est, X, y):
    """Brute force: relative violation of every labelled pair."""
    M = est.get_mahalanobis_matrix()
    low, high = est.bounds_
    i, j = np.triu_indices(X.shape[0], 1)
    V = X[i] - X[j]
    dist = np.einsum("ij,jk,ik->i", V, M, V)
    same = y[i] == y[j]
    xi = np.where(same, low, high)
    key = i * X.shape[0] + j
    akey = est.active_pairs_[:, 0] * X.shape[0] + est.active_pairs_[:, 1]
    pos = {k: c for c, k in enumerate(akey)}
    for idx, k in enumerate(key):
        if k in pos:
            xi[idx] = est.slack_[pos[k]]
    sign = np.where(same, 1.0, -1.0)
    return sign * (dist - xi) / xi, same


def test_reported_satisfied_constraints_are_satisfied():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = ProjectAndForget(tol=1e-4, random_state=0).fit(X, y)
    viol, same = _all_pair_violations(est, X, y)
    # every pair the model reports as satisfied (all of them, at convergence,
    # within tol relative, the active ones against their slack) is satisfied
    assert est.converged_
    assert est.violation_ <= 1e-4
    assert viol.max() <= 1e-4 * (1 + 1e-6) + 1e-9
    assert est.n_pairs_ == viol.size
    # the active set is far smaller than the set of all pairs
    assert 0 < est.n_active_ < 0.5 * viol.size
    assert np.all(est.duals_ > 0)


def test_hard_constraints_and_bounds():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = ProjectAndForget(gamma=10.0, random_state=0).fit(X, y, bounds=(1.0, 4.0))
    np.testing.assert_array_equal(est.bounds_, [1.0, 4.0])
    viol, _ = _all_pair_violations(est, X, y)
    assert viol.max() <= 1e-3 * (1 + 1e-6) + 1e-9


def test_convergence_warning_verbose(capsys):
    X, y = make_classification(60, 5, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = ProjectAndForget(max_iter=1, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "Iteration" in out and "Active" in out
    assert est.n_iter_ == 1 and est.loss_curve_.shape == (1,)


def test_reproducible_pickle_transform():
    X, y = make_classification(80, 4, n_informative=3, n_redundant=0,
                               random_state=1)
    a = ProjectAndForget(random_state=3).fit(X, y)
    b = clone(a).fit(X, y)
    np.testing.assert_array_equal(a.components_, b.components_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_allclose(c.transform(X), X @ a.components_.T)
    metric = a.get_metric()
    d = metric(X[0], X[1])
    assert d == pytest.approx(np.linalg.norm(a.components_ @ (X[0] - X[1])))


def test_identical_points_of_different_classes():
    X = np.array([[0.0, 0], [0, 0], [1, 1], [2, 2], [3, 1], [0, 3]])
    y = np.array([0, 1, 0, 1, 0, 1])
    est = ProjectAndForget(random_state=0, max_iter=50).fit(X, y)
    assert np.all(np.isfinite(est.components_))
    assert est.n_pairs_ == 15 - 1


def test_single_class_error():
    with pytest.raises(ValueError, match="2 classes"):
        ProjectAndForget().fit(np.random.rand(10, 2), np.zeros(10))


@pytest.mark.parametrize("gamma", [1.0, 5.0])
def test_same_fixed_point_as_logdet_bregman_on_all_pairs(gamma):
    """Every pair listed explicitly: ITML's solve of the same problem agrees."""
    from metric_estimators.solvers.bregman import logdet_bregman

    X, y = make_classification(24, 3, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1,
                               random_state=2)
    bounds = (1.0, 6.0)
    est = ProjectAndForget(gamma=gamma, tol=1e-11, max_iter=5000,
                           random_state=0).fit(X, y, bounds=bounds)
    assert est.converged_
    i, j = np.triu_indices(X.shape[0], 1)
    delta = np.where(y[i] == y[j], 1.0, -1.0)
    res = logdet_bregman(np.eye(3), X[i] - X[j], delta,
                         np.where(delta > 0, *bounds), gamma, tol=1e-11,
                         max_iter=100000, random_state=1, kernels=_backend.NUMBA)
    assert res.converged
    A = est.get_mahalanobis_matrix()
    assert np.abs(A - res.matrix).max() <= 1e-6 * np.abs(res.matrix).max()
    # the same duals and slacks on the pairs ProjectAndForget remembers
    key = i * X.shape[0] + j
    pos = np.searchsorted(key, est.active_pairs_[:, 0] * X.shape[0]
                          + est.active_pairs_[:, 1])
    np.testing.assert_allclose(est.duals_, res.duals[pos], rtol=1e-6,
                               atol=1e-6 * res.duals.max())
    np.testing.assert_allclose(est.slack_, res.slack[pos], rtol=1e-6)
    assert np.count_nonzero(res.duals) == est.n_active_
    # with a different problem (other bounds) the matrices differ: the
    # comparison has teeth
    other = ProjectAndForget(gamma=gamma, tol=1e-8, random_state=0).fit(
        X, y, bounds=(1.5, 6.0))
    assert np.abs(other.get_mahalanobis_matrix() - res.matrix).max() > 1e-3


def test_oracle_counts_every_violated_pair_and_history_times():
    # one oracle call at A0 = I: its count is the brute-force count of pairs
    # violated beyond tol, though only max_new_constraints of them join
    X, y = make_classification(n_samples=80, n_features=4, n_informative=3,
                               n_redundant=0, random_state=0)
    low, high, tol = 2.0, 6.0, 1e-3
    with pytest.warns(ConvergenceWarning):
        est = ProjectAndForget(max_iter=1, max_new_constraints=50, tol=tol,
                               random_state=0).fit(X, y, bounds=(low, high))
    i, j = np.triu_indices(X.shape[0], 1)
    d = np.sum((X[i] - X[j]) ** 2, axis=1)
    same = y[i] == y[j]
    viol = np.where(same, (d - low) / low, (high - d) / high)
    assert est.history_["scan_violated"][0] == np.count_nonzero(viol > tol) > 50
    # n_violated_: the last full scan, of the returned matrix
    assert est.n_violated_ == est.history_["scan_violated"][-1]
    assert est.history_["n_added"] == [50]
    assert len(est.history_["oracle_time"]) == 1
    assert 0 < est.history_["oracle_time"][0] <= est.history_["time"][0]
    assert est.history_["active_bytes"][0] == est.n_active_ * 25


def test_max_violation_is_a_deprecated_name_of_violation():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::3]
    est = ProjectAndForget(max_iter=3, random_state=0)
    with pytest.warns(ConvergenceWarning):
        est.fit(X, y[::3])
    assert "max_violation_" not in vars(est)  # not a stored attribute
    with pytest.warns(FutureWarning, match="max_violation_ is deprecated: use "
                      "violation_"):
        old = est.max_violation_
    assert old == est.violation_ > 0
    with pytest.raises(AttributeError):
        ProjectAndForget().max_violation_  # unfitted: no violation_ either


def test_pair_scan_serial_and_parallel_agree(monkeypatch):
    # below PARALLEL_MIN_POINTS the pair oracle scans rows serially, from it
    # on in parallel: the same hits, counts and largest violations
    from metric_estimators._kernels import pair_oracle

    rng = np.random.RandomState(0)
    n, d, cap = 60, 3, 4
    Z = rng.randn(n, d)
    sq = (Z ** 2).sum(1)
    y = rng.randint(0, 3, n)
    # row i skips its listed partners: here j = i + 1 for even i
    starts = np.zeros(n + 1, dtype=np.int64)
    cols = []
    for i in range(n):
        if i % 2 == 0 and i + 1 < n:
            cols.append(i + 1)
        starts[i + 1] = len(cols)
    cols = np.array(cols, dtype=np.int64)
    got = []
    for cutoff in (n + 1, n):  # serial, then parallel
        monkeypatch.setattr(pair_oracle, "PARALLEL_MIN_POINTS", cutoff)
        out = (np.full((n, cap), -1, np.int64), np.full((n, cap), -1, np.int64),
               np.zeros((n, cap)), np.zeros(n, np.int64), np.zeros(n))
        pair_oracle.scan_pair_block(Z, sq, y, 0, n, 1.0, 4.0, 0.01, starts, cols, *out)
        got.append(out)
    assert got[0][3].sum() > 0
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
    # a reference for the counts: every unlisted pair i < j, by its violation
    D = sq[:, None] + sq[None] - 2 * Z @ Z.T
    viol = np.where(y[:, None] == y[None], (D - 1.0) / 1.0, (4.0 - D) / 4.0)
    listed = np.zeros((n, n), bool)
    for i in range(n):
        listed[i, cols[starts[i]:starts[i + 1]]] = True
    iu = np.triu(np.ones((n, n), bool), 1) & ~listed
    np.testing.assert_array_equal(got[0][3], ((viol > 0.01) & iu).sum(1))
