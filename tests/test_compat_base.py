"""metric-learn compatibility of the shared face: base classes, exceptions,
preprocessors, get_metric and Constraints."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.linalg import LinAlgError
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.datasets import load_iris
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.validation import validate_data

from metric_estimators import (
    ITML,
    BaseMetricLearner,
    Constraints,
    ITML_Supervised,
    MahalanobisMixin,
)
from metric_estimators.constraints import wrap_pairs
from metric_estimators.exceptions import NonPSDError, PreprocessorError


# -- a user's own learner on our base classes ----------------------------------
class DiagonalScaler(MahalanobisMixin):
    """A user's learner: L = diag(1 / std), written only against the mixin."""

    def __init__(self, preprocessor=None):
        super().__init__(preprocessor=preprocessor)

    def fit(self, X, y=None):
        self._check_preprocessor()
        X = validate_data(self, self._points(X))
        self.components_ = np.diag(1.0 / X.std(axis=0))
        return self


def test_user_learner_on_the_mixin_is_a_full_estimator():
    X, y = load_iris(return_X_y=True)
    est = DiagonalScaler()
    assert isinstance(est, BaseEstimator) and isinstance(est, BaseMetricLearner)
    tags = est.__sklearn_tags__()  # used to fail: no BaseEstimator in the MRO
    # as metric-learn's, the mixin gives transform but is no TransformerMixin
    # (a learner of pairs is not a transformer); see the next test
    assert tags.transformer_tags is None
    assert not hasattr(est, "fit_transform")
    est.fit(X)
    np.testing.assert_allclose(est.transform(X), X / X.std(axis=0))
    assert clone(est).get_params() == {"preprocessor": None}
    # preprocessor_ is set by fit; index input works in transform and pairs
    est2 = DiagonalScaler(preprocessor=X).fit(np.arange(len(X)))
    np.testing.assert_allclose(est2.transform([3, 5]), est.transform(X[[3, 5]]))
    np.testing.assert_allclose(est2.pair_distance([[0, 1]]),
                               est.pair_distance(X[[[0, 1]]]))
    assert callable(est2.preprocessor_)
    pickle.loads(pickle.dumps(est2))  # the array preprocessor pickles


class DiagonalScalerTransformer(TransformerMixin, DiagonalScaler):
    """The same learner, fitted on points, declared a transformer."""


def test_user_learner_fitted_on_points_adds_transformer_mixin():
    X, _ = load_iris(return_X_y=True)
    est = DiagonalScalerTransformer()
    assert est.__sklearn_tags__().transformer_tags is not None
    np.testing.assert_allclose(est.fit_transform(X), X / X.std(axis=0))
    # set_output applies to the mixin's transform
    Z = DiagonalScalerTransformer().set_output(transform="pandas").fit(X).transform(X)
    assert list(Z.columns) == [f"diagonalscalertransformer{i}" for i in range(4)]
    np.testing.assert_allclose(Z.to_numpy(), X / X.std(axis=0))


def test_callable_preprocessor_takes_string_ids():
    X, y = load_iris(return_X_y=True)
    names = np.array([f"flower{i}" for i in range(len(X))])
    lookup = dict(zip(names, X))

    def by_name(ids):
        return np.array([lookup[i] for i in ids])

    rng = np.random.RandomState(0)
    i, j = rng.randint(0, len(X), (2, 60))
    keep = i != j
    i, j = i[keep], j[keep]
    labels = np.where(y[i] == y[j], 1, -1)
    a = ITML(random_state=0, preprocessor=by_name).fit(
        np.column_stack((names[i], names[j])), labels)
    b = ITML(random_state=0).fit(np.stack((X[i], X[j]), axis=1), labels)
    np.testing.assert_allclose(a.components_, b.components_)
    with pytest.raises(PreprocessorError, match="KeyError"):
        a.pair_distance(np.array([["flower1", "no such flower"]]))


