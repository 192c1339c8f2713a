"""ITML (pairs) and ITML_Supervised (labels)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import ITML, ITML_Supervised, _backend
from metric_estimators.constraints import pairs_from_labels
from metric_estimators.solvers.bregman import logdet_bregman


@pytest.fixture(scope="module")
def iris_pairs(iris):
    X, y = iris
    idx, labels = pairs_from_labels(y, 60, random_state=0)
    return X, idx, labels


# scikit-learn's estimator checks: tests/test_sklearn_checks.py


# ------------------------------------------------------------- the solution
def test_fit_is_fixed_point_of_the_problem(iris_pairs):
    """ITML's matrix is the Bregman fixed point, checked through its KKT."""
    X, idx, y = iris_pairs
    pairs = X[idx]
    itml = ITML(tol=1e-10, max_iter=100000, random_state=0).fit(pairs, y, bounds=(0.5, 6.0))
    A = itml.get_mahalanobis_matrix()
    V = pairs[:, 0] - pairs[:, 1]
    xi0 = np.where(y > 0, 0.5, 6.0)
    lam, xi, g = itml.duals_, itml.slack_, itml.gamma
    stat = np.linalg.inv(A) - (np.eye(4) + (V.T * (lam * y)) @ V)
    assert np.abs(stat).max() < 1e-7 * np.abs(np.linalg.inv(A)).max()
    p = itml.pair_distance(pairs) ** 2
    assert np.max(y * (p - xi) / xi) < 1e-8  # feasible w.r.t. the slacks
    assert np.max(lam * np.abs(p - xi) / xi) < 1e-7 * lam.max()  # complementarity
    np.testing.assert_allclose(g / xi, g / xi0 - lam * y, rtol=1e-8)
    assert np.all(lam >= 0) and np.any(lam == 0) and np.any(lam > 0)
    np.testing.assert_array_equal(itml.bounds_, [0.5, 6.0])


def test_matches_solver_and_default_bounds(iris_pairs):
    X, idx, y = iris_pairs
    pairs = X[idx]
    itml = ITML(tol=1e-9, max_iter=100000, random_state=0).fit(pairs, y)
    assert itml.converged_ is True and itml.n_iter_ < 100000
    # default bounds: 5th / 95th percentiles of squared distances among the
    # distinct points of the pairs (prior = identity)
    pts = np.unique(pairs.reshape(-1, 4), axis=0)
    D = ((pts[:, None] - pts[None]) ** 2).sum(-1)[np.triu_indices(len(pts), 1)]
    np.testing.assert_allclose(itml.bounds_, np.percentile(D[D > 0], [5, 95]))
    res = logdet_bregman(np.eye(4), pairs[:, 0] - pairs[:, 1], y.astype(float),
                         np.where(y > 0, *itml.bounds_), 1.0, tol=1e-9,
                         max_iter=100000, random_state=1, kernels=_backend.NUMBA)
    np.testing.assert_allclose(itml.get_mahalanobis_matrix(), res.matrix, rtol=1e-6,
                               atol=1e-7 * np.abs(res.matrix).max())


def separable_pairs(seed=0, n=40):
    """Pairs for which the bounds (1, 50) are feasible: classes 10 apart on x,
    large within-class noise on y and z that a metric can shrink."""
    rng = np.random.RandomState(seed)
    c = rng.randint(0, 2, size=n)
    X = np.column_stack([10 * c + 0.1 * rng.randn(n), 3 * rng.randn(n), rng.randn(n)])
    idx, y = pairs_from_labels(c, 15, random_state=seed)
    return X[idx], y


def test_large_gamma_satisfies_bounds():
    pairs, y = separable_pairs()
    itml = ITML(gamma=1e9, tol=1e-9, max_iter=20000, random_state=0)
    itml.fit(pairs, y, bounds=(1.0, 50.0))
    d2 = itml.pair_distance(pairs) ** 2
    assert np.all(d2[y == 1] <= 1.0 * (1 + 1e-5))
    assert np.all(d2[y == -1] >= 50.0 * (1 - 1e-5))
    soft = ITML(gamma=0.1, random_state=0).fit(pairs, y, bounds=(1.0, 50.0))
    d2s = soft.pair_distance(pairs) ** 2
    assert np.any(d2s[y == 1] > 1.01) or np.any(d2s[y == -1] < 49.5)


