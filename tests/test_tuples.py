"""Triplets and quadruplets: the classifier faces, their validation, SCML and LSML.

* the mixins' decision / predict / score against direct computations;
* bad tuples and a ``y`` given to a tuple learner get clear errors;
* ``cross_val_score`` and ``GridSearchCV`` run directly on tuples;
* SCML's and LSML's objectives and gradients against plain-numpy
  references and finite differences;
* on planted structure (2 informative features among 6), the learned
  metrics satisfy more held-out triplets / quadruplets than the Euclidean one.
"""

import re
import warnings

import numpy as np
import pytest
from conftest import BY_NAME, learner_params, learners
from scipy import sparse
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from metric_estimators import LSML, SCML, LSML_Supervised, SCML_Supervised, _backend
from metric_estimators._problems.lsml import QuadrupletResidualProblem
from metric_estimators._problems.scml import TripletHingeProblem, unique_points
from metric_estimators._validation import validate_pairs, validate_tuples
from metric_estimators.solvers.stochastic import adagrad_rda

TUPLE_LEARNERS = learner_params("triplets", "quadruplets")


def _fit_quiet(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kwargs)


def _t(entry):
    return 3 if entry.kind == "triplets" else 4


# -- planted structure ------------------------------------------------------

def planted(n=120, seed=0):
    """6 features, only the first 2 matter (the rest is larger noise)."""
    rng = np.random.RandomState(seed)
    X = np.c_[rng.randn(n, 2), 3.0 * rng.randn(n, 4)]
    return X


def _true_d(X, i, j):
    return np.linalg.norm(X[i, :2] - X[j, :2], axis=-1)


def planted_triplets(X, n, seed):
    rng = np.random.RandomState(seed)
    a, b, c = rng.randint(0, len(X), (3, n))
    keep = (a != b) & (a != c) & (b != c)
    a, b, c = a[keep], b[keep], c[keep]
    closer = _true_d(X, a, b) < _true_d(X, a, c)
    return np.where(closer[:, None], np.c_[a, b, c], np.c_[a, c, b])


def planted_quadruplets(X, n, seed):
    rng = np.random.RandomState(seed)
    q = rng.randint(0, len(X), (n, 4))
    q = q[(q[:, 0] != q[:, 1]) & (q[:, 2] != q[:, 3])]
    closer = _true_d(X, q[:, 0], q[:, 1]) < _true_d(X, q[:, 2], q[:, 3])
    return np.where(closer[:, None], q, q[:, [2, 3, 0, 1]])


def _euclidean_accuracy(X, tuples):
    near = np.linalg.norm(X[tuples[:, 0]] - X[tuples[:, 1]], axis=1)
    far = np.linalg.norm(X[tuples[:, -2]] - X[tuples[:, -1]], axis=1)
    return float(np.mean(far - near > 0))


def test_scml_beats_euclidean_on_held_out_triplets():
    X = planted()
    train, test = planted_triplets(X, 1500, 1), planted_triplets(X, 1500, 2)
    scml = SCML(preprocessor=X, random_state=0).fit(train)
    base = _euclidean_accuracy(X, test)
    acc = scml.score(test)
    assert acc > base + 0.1, (acc, base)
    # the metric puts its weight on the informative features
    M = scml.get_mahalanobis_matrix()
    assert np.trace(M[:2, :2]) > 5 * np.trace(M[2:, 2:])


def test_lsml_beats_euclidean_on_held_out_quadruplets():
    X = planted()
    train, test = planted_quadruplets(X, 1500, 1), planted_quadruplets(X, 1500, 2)
    lsml = LSML(preprocessor=X).fit(train)
    base = _euclidean_accuracy(X, test)
    acc = lsml.score(test)
    # the LogDet prior (weight 1 against residual weights summing to 1)
    # keeps M near the identity: a smaller, clear gain (about 4 standard
    # errors over 1500 held-out quadruplets)
    assert acc > base + 0.03, (acc, base)
    d = np.diag(lsml.get_mahalanobis_matrix())
    assert d[:2].min() > 2 * d[2:].max()


