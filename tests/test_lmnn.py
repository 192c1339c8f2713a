"""Tests of LMNN against a plain-numpy reference and scikit-learn's API."""

import pickle
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, _backend
from metric_estimators._problems.lmnn import LMNNObjective, find_target_neighbors
from metric_estimators.solvers.impostors import ImpostorSet

# ---------------------------------------------------------------------------
# plain-numpy reference (written independently of the package's kernels)


def reference_targets(X, y, k):
    n = X.shape[0]
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    targets = -np.ones((n, k), dtype=int)
    for i in range(n):
        same = [j for j in range(n) if y[j] == y[i] and j != i]
        same.sort(key=lambda j: (D[i, j], j))
        targets[i, : min(k, len(same))] = same[:k]
    return targets


def reference_loss(L, X, y, targets, mu, squared):
    Z = X @ L.T
    D = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    pull = 0.0
    push = 0.0
    for i in range(X.shape[0]):
        for j in targets[i]:
            if j < 0:
                continue
            pull += D[i, j]
            for l_ in np.flatnonzero(y != y[i]):
                h = max(0.0, 1.0 + D[i, j] - D[i, l_])
                push += h * h if squared else h
    return (1 - mu) * pull + mu * push


def make_objective(X, y, k, mu, squared, n_components=None):
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, k)
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**9, _backend.choose("lmnn", 1, 1))
    n_components = X.shape[1] if n_components is None else n_components
    return LMNNObjective(X, targets, imps, mu, squared, n_components), targets


def searched(obj, flat):
    """``obj(flat)`` after a first impostor search at ``flat`` (as the solvers do)."""
    imps = obj.impostors
    if imps.n_searches == 0:
        imps.refresh(*obj.search_point(flat))
    return obj(flat)


