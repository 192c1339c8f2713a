"""Behaviours metric-learn 0.7.0's own tests expect, where a learner here
used to differ without an error or a warning.

Each test names the metric-learn test (or example) that exposed the
difference; the data and assertions are written here, on the behaviour that
test checks.  Where this package deliberately does something else, the test
pins our behaviour and docs/migration.rst says why.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    LFDA,
    MMC,
    NCA,
    RCA,
    SCML,
    SDML,
    ITML_Supervised,
    LSML_Supervised,
    MMC_Supervised,
    RCA_Supervised,
    SCML_Supervised,
    SDML_Supervised,
)
from metric_estimators._problems import lfda as lfda_problem


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# -- MMC: init='covariance' on a singular covariance ---------------------------

def _iris_with_dependent_feature():
    X, y = load_iris(return_X_y=True)
    # a fifth feature that is 2 * x0 + 3 * x1: the covariance is singular
    return np.c_[X, X[:, :2] @ [2.0, 3.0]], y


@pytest.mark.parametrize("diagonal", [False, True])
def test_mmc_supervised_covariance_init_singular_uses_pseudo_inverse(diagonal):
    """metric-learn's test_singular_covariance_init_of_non_strict_pd (MMC):
    a singular covariance with ``init='covariance'`` warns and starts from
    the pseudo-inverse, and the learned metric is finite."""
    X, y = _iris_with_dependent_feature()
    est = MMC_Supervised(init="covariance", diagonal=diagonal, random_state=0)
    with pytest.warns(UserWarning, match=r"rank 4 < 5 .*pseudo-inverse") as rec:
        warnings.simplefilter("ignore", category=Warning)  # others: not tested
        warnings.simplefilter("always", UserWarning)
        est.fit(X, y)
    assert sum("pseudo-inverse" in str(w.message) for w in rec) == 1
    assert np.all(np.isfinite(est.components_))
    assert est.components_.shape == (5, 5)


def test_mmc_covariance_init_pseudo_inverse_is_the_start():
    """The start is the Moore-Penrose inverse of the covariance: on pairs the
    convex MMC problem ends at the same optimum as from the identity."""
    X, y = _iris_with_dependent_feature()
    rng = np.random.RandomState(0)
    i, j = rng.randint(0, len(X), (2, 200))
    pairs = np.stack([X[i], X[j]], axis=1)
    labels = np.where(y[i] == y[j], 1, -1)
    from metric_estimators._problems.logdet import covariance_pseudo_inverse

    P, rank = covariance_pseudo_inverse(np.unique(pairs.reshape(-1, 5), axis=0))
    C = np.cov(np.unique(pairs.reshape(-1, 5), axis=0), rowvar=False)
    np.testing.assert_allclose(P, np.linalg.pinv(C, hermitian=True),
                               rtol=1e-7, atol=1e-9 * np.abs(P).max())
    assert rank == 4
    with pytest.warns(UserWarning, match="pseudo-inverse"):
        a = MMC(init="covariance", solver="exact", tol=1e-6,
                max_iter=2000).fit(pairs, labels)
    b = _quiet(MMC(init="identity", solver="exact", tol=1e-6, max_iter=2000).fit,
               pairs, labels)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-4)


def test_mmc_covariance_init_regular_covariance_does_not_warn():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est = MMC_Supervised(init="covariance", random_state=0).fit(X, y)
    assert not any("pseudo-inverse" in str(w.message) for w in rec)
    assert np.all(np.isfinite(est.components_))


def test_mmc_covariance_init_without_variance_is_an_error():
    X = np.ones((10, 3))
    y = np.arange(10) % 2
    with pytest.raises(ValueError):
        _quiet(MMC_Supervised(init="covariance").fit, X, y)


# -- NCA: one class, single-sample classes ------------------------------------

def test_nca_one_class_returns_the_initialisation():
    """metric-learn's TestNCA.test_one_class: with one class the objective is
    constant, so the fit returns the initialisation (here with a warning)."""
    X, y = load_iris(return_X_y=True)
    X, y = X[y == 0], y[y == 0]
    nca = NCA(init="identity", n_components=X.shape[1])
    with pytest.warns(UserWarning, match="single class"):
        nca.fit(X, y)
    np.testing.assert_array_equal(nca.components_, np.eye(X.shape[1]))
    assert nca.n_iter_ == 0


def test_nca_singleton_classes():
    """metric-learn's TestNCA.test_singleton_class: a class of one point among
    others fits normally; when every class is a singleton the map is the
    initialisation (``transform(X) == X`` for ``init='identity'``)."""
    X, y = load_iris(return_X_y=True)
    y = y.copy()
    ones = np.flatnonzero(y == 1)
    y[ones[1:]] = 2  # class 1 keeps a single point
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        NCA(max_iter=30, random_state=0).fit(X, y)
    idx = [0, 50, 100]
    nca = NCA(init="identity", max_iter=30)
    with pytest.warns(UserWarning, match="single sample"):
        nca.fit(X[idx], [0, 1, 2])
    np.testing.assert_array_equal(nca.transform(X[idx]), X[idx])
    # 'auto' (LDA for 3 classes) cannot be computed here: a defined start
    auto = _quiet(NCA(max_iter=30).fit, X[idx], [0, 1, 2])
    np.testing.assert_array_equal(auto.components_, np.eye(4))


# -- SCML: validation and warnings --------------------------------------------

_TOY_TRIPLETS = np.array([[[0, 1], [2, 1], [0, 0]],
                          [[2, 1], [0, 1], [2, 0]],
                          [[0, 0], [2, 0], [0, 1]],
                          [[2, 0], [0, 0], [2, 1]]], dtype=float)


def test_scml_low_rank_result_reduces_the_dimension():
    """metric-learn's TestSCML.test_dimension_reduction_msg: with fewer
    non-zero basis weights than features, ``components_`` has one row per
    active basis element; the metric is unchanged.  metric-learn warns about
    it; we do not (its advice, a lower ``beta``, does not change the
    outcome: the migration page says so)."""
    basis = np.array([[1.0, 0.0], [0.0, 1.0]])
    # only the first direction separates: (a, b) differ in x1, (a, c) in x0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SCML(basis=basis, beta=1e-3, max_iter=2000, output_iter=500,
                   random_state=0).fit(_TOY_TRIPLETS)
    assert not any("reduces the dimension" in str(w.message) for w in caught)
    active = est.weights_ > 0
    assert active.sum() == 1
    assert est.components_.shape == (1, 2)
    M = (basis.T * est.weights_) @ basis
    np.testing.assert_allclose(est.get_mahalanobis_matrix(), M, atol=1e-12)
    assert est.transform(np.eye(2)).shape == (2, 1)


def test_scml_full_rank_result_stays_square():
    X, y = load_iris(return_X_y=True)
    est = _quiet(SCML_Supervised(max_iter=500, output_iter=100, random_state=0).fit,
                 X, y)
    assert est.components_.shape == (4, 4)


def test_scml_output_iter_larger_than_max_iter_is_an_error():
    """metric-learn's TestSCML.test_large_output_iter."""
    with pytest.raises(ValueError, match="output_iter=2 must be at most max_iter=1"):
        SCML(max_iter=1, output_iter=2).fit(_TOY_TRIPLETS)
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="output_iter=20 must be at most"):
        SCML_Supervised(max_iter=10, output_iter=20).fit(X, y)


