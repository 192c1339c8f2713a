"""The registry of every public estimator, and the data the tests share.

``REGISTRY`` is the one place a learner is added to get every common test:
scikit-learn's estimator checks (``test_sklearn_checks.py``), bad input
(``test_common_bad_input.py``), determinism (``test_determinism.py``),
invariants (``test_invariants.py``) and notebook use (``test_notebook.py``).
Each entry says how to build a small, fast instance and what ``kind`` of
data ``fit`` takes; the common tests pick their data by kind through
:func:`make_data` and decide what applies from the estimator's parameters
(``n_components``, ``prior``, ``max_iter`` ...), so that a new learner
needs one entry here and nothing else.  Kinds:

``"supervised"``
    ``fit(X, y)``: points and class labels (or ordered levels).
``"pairs"``
    ``fit(pairs, y)``: pairs of points ``(n_pairs, 2, n_features)``
    labelled +1 (similar) / -1 (dissimilar).
``"triplets"``
    ``fit(triplets)``: triplets of points ``(n_triplets, 3, n_features)``,
    each ``(a, b, c)`` meaning "a is closer to b than to c" (no ``y``).
``"quadruplets"``
    ``fit(quadruplets)``: quadruplets ``(n_quadruplets, 4, n_features)``,
    each ``(a, b, c, d)`` meaning "(a, b) is more similar than (c, d)".
``"matrix"``
    ``fit(D)``: a symmetric, non-negative dissimilarity matrix with a zero
    diagonal (:class:`~metric_estimators.MetricNearness`).
``"graph"``
    ``fit(A)``: a symmetric signed graph with a zero diagonal
    (:class:`~metric_estimators.CorrelationClustering`).
``"chunks"``
    ``fit(X, chunks)``: points and chunklet indices (-1: no chunklet), here
    the levels of the supervised data (:class:`~metric_estimators.RCA`).
``"unsupervised"``
    ``fit(X, y=None)``: points; ``y`` is accepted and ignored
    (:class:`~metric_estimators.Covariance`).  The data are those of
    ``"supervised"``.

The parameters of the registry are those of the determinism cases
(``tests/fingerprint.py`` hashes their results on the numpy and the numba
path): change one and the fingerprints change.  Estimators are imported by their public names only.

Every fit runs on the numpy twins of the kernels here, whatever numba's
cache holds (``METRIC_ESTIMATORS_BACKEND=numpy``, for this process and the
processes the tests start): the results of the tests do not depend on
which kernels earlier tests compiled.  ``tests/test_backends.py`` fits
every entry on both paths and tests the default, cache-aware choice.
"""

import os
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler
from tuple_adapter import ITMLOnPoints, LSMLOnPoints, MMCOnPoints, SCMLOnPoints, SDMLOnPoints

from metric_estimators import (
    ITML,
    LFDA,
    LMNN,
    LODML,
    LSML,
    MLKR,
    MMC,
    NCA,
    OMDML,
    RCA,
    SCML,
    SDML,
    CorrelationClustering,
    Covariance,
    ITML_Supervised,
    LSML_Supervised,
    MetricNearness,
    MMC_Supervised,
    ProjectAndForget,
    RCA_Supervised,
    SCML_Supervised,
    SDML_Supervised,
    _backend,
)
from metric_estimators.ranking import make_ordinal

# see the module docstring: the numpy twins, whatever the cache holds
os.environ[_backend.VARIABLE] = "numpy"
_backend.mode("numpy")


def numba_paths():
    """The numba kernels for every fit inside the block (``with numba_paths(): ...``)."""
    return _backend.use("numba")


KINDS = ("supervised", "pairs", "triplets", "quadruplets", "matrix", "graph",
         "chunks", "unsupervised")
#: kinds fitted on a point matrix X (plus labels, chunk indices, or nothing)
POINT_KINDS = ("supervised", "chunks", "unsupervised")