def test_hard_constraints_with_inf_gamma():
    pairs, y = separable_pairs(1)
    itml = ITML(gamma=np.inf, tol=1e-9, max_iter=20000, random_state=0)
    itml.fit(pairs, y, bounds=(1.0, 50.0))
    np.testing.assert_array_equal(itml.slack_, np.where(y > 0, 1.0, 50.0))
    d2 = itml.pair_distance(pairs) ** 2
    assert np.all(y * (d2 - itml.slack_) / itml.slack_ <= 1e-8)


@pytest.mark.parametrize("prior", ["identity", "covariance", "random", "array"])
def test_priors(iris, prior):
    X, y = iris
    if prior == "array":
        prior = np.diag([1.0, 2.0, 3.0, 4.0])
    m = ITML_Supervised(prior=prior, random_state=0).fit(X, y)
    assert m.prior_.shape == (4, 4)
    np.testing.assert_allclose(m.prior_, m.prior_.T, rtol=1e-12, atol=1e-14)
    assert np.all(np.linalg.eigvalsh(m.prior_) > 0)
    if isinstance(prior, str) and prior == "identity":
        np.testing.assert_array_equal(m.prior_, np.eye(4))
    if isinstance(prior, np.ndarray):
        np.testing.assert_array_equal(m.prior_, prior)
    if isinstance(prior, str) and prior == "covariance":
        np.testing.assert_allclose(m.prior_, np.linalg.inv(np.cov(X, rowvar=False)))
    assert np.all(np.isfinite(m.components_))


def test_reproducible_and_seed_dependent(iris):
    X, y = iris
    a = ITML_Supervised(random_state=3).fit(X, y).components_
    b = ITML_Supervised(random_state=3).fit(X, y).components_
    c = ITML_Supervised(random_state=4).fit(X, y).components_
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)


def test_supervised_defaults_and_attributes(iris):
    X, y = iris
    m = ITML_Supervised(random_state=0).fit(X, y)
    # small data: every pair of points, 3 * C(50, 2) same-class pairs
    assert (m.pair_labels_ == 1).sum() == 3 * 1225
    assert (m.pair_labels_ == -1).sum() == 150 * 149 // 2 - 3 * 1225
    assert len({tuple(p) for p in np.sort(m.pairs_, axis=1)}) == len(m.pairs_)
    same = y[m.pairs_[:, 0]] == y[m.pairs_[:, 1]]
    np.testing.assert_array_equal(same, m.pair_labels_ == 1)
    assert m.n_iter_ == m.convergence_curve_.size == m.loss_curve_.size
    assert m.convergence_curve_[-1] < m.tol
    assert m.components_.shape == (4, 4)
    assert m.transform(X).shape == X.shape
    assert m.get_metric()(X[0], X[1]) == pytest.approx(
        np.linalg.norm(m.transform(X[:1]) - m.transform(X[1:2])))
    m2 = ITML_Supervised(n_constraints=7, random_state=0).fit(X, y)
    assert m2.pairs_.shape == (14, 2)
    # metric-learn's count is one argument away
    m3 = ITML_Supervised(n_constraints=20 * 3 ** 2, random_state=0).fit(X, y)
    assert (m3.pair_labels_ == 1).sum() == 180 and (m3.pair_labels_ == -1).sum() == 180


def test_supervised_default_does_not_depend_on_the_seed(iris):
    """All pairs: the seed only orders the sweeps, which leaves the fixed
    point unchanged, so two seeds give the same metric up to the tolerance."""
    X, y = iris
    a = ITML_Supervised(random_state=0, tol=1e-6).fit(X, y)
    b = ITML_Supervised(random_state=7, tol=1e-6).fit(X, y)
    np.testing.assert_array_equal(a.pairs_, b.pairs_)
    np.testing.assert_allclose(a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix(),
                               rtol=1e-3, atol=1e-4)