def test_preprocessor_errors_are_clear():
    X = np.random.RandomState(0).randn(10, 3)
    est = DiagonalScaler(preprocessor=X).fit(np.arange(10))
    with pytest.raises(ValueError, match="out of range"):
        est.transform([0, 10])
    with pytest.raises(PreprocessorError, match="one row per index"):
        DiagonalScaler(preprocessor=lambda ids: X[:2]).fit(np.arange(5))
    assert issubclass(PreprocessorError, ValueError)


# -- exceptions ----------------------------------------------------------------
def test_non_psd_prior_raises_catchable_error():
    X, y = load_iris(return_X_y=True)
    pairs = X[[[0, 1], [0, 60], [50, 51], [1, 120]]]
    yy = np.array([1, -1, 1, -1])
    bad = -np.eye(4)
    with pytest.raises(NonPSDError, match="prior"):
        ITML(prior=bad).fit(pairs, yy)
    assert issubclass(NonPSDError, LinAlgError) and issubclass(NonPSDError, ValueError)


# -- get_metric --------------------------------------------------------------------
def test_get_metric_scalars_vectors_and_2d():
    X = np.linspace(0, 1, 20)[:, None]
    est = DiagonalScaler().fit(X)
    metric = est.get_metric()
    s = 1.0 / X.std()
    assert metric(0.5, 0.25) == pytest.approx(0.25 * s)
    assert metric(np.array([0.5]), [0.25], squared=True) == pytest.approx((0.25 * s) ** 2)
    with pytest.raises(ValueError, match=r"one vector.*shape \(2, 1\)"):
        metric(X[:2], X[2:4])
    # a vector with extra axes of length 1 is one point, as in metric-learn
    assert metric([[0.5]], [[0.25]]) == pytest.approx(0.25 * s)
    X3 = np.random.RandomState(0).randn(30, 3)
    m3 = DiagonalScaler().fit(X3).get_metric()
    with pytest.raises(ValueError, match="3 features"):
        m3([1.0, 2.0], [1.0, 2.0])
    knn = KNeighborsClassifier(3, metric=m3).fit(X3, np.arange(30) % 2)
    assert knn.predict(X3[:2]).shape == (2,)


def test_score_pairs_is_deprecated_alias_of_pair_distance():
    X = np.random.RandomState(0).randn(30, 3)
    est = DiagonalScaler().fit(X)
    pairs = np.stack((X[:5], X[5:10]), axis=1)
    with pytest.warns(FutureWarning, match="pair_distance"):
        s = est.score_pairs(pairs)
    np.testing.assert_array_equal(s, est.pair_distance(pairs))
    np.testing.assert_array_equal(s, -est.pair_score(pairs))


def test_calibrate_threshold_metric_learn_names_and_precision_beta():
    X, y = load_iris(return_X_y=True)
    rng = np.random.RandomState(1)
    i, j = rng.randint(0, len(X), (2, 80))
    keep = i != j
    pairs, labels = np.stack((X[i[keep]], X[j[keep]]), axis=1), np.where(
        y[i[keep]] == y[j[keep]], 1, -1)
    itml = ITML(random_state=0).fit(pairs, labels)
    with pytest.warns(FutureWarning, match="pairs_valid"):
        itml.calibrate_threshold(pairs_valid=pairs, y_valid=labels)
    t_old = itml.threshold_
    itml.calibrate_threshold(pairs, labels)
    assert itml.threshold_ == t_old
    with pytest.raises(TypeError, match="both"):
        itml.calibrate_threshold(pairs, labels, pairs_valid=pairs)
    # beta = 0: F_0 is the precision; the chosen cut has the best precision
    itml.calibrate_threshold(pairs, labels, strategy="f_beta", beta=0.0)
    d = itml.pair_distance(pairs)

    def precision(t):
        pred = d <= t
        return labels[pred].tolist().count(1) / pred.sum() if pred.any() else 0.0

    best = max(precision(t) for t in np.unique(d))
    assert precision(itml.threshold_) == pytest.approx(best)


