"""metric-learn 0.7.0's documented examples, run with only the import changed.

Each test follows an example of metric-learn's user guide (supervised,
weakly supervised, preprocessor and constraints pages), with
``from metric_learn import X`` replaced by ``from metric_estimators import
X``.  Where metric-learn documents an outcome that holds for any correct
learner (a prediction, a sign, an equality between two calls), it is
asserted; numbers that depend on metric-learn's own algorithm (its exact
decision values) are not, and docs/migration.rst says why.  Every
learner of these examples is in ``metric_estimators``: none is skipped.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

# the pairs of the weakly supervised guide: similar when the first feature is
# close, dissimilar when only the second one is
GUIDE_PAIRS = [[[1.2, 7.5], [1.3, 1.5]],
               [[6.4, 2.6], [6.2, 9.7]],
               [[1.3, 4.5], [3.2, 4.6]],
               [[6.2, 5.5], [5.4, 5.4]]]
GUIDE_Y = [1, 1, -1, -1]




# -- supervised -------------------------------------------------------------------------
def test_supervised_lmnn_iris_pipeline():
    from metric_estimators import LMNN

    X, y = load_iris(return_X_y=True)
    # the guide's call; learn_rate belongs to metric-learn's gradient descent
    with pytest.warns(UserWarning, match="learn_rate"):
        lmnn = LMNN(n_neighbors=5, learn_rate=1e-6)
        lmnn.fit(X, y)
    scores = cross_val_score(make_pipeline(LMNN(n_neighbors=5),
                                           KNeighborsClassifier()), X, y)
    assert scores.mean() > 0.9


def test_supervised_lmnn_old_parameter_names():
    from metric_estimators import LMNN

    X, y = load_iris(return_X_y=True)
    with pytest.warns(FutureWarning, match="k is metric-learn's name"):
        old = LMNN(k=5, convergence_tol=1e-4).fit(X, y)
    new = LMNN(n_neighbors=5, tol=1e-4).fit(X, y)
    np.testing.assert_array_equal(old.components_, new.components_)


# -- weakly supervised: pairs ---------------------------------------------------------------
def test_itml_on_guide_pairs():
    from metric_estimators import ITML

    itml = ITML()
    itml.fit(GUIDE_PAIRS, GUIDE_Y)
    M = itml.get_mahalanobis_matrix()
    # "points where the first feature is close are closer to each other":
    # the learned metric weighs the first feature far more than the second
    assert M[0, 0] > 10 * M[1, 1]
    assert set(itml.predict(GUIDE_PAIRS)) <= {-1, 1}


def test_pairs_of_points_and_index_pairs_with_preprocessor():
    from metric_estimators import ITML

    tuples = np.array([[[-0.12, -1.21, -0.20], [+0.05, -0.19, -0.05]],
                       [[-2.16, +0.11, -0.02], [+1.58, +0.16, +0.93]],
                       [[+1.58, +0.16, +0.93], [+0.89, -0.34, +2.41]],
                       [[-0.12, -1.21, -0.20], [-2.16, +0.11, -0.02]]])
    y = np.array([-1, 1, 1, -1])
    X = np.array([[-0.12, -1.21, -0.20], [+0.05, -0.19, -0.05],
                  [-2.16, +0.11, -0.02], [+1.58, +0.16, +0.93],
                  [+0.89, -0.34, +2.41]])
    tuples_indices = np.array([[0, 1], [2, 3], [3, 4], [0, 2]])
    a = ITML(random_state=42).fit(tuples, y)
    b = ITML(preprocessor=X, random_state=42).fit(tuples_indices, y)
    np.testing.assert_allclose(a.components_, b.components_)
    X_new = np.array([[9.4, 4.1, 4.2], [2.1, 4.4, 2.3]])
    assert b.transform(X_new).shape == (2, 3)
    d = b.pair_distance([[[3.5, 3.6, 5.2], [5.6, 2.4, 6.7]],
                         [[1.2, 4.2, 7.7], [2.1, 6.4, 0.9]]])
    metric_fun = b.get_metric()
    assert metric_fun([3.5, 3.6, 5.2], [5.6, 2.4, 6.7]) == pytest.approx(d[0])
    np.testing.assert_allclose(
        b.pair_score([[[3.5, 3.6, 5.2], [5.6, 2.4, 6.7]]]), -d[:1])
    M = b.get_mahalanobis_matrix()
    np.testing.assert_allclose(M, M.T)


def test_prediction_threshold_calibration_and_scoring():
    from metric_estimators import ITML

    X, y = load_iris(return_X_y=True)
    rng = np.random.RandomState(42)
    pairs_indices = rng.randint(X.shape[0], size=(60, 2))
    pairs_indices = pairs_indices[pairs_indices[:, 0] != pairs_indices[:, 1]]
    y_pairs = np.where(y[pairs_indices[:, 0]] == y[pairs_indices[:, 1]], 1, -1)
    itml = ITML(preprocessor=X, random_state=0)
    itml.fit(pairs_indices, y_pairs)  # calibrates the threshold after fitting
    d = itml.pair_distance(pairs_indices)
    assert itml.threshold_ > 0  # a distance, as in metric-learn
    np.testing.assert_array_equal(itml.predict(pairs_indices),
                                  np.where(d <= itml.threshold_, 1, -1))
    itml.calibrate_threshold(pairs_indices, y_pairs)  # on a validation set
    itml.set_threshold(0.4)  # manual: pairs closer than 0.4 are similar
    np.testing.assert_array_equal(itml.predict(pairs_indices),
                                  np.where(d <= 0.4, 1, -1))
    np.testing.assert_allclose(itml.decision_function(pairs_indices), -d)
    assert 0.5 < itml.score(pairs_indices, y_pairs) <= 1.0  # ROC AUC
    # cross-validation directly on index pairs, default and accuracy scoring
    assert cross_val_score(ITML(preprocessor=X), pairs_indices, y_pairs).mean() > 0.7
    acc = cross_val_score(ITML(preprocessor=X), pairs_indices, y_pairs,
                          scoring="accuracy")
    assert np.all((acc >= 0) & (acc <= 1))


def test_score_pairs_deprecated():
    from metric_estimators import ITML

    itml = ITML().fit(GUIDE_PAIRS, GUIDE_Y)
    # metric-learn 0.7.0's deprecated score_pairs returns pair_distance
    with pytest.warns(FutureWarning, match="pair_distance"):
        s = itml.score_pairs(GUIDE_PAIRS)
    np.testing.assert_allclose(s, itml.pair_distance(GUIDE_PAIRS))


def test_mmc_examples():
    from metric_estimators import MMC

    pairs = np.array([[[1.2, 3.2], [2.3, 5.5]], [[4.5, 2.3], [2.1, 2.3]]])
    pairs_test = np.array([[[0.6, 1.6], [1.15, 2.75]], [[3.2, 1.1], [5.4, 6.1]],
                           [[7.7, 5.6], [1.23, 8.4]]])
    # the default solver (Xing et al.'s projected gradient path, as
    # metric-learn's) stops early and gives the documented predictions
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mmc = MMC(random_state=42).fit(pairs, np.array([1, -1]))
    pred = mmc.predict([[[0.6, 1.6], [1.15, 2.75]], [[3.2, 1.1], [5.4, 6.1]]])
    np.testing.assert_array_equal(pred, [1, -1])
    assert mmc.score(pairs_test, np.array([1., -1., -1.])) == 1.0  # as documented
    # one similar pair spans one of two dimensions: the exact problem is
    # unbounded along the other, which solver='exact' says
    with pytest.warns(UserWarning, match="unbounded"):
        mmc = MMC(solver="exact", random_state=42).fit(pairs, np.array([1, -1]))
    assert mmc.predict(pairs_test[:1])[0] == 1
    assert mmc.score(pairs_test, np.array([1., -1., -1.])) == 1.0


# -- constraints --------------------------------------------------------------------------------
def test_constraints_with_unknown_labels_chunks_and_knn_triplets():
    from metric_estimators import Constraints

    X, y = load_iris(return_X_y=True)
    partial = y.copy()
    partial[::3] = -1  # unknown
    c = Constraints(partial)
    a, b, cc, d = c.positive_negative_pairs(50, random_state=0)
    used = np.concatenate((a, b, cc, d))
    assert np.all(partial[used] != -1)
    chunks = c.chunks(n_chunks=20, chunk_size=3, random_state=0)
    assert np.all(chunks[partial == -1] == -1)
    assert np.bincount(chunks[chunks >= 0]).tolist() == [3] * 20
    triplets = c.generate_knntriplets(X, k_genuine=2, k_impostor=3)
    assert np.all(partial[triplets] != -1)


# -- get_metric --------------------------------------------------------------------------------------
def test_get_metric_on_scalars_and_vectors():
    from metric_estimators import LMNN

    X, y = load_iris(return_X_y=True)
    one = LMNN().fit(X[:, :1], y)
    metric = one.get_metric()
    assert metric(1.0, 2.5) == pytest.approx(one.pair_distance([[[1.0], [2.5]]])[0])
    full = LMNN().fit(X, y)
    metric = full.get_metric()
    assert metric(X[0], X[1]) == pytest.approx(full.pair_distance(X[[[0, 1]]])[0])
    with pytest.raises(ValueError):
        metric(X[:2], X[2:4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the metric works inside a k-NN
        KNeighborsClassifier(3, metric=metric).fit(X[:30], y[:30]).predict(X[:2])