def test_scml_more_features_than_triplets_is_an_error():
    """metric-learn raises for 'triplet_diffs' when there are more features
    than triplets (its _generate_bases_dist_diff, e.g. TestSCML's data of 60
    features); so does SCML here, saying what to do."""
    rng = np.random.RandomState(0)
    T = rng.randn(5, 3, 10)
    with pytest.raises(ValueError, match="5 triplets and 10 features"):
        SCML().fit(T)
    # a given basis does not need them
    _quiet(SCML(basis=np.eye(10), max_iter=10, output_iter=10).fit, T)


def test_scml_lda_basis_smaller_than_the_number_of_classes_warns():
    """metric-learn's TestSCML.test_small_n_basis_lda."""
    X = np.array([[0, 0], [1, 1], [2, 2], [3, 3]], dtype=float)
    y = np.array([0, 0, 1, 1])
    with pytest.warns(UserWarning, match=r"n_basis=1 is smaller than the "
                                         r"number of classes \(2\)"):
        SCML_Supervised(n_basis=1, max_iter=10, output_iter=10,
                        random_state=0).fit(X, y)


def test_scml_default_n_basis_is_stated(capsys):
    """metric-learn's TestSCML n_basis=None tests expect a message giving the
    default number of basis elements; here it is a line of the verbose
    output (no warning at the defaults), and ``basis_`` holds them."""
    X, y = load_iris(return_X_y=True)
    est = _quiet(SCML_Supervised(basis="triplet_diffs", max_iter=10,
                                 output_iter=10, verbose=1, random_state=0).fit,
                 X, y)
    out = capsys.readouterr().out
    assert "n_basis=None: up to 80 basis elements (20 per feature)" in out
    assert est.basis_.shape == (80, 4)
    _quiet(SCML_Supervised(n_basis=30, basis="triplet_diffs", max_iter=10,
                           output_iter=10, verbose=1, random_state=0).fit, X, y)
    assert "n_basis=None" not in capsys.readouterr().out


