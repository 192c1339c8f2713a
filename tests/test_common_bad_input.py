"""What every public estimator does with bad input.

Every case either raises a ``ValueError`` / ``TypeError`` whose message names
the offending argument (checked with ``match=``), or has a documented result
that is checked to be correct (e.g. data of scale 1e150).
"""

import inspect
import warnings

import numpy as np
import pytest
from conftest import BY_NAME, POINT_KINDS, learners, symmetric_dissimilarity
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning

from metric_estimators import (
    ITML,
    LMNN,
    LODML,
    OMDML,
    CorrelationClustering,
    MetricNearness,
)
from metric_estimators.ranking import make_ordinal

# every learner fitted on (X, y), from the registry (tests/conftest.py):
# name -> factory(**overrides)
XY_LEARNERS = {entry.name: entry.make for entry in learners(*POINT_KINDS)}
# fitted on points and class labels
XY = [e.name for e in learners("supervised")]
# fitted on points (with labels, chunk indices or nothing): the X-side checks
X_ANY = list(XY_LEARNERS)
WITH_TOL = [n for n in XY if BY_NAME[n].has_param("tol")]
WITH_N_COMPONENTS = [e.name for e in learners("supervised")
                     if e.has_param("n_components")]
WITH_PRIOR = [e.name for e in learners("supervised") if e.has_param("prior")]
# learners whose fit takes bounds on the distances (ITML's family)
WITH_BOUNDS = [e.name for e in learners("supervised")
               if "bounds" in inspect.signature(e.estimator.fit).parameters]
# learners fitted on labelled pairs
PAIRS = [e.name for e in learners("pairs")]
PAIRS_WITH_PRIOR = [e.name for e in learners("pairs") if e.has_param("prior")]
# supervised learners whose fit takes bounds (ITML's)
WITH_BOUNDS = [e.name for e in learners("supervised")
               if "bounds" in inspect.signature(e.estimator.fit).parameters]


def _data(n=30, d=3, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d), np.arange(n) % 3