# -- Constraints ------------------------------------------------------------------------
Y_PARTIAL = np.array([0, 0, 0, 1, 1, 1, -1, -1, 2, 2, 2, -1, 0, 1, 2, 2])


def test_unknown_labels_never_in_pairs():
    c = Constraints(Y_PARTIAL)
    a, b, cc, d = c.positive_negative_pairs(200, random_state=0)
    unknown = set(np.flatnonzero(Y_PARTIAL == -1))
    used = set(np.concatenate((a, b, cc, d)).tolist())
    assert not used & unknown
    assert np.all(Y_PARTIAL[a] == Y_PARTIAL[b])
    assert np.all(Y_PARTIAL[cc] != Y_PARTIAL[d])
    # every distinct same-class pair among the known points is drawn
    known = np.flatnonzero(Y_PARTIAL != -1)
    n_same = sum(np.sum(Y_PARTIAL[known] == k) * (np.sum(Y_PARTIAL[known] == k) - 1) // 2
                 for k in (0, 1, 2))
    assert len({(min(p), max(p)) for p in zip(a, b)}) == n_same == a.size


def test_chunks_are_disjoint_same_class_and_reproducible():
    c = Constraints(Y_PARTIAL)
    ch = c.chunks(n_chunks=5, chunk_size=2, random_state=0)
    assert ch.shape == Y_PARTIAL.shape
    assert np.all(ch[Y_PARTIAL == -1] == -1)
    for k in range(5):
        members = np.flatnonzero(ch == k)
        assert members.size == 2 and np.unique(Y_PARTIAL[members]).size == 1
    assert set(np.unique(ch)) == {-1, 0, 1, 2, 3, 4}
    np.testing.assert_array_equal(ch, c.chunks(5, 2, random_state=0))
    with pytest.raises(ValueError, match="at most 6"):
        c.chunks(n_chunks=7, chunk_size=2)
    with pytest.raises(ValueError, match="chunk_size"):
        c.chunks(n_chunks=2, chunk_size=0)