# ---------------------------------------------------------------------------
# data, by kind

def supervised_data(n_samples=90, seed=0):
    """Points with 3 ordered levels (also fine as 3 classes); 3 informative
    and 2 noise features."""
    return make_ordinal(n_samples=n_samples, n_informative=3, n_noise=2,
                        n_levels=3, random_state=seed)


def pairs_data(n_pairs=80, seed=0):
    """Pairs of distinct points of :func:`supervised_data`, labelled +1 when
    both have the same level."""
    X, y = supervised_data()
    rng = np.random.RandomState(seed)
    i, j = rng.randint(0, len(X), (2, n_pairs))
    keep = i != j
    return (np.stack([X[i[keep]], X[j[keep]]], axis=1),
            np.where(y[i[keep]] == y[j[keep]], 1, -1))


def triplets_data(n_triplets=80, seed=0):
    """Triplets ``(a, b, c)`` of points of :func:`supervised_data` with
    ``a`` and ``b`` of the same level and ``c`` of another (a 1-tuple: the
    triplets alone, no ``y``)."""
    X, y = supervised_data()
    rng = np.random.RandomState(seed)
    a = rng.randint(0, len(X), n_triplets)
    b = np.array([rng.choice(np.flatnonzero((y == y[i]) & (np.arange(len(y)) != i)))
                  for i in a])
    c = np.array([rng.choice(np.flatnonzero(y != y[i])) for i in a])
    return (np.stack([X[a], X[b], X[c]], axis=1),)


def quadruplets_data(n_quadruplets=80, seed=0):
    """Quadruplets ``(a, b, c, d)`` of points of :func:`supervised_data`: a
    same-level pair ``(a, b)`` and a different-level pair ``(c, d)`` (a
    1-tuple: the quadruplets alone)."""
    X, y = supervised_data()
    (T,) = triplets_data(n_quadruplets, seed)
    rng = np.random.RandomState(seed + 1)
    c = rng.randint(0, len(X), n_quadruplets)
    d = np.array([rng.choice(np.flatnonzero(y != y[i])) for i in c])
    return (np.concatenate([T[:, :2], np.stack([X[c], X[d]], axis=1)], axis=1),)


def symmetric_dissimilarity(n=30, seed=0):
    """Symmetric |N(0, 1)| dissimilarities (mean of A and A.T), zero diagonal."""
    rng = np.random.RandomState(seed)
    D = np.abs(rng.randn(n, n))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0)
    return D


def signed_graph(n=30, seed=0):
    """A +-1 graph of 3 planted groups with 15 % of the signs flipped."""
    rng = np.random.RandomState(seed)
    g = rng.randint(0, 3, n)
    A = np.where(g[:, None] == g[None], 1.0, -1.0)
    A[rng.rand(n, n) < 0.15] *= -1
    A = np.triu(A, 1)
    return A + A.T


_MAKERS = {
    "supervised": supervised_data,
    "pairs": pairs_data,
    "triplets": triplets_data,
    "quadruplets": quadruplets_data,
    "matrix": symmetric_dissimilarity,
    "graph": signed_graph,
    "chunks": supervised_data,
    "unsupervised": supervised_data,
}


def make_data(kind, **kwargs):
    """The positional arguments of ``fit`` for an estimator of this kind."""
    data = _MAKERS[kind](**kwargs)
    return data if isinstance(data, tuple) else (data,)


# ---------------------------------------------------------------------------
# the registry