def small_problem(seed, n=40, d=5, n_classes=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = rng.randint(n_classes, size=n)
    return X, y, rng


# scikit-learn's estimator checks: tests/test_sklearn_checks.py (registry in
# tests/conftest.py)


# ---------------------------------------------------------------------------
# loss and gradient


@pytest.mark.parametrize("seed", range(4))
def test_target_neighbors_match_reference(seed):
    X, y, _ = small_problem(seed)
    _, y_idx = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(
        find_target_neighbors(X, y_idx, 3), reference_targets(X, y, 3)
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("squared", [True, False])
@pytest.mark.parametrize("n_components", [None, 3])
def test_loss_matches_numpy_reference(seed, squared, n_components):
    X, y, rng = small_problem(seed)
    obj, targets = make_objective(X, y, 3, 0.4, squared, n_components)
    np.testing.assert_array_equal(targets, reference_targets(X, y, 3))
    L = rng.randn(obj.shape[0], X.shape[1]) * 0.5
    loss, _ = searched(obj, L.ravel())
    assert loss == pytest.approx(reference_loss(L, X, y, targets, 0.4, squared), rel=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_gradient_finite_differences(seed):
    X, y, rng = small_problem(seed, n=30, d=4)
    obj, targets = make_objective(X, y, 2, 0.5, True)
    L = rng.randn(4, 4) * 0.7
    _, grad = searched(obj, L.ravel())
    eps = 1e-6
    num = np.zeros(L.size)
    for p in range(L.size):
        e = np.zeros(L.size)
        e[p] = eps
        num[p] = (
            reference_loss((L.ravel() + e).reshape(L.shape), X, y, targets, 0.5, True)
            - reference_loss((L.ravel() - e).reshape(L.shape), X, y, targets, 0.5, True)
        ) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-6 * np.abs(num).max())


def test_gradient_of_hinge_is_subgradient():
    """Away from kinks the hinge loss gradient is the true gradient."""
    X, y, rng = small_problem(7, n=25, d=3)
    obj, targets = make_objective(X, y, 2, 0.5, False)
    L = rng.randn(3, 3)
    _, grad = searched(obj, L.ravel())
    eps = 1e-7
    direction = rng.randn(L.size)
    direction /= np.linalg.norm(direction)
    fd = (
        reference_loss((L.ravel() + eps * direction).reshape(3, 3), X, y, targets, 0.5, False)
        - reference_loss((L.ravel() - eps * direction).reshape(3, 3), X, y, targets, 0.5, False)
    ) / (2 * eps)
    assert grad @ direction == pytest.approx(fd, rel=1e-4)


@pytest.mark.parametrize("solver, loss", [("lbfgs", "auto"), ("lbfgs", "squared_hinge"),
                                          ("subgradient", "auto")])
def test_fitted_loss_is_exact_at_solution(solver, loss):
    """The last loss reported equals the reference loss of components_:
    no active impostor was missed by the active set."""
    X, y = make_classification(
        n_samples=120, n_features=6, n_informative=4, n_classes=3,
        random_state=0,
    )
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn = LMNN(n_neighbors=3, solver=solver, loss=loss, max_iter=200,
                    random_state=0).fit(X, y)
    ref = reference_loss(
        lmnn.components_, X, y, lmnn.target_neighbors_, 0.5, loss == "squared_hinge"
    )
    assert lmnn.loss_curve_[-1] == pytest.approx(ref, rel=1e-8)
    # the objective decreased overall
    assert lmnn.loss_curve_[-1] < lmnn.loss_curve_[0]


def test_lbfgs_converges_to_stationary_point():
    X, y = make_blobs(n_samples=60, centers=3, n_features=3, cluster_std=2.5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lmnn = LMNN(max_iter=2000, tol=1e-7, loss="squared_hinge",
                    random_state=0).fit(X, y)
    obj, _ = make_objective(X, y, 3, 0.5, True)
    _, grad = searched(obj, lmnn.components_.ravel())
    assert np.abs(grad).max() < 1e-4 * max(1.0, np.abs(lmnn.components_).max())


# ---------------------------------------------------------------------------
# quality


def test_iris_accuracy():
    X, y = load_iris(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.7, stratify=y, random_state=42
    )
    euclid = KNeighborsClassifier(3).fit(Xtr, ytr).score(Xte, yte)
    assert euclid == pytest.approx(0.933, abs=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn = LMNN(n_neighbors=3, random_state=0).fit(Xtr, ytr)
    learned = KNeighborsClassifier(3).fit(lmnn.transform(Xtr), ytr).score(
        lmnn.transform(Xte), yte
    )
    assert learned >= 0.96


def test_get_metric_in_knn_matches_transform():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn = LMNN(random_state=0).fit(X, y)
    metric = lmnn.get_metric()
    knn_metric = KNeighborsClassifier(3, metric=metric, algorithm="brute").fit(X, y)
    knn_embed = KNeighborsClassifier(3).fit(lmnn.transform(X), y)
    np.testing.assert_array_equal(
        knn_metric.predict(X[::7]), knn_embed.predict(lmnn.transform(X[::7]))
    )
    u, v = X[0], X[1]
    assert metric(u, v) == pytest.approx(np.linalg.norm(lmnn.transform([u - v])))
    assert metric(u, v, squared=True) == pytest.approx(metric(u, v) ** 2)
    metric2 = pickle.loads(pickle.dumps(metric))
    assert metric2(u, v) == metric(u, v)


# ---------------------------------------------------------------------------
# scikit-learn workflows


def _fit_quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def test_pipeline_gridsearch_cross_val():
    X, y = load_iris(return_X_y=True)
    # the squared hinge: its grid below has a unique best value (the hinge's
    # 3-NN scores on iris tie at 0.98 for n_neighbors 1 to 5)
    pipe = Pipeline([("lmnn", LMNN(max_iter=20, loss="squared_hinge", random_state=0)),
                     ("knn", KNeighborsClassifier(3))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(pipe, X, y, cv=3)
        assert scores.mean() > 0.9
        # a grid with a unique best value (raw iris has many tied distances:
        # n_neighbors=2 and 3 score the same 0.98 since the kNN tie rule)
        values = [1, 2]
        grid = GridSearchCV(pipe, {"lmnn__n_neighbors": values}, cv=3).fit(X, y)
        # the search scored each value as cross_val_score does, kept the best
        manual = [cross_val_score(clone(pipe).set_params(lmnn__n_neighbors=k),
                                  X, y, cv=3).mean() for k in values]
        fresh = clone(pipe).set_params(**grid.best_params_).fit(X, y)
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"], manual, rtol=1e-12)
    assert sorted(manual)[-1] > sorted(manual)[-2]  # one best value
    assert grid.best_params_["lmnn__n_neighbors"] == values[int(np.argmax(manual))]
    assert grid.best_score_ > 0.9
    # the refitted pipeline is a fresh fit with the best parameters
    np.testing.assert_array_equal(grid.best_estimator_["lmnn"].components_,
                                  fresh["lmnn"].components_)


def test_clone_pickle_and_determinism():
    X, y = load_iris(return_X_y=True)
    a = _fit_quiet(LMNN(init="random", max_iter=15, random_state=3), X, y)
    b = _fit_quiet(clone(a), X, y)
    np.testing.assert_array_equal(a.components_, b.components_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.transform(X), c.transform(X))
    assert not hasattr(clone(a), "components_")


def test_pandas_output_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True, as_frame=True)
    lmnn = _fit_quiet(LMNN(max_iter=5, random_state=0).set_output(transform="pandas"), X, y)
    out = lmnn.transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == [f"lmnn{i}" for i in range(4)]
    np.testing.assert_array_equal(lmnn.feature_names_in_, X.columns)


def test_verbose_table(capsys):
    X, y = load_iris(return_X_y=True)
    lmnn = _fit_quiet(LMNN(max_iter=3, verbose=1, random_state=0), X, y)
    lines = capsys.readouterr().out.splitlines()
    assert all(ln.startswith("[LMNN] ") for ln in lines)
    header = [ln for ln in lines if "Iteration" in ln]
    assert len(header) == 1
    assert header[0].split()[1:] == ["Iteration", "Objective", "Active", "Time(s)"]
    # phase lines: the start (right after validation), the target
    # neighbours, then every impostor search with its candidate count, then
    # the closing line
    assert "fit on 150 x 4, 3 classes" in lines[0]
    # which tier the fit runs on (the backend's one line), then the targets
    assert "runs on the numpy twins" in lines[1]
    assert "target neighbours: 3 per point" in lines[2]
    searches = [ln for ln in lines if re.search(r"impostor search \d+:", ln)]
    assert len(searches) == lmnn.n_impostor_searches_
    assert re.search(r"impostor search 1: \d+ candidate pairs", searches[0])
    assert "after 3 iterations" in lines[-1]
    rows = [ln for ln in lines if re.match(r"\[LMNN\]\s+\d+\s", ln)]
    assert len(rows) == len(lmnn.loss_curve_) >= 3


def test_convergence_warning():
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        lmnn = LMNN(max_iter=2).fit(X, y)
    assert lmnn.n_iter_ == 2


# ---------------------------------------------------------------------------
# edge cases


def test_small_class_gets_fewer_targets_never_itself():
    X, y = make_blobs(n_samples=40, centers=3, random_state=0)
    y = y.copy()
    y[:3] = 7  # a class with exactly n_neighbors = 3 points
    with pytest.warns(UserWarning, match="fewer target neighbours"):
        lmnn = _fit_quiet(LMNN(n_neighbors=3, random_state=0), X, y)
    t = lmnn.target_neighbors_
    assert np.all(t != np.arange(len(y))[:, None])
    small = np.flatnonzero(y == 7)
    assert np.all((t[small] >= 0).sum(1) == 2)
    assert np.all(y[t[small][:, :2]] == 7)


def test_singleton_class_is_allowed():
    X, y = make_blobs(n_samples=30, centers=2, random_state=0)
    y = y.copy()
    y[0] = 5
    with pytest.warns(UserWarning):
        lmnn = _fit_quiet(LMNN(random_state=0), X, y)
    assert np.all(lmnn.target_neighbors_[0] == -1)
    assert np.all(np.isfinite(lmnn.components_))


def test_single_class_is_an_error():
    X = np.random.RandomState(0).randn(20, 3)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LMNN().fit(X, np.zeros(20))


def test_no_impostors_does_not_crash():
    """Far-apart classes: no impostor at the start (metric-learn crashes)."""
    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(20, 2) * 0.01, rng.randn(20, 2) * 0.01 + 100])
    y = np.repeat([0, 1], 20)
    lmnn = _fit_quiet(LMNN(init="identity", random_state=0), X, y)
    assert np.all(np.isfinite(lmnn.components_))
    assert KNeighborsClassifier(3).fit(lmnn.transform(X), y).score(lmnn.transform(X), y) == 1.0


def test_duplicate_points():
    X, y = load_iris(return_X_y=True)
    X = np.vstack([X, X[:20]])
    y = np.concatenate([y, y[:20]])
    lmnn = _fit_quiet(LMNN(random_state=0, max_iter=20), X, y)
    assert np.all(lmnn.target_neighbors_ != np.arange(len(y))[:, None])
    assert np.all(np.isfinite(lmnn.components_))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input(bad):
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        LMNN().fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 5}, "n_components"),
        ({"n_neighbors": 0}, "n_neighbors"),
        ({"max_iter": 0}, "max_iter"),
        ({"tol": -1.0}, "tol"),
        ({"regularization": 1.5}, "regularization"),
        ({"regularization": "big"}, "regularization"),
        ({"solver": "newton"}, "solver"),
        ({"init": "foo"}, "init"),
        ({"init": np.eye(3, 4)[:, :3]}, "init"),
    ],
)
def test_bad_parameters(params, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        LMNN(**params).fit(X, y)


def test_default_push_weight_by_number_of_points():
    """regularization='auto': 0.5 below 2,000 training points, 0.25 from 2,000 on."""
    assert LMNN().regularization == "auto"
    X, y = load_iris(return_X_y=True)
    small = LMNN(random_state=0).fit(X, y)
    assert small.regularization_ == 0.5
    fixed = LMNN(regularization=0.5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(small.components_, fixed.components_)
    assert LMNN(regularization=0.3, random_state=0).fit(X, y).regularization_ == 0.3
    X, y = make_classification(n_samples=2000, n_features=4, n_informative=2,
                               n_redundant=0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert LMNN(max_iter=1, random_state=0).fit(X, y).regularization_ == 0.25
        assert LMNN(max_iter=1, random_state=0).fit(X[:1999], y[:1999]).regularization_ == 0.5


def test_max_impostors_truncation_warns():
    X, y = make_classification(n_samples=200, n_features=5, n_classes=4, n_informative=3, random_state=0)
    with pytest.warns(UserWarning, match="max_impostors"):
        lmnn = _fit_quiet(LMNN(max_impostors=50, max_iter=10, random_state=0), X, y)
    assert np.all(np.isfinite(lmnn.components_))


def test_impostor_search_blocks_match_brute_force(monkeypatch):
    """Blockwise search with tiny blocks finds exactly the brute-force pairs."""
    import metric_estimators.solvers.impostors as mod

    monkeypatch.setattr(mod, "BLOCK", 7)
    X, y, rng = small_problem(3, n=50, d=4, n_classes=4)
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    Z = X @ rng.randn(4, 4).T
    D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    R = D[np.arange(50)[:, None], targets].max(1) + 1
    imps = ImpostorSet(y_idx, np.ones(50, bool), 10**9, _backend.choose("lmnn", 1, 1))
    a, b = imps._search(Z, R)
    got = set(zip(a.tolist(), b.tolist()))
    want = {
        (i, l_) for i in range(50) for l_ in range(50)
        if y[i] != y[l_] and D[i, l_] < mod.SLACK * R[i]
    }
    assert got == want


def test_subgradient_solver_improves_accuracy_on_iris():
    X, y = load_iris(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.7, stratify=y, random_state=42)
    lmnn = _fit_quiet(LMNN(solver="subgradient", max_iter=300, random_state=0), Xtr, ytr)
    assert lmnn.loss_curve_[-1] < lmnn.loss_curve_[0]
    acc = KNeighborsClassifier(3).fit(lmnn.transform(Xtr), ytr).score(lmnn.transform(Xte), yte)
    assert acc >= 0.93


def test_reference_targets_agree_with_sklearn():
    """Sanity check of the test's own reference against scikit-learn."""
    X, y, _ = small_problem(11)
    t = reference_targets(X, y, 2)
    for c in np.unique(y):
        m = np.flatnonzero(y == c)
        nn = NearestNeighbors(n_neighbors=3).fit(X[m]).kneighbors(X[m], return_distance=False)
        np.testing.assert_array_equal(m[nn[:, 1:]], t[m])


@pytest.mark.parametrize("hashed_fraction", [0.0, 1.0])
def test_impostor_subsample_is_fixed_and_unbiased(hashed_fraction, monkeypatch):
    """Beyond max_impostors the push term uses a fixed hash-chosen subset of
    all impostor pairs: the same subset at every L, reweighted by 1/fraction."""
    import metric_estimators.solvers.impostors as mod
    from metric_estimators._kernels.lmnn import pair_uniform, point_hashes

    monkeypatch.setattr(mod, "HASHED_SCAN_FRACTION", hashed_fraction)
    hashed_calls = []
    search_hashed = mod.ImpostorSet._search_hashed

    def spy(self, *args, **kwargs):
        hashed_calls.append(1)
        return search_hashed(self, *args, **kwargs)

    monkeypatch.setattr(mod.ImpostorSet, "_search_hashed", spy)
    X, y = make_classification(
        n_samples=300, n_features=5, n_informative=3, n_classes=3, random_state=0
    )
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    has = (targets >= 0).any(axis=1)
    exact = LMNNObjective(X, targets, ImpostorSet(y_idx, has, 10**9, _backend.choose("lmnn", 1, 1)), 0.5, True, 5)
    loss_exact, _ = searched(exact, np.eye(5).ravel())
    n_pairs = exact.impostors.imp_i.size
    sampled_set = ImpostorSet(y_idx, has, n_pairs // 4, _backend.choose("lmnn", 1, 1), seed=3)
    sampled = LMNNObjective(X, targets, sampled_set, 0.5, True, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the oracle leaves a note, never warns
        loss_sampled, _ = searched(sampled, np.eye(5).ravel())
    frac = sampled_set.fraction
    note = sampled_set.subsample
    assert note is not None and note.fraction == frac and note.n_kept > 0
    assert 0 < frac < 0.5
    # with a sampling fraction below HASHED_SCAN_FRACTION, searches test each
    # pair's fixed number before its distance (the hashed scan)
    assert bool(hashed_calls) == (hashed_fraction > 0)
    assert sampled_set.imp_i.size <= n_pairs // 4
    assert loss_sampled == pytest.approx(loss_exact, rel=0.1)
    # at another L the search returns exactly the brute-force pairs of the
    # same subset
    rng = np.random.RandomState(0)
    L2 = np.eye(5) + 0.3 * rng.randn(5, 5)
    Z = X @ L2.T
    D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    R = D[np.arange(300)[:, None], targets].max(1) + 1
    a, b = sampled_set._search(Z, R)
    assert sampled_set.fraction == frac  # no further shrinking needed here
    H = point_hashes(300, 3)
    ii, ll = np.nonzero((y[:, None] != y[None]) & (D < mod.SLACK * R[:, None]))
    keep = pair_uniform(ii, ll, H) < frac
    assert set(zip(a.tolist(), b.tolist())) == set(zip(ii[keep].tolist(), ll[keep].tolist()))


def test_loss_parameter():
    """'auto' is the hinge for L-BFGS and the squared hinge for SGD; SGD refuses the hinge."""
    X, y = make_blobs(n_samples=60, centers=3, n_features=3, cluster_std=2.5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        auto = LMNN(max_iter=30, random_state=0).fit(X, y)
        hinge = LMNN(max_iter=30, loss="hinge", random_state=0).fit(X, y)
        squared = LMNN(max_iter=30, loss="squared_hinge", random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.components_, hinge.components_)
    for est, sq in ((hinge, False), (squared, True)):
        ref = reference_loss(est.components_, X, y, est.target_neighbors_, 0.5, sq)
        assert est.loss_curve_[-1] == pytest.approx(ref, rel=1e-8)
    assert not np.allclose(hinge.components_, squared.components_)
    with pytest.raises(ValueError, match="squared hinge only"):
        LMNN(solver="sgd", loss="hinge").fit(X, y)


# ---------------------------------------------------------------------------
# the bound that skips stored impostor pairs outside their radius


@pytest.mark.parametrize("scale", [0.0, 1e-3, 0.05, 0.5, 3.0])
def test_near_pairs_returns_exactly_the_pairs_within_radius(scale):
    """Whatever the reference, the numba kernel keeps exactly the pairs with
    distance < R, in order, with the distances of pair_sqdist bit for bit."""
    from metric_estimators._kernels import lmnn as nb
    from metric_estimators._kernels.numpy import lmnn as npk

    rng = np.random.RandomState(int(scale * 1000))
    n, c, m = 200, 7, 5000
    Z_ref = rng.randn(n, c)
    Z = Z_ref + scale * rng.randn(n, c)
    a = np.sort(rng.randint(n, size=m)).astype(np.int32)
    b = rng.randint(n, size=m).astype(np.int32)
    d_all = nb.pair_sqdist(Z, a, b)
    R = np.quantile(d_all, 0.2) * (0.5 + rng.rand(n))
    R[:3] = -np.inf  # anchors without targets
    R[a[10]] = d_all[10]  # a pair exactly on its radius is out
    root = np.empty(m, dtype=np.float32)
    nb.pairs_within(Z_ref, a, b, np.full(n, np.inf), root)
    np.testing.assert_allclose(root, np.sqrt(nb.pair_sqdist(Z_ref, a, b)), rtol=1e-6)
    keep = d_all < R[a]
    assert 0 < keep.sum() < m and not keep[10]
    got_a, got_b, got_d, n_computed = nb.near_pairs(Z, a, b, R, Z_ref, root, False)
    np.testing.assert_array_equal(got_a, a[keep])
    np.testing.assert_array_equal(got_b, b[keep])
    np.testing.assert_array_equal(got_d, d_all[keep])
    assert keep.sum() <= n_computed <= m
    if scale <= 1e-3:
        assert n_computed < m / 2  # the bound rules most pairs out
    # reset: every distance, the reference rewritten
    root2 = np.zeros(m, dtype=np.float32)
    out = nb.near_pairs(Z, a, b, R, Z_ref, root2, True)
    assert out[3] == m
    np.testing.assert_array_equal(out[2], d_all[keep])
    np.testing.assert_array_equal(root2, np.sqrt(d_all).astype(np.float32))
    # the numpy version keeps every pair (its triplet kernel sums over all)
    root3 = np.zeros(m, dtype=np.float32)
    np_a, np_b, np_d, np_n = npk.near_pairs(Z, a, b, R, Z_ref, root3, True)
    assert np_n == m and np.array_equal(np_a, a) and np.array_equal(np_b, b)
    np.testing.assert_allclose(np_d, d_all, rtol=1e-12)
    np.testing.assert_allclose(root3, root2, rtol=1e-6)


def test_objective_with_bound_equals_all_pairs_bit_for_bit():
    """Along a path of maps, near and far from the search's, the objective
    (which skips pairs by the bound) equals the triplet kernels on every
    stored pair, bit for bit, and the reference renews itself."""
    from conftest import numba_paths

    from metric_estimators._kernels import lmnn as nb

    X, y = make_classification(n_samples=400, n_features=8, n_informative=6,
                               n_redundant=0, n_classes=4, random_state=0)
    rng = np.random.RandomState(1)
    with numba_paths():
        obj, targets = make_objective(X, y, 3, 0.5, False)
        assert obj.kernels is _backend.NUMBA
        L0 = np.eye(8)
        searched(obj, L0.ravel())  # the first search
        imps = obj.impostors
        assert imps.ref_root is not None and not imps.ref_stale
        for step in (0.0, 1e-4, 1e-2, 0.1, 0.3, 0.01, 1.0, 0.0):
            L = L0 + step * rng.randn(8, 8)
            loss, grad = obj(L.ravel())
            Z = X @ L.T
            td = nb.target_sqdist(Z, targets)
            d = nb.pair_sqdist(Z, imps.imp_i, imps.imp_l)
            push, w_t, w_i, n_active = nb.triplet_loss_weights(
                td, targets, imps.imp_i, d, 0.5, False)
            valid = targets >= 0
            want = 0.5 * td[valid].sum() + push
            w_t += 0.5 * valid
            LX = nb.laplacian_product(X, targets, w_t, imps.imp_i, imps.imp_l, w_i)
            assert loss == want and obj.n_active == n_active
            np.testing.assert_array_equal(grad, (2.0 * (Z.T @ LX)).ravel())
            assert obj.n_active_pairs == np.count_nonzero(w_i)
            assert 0 < n_active
        assert imps.refresh(*obj.search_point(L0.ravel())) >= 0  # a new store, a new reference
        assert imps.ref_root.size == imps.imp_i.size and not imps.ref_stale



@pytest.mark.parametrize("max_impostors", ["auto", 3000])
def test_missed_count_from_held_pairs_equals_matching(monkeypatch, max_impostors):
    """A search after an evaluation at the same map counts the missed active
    impostors from the number of held ones; matching the pairs gives the
    same count, exact store or sampled."""
    import copy

    from metric_estimators.solvers import impostors as mod

    original = mod.ImpostorSet.refresh
    counts = []

    def checked(self, Z, R, n_held=None):
        if n_held is not None:
            want = original(copy.copy(self), Z, R, None)
            got = original(self, Z, R, n_held)
            assert got == want
            counts.append(got)
            return got
        return original(self, Z, R, n_held)

    monkeypatch.setattr(mod.ImpostorSet, "refresh", checked)
    X, y = make_classification(n_samples=700, n_features=10, n_informative=6,
                               n_redundant=0, n_classes=4, random_state=3)
    # the held count comes from the kernels' exact near pairs (numba path)
    with warnings.catch_warnings(), _backend.use("numba"):
        warnings.simplefilter("ignore")
        LMNN(max_impostors=max_impostors, random_state=0).fit(X, y)
    assert len(counts) >= 3 and max(counts) > 0 and min(counts) == 0


def _classes_with_a_singleton():
    """Four classes of 20 points and one of a single point, in 3 features plus
    a fourth that is non-zero only on the single point (5 classes, 4 features:
    scikit-learn's NCA rule would start from LDA)."""
    rng = np.random.RandomState(0)
    centers = np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0], [0, 0, 4], [4, 4, 4]], float)
    counts = [20, 20, 20, 20, 1]
    X = np.vstack([c + rng.randn(n, 3) for c, n in zip(centers, counts)])
    y = np.repeat(np.arange(5), counts)
    return np.hstack([X, (y == 4)[:, None].astype(float)]), y


def test_auto_init_without_lda_when_a_class_is_small():
    # the singleton's feature has no within-class scatter: an LDA start would
    # keep fewer rows than n_features; 'auto' takes the identity instead
    X, y = _classes_with_a_singleton()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = LMNN(random_state=0).fit(X, y)
        ident = LMNN(init="identity", random_state=0).fit(X, y)
        low = LMNN(n_components=2, random_state=0).fit(X, y)
        pca = LMNN(n_components=2, init="pca", random_state=0).fit(X, y)
    assert auto.components_.shape == (4, 4)
    np.testing.assert_array_equal(auto.components_, ident.components_)
    np.testing.assert_array_equal(low.components_, pca.components_)


def test_auto_init_is_lda_when_every_class_is_large():
    X, y = _classes_with_a_singleton()
    keep = y < 4  # four classes of 20 points, 3 features: LDA's shape condition holds
    X, y = X[keep, :3], y[keep]
    auto = _fit_quiet(LMNN(random_state=0), X, y)
    lda = _fit_quiet(LMNN(init="lda", random_state=0), X, y)
    np.testing.assert_array_equal(auto.components_, lda.components_)