def test_knn_triplets_skip_unknown_and_warn_on_small_classes():
    X = np.random.RandomState(0).randn(Y_PARTIAL.size, 2)
    c = Constraints(Y_PARTIAL)
    with pytest.warns(UserWarning, match="k_genuine=5"):
        t = c.generate_knntriplets(X, k_genuine=5, k_impostor=2)
    assert not set(t.ravel().tolist()) & set(np.flatnonzero(Y_PARTIAL == -1))
    assert np.all(Y_PARTIAL[t[:, 0]] == Y_PARTIAL[t[:, 1]])
    assert np.all(Y_PARTIAL[t[:, 0]] != Y_PARTIAL[t[:, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.generate_knntriplets(X, k_genuine=2, k_impostor=3)
    with pytest.warns(UserWarning, match="k_impostor=20"):
        c.generate_knntriplets(X, k_genuine=1, k_impostor=20)


def test_wrap_pairs():
    X = np.arange(12.0).reshape(6, 2)
    pairs, y = wrap_pairs(X, (np.array([0, 1]), np.array([2, 3]),
                              np.array([4]), np.array([5])))
    np.testing.assert_array_equal(pairs, X[[[0, 2], [1, 3], [4, 5]]])
    np.testing.assert_array_equal(y, [1, 1, -1])
    with pytest.raises(ValueError, match="four index arrays"):
        wrap_pairs(X, (np.array([0]), np.array([1])))


def test_every_metric_learn_name_imports():
    """metric-learn 0.7.0's public learners and helpers all exist here."""
    import metric_estimators

    names = ["Covariance", "ITML", "ITML_Supervised", "LFDA", "LMNN", "LSML",
             "LSML_Supervised", "MLKR", "MMC", "MMC_Supervised", "NCA", "RCA",
             "RCA_Supervised", "SCML", "SCML_Supervised", "SDML",
             "SDML_Supervised", "Constraints"]
    for name in names:
        assert name in metric_estimators.__all__
        assert isinstance(getattr(metric_estimators, name), type)
    with pytest.raises(AttributeError):
        metric_estimators.no_such_name


# -- ITML / ITML_Supervised: metric-learn names and arguments ----------------------
def test_itml_supervised_num_constraints_and_preprocessor():
    X, y = load_iris(return_X_y=True)
    ref = ITML_Supervised(n_constraints=40, random_state=0).fit(X, y)
    with pytest.warns(FutureWarning, match="num_constraints is metric-learn's name"):
        old = ITML_Supervised(num_constraints=40, random_state=0).fit(X, y)
    np.testing.assert_array_equal(old.components_, ref.components_)
    with pytest.raises(ValueError, match="pass only n_constraints"):
        ITML_Supervised(n_constraints=5, num_constraints=40).fit(X, y)
    # the preprocessor is honoured: X as indices into it
    idx = ITML_Supervised(n_constraints=40, random_state=0,
                          preprocessor=X).fit(np.arange(len(X)), y)
    np.testing.assert_array_equal(idx.components_, ref.components_)
    np.testing.assert_allclose(idx.transform([4, 7]), ref.transform(X[[4, 7]]))


def test_itml_supervised_points_to_itml_for_pairs():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="use ITML"):
        ITML_Supervised().fit(X[[[0, 1], [2, 60]]], [1, -1])
    pairs = np.array([[0, 1], [2, 60], [3, 4], [5, 100]] * 5)
    with pytest.warns(UserWarning, match=r"ITML\(preprocessor=points\)"):
        ITML_Supervised(n_constraints=3, random_state=0).fit(
            pairs, np.array([1, -1, 1, -1] * 5))


def test_itml_bounds_any_two_numbers_and_calibration_checked_first():
    X, y = load_iris(return_X_y=True)
    pairs = X[[[0, 1], [2, 60], [3, 4], [5, 100]]]
    yy = np.array([1, -1, 1, -1])
    a = ITML(random_state=0).fit(pairs, yy, bounds=[[1.0, 10.0]])
    b = ITML(random_state=0).fit(pairs, yy, bounds=(1.0, 10.0))
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.bounds_, [1.0, 10.0])
    with pytest.raises(ValueError, match="two numbers"):
        ITML().fit(pairs, yy, bounds=[1.0, 5.0, 10.0])
    itml = ITML(random_state=0)
    for bad, match in (({"strategy": "f_beta", "bta": 1.0}, "unknown key"),
                       ({"strategy": "max_tpr"}, "min_rate"),
                       ({"strategy": "f_beta", "beta": -1.0}, "beta"),
                       ([("strategy", "accuracy")], "dict")):
        with pytest.raises((TypeError, ValueError), match=match):
            itml.fit(pairs, yy, calibration_params=bad)
        assert not hasattr(itml, "components_")  # refused before solving
    itml.fit(pairs, yy, calibration_params={"strategy": "f_beta", "beta": 0.0})
    assert hasattr(itml, "threshold_")


# -- LMNN: metric-learn names -----------------------------------------------------------
def test_lmnn_metric_learn_names_map_exactly():
    from metric_estimators import LMNN

    X, y = load_iris(return_X_y=True)
    ref = LMNN(n_neighbors=4, tol=1e-4, random_state=0).fit(X, y)
    with pytest.warns(FutureWarning) as rec:
        old = LMNN(k=4, convergence_tol=1e-4, random_state=0).fit(X, y)
    texts = " ".join(str(w.message) for w in rec)
    assert "k is metric-learn's name of n_neighbors" in texts
    assert "convergence_tol is metric-learn's name of tol" in texts
    assert all(w.filename == __file__ for w in rec)  # points at the caller
    np.testing.assert_array_equal(old.components_, ref.components_)
    with pytest.raises(ValueError, match="pass only n_neighbors"):
        LMNN(k=3, n_neighbors=4).fit(X, y)
    with pytest.raises(ValueError, match="pass parameters by keyword"):
        LMNN("auto", 3).fit(X, y)
    with pytest.raises(ValueError, match="cannot be honoured by solver='lbfgs'"):
        LMNN(min_iter=10).fit(X, y)
    with pytest.warns(UserWarning, match="learn_rate=1e-06 is used by solver='subgradient' and solver='sgd' only"):
        LMNN(learn_rate=1e-6, random_state=0).fit(X, y)


def test_lmnn_min_iter_honoured_by_subgradient():
    from metric_estimators import LMNN

    X, y = load_iris(return_X_y=True)
    plain = LMNN(solver="subgradient", tol=0.5, max_iter=60, random_state=0).fit(X, y)
    assert plain.n_iter_ < 20  # tol=0.5 stops at the first small decrease
    with pytest.warns(FutureWarning, match="min_iter"):
        held = LMNN(solver="subgradient", tol=0.5, max_iter=60, min_iter=20,
                    random_state=0).fit(X, y)
    assert held.n_iter_ >= 20


def test_lmnn_preprocessor_indices():
    from metric_estimators import LMNN

    X, y = load_iris(return_X_y=True)
    a = LMNN(preprocessor=X, random_state=0).fit(np.arange(len(X)), y)
    b = LMNN(random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_allclose(a.transform([3, 9]), b.transform(X[[3, 9]]))
    assert a.preprocessor_ is not None and b.preprocessor_ is None


# -- a preprocessor on every learner (through the registry) -------------------------------
from conftest import learner_params  # noqa: E402


@pytest.mark.parametrize("entry", learner_params("supervised", "pairs"))
def test_every_learner_takes_a_preprocessor(entry):
    """Indices through ``preprocessor=X`` fit exactly what the points fit, and
    ``preprocessor_`` is set (None without a preprocessor)."""
    X, y = entry.data()
    est = entry.make()
    assert "preprocessor" in est.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = entry.make().fit(X, y)
        if entry.kind == "pairs":
            pts = X.reshape(-1, X.shape[2])
            idx = np.arange(pts.shape[0]).reshape(-1, 2)
            by_idx = entry.make().set_params(preprocessor=pts).fit(idx, y)
        else:
            pts = X
            by_idx = entry.make().set_params(preprocessor=X).fit(np.arange(len(X)), y)
    assert ref.preprocessor_ is None and callable(by_idx.preprocessor_)
    np.testing.assert_array_equal(by_idx.components_, ref.components_)
    if entry.kind == "supervised":
        np.testing.assert_allclose(by_idx.transform([0, 2]), ref.transform(pts[[0, 2]]))


def test_other_metric_learn_former_names():
    X, y = load_iris(return_X_y=True)
    pairs = X[[[0, 1], [2, 60], [3, 4], [5, 100]]]
    yy = np.array([1, -1, 1, -1])
    with pytest.warns(FutureWarning, match="convergence_threshold") as rec:
        a = ITML(convergence_threshold=1e-2, random_state=0).fit(pairs, yy)
    assert rec[0].filename == __file__
    b = ITML(tol=1e-2, random_state=0).fit(pairs, yy)
    np.testing.assert_array_equal(a.components_, b.components_)
    c = Constraints(y)
    with pytest.warns(FutureWarning, match="num_constraints"):
        old = c.positive_negative_pairs(num_constraints=5, random_state=0)
    new = c.positive_negative_pairs(5, random_state=0)
    for u, v in zip(old, new):
        np.testing.assert_array_equal(u, v)
    with pytest.warns(FutureWarning, match="num_chunks"):
        old = c.chunks(num_chunks=4, random_state=0)
    np.testing.assert_array_equal(old, c.chunks(n_chunks=4, random_state=0))
    with pytest.raises(ValueError, match="pass only n_constraints"):
        c.positive_negative_pairs(5, num_constraints=5)