@dataclass(frozen=True)
class Learner:
    """One registered estimator configuration.

    name : str
        Test id (unique; variants of one class get suffixes).
    estimator : type
        The public class.
    kind : str
        One of :data:`KINDS`: what ``fit`` takes.
    params : dict
        Small, fast parameters (those of the determinism cases).
    iterative_params : dict or None
        Extra parameters under which ``fit`` runs an iterative solver (so that
        ``max_iter`` / ``tol`` apply); None if it never iterates.
    check_class : type or None
        Class given to scikit-learn's estimator checks (default: ``estimator``).
    expected_failed_checks : dict
        scikit-learn check name -> why it fails for this estimator.  Every
        listed check must fail (the checks run with ``xfail_strict=True``).
    """

    name: str
    estimator: type
    kind: str
    params: Mapping = field(default_factory=dict)
    iterative_params: Mapping | None = field(default_factory=dict)
    check_class: type | None = None
    expected_failed_checks: Mapping[str, str] = field(default_factory=dict)

    def make(self, **overrides):
        """A fresh instance with the registry parameters and ``overrides``."""
        return self.estimator(**{**self.params, **overrides})

    def make_for_checks(self):
        """The instance scikit-learn's estimator checks run on."""
        return (self.check_class or self.estimator)(**self.params)

    def data(self, **kwargs):
        """``fit``'s positional arguments (see :func:`make_data`)."""
        return make_data(self.kind, **kwargs)

    def has_param(self, param):
        return param in self.estimator().get_params()

    def __str__(self):
        return self.name


# -- why checks fail, shared by several entries -------------------------------

_NOT_SQUARE = (
    "the check passes a non-square feature matrix although the estimator is "
    "tagged pairwise; fit rejects it for its shape ('must be a square matrix') "
    "before looking at its values"
)
_COMPLEX = (
    "complex input raises TypeError('... must be a real numeric array'), as "
    "tests/test_common_bad_input.py pins; the check wants ValueError"
)
_EMPTY = (
    "for X of shape (12, 0) the check wants scikit-learn's '0 feature(s)' "
    "message; the estimator says the matrix 'must be a square matrix', which "
    "is the actual problem of a (12, 0) dissimilarity matrix / graph"
)

_MATRIX_EXPECTED = {
    "check_positive_only_tag_during_fit": (
        "MetricNearness (L2) is not tagged positive_only: it takes signed D. "
        "The check subtracts the mean from a distance matrix, which leaves a "
        "non-zero diagonal; D must have a zero diagonal, as "
        "tests/test_common_bad_input.py pins (negative entries themselves are "
        "accepted, tests/test_metric_nearness.py::test_signed_D_matches_cvxpy)"
    ),
    "check_sample_weights_pandas_series": (
        "sample_weight weighs pairs: shape (n, n) like D, not (n_samples,)"
    ),
    "check_sample_weights_not_an_array": (
        "sample_weight weighs pairs: shape (n, n) like D, not (n_samples,)"
    ),
    "check_sample_weights_list": (
        "sample_weight weighs pairs: shape (n, n) like D, not (n_samples,)"
    ),
    "check_all_zero_sample_weights_error": (
        "sample_weight weighs pairs: shape (n, n) like D, not (n_samples,); "
        "an all-zero (n, n) weight is rejected as 'must be strictly positive'"
    ),
    "check_complex_data": _COMPLEX,
    "check_estimators_empty_data_messages": _EMPTY,
    "check_estimators_nan_inf": _NOT_SQUARE + (
        " (here a (10, 3) X holding NaN / inf; NaN and inf in D are rejected, "
        "see tests/test_common_bad_input.py)"
    ),
}

_GRAPH_EXPECTED = {
    "check_positive_only_tag_during_fit": (
        "the check subtracts the mean from a distance matrix, which leaves a "
        "non-zero diagonal; A must have a zero diagonal (no self-loops), as "
        "tests/test_common_bad_input.py pins (negative weights themselves are "
        "accepted)"
    ),
    "check_complex_data": _COMPLEX,
    "check_estimators_empty_data_messages": _EMPTY,
    "check_estimators_nan_inf": _NOT_SQUARE + (
        " (here a (10, 3) X holding NaN / inf; NaN and inf in A are rejected, "
        "see tests/test_common_bad_input.py)"
    ),
    "check_clustering": (
        "the check clusters a (50, 2) feature matrix (it does not turn X into "
        "a pairwise matrix for clusterers); CorrelationClustering clusters a "
        "signed graph and rejects it as 'must be a square matrix'"
    ),
}