def test_supervised_default_draws_pairs_beyond_the_all_pairs_budget():
    """Above the budget the default draws: as many pairs of each kind as the
    work allows, at least metric-learn's count, never more than exist."""
    from metric_estimators.constraints import (
        ALL_PAIRS_WORK,
        ITML_MAX_DRAWN,
        all_pairs_affordable,
        default_n_constraints,
    )
    rng = np.random.RandomState(0)
    n, d = 400, 120
    X = rng.randn(n, d)
    y = np.arange(n) % 4
    assert not all_pairs_affordable(y, d)  # 79800 pairs x 14400 > 1e9
    m = ITML_Supervised(random_state=0, max_iter=5).fit(X, y)
    expected = default_n_constraints(None, y, d, work=ALL_PAIRS_WORK,
                                     cap=ITML_MAX_DRAWN)
    assert expected == min(ALL_PAIRS_WORK // d ** 2, ITML_MAX_DRAWN, 4 * 100 * 99 // 2)
    assert (m.pair_labels_ == 1).sum() == expected == (m.pair_labels_ == -1).sum()


def test_learned_metric_helps_knn(iris):
    X, y = iris
    rng = np.random.RandomState(0)
    Xn = np.hstack([X, 3 * rng.randn(X.shape[0], 4)])  # noisy extra features
    from sklearn.model_selection import cross_val_score as cvs
    base = cvs(KNeighborsClassifier(3), Xn, y, cv=3).mean()
    pipe = make_pipeline(ITML_Supervised(random_state=0), KNeighborsClassifier(3))
    learned = cvs(pipe, Xn, y, cv=3).mean()
    assert learned > base + 0.03, (base, learned)


def test_convergence_warning_and_verbose(iris, capsys):
    X, y = iris
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        m = ITML_Supervised(max_iter=2, tol=1e-12, random_state=0).fit(X, y)
    assert m.n_iter_ == 2
    assert m.converged_ is False  # the budget ran out: the warning's case
    ITML_Supervised(verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "[ITML_Supervised]" in out and "Iteration" in out and "converged" in out


# ------------------------------------------------------------------ errors
def test_errors(iris_pairs):
    X, idx, y = iris_pairs
    pairs = X[idx]
    bad = pairs.copy()
    bad[np.flatnonzero(y == -1)[0], 1] = bad[np.flatnonzero(y == -1)[0], 0]
    with pytest.raises(ValueError, match="identical points"):
        ITML().fit(bad, y)
    with pytest.raises(ValueError, match="prior must be positive definite"):
        ITML(prior=np.diag([1.0, 1.0, 0.0, 1.0])).fit(pairs, y)
    with pytest.raises(ValueError, match="prior must have shape"):
        ITML(prior=np.eye(3)).fit(pairs, y)
    with pytest.raises(ValueError, match="must be -1"):
        ITML().fit(pairs, np.where(y > 0, 1, 0))
    with pytest.raises(ValueError, match="inconsistent lengths"):
        ITML().fit(pairs, y[:-1])
    with pytest.raises(ValueError, match=r"shape \(n_pairs, 2, n_features\)"):
        ITML().fit(X[:10], y[:10])
    with pytest.raises(ValueError, match=r"shape \(n_pairs, 2, n_features\)"):
        ITML().fit(np.stack([X[:10]] * 3, axis=1), y[:10])
    with pytest.raises(ValueError, match="low <= high"):
        ITML().fit(pairs, y, bounds=(3.0, 1.0))
    with pytest.raises(ValueError, match="positive squared distances"):
        ITML().fit(pairs, y, bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match="two numbers"):
        ITML().fit(pairs, y, bounds=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="gamma"):
        ITML(gamma=0.0).fit(pairs, y)
    with pytest.raises(ValueError, match="prior"):
        ITML(prior="cov").fit(pairs, y)
    with pytest.raises(ValueError, match="NaN"):
        p2 = pairs.copy()
        p2[0, 0, 0] = np.nan
        ITML().fit(p2, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        ITML_Supervised().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="invertible covariance"):
        Xc = np.hstack([X, X[:, :1]])
        ITML_Supervised(prior="covariance").fit(Xc, np.arange(len(X)) % 3)
    fitted = ITML(random_state=0).fit(pairs, y)
    with pytest.raises(ValueError, match="fitted with 4 features"):
        fitted.predict(pairs[:, :, :3])


def test_identical_similar_pairs_are_harmless(iris_pairs):
    X, idx, y = iris_pairs
    pairs = X[idx].copy()
    pairs[0, 1] = pairs[0, 0]  # a similar pair of identical points
    assert y[0] == 1
    m = ITML(random_state=0).fit(pairs, y)
    assert np.all(np.isfinite(m.components_)) and m.duals_[0] == 0


def test_supervised_drops_identical_different_class_pairs():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.1], [0.0, 2.0], [0.1, 2.0]])
    y = np.array([0, 1, 0, 1, 0, 1])
    with pytest.warns(UserWarning, match="identical"):
        m = ITML_Supervised(n_constraints=50, random_state=0).fit(X, y)
    assert np.all(np.isfinite(m.components_))
    assert not np.any((m.pairs_[:, 0] == 0) & (m.pairs_[:, 1] == 1) & (m.pair_labels_ == -1))