# -- SDML: the shift of S is announced ----------------------------------------

def test_sdml_shift_warns_and_names_the_balance_param_that_avoids_it():
    """metric-learn's SDML raises where S is not positive definite (its
    test_sdml_raises_warning_non_psd); here S is shifted, with a warning that
    names the largest balance_param for which S is positive definite, and
    that balance_param indeed needs no shift.  metric-learn's test uses its
    default 0.5; the default here, 'auto', needs no shift on the same data."""
    X, y = load_iris(return_X_y=True)
    with pytest.warns(UserWarning, match=r"shift_=.*balance_param below ([0-9.e-]+)") as rec:
        est = SDML_Supervised(balance_param=0.5, random_state=0).fit(X, y)
    assert est.shift_ > 0
    text = next(str(w.message) for w in rec if "shift_" in str(w.message))
    limit = float(text.split("balance_param below ")[1].split(" ")[0])
    below = SDML_Supervised(balance_param=0.9 * limit, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        below.fit(X, y)
    assert below.shift_ == 0.0
    above = SDML_Supervised(balance_param=1.1 * limit, random_state=0)
    with pytest.warns(UserWarning, match="shift_"):
        above.fit(X, y)
    assert above.shift_ > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        default = SDML_Supervised(random_state=0).fit(X, y)
    assert default.shift_ == 0.0 and default.balance_param_ < limit


def test_sdml_without_shift_does_not_warn():
    pairs = np.array([[[1.2, 7.5], [1.3, 1.5]], [[6.4, 2.6], [6.2, 9.7]],
                      [[1.3, 4.5], [3.2, 4.6]], [[6.2, 5.5], [5.4, 5.4]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = SDML(balance_param=0.01).fit(pairs, [1, 1, -1, -1])
    assert est.shift_ == 0.0


# -- RCA: directions without variance -----------------------------------------

def test_rca_constant_feature_is_dropped_without_warning():
    """metric-learn's RCA warns that the inner covariance is not invertible
    when a feature does not vary (test_rca's constant-feature case, and
    digits) and returns NaN.  Here that direction gets weight 0, silently:
    every point has the same coordinate there, so nothing is discarded; the
    other features get the map fitted without the constant one."""
    X, y = load_iris(return_X_y=True)
    Xc = np.c_[X, np.full(len(X), 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = RCA_Supervised(n_chunks=30, random_state=0).fit(Xc, y)
        ref = RCA_Supervised(n_chunks=30, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.components_[:, -1], 0.0, atol=1e-12)
    np.testing.assert_allclose(est.components_[:4, :4], ref.components_,
                               rtol=1e-9, atol=1e-10)


def test_rca_linearly_dependent_features_are_dropped_without_warning():
    """metric-learn's test_rank_deficient_returns_warning: a fifth feature
    that is a combination of two others.  The points do not vary along the
    null direction, so its weight 0 discards nothing: no warning, and the
    distances are those of RCA on the four independent features."""
    X, y = _iris_with_dependent_feature()
    chunks = np.arange(len(X)) // 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = RCA().fit(X, chunks)
        ref = RCA().fit(X[:, :4], chunks)
    np.testing.assert_allclose(est.transform(X) @ est.transform(X).T,
                               ref.transform(X[:, :4]) @ ref.transform(X[:, :4]).T,
                               rtol=1e-7, atol=1e-7)


def test_rca_discarded_variation_warns():
    """A feature that varies in X but is constant within every chunklet:
    RCA's weight there would be infinite, the pseudo-inverse discards that
    variation, and the warning says so (metric-learn: NaN)."""
    X, y = load_iris(return_X_y=True)
    chunks = np.arange(len(X)) // 5
    Xv = np.c_[X, chunks.astype(float)]  # constant in each chunklet only
    with pytest.warns(UserWarning, match=r"within-chunklet covariance is "
                                         r"singular: 1 direction"):
        est = RCA().fit(Xv, chunks)
    assert np.all(np.isfinite(est.components_))


# -- LFDA: the local scaling is Sugiyama's --------------------------------------

def test_lfda_local_scaling_is_the_kth_neighbour_of_each_point():
    """metric-learn's LFDA takes, as the local scale of point i, entry i of
    column k of the column-partitioned within-class distance matrix instead
    of the distance from i to its k-th neighbour (row k); on iris the two
    differ.  Here the scatter matrices are Sugiyama's (documented as a
    difference in docs/migration.rst)."""
    X, y = load_iris(return_X_y=True)
    k = 7
    for c in np.unique(y):
        Xc = X[y == c]
        D2 = ((Xc[:, None] - Xc[None]) ** 2).sum(-1)
        kth = np.sqrt(np.partition(D2, k, axis=0)[k, :])   # Sugiyama
        column = np.sqrt(np.partition(D2, k, axis=0)[:, k])
        assert not np.allclose(kth, column)
    from test_lfda import reference_scatter

    S_w, S_b = lfda_problem.local_scatter(X, y, k)
    R_w, R_b = reference_scatter(X, y, k)
    np.testing.assert_allclose(S_w, R_w, rtol=1e-10)
    np.testing.assert_allclose(S_b, R_b, rtol=1e-10)
    assert LFDA(k=k).fit(X, y).components_.shape == (4, 4)


def test_make_classification_scml_lda_basis_has_no_triplet_requirement():
    """TestSCML.test_big_n_features (60 features, lda basis) still fits."""
    X, y = make_classification(n_samples=100, n_classes=3, n_features=60,
                               n_informative=60, n_redundant=0, n_repeated=0,
                               random_state=42)
    X = StandardScaler().fit_transform(X)
    est = _quiet(SCML_Supervised(max_iter=500, output_iter=100,
                                 random_state=42).fit, X, y)
    assert np.all(np.isfinite(est.components_))


# -- the pairs face -------------------------------------------------------------

def _pairs_and_labels(seed=0, n=60):
    X, y = load_iris(return_X_y=True)
    rng = np.random.RandomState(seed)
    i, j = rng.randint(0, len(X), (2, n))
    keep = i != j
    return (np.stack([X[i[keep]], X[j[keep]]], axis=1),
            np.where(y[i[keep]] == y[j[keep]], 1, -1), X, y)


@pytest.mark.parametrize("learner", [
    lambda: MMC(random_state=0), lambda: SDML(balance_param=1e-4),
    lambda: NCA(max_iter=20, random_state=0)])
def test_score_pairs_returns_the_distance(learner):
    """metric-learn's test_score_pairs_* / test_deprecated_score_pairs_*:
    the deprecated ``score_pairs`` returns ``pair_distance`` (with a
    FutureWarning), so ranking pairs by it puts the closest first."""
    pairs, labels, X, y = _pairs_and_labels()
    est = learner()
    est = _quiet(est.fit, *((X, y) if isinstance(est, NCA) else (pairs, labels)))
    with pytest.warns(FutureWarning, match="score_pairs is deprecated.*pair_distance"):
        scores = est.score_pairs(pairs)
    np.testing.assert_array_equal(scores, est.pair_distance(pairs))
    np.testing.assert_array_equal(-scores, est.pair_score(pairs))
    # an independent distance: ||L (a - b)||
    L = est.components_
    ref = np.linalg.norm((pairs[:, 0] - pairs[:, 1]) @ L.T, axis=1)
    np.testing.assert_allclose(scores, ref, rtol=1e-12)


def test_get_metric_accepts_what_metric_learn_accepts():
    """metric-learn's test_get_metric_works_does_not_raise and
    test_get_metric_raises_error: 1-D vectors, lists, rows (1, d) and, for a
    one-feature model, numbers, [x] and [[x]] work; several points or the
    wrong number of features are a ValueError."""
    X, y = load_iris(return_X_y=True)
    est = _quiet(NCA(max_iter=10, random_state=0).fit, X, y)
    metric = est.get_metric()
    d01 = np.linalg.norm(est.components_ @ (X[0] - X[1]))
    for u, v in [(X[0], X[1]), (X[0].tolist(), X[1].tolist()),
                 (X[0][None], X[1][None]), (X[0][:, None], X[1]),
                 (X[0][None, None], X[1][None])]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert metric(u, v) == pytest.approx(d01, rel=1e-12)
    for u, v in [(X[0].tolist() + [5.2], X[1]), (X[0:4], X[1:5]),
                 (X[0].tolist() + [5.2], X[1].tolist() + [7.2])]:
        with pytest.raises(ValueError):
            metric(u, v)
    one = _quiet(NCA(max_iter=10).fit, X[:, :1], y)
    one_metric = one.get_metric()
    scale = abs(one.components_[0, 0])
    for u, v in [(5, 6.7), ([5], [6.7]), ([[5]], [[6.7]])]:
        assert one_metric(u, v) == pytest.approx(scale * 1.7, rel=1e-12)
    with pytest.raises(ValueError):
        one_metric([[5], [6]], [[6.7], [1.0]])
    # metric-learn's test sets a 1-D components_ on a fitted learner
    one.components_ = np.array([3.1])
    for u, v in [(5, 6.7), ([5], [6.7]), ([[5]], [[6.7]])]:
        assert one.get_metric()(u, v) == pytest.approx(3.1 * 1.7, rel=1e-12)


@pytest.mark.parametrize("make", [lambda: MMC(), lambda: SDML()])
def test_set_threshold_on_an_unfitted_pairs_learner_raises(make):
    """metric-learn's test_unset_threshold / set_threshold tests on
    unfitted learners: NotFittedError, and no ``threshold_`` is set."""
    from sklearn.exceptions import NotFittedError

    est = make()
    with pytest.raises(NotFittedError):
        est.set_threshold(0.5)
    assert not hasattr(est, "threshold_")
    pairs, labels, _, _ = _pairs_and_labels()
    est = _quiet(make().fit, pairs, labels)
    assert est.set_threshold(0.5).threshold_ == 0.5


def test_pairs_learners_are_not_transformers_but_transform_points():
    """metric-learn's test_fit_transform (pairs learners have no
    fit_transform) and its pipeline tests: a learner fitted on tuples maps
    points with ``transform`` but is not a TransformerMixin; the learners
    fitted on points are."""
    from sklearn.base import TransformerMixin
    from sklearn.pipeline import make_pipeline

    from metric_estimators import ITML, LSML

    pairs, labels, X, y = _pairs_and_labels()
    for cls in (ITML, MMC, SDML, SCML, LSML):
        assert not issubclass(cls, TransformerMixin), cls
        assert not hasattr(cls, "fit_transform"), cls
        assert not hasattr(cls, "set_output"), cls
    for cls in (ITML_Supervised, MMC_Supervised, SDML_Supervised,
                SCML_Supervised, LSML_Supervised, NCA, LFDA, RCA,
                RCA_Supervised):
        assert issubclass(cls, TransformerMixin), cls
    est = _quiet(MMC(random_state=0).fit, pairs, labels)
    np.testing.assert_allclose(est.transform(X), X @ est.components_.T)
    sup = MMC_Supervised(random_state=0)
    Z = _quiet(sup.fit_transform, X, y)
    np.testing.assert_allclose(Z, X @ sup.components_.T)
    pipe = _quiet(make_pipeline(MMC_Supervised(random_state=0),
                                KNeighborsClassifier(3)).fit, X, y)
    assert pipe.score(X, y) > 0.8


class _ReversedScores(MMC):
    """A pairs learner whose only change is its decision_function (scores in
    the order opposite to a good learner's), as metric-learn's
    MockBadPairsClassifier in test_calibrate_threshold_extreme."""

    def decision_function(self, pairs):
        return np.arange(np.shape(pairs)[0], dtype=float)


def test_predict_and_calibration_follow_an_overridden_decision_function():
    """metric-learn's test_calibrate_threshold_extreme: ``predict`` and
    ``calibrate_threshold`` go through ``decision_function``, so a subclass
    that overrides only that method is calibrated on its own scores."""
    pairs, _, _, _ = _pairs_and_labels()
    pairs = pairs[:7]
    est = _quiet(_ReversedScores(random_state=0).fit, pairs,
                 [1, -1, 1, -1, 1, -1, -1])
    # more dissimilar than similar, and the similar ones score lowest:
    # rejecting everything is the most accurate cut
    y = [1, 1, 1, -1, -1, -1, -1]
    est.calibrate_threshold(pairs, y, strategy="accuracy")
    np.testing.assert_array_equal(est.predict(pairs), -np.ones(7))
    est.calibrate_threshold(pairs, y, strategy="max_tnr", min_rate=0.0)
    np.testing.assert_array_equal(est.predict(pairs), -np.ones(7))
    y = [1, 1, 1, 1, -1, -1, -1]
    est.calibrate_threshold(pairs, y, strategy="accuracy")
    np.testing.assert_array_equal(est.predict(pairs), np.ones(7))
    est.calibrate_threshold(pairs, y, strategy="max_tpr", min_rate=0.0)
    np.testing.assert_array_equal(est.predict(pairs), np.ones(7))
    y = [1, -1, 1, -1, 1, -1]
    est.calibrate_threshold(pairs[:6], y, strategy="f_beta", beta=1.0)
    np.testing.assert_array_equal(est.predict(pairs[:6]), np.ones(6))
    # the cut is on -decision_function: a threshold between two scores
    est.set_threshold(-2.5)
    np.testing.assert_array_equal(est.predict(pairs),
                                  np.where(-np.arange(7.0) <= -2.5, 1, -1))


def test_predict_of_a_plain_learner_is_the_distance_rule():
    pairs, labels, _, _ = _pairs_and_labels()
    est = _quiet(MMC(random_state=0).fit, pairs, labels)
    d = est.pair_distance(pairs)
    t = np.median(d)
    est.set_threshold(t)
    np.testing.assert_array_equal(est.predict(pairs), np.where(d <= t, 1, -1))


# -- label -1 in the supervised learners -----------------------------------------

@pytest.mark.parametrize("make", [
    lambda: ITML_Supervised(max_iter=50, random_state=0),
    lambda: MMC_Supervised(random_state=0),
    lambda: SDML_Supervised(balance_param=1e-4, random_state=0),
    lambda: LSML_Supervised(max_iter=20, random_state=0),
    lambda: RCA_Supervised(n_chunks=20, random_state=0)])
def test_minus_one_label_is_a_class_with_a_warning(make):
    """metric-learn's supervised learners pass y to Constraints, where -1
    means 'unknown' (its test_constraints partial-label cases); here -1 is a
    class, and labels {-1, 0, 1, ...} (the partial-label pattern) warn."""
    X, y = load_iris(return_X_y=True)
    y = y.copy()
    y[::7] = -1
    with pytest.warns(UserWarning, match="-1 is a class like any other"):
        make().fit(X, y)
    # binary {-1, +1} labels are ordinary classes: no such warning
    yb = np.where(load_iris(return_X_y=True)[1] == 0, -1, 1)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        make().fit(X, yb)
    assert not any("-1 is a class" in str(w.message) for w in rec)


def test_scml_supervised_reads_minus_one_as_unknown():
    """SCML_Supervised draws its triplets with Constraints(y), as
    metric-learn's does: -1 is 'unknown', its points are in no triplet, and
    there is nothing to warn about."""
    X, y = load_iris(return_X_y=True)
    y = y.copy()
    y[::7] = -1
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est = SCML_Supervised(max_iter=100, output_iter=100,
                              random_state=0).fit(X, y)
    assert not any("-1 is a class" in str(w.message) for w in rec)
    assert not np.isin(est.triplets_, np.flatnonzero(y == -1)).any()