@pytest.mark.parametrize("Estimator", [SCML_Supervised, LSML_Supervised])
def test_supervised_beats_euclidean_on_held_out_triplets(Estimator):
    """Labels made from the 2 informative features only: the learned metric
    orders held-out label triplets (same class closer) better."""
    X = planted(240)
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0)
    Xtr, ytr, Xte, yte = X[:160], y[:160], X[160:], y[160:]
    est = _fit_quiet(Estimator(random_state=0), Xtr, ytr)
    rng = np.random.RandomState(3)
    a = rng.randint(0, 80, 2000)
    b = np.array([rng.choice(np.flatnonzero((yte == yte[i]) & (np.arange(80) != i))) for i in a])
    c = np.array([rng.choice(np.flatnonzero(yte != yte[i])) for i in a])
    T = np.c_[a, b, c]
    Z = est.transform(Xte)
    assert _euclidean_accuracy(Z, T) > _euclidean_accuracy(Xte, T) + 0.05


# -- the classifier faces -----------------------------------------------------

@pytest.fixture(scope="module")
def fitted_scml():
    (T,) = BY_NAME["SCML"].data()
    return _fit_quiet(BY_NAME["SCML"].make(), T), T


def test_triplet_decision_predict_score(fitted_scml):
    est, T = fitted_scml
    L = est.components_
    dab = np.linalg.norm((T[:, 0] - T[:, 1]) @ L.T, axis=1)
    dac = np.linalg.norm((T[:, 0] - T[:, 2]) @ L.T, axis=1)
    np.testing.assert_allclose(est.decision_function(T), dac - dab, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(est.predict(T), np.where(dac > dab, 1, -1))
    assert est.score(T) == pytest.approx(np.mean(dac > dab))
    # reversing each triplet flips the decision
    np.testing.assert_allclose(est.decision_function(T[:, [0, 2, 1]]),
                               -(dac - dab), rtol=1e-10, atol=1e-12)
    # a tie (b == c) is predicted -1 and counts as not satisfied
    tie = T[:1, [0, 1, 1]]
    assert est.decision_function(tie)[0] == 0.0
    assert est.predict(tie)[0] == -1
    assert est.score(tie) == 0.0
    w = np.r_[np.ones(len(T) - 1), 0.0]
    assert est.score(T, sample_weight=w) == pytest.approx(np.mean((dac > dab)[:-1]))


def test_quadruplet_decision_predict_score():
    entry = BY_NAME["LSML"]
    (Q,) = entry.data()
    est = _fit_quiet(entry.make(), Q)
    L = est.components_
    dab = np.linalg.norm((Q[:, 0] - Q[:, 1]) @ L.T, axis=1)
    dcd = np.linalg.norm((Q[:, 2] - Q[:, 3]) @ L.T, axis=1)
    np.testing.assert_allclose(est.decision_function(Q), dcd - dab, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(est.predict(Q), np.where(dcd > dab, 1, -1))
    assert est.score(Q) == pytest.approx(np.mean(dcd > dab))
    assert est.predict(Q[:1, [0, 1, 0, 1]])[0] == -1  # tie


@pytest.mark.parametrize("entry", TUPLE_LEARNERS)
def test_index_tuples_with_a_preprocessor(entry):
    """Index tuples into an array preprocessor give exactly the fit and the
    decisions of the tuples of points; so does a callable preprocessor."""
    (P,) = entry.data()
    t = _t(entry)
    X, inverse = np.unique(P.reshape(-1, P.shape[2]), axis=0, return_inverse=True)
    idx = inverse.reshape(-1, t)
    a = _fit_quiet(entry.make(), P)
    b = _fit_quiet(entry.make(preprocessor=X), idx)
    c = _fit_quiet(entry.make(preprocessor=lambda i: X[i]), idx)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.components_, c.components_)
    np.testing.assert_array_equal(b.decision_function(idx), a.decision_function(P))
    assert b.score(idx) == a.score(P)


@pytest.mark.parametrize("entry", TUPLE_LEARNERS)
def test_cross_val_score_and_grid_search_on_tuples(entry):
    (P,) = entry.data()
    est = entry.make()
    cv = KFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(est, P, cv=cv)
        manual = [clone(est).fit(P[tr]).score(P[te]) for tr, te in cv.split(P)]
    np.testing.assert_allclose(scores, manual)
    assert np.all((scores >= 0) & (scores <= 1))
    grid = ({"beta": [1e-5, 1e3]} if entry.kind == "triplets"
            else {"prior": ["identity", "covariance"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(est, grid, cv=cv).fit(P)
    means = gs.cv_results_["mean_test_score"]
    assert gs.best_index_ == int(np.argmax(means))
    np.testing.assert_array_equal(
        gs.best_estimator_.components_,
        _fit_quiet(clone(est).set_params(**gs.best_params_), P).components_)


def test_tuple_learners_are_classifiers_without_y():
    for Estimator in (SCML, LSML):
        tags = Estimator().__sklearn_tags__()
        assert tags.estimator_type == "classifier"
        assert not tags.target_tags.required


# -- bad input ----------------------------------------------------------------

PREP = np.random.RandomState(3).randn(20, 3)


def _bad_cases(t):
    word = {3: "triplet", 4: "quadruplet"}[t]
    name = word + "s"
    rng = np.random.RandomState(0)
    good = rng.randn(12, t, 3)
    idx = rng.randint(0, 20, (12, t))
    return {
        "wrong tuple size": ({}, rng.randn(12, t + 1, 3), ValueError,
                             rf"{name} must have shape \(n_{name}, {t}, n_features\)"),
        "pairs": ({}, rng.randn(12, 2, 3), ValueError, rf"{name} must have shape"),
        "index size": ({"preprocessor": PREP}, idx[:, :2], ValueError,
                       rf"{name} given as indices must have shape \(n_{name}, {t}\)"),
        "indices, no preprocessor": ({}, idx, ValueError,
                                     rf"look like index {name}.*preprocessor"),
        "out of range": ({"preprocessor": PREP}, np.r_[idx[:-1], [[20] * t]], ValueError,
                         rf"{name} holds indices out of range \[0, 20\)"),
        "negative index": ({"preprocessor": PREP}, np.r_[idx[:-1], [[-1] * t]], ValueError,
                           rf"{name} holds indices out of range"),
        "fractional index": ({"preprocessor": PREP}, idx + 0.5, TypeError,
                             rf"{name} given as indices must hold integers"),
        "NaN": ({}, np.where(good > 1, np.nan, good), ValueError, rf"{name} contains NaN"),
        "inf": ({}, np.where(good > 1, np.inf, good), ValueError, rf"{name} contains NaN or infinity"),
        "complex": ({}, good + 1j, TypeError, rf"{name} must be real"),
        "strings": ({}, good.astype(str), TypeError, rf"{name} must be numeric"),
        "empty": ({}, np.empty((0, t, 3)), ValueError, rf"{name} is empty: at least one {word}"),
        "0 features": ({}, np.empty((12, t, 0)), ValueError, rf"{name} has 0 features"),
        "sparse": ({}, sparse.csr_matrix(np.ones((12, 3 * t))), TypeError,
                   rf"{name} must be a dense array"),
        "preprocessor NaN": ({"preprocessor": np.where(PREP > 1, np.nan, PREP)}, idx,
                             ValueError, "preprocessor contains NaN"),
    }


@pytest.mark.parametrize("case", list(_bad_cases(3)))
@pytest.mark.parametrize("entry", TUPLE_LEARNERS)
def test_bad_tuples(entry, case):
    params, tuples, exc, match = _bad_cases(_t(entry))[case]
    with pytest.raises(exc, match=match):
        entry.make(**params).fit(tuples)


@pytest.mark.parametrize("entry", TUPLE_LEARNERS)
def test_y_given_to_a_tuple_learner_is_an_error(entry):
    (P,) = entry.data()
    word = entry.kind[:-1]
    msg = rf"{entry.estimator.__name__} learns from {word}s alone and takes no y"
    with pytest.raises(ValueError, match=msg):
        entry.make().fit(P, np.ones(len(P)))
    est = _fit_quiet(entry.make(), P)
    with pytest.raises(ValueError, match=msg):
        est.score(P, np.ones(len(P)))
    assert est.score(P, None) == est.score(P)


@pytest.mark.parametrize("entry", TUPLE_LEARNERS)
def test_bad_tuples_after_fit(entry):
    (P,) = entry.data()
    t = _t(entry)
    est = _fit_quiet(entry.make(), P)
    name = entry.kind
    with pytest.raises(ValueError, match=rf"{name} have 4 features, but the estimator was fitted with 5"):
        est.predict(np.ones((2, t, 4)))
    with pytest.raises(ValueError, match=rf"{name} must have shape"):
        est.decision_function(np.ones((2, t - 1, 5)))
    with pytest.raises(ValueError, match=rf"look like index {name}"):
        est.decision_function(np.zeros((2, t), int))


def test_validate_pairs_is_validate_tuples_with_two_points():
    rng = np.random.RandomState(0)
    P = rng.randn(5, 2, 3)
    np.testing.assert_array_equal(validate_pairs(P), validate_tuples(P, 2))
    for bad, match in [(np.ones((5, 3, 3)), r"pairs must have shape \(n_pairs, 2, n_features\)"),
                       (np.zeros((5, 2), int), "look like index pairs")]:
        with pytest.raises(ValueError, match=match):
            validate_pairs(bad)
        with pytest.raises(ValueError, match=match):
            validate_tuples(bad, 2)


def test_bad_parameters():
    (T,) = BY_NAME["SCML"].data()
    for param, value in [("beta", -1.0), ("gamma", 0.0), ("max_iter", 0),
                         ("output_iter", 0), ("batch_size", 0), ("n_basis", 0),
                         ("basis", "foo")]:
        with pytest.raises(ValueError, match=f"'{param}' parameter"):
            SCML(**{param: value}).fit(T)
    with pytest.raises(ValueError, match="basis='lda' needs class labels"):
        SCML(basis="lda").fit(T)
    with pytest.raises(ValueError, match=r"basis must have shape \(n_basis, 5\)"):
        SCML(basis=np.ones((3, 4))).fit(T)
    with pytest.raises(ValueError, match="basis has a zero row"):
        SCML(basis=np.zeros((3, 5))).fit(T)
    (Q,) = BY_NAME["LSML"].data()
    for w, match in [(np.ones(3), r"weights must have shape \(80,\)"),
                     (-np.ones(80), "weights must be non-negative"),
                     (np.zeros(80), "weights must not all be 0"),
                     (np.full(80, np.nan), "weights contains NaN")]:
        with pytest.raises(ValueError, match=match):
            LSML().fit(Q, weights=w)


# -- SCML: objective and gradient against numpy --------------------------------

def _scml_reference(X, T, B, w):
    """Plain numpy: mean hinge over triplets and its subgradient in w."""
    Pab = ((X[T[:, 0]] - X[T[:, 1]]) @ B.T) ** 2
    Pac = ((X[T[:, 0]] - X[T[:, 2]]) @ B.T) ** 2
    phi = Pab - Pac
    margin = 1 + phi @ w
    f = np.maximum(margin, 0).mean()
    g = (phi * (margin > 0)[:, None]).mean(axis=0)
    return f, g


@pytest.mark.parametrize("numpy_path", [True, False])
def test_scml_objective_and_gradient_match_numpy(numpy_path):
    rng = np.random.RandomState(0)
    X = rng.randn(30, 4)
    T = rng.randint(0, 30, (50, 3))
    B = rng.randn(7, 4)
    w = np.abs(rng.randn(7)) * 0.3
    prob = TripletHingeProblem(X, T, B, _backend.NUMPY if numpy_path else _backend.NUMBA)
    f_ref, g_ref = _scml_reference(X, T, B, w)
    f, _ = prob.objective(w)
    assert f == pytest.approx(f_ref, rel=1e-12)
    g = np.empty(7)
    prob.batch_gradient(np.arange(50), w, g)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
    # finite differences (the hinge is piecewise linear: away from kinks,
    # central differences are exact up to round-off)
    eps = 1e-6
    fd = np.array([(prob.objective(w + eps * e)[0] - prob.objective(w - eps * e)[0]) / (2 * eps)
                   for e in np.eye(7)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
    # the on-the-fly path (no precomputed projections) agrees
    prob.P = None
    assert prob.objective(w)[0] == pytest.approx(f_ref, rel=1e-12)
    g2 = np.empty(7)
    prob.batch_gradient(np.arange(50), w, g2)
    np.testing.assert_allclose(g2, g_ref, rtol=1e-10, atol=1e-12)


def test_scml_metric_is_the_weighted_basis():
    (T,) = BY_NAME["SCML"].data()
    est = _fit_quiet(BY_NAME["SCML"].make(), T)
    B, w = est.basis_, est.weights_
    assert np.all(w >= 0) and np.any(w > 0)
    np.testing.assert_allclose(np.linalg.norm(B, axis=1), 1.0)
    np.testing.assert_allclose(est.get_mahalanobis_matrix(), (B.T * w) @ B,
                               rtol=1e-8, atol=1e-10)
    # the reported objective is F(w) at the returned weights
    points, idx = unique_points(T)
    f, _ = _scml_reference(points, idx, B, w)
    best = est.loss_curve_.min()
    assert best == pytest.approx(f + est.beta * w.sum(), rel=1e-10)


def _lda_reference(X, y, r, shrinkage):
    """Plain LDA: the ``r`` leading generalised eigenvectors of ``(S_b, S_w + shrinkage)``."""
    from scipy.linalg import eigh

    classes = np.unique(y)
    n, d = X.shape
    mu = X.mean(axis=0)
    Sw = np.zeros((d, d))
    Sb = np.zeros((d, d))
    for c in classes:
        Xc = X[y == c]
        mc = Xc.mean(axis=0)
        Sw += (Xc - mc).T @ (Xc - mc) / n
        Sb += len(Xc) / n * np.outer(mc - mu, mc - mu)
    Sw = (1 - shrinkage) * Sw + shrinkage * np.trace(Sw) / d * np.eye(d)
    lam, V = eigh(Sb, Sw)
    return lam[::-1][:r], V[:, ::-1][:, :r].T, Sb, Sw


@pytest.mark.parametrize("n, d, n_classes", [(60, 4, 3), (20, 12, 4), (200, 30, 2),
                                             (120, 8, 10)])
def test_scml_lda_directions_are_the_generalised_eigenvectors(n, d, n_classes):
    """basis='lda''s directions (Cholesky + SVD) are those of the dense
    generalised eigenproblem, largest first, also with fewer points than
    features (the shrinkage makes S_w definite)."""
    from metric_estimators._problems.scml import LDA_SHRINKAGE, _lda_directions

    rng = np.random.RandomState(n + d)
    y = rng.randint(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    X = rng.randn(n, d) + 0.7 * rng.randn(n_classes, d)[y]
    r = min(n_classes - 1, d)
    V = _lda_directions(X, y, r)
    lam, V_ref, Sb, Sw = _lda_reference(X, y, r, LDA_SHRINKAGE)
    assert V.shape == (r, d)
    U = V / np.linalg.norm(V, axis=1)[:, None]
    U_ref = V_ref / np.linalg.norm(V_ref, axis=1)[:, None]
    np.testing.assert_allclose(np.abs(np.sum(U * U_ref, axis=1)), 1.0, atol=1e-9)
    # each row solves S_b v = lam S_w v with the reference's eigenvalue
    for v, lk in zip(V, lam):
        np.testing.assert_allclose(Sb @ v, lk * (Sw @ v), atol=1e-10 * np.abs(Sw @ v).max())


def test_adagrad_rda_l1_gives_exact_zeros_and_nonnegativity():
    """On a separable linear problem the driver lowers the objective, keeps
    w >= 0, and a large l1 zeroes every weight exactly."""
    rng = np.random.RandomState(0)
    A = rng.randn(200, 5)

    def objective(w):
        h = np.maximum(1 + A @ w, 0)
        return h.mean(), int(np.count_nonzero(h))

    def grad(batch, w, out):
        m = 1 + A[batch] @ w > 0
        out[:] = (A[batch] * m[:, None]).mean(axis=0)
        return int(m.sum())

    res = adagrad_rda(grad, objective, 200, 5, step=0.1, l1=1e-4, max_iter=500,
                      batch_size=10, check_every=50, rng=np.random.RandomState(0),
                      kernels=_backend.NUMPY)
    assert np.all(res.w >= 0)
    assert min(res.objective_curve) < 1.0 - 1e-3
    big = adagrad_rda(grad, objective, 200, 5, step=0.1, l1=1e3, max_iter=50,
                      batch_size=10, check_every=10, rng=np.random.RandomState(0),
                      kernels=_backend.NUMBA)
    assert not np.any(big.w)


def _scripted_rda(curve, **kwargs):
    """adagrad_rda whose full objective at the k-th checkpoint is ``curve[k]``."""
    values = iter(curve)

    def objective(w):
        return next(values), 0

    def grad(batch, w, out):
        out[:] = 0.0
        return 0

    return adagrad_rda(grad, objective, 10, 2, step=0.1, l1=0.0,
                       batch_size=1, check_every=2, rng=np.random.RandomState(0),
                       kernels=_backend.NUMPY, **kwargs)


def test_adagrad_rda_stops_when_a_window_makes_little_of_the_whole_decrease():
    """The test compares the last window's decrease with the decrease since
    the start (F(0) = 1), and is applied from ``min_iter`` on: a 1.5 %
    relative change of a small objective (0.02 to 0.0197) is 0.03 % of the
    decrease and stops the run; a late drop that is a third of it does not."""
    stop = dict(tol=0.01, start_objective=1.0, max_iter=20)
    res = _scripted_rda([0.7, 0.55, 0.5, 0.499, 0.3], min_iter=4, **stop)
    # checkpoint 4: 0.15 of 0.45; 6: 0.05 of 0.5; 8: 0.001 of 0.501 -> stop
    assert (res.n_iter, res.converged, res.checkpoints) == (8, True, [2, 4, 6, 8])
    res = _scripted_rda([0.02, 0.0197, 0.0], min_iter=4, **stop)
    assert (res.n_iter, res.converged) == (4, True)
    # no progress by checkpoint 2 passes the test, but min_iter=4 runs on;
    # 4 is a large drop, 6 a small one
    res = _scripted_rda([1.0, 0.5, 0.4999, 0.2], min_iter=4, **stop)
    assert (res.n_iter, res.converged) == (6, True)
    # still dropping when max_iter ends the run
    res = _scripted_rda([0.9, 0.7, 0.5], min_iter=0, **{**stop, "max_iter": 6})
    assert (res.n_iter, res.converged) == (6, False)
    # no test: the whole run, reported converged
    res = _scripted_rda([0.9, 0.7, 0.5], max_iter=6)
    assert (res.n_iter, res.converged) == (6, True)
    with pytest.raises(ValueError, match="start_objective"):
        _scripted_rda([0.5], max_iter=2, tol=0.01)


def _slow_scml_data():
    """A small min-max-scaled set on which SCML is still descending at
    metric-learn's 10,000 iterations."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import minmax_scale

    X, y = make_classification(200, 5, n_informative=2, n_redundant=0,
                               flip_y=0.1, class_sep=0.5, random_state=0)
    return minmax_scale(X), y


def test_scml_default_runs_on_while_the_objective_still_falls():
    """Where metric-learn's fixed 10,000 iterations end with a warning, the
    default goes on to a checkpoint that meets ``tol`` and does not warn;
    the run is the prefix of a longer run (the batches are drawn before it
    starts), so it equals a run of exactly that length."""
    X, y = _slow_scml_data()
    with pytest.warns(ConvergenceWarning, match=r"more than tol=0.01"):
        SCML_Supervised(random_state=0, max_iter=10000).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = SCML_Supervised(random_state=0).fit(X, y)
    assert 10000 < est.n_iter_ < 40000
    curve = np.r_[1.0, est.loss_curve_]
    drops = curve[:-1] - curve[1:]
    whole = 1.0 - curve[1:]
    checkpoints = np.arange(500, est.n_iter_ + 1, 500)
    settled = drops <= 0.01 * whole
    # it stopped at the first checkpoint from 10,000 on that meets the test
    assert settled[-1] and not np.any(settled[(checkpoints >= 10000)][:-1])
    same = SCML_Supervised(random_state=0, max_iter=est.n_iter_, tol=None).fit(X, y)
    np.testing.assert_array_equal(same.components_, est.components_)


def test_scml_default_is_metric_learns_run_where_that_settles():
    """On data where 10,000 iterations meet the test, the default fit is
    the fixed-length run bit for bit; min_iter above max_iter means max_iter."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = SCML_Supervised(random_state=0).fit(X, y)
    fixed = SCML_Supervised(random_state=0, max_iter=10000).fit(X, y)
    assert est.n_iter_ == fixed.n_iter_ == 10000
    np.testing.assert_array_equal(est.components_, fixed.components_)
    short = _fit_quiet(SCML_Supervised(random_state=0, max_iter=1000), X, y)
    assert short.n_iter_ == 1000


def test_scml_warns_while_still_decreasing_and_on_zero_metric():
    (T,) = BY_NAME["SCML"].data()
    with pytest.warns(ConvergenceWarning, match=r"\[SCML\] did not converge within max_iter=5"):
        SCML(max_iter=5, output_iter=5, random_state=0).fit(T)
    with pytest.warns(UserWarning, match="SCML learned the zero metric"):
        est = SCML(beta=1e3, max_iter=20, output_iter=10, random_state=0).fit(T)
    assert not np.any(est.components_)


def test_scml_verbose_table(capsys):
    (T,) = BY_NAME["SCML"].data()
    est = _fit_quiet(SCML(max_iter=300, output_iter=100, verbose=2, random_state=0), T)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[SCML]")
    assert any("Iteration" in ln and "Objective" in ln for ln in lines)
    rows = [ln for ln in lines if re.match(r"\[SCML\]\s+\d+\s+\d\.\d+e[+-]", ln)]
    assert len(rows) == len(est.loss_curve_) == 3


# -- LSML: objective and gradient against numpy ---------------------------------

def _lsml_reference(V, U, w, M0, M):
    dab = np.sqrt(np.einsum("ij,jk,ik->i", V, M, V))
    dcd = np.sqrt(np.einsum("ij,jk,ik->i", U, M, U))
    r = np.maximum(dab - dcd, 0)
    f = np.sum(w * r ** 2) + np.trace(M @ np.linalg.inv(M0)) - np.linalg.slogdet(M)[1]
    G = np.zeros_like(M)
    for q in np.flatnonzero(r > 0):
        G += w[q] * r[q] * (np.outer(V[q], V[q]) / dab[q] - np.outer(U[q], U[q]) / dcd[q])
    G += np.linalg.inv(M0) - np.linalg.inv(M)
    return f, G


@pytest.mark.parametrize("path", ["numba", "numpy"])
def test_lsml_objective_and_gradient_match_numpy(path):
    """Both implementations (numba kernels, vectorised numpy) against the reference."""
    rng = np.random.RandomState(0)
    V, U = rng.randn(40, 4), rng.randn(40, 4)
    w = rng.rand(40)
    w /= w.sum()
    A = rng.randn(4, 4)
    M0 = A @ A.T + np.eye(4)
    B = rng.randn(4, 4)
    M = B @ B.T + 0.5 * np.eye(4)
    prob = QuadrupletResidualProblem(V, U, w, M0, getattr(_backend, path.upper()))
    f_ref, G_ref = _lsml_reference(V, U, w, M0, M)
    assert prob.value(M) == pytest.approx(f_ref, rel=1e-10)
    G = prob.gradient(M)
    np.testing.assert_allclose(G, G_ref, rtol=1e-9, atol=1e-11)
    assert 0 < prob.n_active < 40
    # finite differences along symmetric directions
    eps = 1e-6
    for _ in range(5):
        S = rng.randn(4, 4)
        S = (S + S.T) / 2
        fd = (prob.value(M + eps * S) - prob.value(M - eps * S)) / (2 * eps)
        assert fd == pytest.approx(np.sum(G * S), rel=1e-5, abs=1e-8)
    # outside the positive definite cone the objective is +inf
    assert prob.value(-np.eye(4)) == np.inf


def test_lsml_paths_agree_on_a_degenerate_quadruplet():
    rng = np.random.RandomState(1)
    V, U = rng.randn(30, 3), rng.randn(30, 3)
    V[0] = 0.0                     # a zero distance: coefficient 0 on both paths
    w = np.full(30, 1 / 30)
    B = rng.randn(3, 3)
    M = B @ B.T + 0.5 * np.eye(3)
    prob = QuadrupletResidualProblem(V, U, w, np.eye(3), _backend.NUMPY)
    f_np, G_np = prob.value(M), prob.gradient(M)
    prob = QuadrupletResidualProblem(V, U, w, np.eye(3), _backend.NUMBA)
    f_nb, G_nb = prob.value(M), prob.gradient(M)
    assert f_np == pytest.approx(f_nb, rel=1e-12)
    np.testing.assert_allclose(G_np, G_nb, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(G_np, G_np.T)
    f_ref, G_ref = _lsml_reference(V, U, w, np.eye(3), M)
    np.testing.assert_allclose(G_np, G_ref, rtol=1e-9, atol=1e-11)


def test_lsml_decreases_the_objective_and_keeps_m_pd():
    (Q,) = BY_NAME["LSML"].data()
    est = _fit_quiet(LSML(tol=1e-8, max_iter=200), Q)
    curve = est.loss_curve_
    assert np.all(np.diff(curve) <= 1e-12)
    assert np.linalg.eigvalsh(est.get_mahalanobis_matrix()).min() > 0
    assert est.score(Q) >= _fit_quiet(LSML(max_iter=1), Q).score(Q) - 0.05


def test_lsml_supervised_draws_quadruplets_from_labels(iris):
    X, y = iris
    est = _fit_quiet(LSML_Supervised(n_constraints=50, random_state=0), X, y)
    q = est.quadruplets_
    assert q.shape == (50, 4)
    assert np.all(y[q[:, 0]] == y[q[:, 1]]) and np.all(y[q[:, 2]] != y[q[:, 3]])
    again = _fit_quiet(LSML_Supervised(n_constraints=50, random_state=0), X, y)
    np.testing.assert_array_equal(again.quadruplets_, q)


def test_scml_supervised_uses_knn_triplets(iris):
    X, y = iris
    est = _fit_quiet(SCML_Supervised(max_iter=200, output_iter=100, random_state=0), X, y)
    T = est.triplets_
    assert T.shape == (150 * 3 * 10, 3)
    assert np.all(y[T[:, 0]] == y[T[:, 1]]) and np.all(y[T[:, 0]] != y[T[:, 2]])


def test_registry_covers_the_tuple_kinds():
    assert {e.name for e in learners("triplets")} == {"SCML"}
    assert {e.name for e in learners("quadruplets")} == {"LSML"}


def test_parallel_and_serial_hinges_are_bit_identical():
    from metric_estimators._kernels.scml import triplet_hinges, triplet_hinges_parallel

    rng = np.random.RandomState(0)
    P = rng.randn(50, 9)
    T = rng.randint(0, 50, (400, 3))
    w = np.abs(rng.randn(9))
    assert triplet_hinges(P, T, w).tobytes() == triplet_hinges_parallel(P, T, w).tobytes()


def test_unique_points_maps_exactly():
    rng = np.random.RandomState(0)
    X = rng.randn(15, 4)
    X[3] = -0.0 * X[3]  # signed zeros
    X[4] = 0.0 * X[4]
    T = rng.randint(0, 15, (60, 3))
    points, idx = unique_points(X[T])
    np.testing.assert_array_equal(points[idx], X[T] + 0.0)
    assert points.shape[0] == np.unique(X[np.unique(T)] + 0.0, axis=0).shape[0]