# -------------------------------------------------------------- pairs API
def test_pairs_classifier_api(iris_pairs):
    X, idx, y = iris_pairs
    pairs = X[idx]
    itml = ITML(random_state=0).fit(pairs, y)
    assert is_classifier(itml)
    np.testing.assert_array_equal(itml.classes_, [-1, 1])
    s = itml.decision_function(pairs)
    np.testing.assert_allclose(s, -itml.pair_distance(pairs))
    pred = itml.predict(pairs)
    assert set(np.unique(pred)) <= {-1, 1}
    # threshold_ is a distance (metric-learn's meaning): similar when d <= t
    assert itml.threshold_ > 0
    np.testing.assert_array_equal(
        pred, np.where(itml.pair_distance(pairs) <= itml.threshold_, 1, -1))
    auc = itml.score(pairs, y)
    from sklearn.metrics import roc_auc_score
    assert auc == pytest.approx(roc_auc_score(y, s)) and auc > 0.9
    itml.set_threshold(-1.0)  # distances are >= 0: nothing is that close
    assert np.all(itml.predict(pairs) == -1)
    itml.set_threshold(1e9)
    assert np.all(itml.predict(pairs) == 1)
    d = itml.pair_distance(pairs)
    itml.set_threshold(float(np.median(d)))
    np.testing.assert_array_equal(itml.predict(pairs),
                                  np.where(d <= np.median(d), 1, -1))
    with pytest.raises(ValueError, match="threshold"):
        itml.set_threshold("a")


def brute_force_best(distances, y, crit):
    cands = np.r_[-np.inf, np.sort(np.unique(distances))]
    return max(crit(np.where(distances <= t, 1, -1)) for t in cands)


@pytest.mark.parametrize("strategy", ["accuracy", "f_beta", "max_tpr", "max_tnr"])
def test_calibrate_threshold(iris_pairs, strategy):
    X, idx, y = iris_pairs
    pairs = X[idx]
    itml = ITML(random_state=0).fit(pairs, y)
    rng = np.random.RandomState(0)
    yn = np.where(rng.rand(len(y)) < 0.2, -y, y)  # noisy labels: a real trade-off
    s = itml.pair_distance(pairs)

    def rates(pred):
        tpr = np.mean(pred[yn == 1] == 1)
        tnr = np.mean(pred[yn == -1] == -1)
        return tpr, tnr

    kw = {"min_rate": 0.8} if strategy.startswith("max") else {}
    if strategy == "f_beta":
        kw["beta"] = 2.0
    itml.calibrate_threshold(pairs, yn, strategy=strategy, **kw)
    pred = itml.predict(pairs)
    if strategy == "accuracy":
        def crit(p):
            return np.mean(p == yn)
    elif strategy == "f_beta":
        from sklearn.metrics import fbeta_score

        def crit(p):
            return fbeta_score(yn, p, beta=2.0, zero_division=0.0)
    elif strategy == "max_tpr":
        def crit(p):
            tpr, tnr = rates(p)
            return tpr if tnr >= 0.8 else -1
    else:
        def crit(p):
            tpr, tnr = rates(p)
            return tnr if tpr >= 0.8 else -1
    assert crit(pred) == pytest.approx(brute_force_best(s, yn, crit))
    if strategy.startswith("max"):
        tpr, tnr = rates(pred)
        assert (tnr if strategy == "max_tpr" else tpr) >= 0.8


