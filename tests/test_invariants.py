"""Property tests (hypothesis) of the invariants every estimator must keep.

* ``transform`` is linear;
* ``get_metric()`` is a (pseudo-)metric, agrees with ``pair_distance`` and
  with scipy's Mahalanobis distance on ``get_mahalanobis_matrix()``;
* the Mahalanobis matrix is positive semi-definite;
* ``MetricNearness`` returns a metric (every triangle inequality within the
  tolerance), leaves a metric unchanged, and commutes with scaling.

The learners come from the registry (``tests/conftest.py``): every learner
of a linear map, with its registry parameters and data, and once more with
``n_components=1`` where it takes ``n_components`` (a rectangular map).  They
are fitted once per module (hypothesis then only draws the points the fitted
objects are evaluated on), and the examples are few and small so that the
module stays fast.
"""

import functools
import warnings

import numpy as np
import pytest
from conftest import BY_NAME, learners, supervised_data
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import mahalanobis, pdist, squareform

from metric_estimators import MetricNearness

N_FEATURES = supervised_data()[0].shape[1]
SETTINGS = settings(max_examples=25, deadline=None)
FINITE = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def _points(n):
    return arrays(np.float64, (n, N_FEATURES), elements=FINITE)


_REDUCED = "-n_components=1"


@functools.cache
def fitted(name):
    entry = BY_NAME[name.removesuffix(_REDUCED)]
    est = entry.make(**({"n_components": 1} if name.endswith(_REDUCED) else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*entry.data())


_LINEAR = ("supervised", "chunks", "unsupervised", "pairs", "triplets",
           "quadruplets")
LEARNERS = [e.name for e in learners(*_LINEAR)] + [
    e.name + _REDUCED for e in learners(*_LINEAR)
    if e.has_param("n_components")
]


@pytest.mark.parametrize("name", LEARNERS)
def test_fitted_metric_is_not_trivial(name):
    """Guard: the properties below would hold vacuously for L = 0."""
    assert np.abs(fitted(name).components_).max() > 1e-6


@pytest.mark.parametrize("name", LEARNERS)
@SETTINGS
@given(U=_points(5), V=_points(5), a=FINITE, b=FINITE)
def test_transform_is_linear(name, U, V, a, b):
    est = fitted(name)
    lhs = est.transform(a * U + b * V)
    rhs = a * est.transform(U) + b * est.transform(V)
    scale = 1 + np.abs(lhs).max() + np.abs(a * est.transform(U)).max() + np.abs(b * est.transform(V)).max()
    np.testing.assert_allclose(lhs, rhs, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(est.transform(U), U @ est.components_.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", LEARNERS)
@SETTINGS
@given(P=_points(3))
def test_metric_axioms_and_agreement(name, P):
    est = fitted(name)
    metric = est.get_metric()
    M = est.get_mahalanobis_matrix()
    u, v, w = P
    duv, dvw, duw = metric(u, v), metric(v, w), metric(u, w)
    tol = 1e-9 * (1 + np.abs(P).max() ** 2 * np.abs(M).max())
    assert metric(u, u) == 0.0
    assert duv >= 0
    assert abs(duv - metric(v, u)) <= tol
    assert duw <= duv + dvw + tol
    assert abs(metric(u, v, squared=True) - duv**2) <= tol * (1 + duv)
    # agrees with pair_distance and with scipy on the Mahalanobis matrix
    pd = est.pair_distance(np.stack([P, P[[1, 2, 0]]], axis=1))
    np.testing.assert_allclose(pd, [duv, dvw, metric(w, u)], rtol=1e-9, atol=tol)
    assert abs(mahalanobis(u, v, M) - duv) <= 1e-7 * (1 + duv) + np.sqrt(tol)
    np.testing.assert_allclose(est.pair_score(np.stack([P, P[[1, 2, 0]]], axis=1)), -pd)


@pytest.mark.parametrize("name", LEARNERS)
def test_mahalanobis_matrix_is_psd(name):
    est = fitted(name)
    M = est.get_mahalanobis_matrix()
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max())
    w = np.linalg.eigvalsh(M)
    assert w.min() >= -1e-10 * max(w.max(), 1.0)
    np.testing.assert_allclose(M, est.components_.T @ est.components_)


# -- MetricNearness -------------------------------------------------------

def _dissimilarities(min_n=3, max_n=7):
    @st.composite
    def build(draw):
        n = draw(st.integers(min_n, max_n))
        vals = draw(arrays(np.float64, n * (n - 1) // 2,
                           elements=st.floats(0, 10, allow_nan=False, width=64)))
        return squareform(vals)
    return build()


def _max_triangle_violation(M):
    # M_ij - M_ik - M_kj over all i, j, k
    return float(np.max(M[:, :, None] - M[:, None, :] - M.T[None, :, :]))


@SETTINGS
@given(D=_dissimilarities())
def test_metric_nearness_output_is_a_metric(D):
    est = MetricNearness(tol=1e-7).fit(D)
    M = est.metric_
    scale = max(D.max(), 1e-300)
    assert est.converged_
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * scale)
    assert np.all(np.diag(M) == 0)
    assert M.min() >= -1e-7 * scale
    assert _max_triangle_violation(M) <= 2e-7 * scale
    # never farther from D than D's own nearest metric candidates: the
    # objective is at most that of the constant metric c (c = mean of D)
    iu = np.triu_indices(len(D), 1)
    const = np.full(iu[0].size, D[iu].mean())
    assert est.objective_ <= np.sum((const - D[iu]) ** 2) + 1e-9 * scale**2


@SETTINGS
@given(P=arrays(np.float64, (6, 2), elements=FINITE),
       which=st.sampled_from(["euclidean", "cityblock", "chebyshev"]))
def test_metric_nearness_keeps_a_metric(P, which):
    D = squareform(pdist(P, which))
    est = MetricNearness(tol=1e-8).fit(D)
    scale = max(D.max(), 1e-300)
    np.testing.assert_allclose(est.metric_, D, rtol=0, atol=1e-7 * scale)


@SETTINGS
@given(D=_dissimilarities(max_n=6),
       c=st.sampled_from([1e-150, 1e-3, 0.37, 3.0, 1e5, 1e150]))
def test_metric_nearness_commutes_with_scaling(D, c):
    # c * D must not leave the normal floating-point range (D = 1e-240, c =
    # 1e-150 underflows to the zero matrix: nothing left to commute with)
    assume(np.all(c * D[D > 0] >= np.finfo(float).tiny))
    ref = MetricNearness(tol=1e-8).fit(D)
    est = MetricNearness(tol=1e-8).fit(c * D)
    scale = max(D.max(), 1e-300)
    np.testing.assert_allclose(est.metric_ / c, ref.metric_, rtol=0, atol=1e-6 * scale)


@settings(max_examples=15, deadline=None)
@given(D=_dissimilarities(max_n=6))
def test_metric_nearness_kl_output_is_a_metric(D):
    D = D + 0.05 * (1 - np.eye(len(D)))  # KL needs D > 0 off the diagonal
    est = MetricNearness(divergence="kl", tol=1e-7).fit(D)
    M = est.metric_
    assert est.converged_
    assert M[~np.eye(len(M), dtype=bool)].min() > 0
    assert _max_triangle_violation(M) <= 2e-7 * D.max()
    # KL(M || D) >= 0, and 0 exactly when D is already a metric
    assert est.objective_ >= -1e-12