def _pairs(n=12, d=3, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, 2, d), np.array([1, -1] * (n // 2))


def _fit_quiet(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kwargs)


def _with(X, i, j, value):
    X = X.astype(value.__class__ if isinstance(value, complex) else X.dtype)
    X[i, j] = value
    return X


X0, Y0 = _data()

BAD_X = {
    "nan": (_with(X0, 3, 1, np.nan), ValueError, r"\bX\b.*NaN|NaN.*\bX\b"),
    "inf": (_with(X0, 3, 1, np.inf), ValueError, r"\bX\b.*infinity"),
    "empty": (np.empty((0, 3)), ValueError, r"X\b.*0 sample"),
    "no features": (np.empty((30, 0)), ValueError, r"X\b.*0 feature"),
    "1-D": (X0[:, 0], ValueError, r"X\b.*(2D|2-D)"),
    "3-D": (X0[:, :, None], ValueError, r"X\b.*dim 3"),
    "numeric strings": (X0.astype(str), TypeError, r"X must hold numbers"),
    "words": (np.full((30, 3), "a"), TypeError, r"X must hold numbers"),
    "complex": (X0 + 1j, ValueError, r"X\b.*[Cc]omplex"),
    "ragged list": ([[1.0, 2.0]] * 29 + [[1.0]], ValueError, r"X\b"),
}


@pytest.mark.parametrize("case", list(BAD_X))
@pytest.mark.parametrize("name", X_ANY)
def test_bad_X(name, case):
    X, exc, match = BAD_X[case]
    y = Y0[: len(X)] if len(X) else np.empty(0)
    with pytest.raises(exc, match=match):
        XY_LEARNERS[name]().fit(X, y)


@pytest.mark.parametrize("name", XY)
def test_bad_y(name):
    est = XY_LEARNERS[name]()
    with pytest.raises(ValueError, match=r"X and y have inconsistent numbers of samples"):
        est.fit(X0, Y0[:-1])
    with pytest.raises(ValueError, match=r"\by\b.*NaN"):
        est.fit(X0, np.where(np.arange(30) == 2, np.nan, Y0.astype(float)))
    with pytest.raises(ValueError, match=r"requires y|\by\b"):
        est.fit(X0, None)
    # a single class / level (a constant target for a regressor such as MLKR);
    # NCA returns its initialisation with a warning (tests/test_nca.py)
    if name.startswith("NCA"):
        with pytest.warns(UserWarning, match="single class"):
            est.fit(X0, np.zeros(30))
        return
    with pytest.raises(ValueError, match=r"\by\b.*(1 class|1 distinct value)"
                       r"|at least 2 classes in y"):
        est.fit(X0, np.zeros(30))


@pytest.mark.parametrize("name", X_ANY)
def test_one_sample(name):
    with pytest.raises(ValueError, match=r"1 sample|at least 2 (samples|classes)"):
        XY_LEARNERS[name]().fit(X0[:1], Y0[:1])


@pytest.mark.parametrize("name", XY)
def test_small_class_gives_a_valid_metric(name):
    """A class with fewer than n_neighbors + 1 points (here 2 points, and one
    singleton class) is handled: a finite metric, never an error or a NaN."""
    X, _ = _data(32)
    y = np.r_[np.zeros(29, int), [1, 1], [2]]
    est = XY_LEARNERS[name]()
    if "n_neighbors" in est.get_params():
        est.set_params(n_neighbors=3)
    _fit_quiet(est, X, y)
    L = est.components_
    assert np.all(np.isfinite(L))
    assert np.all(np.isfinite(est.transform(X)))


def test_lmnn_small_class_warns():
    X, _ = _data(32)
    y = np.r_[np.zeros(30, int), [1, 1]]
    with pytest.warns(UserWarning, match="n_neighbors=3"):
        LMNN(n_neighbors=3, max_iter=5).fit(X, y)


BAD_PARAMS = [
    ("max_iter", 0), ("max_iter", -1), ("max_iter", 2.5), ("tol", -1.0),
    ("tol", np.nan),
]


@pytest.mark.parametrize("name, param, value", [
    (name, param, value) for name in XY for param, value in BAD_PARAMS
    if BY_NAME[name].has_param(param)])  # closed forms have neither
def test_bad_iteration_parameters(name, param, value):
    est = XY_LEARNERS[name]().set_params(**{param: value})
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        est.fit(X0, Y0)


# learners whose default solver is a closed form: tol and max_iter only
# steer their optional iterative solver, and n_iter_ is 1
CLOSED_FORM_BY_DEFAULT = {"OMDML"}


@pytest.mark.parametrize("name", WITH_TOL)
def test_zero_tolerance_is_rejected_or_respects_max_iter(name):
    """tol=0 is either rejected (naming tol) or an iterative solver runs
    exactly max_iter iterations (a closed form reports one)."""
    est = XY_LEARNERS[name](tol=0.0)
    if "max_iter" in est.get_params():
        est.set_params(max_iter=3)
    if "output_iter" in est.get_params():  # SCML: checkpoints within the run
        est.set_params(output_iter=1)
    try:
        _fit_quiet(est, X0, Y0)
    except ValueError as exc:
        assert "'tol' parameter" in str(exc)
        return
    assert est.n_iter_ == (1 if name in CLOSED_FORM_BY_DEFAULT else 3)
    assert np.all(np.isfinite(est.components_))


@pytest.mark.parametrize("value", [0, -1, 4])
@pytest.mark.parametrize("name", WITH_N_COMPONENTS)
def test_bad_n_components(name, value):
    est = XY_LEARNERS[name](n_components=value)
    with pytest.raises(ValueError, match="n_components"):
        est.fit(X0, Y0)


def test_bad_n_neighbors():
    for est in (LMNN(n_neighbors=0), OMDML(n_neighbors=0), LODML(n_neighbors=1)):
        with pytest.raises(ValueError, match="'n_neighbors' parameter"):
            est.fit(X0, Y0)


@pytest.mark.parametrize("init, match", [
    (np.eye(2), "init has 2 columns"),
    (np.ones((4, 3)), "init has 4 rows"),
    (np.full((3, 3), np.nan), "init contains NaN"),
    (np.zeros((3, 3)), "init must have full row rank"),
    (np.array([[1.0, 0, 0], [2.0, 0, 0]]), "init must have full row rank"),
    (np.eye(3)[None], "init must be a 2-D array"),
    (np.full((3, 3), "a"), "init must be a real numeric array"),
    ([[1.0, 0, 0]], "'init' parameter"),
])
def test_lmnn_bad_init(init, match):
    with pytest.raises((ValueError, TypeError), match=match):
        LMNN(init=init).fit(X0, Y0)
    with pytest.raises(ValueError, match="init has 3 rows but n_components=2"):
        LMNN(init=np.eye(3), n_components=2).fit(X0, Y0)


BAD_PRIORS = [
    (np.eye(2), "prior must have shape"),
    (-np.eye(3), "prior must be positive definite"),
    (np.diag([1.0, 0.0, 1.0]), "prior must be positive definite"),
    (np.eye(3) + np.triu(np.ones((3, 3)), 1), "prior must be symmetric"),
    (np.ones(3), r"prior must have shape \(3, 3\), got \(3,\)"),
    (np.ones((3, 3, 1)), r"prior must have shape \(3, 3\), got \(3, 3, 1\)"),
    (np.full((3, 3), np.nan), "prior contains NaN"),
    (np.eye(3) + 0j, "prior must be a real"),
    ("foo", "'prior' parameter"),
]


@pytest.mark.parametrize("prior, match", BAD_PRIORS)
@pytest.mark.parametrize("name", WITH_PRIOR)
def test_bad_prior(name, prior, match):
    with pytest.raises((ValueError, TypeError), match=match):
        XY_LEARNERS[name](prior=prior).fit(X0, Y0)


@pytest.mark.parametrize("prior, match", BAD_PRIORS)
@pytest.mark.parametrize("name", PAIRS_WITH_PRIOR)
def test_pairs_learner_bad_prior(name, prior, match):
    pairs, y = _pairs()
    with pytest.raises((ValueError, TypeError), match=match):
        BY_NAME[name].make(prior=prior).fit(pairs, y)


@pytest.mark.parametrize("bounds, match", [
    ((1.0,), "bounds must be two numbers"),
    ((-1.0, 2.0), "bounds must be positive"),
    ((3.0, 2.0), "bounds must satisfy low <= high"),
    ((np.nan, 1.0), "bounds must be finite"),
    (("a", "b"), "bounds must be two numbers"),
])
@pytest.mark.parametrize("name", WITH_BOUNDS)
def test_bad_bounds(name, bounds, match):
    with pytest.raises(ValueError, match=match):
        XY_LEARNERS[name]().fit(X0, Y0, bounds=bounds)


# -- max_iter is respected ----------------------------------------------------

ITERATIVE = [e.name for e in learners() if e.iterative_params is not None]


def test_iterative_entries_cover_every_solver():
    """Guard: the max_iter test below covers every iterative solver (OMDML's
    closed form is reached through iterative_params={"solver": "lbfgs"})."""
    assert {"LMNN", "LMNN-subgradient", "ITML", "ITML_Supervised", "OMDML",
            "LODML", "ProjectAndForget", "MetricNearness",
            "CorrelationClustering"} <= set(ITERATIVE)


@pytest.mark.parametrize("name", ITERATIVE)
def test_max_iter_1_warns_and_stops(name):
    entry = BY_NAME[name]
    est = entry.make(**entry.iterative_params, max_iter=1, tol=1e-14)
    if "max_passes" in est.get_params():
        est.set_params(max_passes=1)
    with pytest.warns(ConvergenceWarning):
        est.fit(*entry.data())
    assert est.n_iter_ <= 1


# -- after fitting: transform, metric, pairs --------------------------------

@pytest.mark.parametrize("name", X_ANY)
def test_bad_input_after_fit(name):
    est = _fit_quiet(XY_LEARNERS[name](), X0, (X0[:, 0] > 0).astype(int) + np.arange(30) % 2)
    with pytest.raises(ValueError, match="X has 4 features"):
        est.transform(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"X\b.*NaN"):
        est.transform(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match=r"(?s)X\b.*Reshape your data"):
        est.transform(np.ones(3))
    with pytest.raises(TypeError, match="X must hold numbers"):
        est.transform(np.full((2, 3), "x"))
    with pytest.raises(ValueError, match="pairs have 4 features"):
        est.pair_distance(np.ones((2, 2, 4)))
    with pytest.raises(ValueError, match="pairs contains NaN"):
        est.pair_distance(np.full((2, 2, 3), np.nan))
    with pytest.raises(ValueError, match="metric expects one vector of 3 features"):
        est.get_metric()(np.ones(3), np.ones(4))


# -- pairs (ITML) -------------------------------------------------------------

PREP = np.random.RandomState(3).randn(20, 3)
IDX = np.random.RandomState(4).randint(0, 20, (12, 2))
YP = np.array([1, -1] * 6)

BAD_PAIRS = {
    "(n, 3, d)": ({}, np.ones((12, 3, 3)), YP, ValueError, r"pairs must have shape \(n_pairs, 2, n_features\)"),
    "(n, 2) no preprocessor": ({}, IDX, YP, ValueError, "pairs of shape .* look like index pairs"),
    "1-D": ({}, np.arange(12), YP, ValueError, "pairs must have shape"),
    "4-D": ({}, np.ones((12, 2, 3, 1)), YP, ValueError, "pairs must have shape"),
    "(n, 3) indices": ({"preprocessor": PREP}, np.zeros((12, 3), int), YP, ValueError, r"pairs given as indices must have shape \(n_pairs, 2\)"),
    "index out of range": ({"preprocessor": PREP}, np.r_[IDX[:-1], [[0, 20]]], YP, ValueError, "pairs holds indices out of range"),
    "negative index": ({"preprocessor": PREP}, np.r_[IDX[:-1], [[-1, 0]]], YP, ValueError, "pairs holds indices out of range"),
    "fractional index": ({"preprocessor": PREP}, IDX + 0.5, YP, TypeError, "pairs given as indices must hold integers"),
    "labels 0/1": ({}, _pairs()[0], (YP > 0).astype(int), ValueError, r"Pair labels y must be -1"),
    "labels +-2": ({}, _pairs()[0], 2 * YP, ValueError, r"Pair labels y must be -1"),
    "labels NaN": ({}, _pairs()[0], np.where(YP > 0, np.nan, -1.0), ValueError, r"Pair labels y must be -1"),
    "labels strings": ({}, _pairs()[0], np.array(["a"] * 12), TypeError, r"\by must hold"),
    "labels 2-D": ({}, _pairs()[0], np.ones((12, 2)), ValueError, r"\by must be 1-D"),
    "length mismatch": ({}, _pairs()[0], YP[:-1], ValueError, "pairs and y have inconsistent lengths"),
    "NaN": ({}, np.where(_pairs()[0] > 1, np.nan, _pairs()[0]), YP, ValueError, "pairs contains NaN"),
    "inf": ({}, np.where(_pairs()[0] > 1, np.inf, _pairs()[0]), YP, ValueError, "pairs contains NaN or infinity"),
    "complex": ({}, _pairs()[0] + 1j, YP, TypeError, "pairs must be real"),
    "strings": ({}, _pairs()[0].astype(str), YP, TypeError, "pairs must be numeric"),
    "empty": ({}, np.empty((0, 2, 3)), np.empty(0), ValueError, "pairs is empty"),
    "0 features": ({}, np.empty((12, 2, 0)), YP, ValueError, "pairs has 0 features"),
    "preprocessor NaN": ({"preprocessor": np.where(PREP > 1, np.nan, PREP)}, IDX, YP, ValueError, "preprocessor contains NaN"),
    "preprocessor 1-D output": ({"preprocessor": lambda i: np.ones(len(i))}, IDX, YP, ValueError, "preprocessor must return a 2-D array"),
    "dissimilar identical points": ({}, np.zeros((12, 2, 3)), YP, ValueError, r"dissimilar pair\(s\) \(y=-1\) join identical points"),
    "sparse": ({}, sparse.csr_matrix(np.ones((12, 6))), YP, TypeError, "pairs must be a dense array.*sparse input is not supported"),
    "labels None": ({}, _pairs()[0], None, ValueError, r"requires y to be passed, but the target y is None"),
}


@pytest.mark.parametrize("case", list(BAD_PAIRS))
@pytest.mark.parametrize("name", PAIRS)
def test_bad_pairs(name, case):
    params, pairs, y, exc, match = BAD_PAIRS[case]
    with pytest.raises(exc, match=match):
        BY_NAME[name].make(**params).fit(pairs, y)


def test_itml_bad_parameters():
    pairs, y = _pairs()
    for param, value in BAD_PARAMS:
        with pytest.raises(ValueError, match=f"'{param}' parameter"):
            ITML(**{param: value}).fit(pairs, y)
    with pytest.raises(ValueError, match="'gamma' parameter"):
        ITML(gamma=0).fit(pairs, y)
    with pytest.raises(TypeError, match="calibration_params must be a dict"):
        ITML().fit(pairs, y, calibration_params=[1])


def test_itml_bad_input_after_fit():
    pairs, y = _pairs()
    itml = _fit_quiet(ITML(random_state=0), pairs, y)
    with pytest.raises(ValueError, match="pairs have 4 features"):
        itml.predict(np.ones((3, 2, 4)))
    with pytest.raises(ValueError, match="look like index pairs"):
        itml.decision_function(IDX)
    with pytest.raises(ValueError, match="Pair labels y must be -1"):
        itml.score(pairs, 3 * y)
    with pytest.raises(ValueError, match="strategy must be one of"):
        itml.calibrate_threshold(pairs, y, strategy="foo")
    with pytest.raises(ValueError, match="min_rate"):
        itml.calibrate_threshold(pairs, y, strategy="max_tpr")
    with pytest.raises(ValueError, match="threshold must be finite"):
        itml.set_threshold(np.nan)
    with pytest.raises(ValueError, match="threshold must be a real number"):
        itml.set_threshold("a")


# -- dissimilarity matrices and signed graphs ---------------------------------

def _dissimilarity(n=8, seed=0):
    return symmetric_dissimilarity(n, seed)


def _signed(n=12, seed=0):
    rng = np.random.RandomState(seed)
    A = rng.randn(n, n)
    A = np.triu(A, 1)
    return A + A.T


D0 = _dissimilarity()
A0 = _signed()

BAD_MATRICES = {
    "not square": (lambda M: M[:, :-1], ValueError, "must be a square matrix"),
    "1-D": (lambda M: M[0], ValueError, "must be a square matrix"),
    "3-D": (lambda M: M[None], ValueError, "must be a square matrix"),
    "asymmetric": (lambda M: M + np.triu(np.ones_like(M), 1), ValueError,
                   r"must be symmetric: [AD]\[\d+, \d+\] = \S+ but [AD]\[\d+, \d+\] = "),
    "empty": (lambda M: M[:0, :0], ValueError, r"is empty: found array with 0 sample\(s\)"),
    "sparse empty": (lambda M: sparse.csr_matrix(M[:0, :0]), ValueError,
                     r"is empty: found array with 0 sample\(s\)"),
    "NaN": (lambda M: np.where(M == M[0, 1], np.nan, M), ValueError, "contains NaN"),
    "inf": (lambda M: np.where(M == M[0, 1], np.inf, M), ValueError, "contains NaN or infinity"),
    "diagonal": (lambda M: M + np.eye(len(M)), ValueError, "must have a zero diagonal"),
    "strings": (lambda M: M.astype(str), TypeError, "must be a real numeric array"),
    "complex": (lambda M: M + 0j, TypeError, "must be a real numeric array"),
    "sparse not square": (lambda M: sparse.csr_matrix(M[:, :-1]), ValueError, "must be a square matrix"),
    "sparse asymmetric": (lambda M: sparse.csr_matrix(M + np.triu(np.ones_like(M), 1)), ValueError, "must be symmetric"),
    "sparse NaN": (lambda M: sparse.csr_matrix(np.where(M == M[0, 1], np.nan, M)), ValueError, "contains NaN"),
}


@pytest.mark.parametrize("case", list(BAD_MATRICES))
def test_metric_nearness_bad_D(case):
    make, exc, match = BAD_MATRICES[case]
    with pytest.raises(exc, match=r"\bD\b " + match):
        MetricNearness().fit(make(D0))


def test_metric_nearness_negative_D():
    # negative entries: rejected by the KL divergence only (L2 takes signed D,
    # whose triangle inequalities imply a non-negative solution)
    with pytest.raises(ValueError, match=r"divergence='kl' needs strictly positive .* D has \d+ negative"):
        MetricNearness(divergence="kl").fit(-D0)
    with pytest.raises(ValueError, match=r"divergence='kl' needs strictly positive .* D has \d+ negative"):
        MetricNearness(divergence="kl").fit(sparse.csr_matrix(-D0))
    assert MetricNearness().fit(-D0).metric_.min() >= 0.0
    assert MetricNearness().fit(sparse.csr_matrix(-D0)).metric_.min() >= 0.0


@pytest.mark.parametrize("case", list(BAD_MATRICES))
def test_correlation_clustering_bad_A(case):
    make, exc, match = BAD_MATRICES[case]
    with pytest.raises(exc, match=r"\bA\b " + match):
        CorrelationClustering().fit(make(A0))


@pytest.mark.parametrize("w, match", [
    (np.ones((8, 7)), "sample_weight must have the same shape as D"),
    (np.ones(8), "sample_weight must have the same shape as D"),
    (-np.ones((8, 8)), "sample_weight must be non-negative"),
    (np.zeros((8, 8)), "sample_weight must be strictly positive"),
    (np.ones((8, 8)) + np.triu(np.ones((8, 8)), 1), "sample_weight must be symmetric"),
    (np.full((8, 8), np.nan), "sample_weight contains NaN"),
    (np.full((8, 8), "a"), "sample_weight must be a real numeric array"),
])
def test_metric_nearness_bad_weights(w, match):
    with pytest.raises((ValueError, TypeError), match=match):
        MetricNearness().fit(D0, sample_weight=w)


def test_metric_nearness_sparse_bad_weights():
    S = sparse.csr_matrix(D0)
    with pytest.raises(ValueError, match="sample_weight must have the same shape as D"):
        MetricNearness().fit(S, sample_weight=np.ones((3, 3)))
    with pytest.raises(ValueError, match="sample_weight must be strictly positive"):
        MetricNearness().fit(S, sample_weight=np.zeros((8, 8)))


@pytest.mark.parametrize("param, value", [
    ("tol", 0.0), ("tol", -1.0), ("max_iter", 0), ("max_passes", 0),
    ("oracle", "foo"),
])
def test_metric_nearness_bad_parameters(param, value):
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        MetricNearness(**{param: value}).fit(D0)


@pytest.mark.parametrize("param, value", [
    ("tol", 0.0), ("gamma", 0.0), ("max_iter", 0), ("n_rounding_trials", 0),
    ("rounding", "foo"),
])
def test_correlation_clustering_bad_parameters(param, value):
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        CorrelationClustering(**{param: value}).fit(A0)


@pytest.mark.parametrize("Estimator", [MetricNearness, CorrelationClustering])
def test_matrix_of_numbers_held_as_objects(Estimator):
    """An object array of numbers is fitted as the same numbers (as
    scikit-learn's check_array does); a non-number in it is a TypeError."""
    M = D0 if Estimator is MetricNearness else A0
    ref = Estimator().fit(M)
    est = Estimator().fit(M.astype(object))
    attr = "metric_" if Estimator is MetricNearness else "lp_solution_"
    np.testing.assert_array_equal(getattr(est, attr), getattr(ref, attr))
    bad = M.astype(object)
    bad[0, 1] = {"a": 1}
    with pytest.raises(TypeError, match="must be a (string or a )?real number"):
        Estimator().fit(bad)


def test_trivial_matrices():
    """A 1 x 1 input is valid: a zero metric and a single cluster; a 0 x 0
    one has nothing to fit and is an error (see BAD_MATRICES, "empty")."""
    M = MetricNearness().fit(np.zeros((1, 1))).metric_
    assert M.shape == (1, 1) and not np.any(M)
    labels = CorrelationClustering().fit(np.zeros((1, 1))).labels_
    assert labels.shape == (1,)
    for est in (MetricNearness(), CorrelationClustering()):
        with pytest.raises(ValueError, match=r"is empty: found array with 0 sample"):
            est.fit(np.zeros((0, 0)))


# -- extreme scales: rescaled internally, correct results --------------------

@pytest.mark.parametrize("scale", [1e150, 1e-150])
def test_metric_nearness_extreme_scale(scale):
    ref = MetricNearness().fit(D0)
    est = MetricNearness().fit(D0 * scale)
    assert est.converged_
    np.testing.assert_allclose(est.metric_ / scale, ref.metric_, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(est.objective_ / scale**2, ref.objective_, rtol=1e-6)
    sp = MetricNearness().fit(sparse.csr_matrix(D0 * scale))
    sp_ref = MetricNearness().fit(sparse.csr_matrix(D0))
    np.testing.assert_allclose(sp.metric_.toarray() / scale,
                               sp_ref.metric_.toarray(), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("scale", [2.0**500, 2.0**-500])
def test_correlation_clustering_extreme_scale_exact(scale):
    """The LP does not change when all weights are scaled by c > 0; weights
    of extreme scale are divided by a power of two, so A * 2**+-500 gives
    exactly the solution, clustering and bounds of A brought to unit
    scale by a power of two."""
    unit = A0 / 2.0 ** int(np.round(np.log2(np.abs(A0).max())))
    ref = CorrelationClustering(random_state=0).fit(unit)
    est = CorrelationClustering(random_state=0).fit(unit * scale)
    np.testing.assert_allclose(est.lp_solution_, ref.lp_solution_, atol=1e-12)
    np.testing.assert_array_equal(est.labels_, ref.labels_)
    np.testing.assert_allclose(est.cost_ / scale, ref.cost_, rtol=1e-12)
    np.testing.assert_allclose(est.lp_objective_ / scale, ref.lp_objective_, rtol=1e-12)
    np.testing.assert_allclose(est.lower_bound_ / scale, ref.lower_bound_, rtol=1e-12)


@pytest.mark.parametrize("scale", [1e150, 1e-150])
def test_correlation_clustering_extreme_scale(scale):
    """1e150 / 1e-150 weights: a solution of the same LP (within the
    accuracy of the regularised solve at a rescaled gamma)."""
    ref = CorrelationClustering(gamma=50, tol=1e-4, random_state=0).fit(A0)
    est = CorrelationClustering(gamma=50, tol=1e-4, random_state=0).fit(A0 * scale)
    assert est.lower_bound_ <= est.cost_ * (1 + 1e-9)
    assert est.lower_bound_ / scale <= ref.lp_objective_ * (1 + 1e-6)
    assert ref.lower_bound_ <= est.lp_objective_ / scale * (1 + 1e-6)
    # (the LP optimum need not be unique: compare objectives, not solutions)
    np.testing.assert_allclose(est.lp_objective_ / scale, ref.lp_objective_, rtol=1e-2)
    assert np.all(np.isfinite(est.lp_solution_))


@pytest.mark.parametrize("scale", [1e150, 1e-150])
@pytest.mark.parametrize("name", ["ITML_Supervised", "ProjectAndForget"])
def test_itml_objective_scale_invariant(name, scale):
    """With the default (percentile) bounds, ITML's problem in A does not
    change when X is scaled: the same matrix must come out."""
    ref = _fit_quiet(XY_LEARNERS[name](random_state=0), X0, Y0)
    est = _fit_quiet(XY_LEARNERS[name](random_state=0), X0 * scale, Y0)
    np.testing.assert_allclose(est.get_mahalanobis_matrix(),
                               ref.get_mahalanobis_matrix(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(est.bounds_ / scale**2, ref.bounds_, rtol=1e-10)
    assert est.n_iter_ == ref.n_iter_


@pytest.mark.parametrize("scale", [1e150, 1e-150])
def test_itml_pairs_scale_invariant(scale):
    pairs, y = _pairs()
    ref = _fit_quiet(ITML(random_state=0), pairs, y)
    est = _fit_quiet(ITML(random_state=0), pairs * scale, y)
    np.testing.assert_allclose(est.get_mahalanobis_matrix(),
                               ref.get_mahalanobis_matrix(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(est.slack_ / scale**2, ref.slack_, rtol=1e-8)
    np.testing.assert_array_equal(est.predict(pairs * scale), ref.predict(pairs))


@pytest.mark.parametrize("name", ["LMNN", "LMNN-subgradient", "LODML", "OMDML"])
def test_margin_learners_extreme_scale(name):
    """LMNN's and LODML's losses have a unit margin, so they are not scale
    invariant, but the loss of L on X equals the loss of c L on X / c: data
    of extreme scale is divided internally by a power of two.  Data scaled by
    2**500 or 2**-500 therefore gives exactly the embedding of the same data
    brought to unit scale, and a learned (not the initial) metric."""
    X, y = make_ordinal(n_samples=60, n_noise=2, n_levels=3, random_state=0)
    if name.startswith("LMNN"):
        y = y % 2
    k = int(np.round(np.log2(np.max(np.abs(X - X.mean(axis=0))))))
    unit = X / 2.0**k
    ref = _fit_quiet(XY_LEARNERS[name](), unit, y)
    Z_ref = ref.transform(unit)
    assert np.all(np.isfinite(Z_ref))
    for c in (2.0**500, 2.0**-500):
        est = _fit_quiet(XY_LEARNERS[name](), X * c, y)
        Z = est.transform(X * c)
        np.testing.assert_allclose(Z, Z_ref, rtol=1e-9, atol=1e-12 * np.abs(Z_ref).max())
    # a non-power-of-two scale gives a learned metric too
    est = _fit_quiet(XY_LEARNERS[name](), X * 1e150, y)
    L = est.components_ * 1e150
    assert np.all(np.isfinite(L)) and np.abs(L).max() > 0
    if name.startswith("LMNN"):
        assert est.n_iter_ >= 1 and not np.allclose(L, np.eye(L.shape[1]))


def test_lodml_warns_about_a_zero_metric():
    """Labels unrelated to X: the optimum is A = 0, a degenerate metric that
    must not be returned silently."""
    rng = np.random.RandomState(0)
    X, y = rng.randn(40, 3), np.arange(40) % 3
    with pytest.warns(UserWarning, match="LODML learned the zero metric"):
        est = LODML(max_iter=50).fit(X, y)
    assert not np.any(est.components_)
    Xo, yo = make_ordinal(n_samples=60, n_noise=2, n_levels=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert np.any(LODML(max_iter=50).fit(Xo, yo).components_)


@pytest.mark.parametrize("scale", [1e150, 1e-150])
def test_metric_nearness_kl_extreme_scale(scale):
    """KL(M || D) is homogeneous too: the nearest metric of c D is c times
    that of D, and the divergence scales by c."""
    D = D0 + 0.1 * (1 - np.eye(len(D0)))
    ref = MetricNearness(divergence="kl").fit(D)
    est = MetricNearness(divergence="kl").fit(D * scale)
    assert est.converged_
    np.testing.assert_allclose(est.metric_ / scale, ref.metric_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.objective_ / scale, ref.objective_, rtol=1e-8)


def test_metric_nearness_kl_bad_input():
    with pytest.raises(ValueError, match=r"divergence='kl' needs strictly positive .* D"):
        MetricNearness(divergence="kl").fit(D0 * (1 - (np.arange(8)[:, None] + np.arange(8) == 1)))
    with pytest.raises(ValueError, match="'divergence' parameter"):
        MetricNearness(divergence="l1").fit(D0)


@pytest.mark.parametrize("name", XY)
def test_every_class_a_singleton(name):
    """No same-class pair exists: an error saying so (LMNN has no target
    neighbours, ITML_Supervised no positive pair, RCA_Supervised no
    chunklet), NCA's initialisation with a warning (its objective is
    constant), or a finite metric from the different-class pairs / ordered
    levels alone."""
    X, _ = _data(20)
    y = np.arange(20)
    est = XY_LEARNERS[name]()
    if name.startswith("NCA"):
        with pytest.warns(UserWarning, match="single sample"):
            est.fit(X, y)
    elif name.startswith("LMNN") or name in (
            "ITML_Supervised", "RCA_Supervised", "MMC_Supervised",
            "MMC_Supervised-diagonal", "SDML_Supervised", "LSML_Supervised",
            "SCML_Supervised"):
        with pytest.raises(ValueError, match="single sample"):
            est.fit(X, y)
    else:
        _fit_quiet(est, X, y)
        assert np.all(np.isfinite(est.components_))


@pytest.mark.parametrize("name", WITH_BOUNDS)
def test_identical_points_need_explicit_bounds(name):
    X = np.ones((20, 3))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="all points are identical. Pass bounds"):
        XY_LEARNERS[name]().fit(X, y)


def _path_graph(n=6, extra=(), values=None):
    """A sparse path graph 0-1-...-(n-1) (both triangles stored) plus ``extra`` entries."""
    r = np.arange(n - 1)
    rows = np.concatenate((r, r + 1, [e[0] for e in extra])).astype(int)
    cols = np.concatenate((r + 1, r, [e[1] for e in extra])).astype(int)
    vals = np.concatenate((np.ones(2 * (n - 1)), [e[2] for e in extra]))
    if values is not None:
        vals[:len(values)] = values
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))


@pytest.mark.parametrize("D, match", [
    # non-symmetric values: the offending entry is named
    (_path_graph(values=[2.0]), r"D must be symmetric: D\[0, 1\] = 2 but D\[1, 0\] = 1"),
    # a stored entry without its mirror
    (_path_graph(extra=[(0, 3, 1.0)]), r"D must be symmetric: D\[0, 3\] = 1 but D\[3, 0\] = 0"),
    # an explicit zero (an edge of length 0) without its mirror
    (_path_graph(extra=[(0, 3, 0.0)]),
     r"symmetric sparsity pattern: entry \(0, 3\) is stored \(value 0; explicit zeros"),
    # a self-loop
    (_path_graph(extra=[(2, 2, 1.0)]), "no self-loops, but node 2 has one"),
    (_path_graph(values=[np.nan, np.nan]), "D contains NaN or infinity"),
    (_path_graph(values=[np.inf, np.inf]), "D contains NaN or infinity"),
])
def test_metric_nearness_sparse_bad_graph(D, match):
    with pytest.raises(ValueError, match=match):
        MetricNearness().fit(D)


def test_metric_nearness_sparse_explicit_zeros_are_edges():
    # a symmetric explicit zero is an edge of length 0 (accepted, kept); a
    # stored zero on the diagonal is not a self-loop
    D = _path_graph(extra=[(0, 3, 0.0), (3, 0, 0.0), (2, 2, 0.0)])
    est = MetricNearness().fit(D)
    M = est.metric_
    assert M[0, 3] == 0.0 and 3 in M.indices[M.indptr[0]:M.indptr[1]]
    assert M.nnz == 2 * 6  # 5 path edges and the zero edge, both sides


@pytest.mark.parametrize("W, match", [
    (_path_graph(values=[3.0]), "sample_weight must be symmetric"),
    (_path_graph(extra=[(0, 3, 1.0), (3, 0, 1.0)]),
     r"sample_weight has a stored entry at \(0, 3\), which is not an edge of D"),
    # an explicit zero weight on an edge
    (_path_graph(values=[0.0, 1.0, 1.0, 1.0, 1.0, 0.0]),
     "sample_weight must be strictly positive on the edges of D"),
    (_path_graph(values=[np.nan]), "sample_weight contains NaN or infinity"),
])
def test_metric_nearness_sparse_bad_sparse_weights(W, match):
    with pytest.raises(ValueError, match=match):
        MetricNearness().fit(_path_graph(), sample_weight=W)