def test_calibrate_threshold_errors(iris_pairs):
    X, idx, y = iris_pairs
    itml = ITML(random_state=0).fit(X[idx], y)
    with pytest.raises(ValueError, match="strategy"):
        itml.calibrate_threshold(X[idx], y, strategy="best")
    with pytest.raises(ValueError, match="min_rate"):
        itml.calibrate_threshold(X[idx], y, strategy="max_tpr")
    with pytest.raises(ValueError, match="min_rate"):
        itml.calibrate_threshold(X[idx], y, strategy="max_tnr", min_rate=1.5)
    with pytest.raises(ValueError, match="beta"):
        itml.calibrate_threshold(X[idx], y, strategy="f_beta", beta=-1.0)
    itml2 = ITML(random_state=0).fit(
        X[idx], y, calibration_params={"strategy": "max_tpr", "min_rate": 0.9})
    pred = itml2.predict(X[idx])
    assert np.mean(pred[y == -1] == -1) >= 0.9


def test_preprocessor_index_pairs_equal_explicit_pairs(iris_pairs):
    X, idx, y = iris_pairs
    a = ITML(random_state=0).fit(X[idx], y)
    b = ITML(preprocessor=X, random_state=0).fit(idx, y)
    np.testing.assert_allclose(a.components_, b.components_)
    np.testing.assert_allclose(a.predict(X[idx]), b.predict(idx))
    c = ITML(preprocessor=lambda i: X[i], random_state=0).fit(idx, y)
    np.testing.assert_allclose(a.components_, c.components_)
    with pytest.raises(ValueError, match="out of range"):
        b.predict(idx + 1000)


def test_cross_val_score_and_grid_search_on_pairs(iris_pairs):
    X, idx, y = iris_pairs
    scores = cross_val_score(ITML(preprocessor=X, random_state=0), idx, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.8)
    acc = cross_val_score(ITML(random_state=0), X[idx], y, cv=3, scoring="accuracy")
    assert np.all(acc > 0.7)
    auc = cross_val_score(ITML(random_state=0), X[idx], y, cv=3, scoring="roc_auc")
    np.testing.assert_allclose(auc, cross_val_score(ITML(random_state=0), X[idx], y, cv=3))
    grid = [0.1, 1.0, 10.0]
    gs = GridSearchCV(ITML(preprocessor=X, random_state=0),
                      {"gamma": grid}, cv=3).fit(idx, y)
    # the search scored each gamma as cross_val_score does and kept the best
    manual = [cross_val_score(ITML(preprocessor=X, random_state=0, gamma=g),
                              idx, y, cv=3).mean() for g in grid]
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], manual, rtol=1e-12)
    assert sorted(manual)[-1] > sorted(manual)[-2]  # one best gamma
    assert gs.best_params_["gamma"] == grid[int(np.argmax(manual))]
    assert gs.best_score_ == pytest.approx(max(manual), rel=1e-12)
    # and refitted it on all pairs
    fresh = ITML(preprocessor=X, random_state=0, gamma=gs.best_params_["gamma"]).fit(idx, y)
    np.testing.assert_array_equal(gs.best_estimator_.components_, fresh.components_)
    np.testing.assert_array_equal(gs.best_estimator_.predict(idx), fresh.predict(idx))


def test_pickle_and_clone(iris_pairs, iris):
    X, idx, y = iris_pairs
    itml = ITML(preprocessor=X, random_state=0).fit(idx, y)
    back = pickle.loads(pickle.dumps(itml))
    np.testing.assert_array_equal(back.predict(idx), itml.predict(idx))
    np.testing.assert_array_equal(back.components_, itml.components_)
    metric = pickle.loads(pickle.dumps(itml.get_metric()))
    assert metric(X[idx[0, 0]], X[idx[0, 1]]) == pytest.approx(itml.pair_distance(idx[:1])[0])
    c = clone(itml)
    assert not hasattr(c, "components_")
    np.testing.assert_array_equal(c.get_params()["preprocessor"], X)
    Xs, ys = iris
    sup = ITML_Supervised(random_state=0).fit(Xs, ys)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(sup)).transform(Xs), sup.transform(Xs))


@pytest.mark.slow
def test_digits_accuracy_and_speed():
    import time

    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    ITML_Supervised(random_state=0, max_iter=2).fit(Xtr[:50], ytr[:50])  # warm
    t = time.perf_counter()
    m = ITML_Supervised(random_state=0).fit(Xtr, ytr)
    elapsed = time.perf_counter() - t
    acc = KNeighborsClassifier(3).fit(m.transform(Xtr), ytr).score(m.transform(Xte), yte)
    assert acc >= 0.971  # metric-learn 0.7.0: 0.981
    assert elapsed < 5.0