# scikit-learn's checks run on the tuple learners (ITML, MMC, SDML, SCML,
# LSML) through tests/tuple_adapter.py, which hands them tuples of the rows
# of the checks' X; these four checks cannot apply to a learner of tuples
_ON_POINTS_EXPECTED = {
    "check_fit2d_1sample": (
        "one row makes no tuple (a tuple joins two distinct rows), so the "
        "learner receives no tuple and says 'pairs / triplets / quadruplets "
        "is empty: at least one ... is required'; the check wants a message "
        "about 1 sample or 1 class"
    ),
    "check_estimators_empty_data_messages": (
        "X of shape (12, 0) gives tuples of 0 features, which the learner "
        "rejects as 'pairs / triplets / quadruplets has 0 features'; the "
        "check wants scikit-learn's '0 feature(s) (shape=(12, 0))' message "
        "about a 2-D X, which the learner never sees"
    ),
    "check_complex_data": (
        "complex tuples raise TypeError('... must be real'), as "
        "tests/test_tuples.py and tests/test_common_bad_input.py pin; the "
        "check wants ValueError"
    ),
    "check_dtype_object": (
        "tuples of dtype object raise TypeError('... must be numeric'): "
        "object (e.g. string) ids need a callable preprocessor; the check "
        "wants a numeric object array to be converted"
    ),
}

REGISTRY = [
    Learner("LMNN", LMNN, "supervised",
            dict(n_neighbors=3, random_state=0, max_iter=40)),
    Learner("LMNN-random-init", LMNN, "supervised",
            dict(init="random", random_state=1, max_iter=40)),
    Learner("LMNN-subgradient", LMNN, "supervised",
            dict(solver="subgradient", random_state=0, max_iter=40)),
    Learner("LMNN-sgd", LMNN, "supervised",
            dict(solver="sgd", random_state=0, max_iter=20, batch_size=16)),
    Learner("ITML", ITML, "pairs", dict(random_state=0, max_iter=200),
            check_class=ITMLOnPoints,
            expected_failed_checks=_ON_POINTS_EXPECTED),
    Learner("ITML_Supervised", ITML_Supervised, "supervised",
            dict(random_state=0, max_iter=200)),
    Learner("MLKR", MLKR, "supervised", dict(random_state=0, max_iter=30)),
    # the default path solver stops at max_iter by design, without a
    # warning; the max_iter test runs the exact solve
    Learner("MMC", MMC, "pairs", dict(random_state=0),
            iterative_params=dict(solver="exact"),
            check_class=MMCOnPoints,
            expected_failed_checks=_ON_POINTS_EXPECTED),
    Learner("MMC-diagonal", MMC, "pairs", dict(diagonal=True, random_state=0),
            check_class=MMCOnPoints,
            expected_failed_checks=_ON_POINTS_EXPECTED),
    Learner("MMC_Supervised", MMC_Supervised, "supervised",
            dict(random_state=0), iterative_params=dict(solver="exact")),
    Learner("MMC_Supervised-diagonal", MMC_Supervised, "supervised",
            dict(diagonal=True, random_state=0)),
    Learner("SDML", SDML, "pairs", dict(random_state=0),
            check_class=SDMLOnPoints,
            expected_failed_checks=_ON_POINTS_EXPECTED),
    Learner("SDML_Supervised", SDML_Supervised, "supervised",
            dict(random_state=0)),
    Learner("SCML_Supervised", SCML_Supervised, "supervised",
            dict(random_state=0, max_iter=500, output_iter=100),
            iterative_params=None),
    Learner("SCML", SCML, "triplets",
            dict(random_state=0, max_iter=500, output_iter=100),
            iterative_params=None, check_class=SCMLOnPoints,
            expected_failed_checks=_ON_POINTS_EXPECTED),
    Learner("LSML_Supervised", LSML_Supervised, "supervised",
            dict(random_state=0, max_iter=100)),
    Learner("LSML", LSML, "quadruplets", dict(random_state=0, max_iter=100),
            check_class=LSMLOnPoints,
            expected_failed_checks=_ON_POINTS_EXPECTED),
    Learner("OMDML", OMDML, "supervised", {},
            iterative_params=dict(solver="lbfgs")),
    Learner("OMDML-lbfgs", OMDML, "supervised", dict(solver="lbfgs")),
    Learner("LODML", LODML, "supervised",
            dict(max_iter=50, max_triplets=2000, random_state=0)),
    Learner("ProjectAndForget", ProjectAndForget, "supervised",
            dict(random_state=0, max_iter=50)),
    Learner("MetricNearness", MetricNearness, "matrix", {},
            expected_failed_checks=_MATRIX_EXPECTED),
    Learner("CorrelationClustering", CorrelationClustering, "graph",
            dict(random_state=0), expected_failed_checks=_GRAPH_EXPECTED),
    Learner("NCA", NCA, "supervised", dict(random_state=0, max_iter=50)),
    Learner("NCA-random-init", NCA, "supervised",
            dict(init="random", random_state=1, max_iter=50)),
    Learner("LFDA", LFDA, "supervised", dict(k=3), iterative_params=None),
    Learner("LFDA-orthonormalized", LFDA, "supervised",
            dict(k=3, embedding_type="orthonormalized"), iterative_params=None),
    Learner("RCA", RCA, "chunks", {}, iterative_params=None,
            expected_failed_checks={"check_fit_score_takes_y": (
                "RCA.fit(X, chunks): the second argument has metric-learn's "
                "name, chunks (chunklet indices, not class labels); "
                "RCA_Supervised is the fit(X, y) face and passes the check")}),
    Learner("RCA_Supervised", RCA_Supervised, "supervised",
            dict(n_chunks=20, random_state=0), iterative_params=None),
    Learner("Covariance", Covariance, "unsupervised", {},
            iterative_params=None),
]

BY_NAME = {entry.name: entry for entry in REGISTRY}
assert len(BY_NAME) == len(REGISTRY), "registry names must be unique"
assert all(entry.kind in KINDS for entry in REGISTRY)


def learners(*kinds, where=None):
    """Registry entries of the given kinds (all if none) passing ``where``."""
    return [e for e in REGISTRY
            if (not kinds or e.kind in kinds) and (where is None or where(e))]


def learner_params(*kinds, where=None):
    """:func:`learners` as ``pytest.param`` values with the entry names as ids."""
    return [pytest.param(e, id=e.name) for e in learners(*kinds, where=where)]


# ---------------------------------------------------------------------------
# fixtures

@pytest.fixture(scope="session")
def iris():
    """Standardised iris (150 x 4, 3 classes)."""
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture
def cp():
    """cvxpy, for the tests that compare with it; skips only those tests
    when it is not installed."""
    return pytest.importorskip("cvxpy")


# -- a local Dask cluster (tests/test_dask.py, tests/test_dask_oracle.py) ----
# one BLAS / OpenMP / numba thread per worker process: the machine's cores are
# shared by the two workers (see docs/dask.rst, "Threads")
_DASK_WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}


@pytest.fixture(scope="module")
def client():
    """A ``distributed.Client`` on a 2-worker ``LocalCluster``, one per test module."""
    import logging
    import os

    distributed = pytest.importorskip("distributed")
    old = {k: os.environ.get(k) for k in _DASK_WORKER_ENV}
    os.environ.update(_DASK_WORKER_ENV)  # the spawned workers inherit it
    try:
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=logging.ERROR)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
