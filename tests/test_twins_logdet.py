"""The LogDet pair-constraint family: numpy twins against their numba kernels.

:mod:`metric_estimators._kernels.numpy.bregman` and
:mod:`metric_estimators._kernels.numpy.pair_oracle` stand for the kernels of
ITML, ITML_Supervised and ProjectAndForget (families ``"logdet_listed"`` and
``"logdet_all_pairs"`` of :data:`metric_estimators._backend.FAMILIES`).  Each
twin must give its kernel's results (to rounding; the ring buffers of the
pair scan slot for slot), each estimator the same solution on both paths
(to its tolerance), the fit must ask :func:`~metric_estimators._backend.choose`
once with its family and size, and a first fit within the limits on an
empty cache must not load numba.
"""

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from metric_estimators import ITML, ITML_Supervised, ProjectAndForget, _backend
from metric_estimators._kernels import bregman as nb_bregman
from metric_estimators._kernels import pair_oracle as nb_pairs
from metric_estimators._kernels.numpy import bregman as np_bregman
from metric_estimators._kernels.numpy import pair_oracle as np_pairs
from metric_estimators.solvers.active_sets import (
    LogDetPairConstraints,
    LogDetPointPairConstraints,
)
from metric_estimators.solvers.oracles import FixedListOracle, LabelPairOracle

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# bregman: the LogDet sweep and checks

def _logdet_problem(seed, d=5, m=40, scale=1.0):
    rng = np.random.RandomState(seed)
    B = rng.randn(d, d)
    A = (B @ B.T + d * np.eye(d)) * scale ** -2
    V = rng.randn(m, d) * scale
    V[3] = 0.0                                  # p == 0: skipped
    delta = np.where(rng.rand(m) < 0.5, 1.0, -1.0)
    p = np.einsum("ij,jk,ik->i", V, A, V)
    xi = np.where(delta > 0, 0.5, 2.0) * np.maximum(p, 1e-3)  # all violated
    xi[3] = 1.0
    lam = np.where(rng.rand(m) < 0.3, rng.rand(m), 0.0)
    return A, V, delta, xi, lam


def _both_sweeps(A, V, delta, xi, lam, idx, gamma):
    states = [[A.copy(), xi.copy(), lam.copy()] for _ in range(2)]
    outs = []
    for (A_, xi_, lam_), mod in zip(states, (np_bregman, nb_bregman)):
        w, wn = np.empty(A.shape[0]), np.empty(A.shape[0])
        outs.append(mod.logdet_sweep(A_, V, delta, xi_, lam_, idx, gamma, w, wn))
    return outs, states


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("gamma", [1.0, 0.3, np.inf])
@pytest.mark.parametrize("scale", [1.0, 1e-60, 1e60])
def test_logdet_sweep_matches_the_kernel(seed, gamma, scale):
    A, V, delta, xi, lam = _logdet_problem(seed, scale=scale)
    rng = np.random.RandomState(seed)
    idx = np.concatenate((rng.permutation(V.shape[0]), [5, 5, 7])).astype(np.int64)
    ((ca, va, ua), (cb, vb, ub)), states = _both_sweeps(A, V, delta, xi, lam,
                                                         idx, gamma)
    # a repeated projection right after the first has theta ~ 0: whether it
    # counts as an update is decided by the last bit
    assert ub > 30 and abs(ua - ub) <= 3
    np.testing.assert_allclose([ca, va], [cb, vb], rtol=1e-9)
    for a, b in zip(states[0], states[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max())
    A_np = states[0][0]
    assert np.array_equal(A_np, A_np.T)         # exactly symmetric
    assert np.all(states[0][2] >= 0)
    out_a, out_b = np.empty(idx.size), np.empty(idx.size)
    np_bregman.logdet_violations(A_np, V, delta, states[0][1], idx, out_a)
    nb_bregman.logdet_violations(A_np, V, delta, states[0][1], idx, out_b)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("d", [1, 13, 64])
def test_logdet_sweep_matches_the_kernel_over_many_sweeps(d):
    # a long chain of rank-one updates (ProjectAndForget's active sets)
    rng = np.random.RandomState(d)
    m = 600
    V = rng.randn(m, d)
    delta = np.where(rng.rand(m) < 0.3, 1.0, -1.0)
    xi = np.where(delta > 0, 0.3, 3.0) * d
    A, lam = np.eye(d), np.zeros(m)
    states = [[A.copy(), xi.copy(), lam.copy()] for _ in range(2)]
    for sweep in range(5):
        idx = rng.permutation(m).astype(np.int64)
        outs = []
        for (A_, xi_, lam_), mod in zip(states, (np_bregman, nb_bregman)):
            outs.append(mod.logdet_sweep(A_, V, delta, xi_, lam_, idx, 1.0,
                                         np.empty(d), np.empty(d)))
        np.testing.assert_allclose(outs[0][:2], outs[1][:2], rtol=1e-8)
        assert abs(outs[0][2] - outs[1][2]) <= 2
    for a, b in zip(*states):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * np.abs(b).max())
    assert np.array_equal(states[0][0], states[0][0].T)


def test_logdet_sweep_of_nothing():
    A, V, delta, xi, lam = _logdet_problem(0)
    w = np.empty(A.shape[0])
    for mod in (np_bregman, nb_bregman):
        A_ = A.copy()
        assert mod.logdet_sweep(A_, V, delta, xi, lam, np.empty(0, np.int64),
                                1.0, w, w.copy()) == (0.0, 0.0, 0)
        assert np.array_equal(A_, A)


def test_logdet_sweep_that_changes_nothing_leaves_the_bits():
    # every constraint satisfied and every dual zero: no projection moves A
    A, V, delta, xi, lam = _logdet_problem(1)
    p = np.einsum("ij,jk,ik->i", V, A, V)
    xi = np.where(delta > 0, 2.0, 0.5) * np.maximum(p, 1e-3)
    lam = np.zeros_like(lam)
    idx = np.arange(V.shape[0], dtype=np.int64)
    ((ca, va, ua), (cb, vb, ub)), states = _both_sweeps(A, V, delta, xi, lam,
                                                         idx, 1.0)
    assert (ca, ua, cb, ub) == (0.0, 0, 0.0, 0)
    assert va == vb == 0.0
    for a, b in zip(*states):
        assert np.array_equal(a, b)
    assert np.array_equal(states[0][0], A)


def test_logdet_sweep_refuses_a_matrix_it_would_not_update_in_place():
    A, V, delta, xi, lam = _logdet_problem(0)
    idx = np.arange(V.shape[0], dtype=np.int64)
    w = np.empty(A.shape[0])
    with pytest.raises(ValueError, match="C-contiguous"):
        np_bregman.logdet_sweep(np.asfortranarray(A + 1e-3 * np.ones_like(A)),
                                V, delta, xi, lam, idx, 1.0, w, w.copy())


def test_logdet_violations_and_helpers_match_the_kernel():
    A, V, delta, xi, _ = _logdet_problem(2, scale=1e30)
    idx = np.array([0, 3, 7, 7, 39], dtype=np.int64)
    out_a, out_b = np.full(idx.size, np.nan), np.full(idx.size, np.nan)
    np_bregman.logdet_violations(A, V, delta, xi, idx, out_a)
    nb_bregman.logdet_violations(A, V, delta, xi, idx, out_b)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-12, atol=1e-15)
    empty = np.empty(0, np.int64)
    np_bregman.logdet_violations(A, V, delta, xi, empty, np.empty(0))
    u, v = np.empty(5), np.empty(5)
    np_bregman.sym_matvec(A, V[1], u)
    nb_bregman.sym_matvec(A, V[1], v)
    np.testing.assert_allclose(u, v, rtol=1e-12)
    for z, theta in ((0.0, -1.0), (0.5, 0.2), (0.5, 0.7), (0.3, 0.3)):
        assert np_bregman.hildreth_correction(z, theta) == \
            nb_bregman.hildreth_correction.py_func(z, theta)


def test_active_set_runs_on_the_kernels_it_is_given():
    A, V, delta, xi, _ = _logdet_problem(0)
    sets = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        act = LogDetPairConstraints(A, 1.0, random_state=0, kernels=kernels)
        act.add(np.arange(V.shape[0]), V, delta, xi)
        for _ in range(4):
            act.project()
        act.forget()
        sets.append(act)
    a, b = sets
    assert a.kernels is _backend.NUMPY and b.kernels is _backend.NUMBA
    np.testing.assert_array_equal(a.key, b.key)
    np.testing.assert_allclose(a.A, b.A, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.violations(), b.violations(), rtol=1e-9,
                               atol=1e-12)


# ---------------------------------------------------------------------------
# pair_oracle: the labelled-pair scan

def _scan_inputs(seed, n=70, d=3, scale=1.0, n_skip=300):
    rng = np.random.RandomState(seed)
    Z = rng.randn(n, d) * scale
    if n > 5:
        Z[5] = Z[4]                             # identical points
    y = rng.randint(0, 3, n).astype(np.int64)
    skip = np.unique(rng.randint(0, n * n, n_skip))
    skip = skip[skip // n < skip % n]
    srow, scol = skip // n, (skip % n).astype(np.int64)
    start = np.searchsorted(srow, np.arange(n + 1)).astype(np.int64)
    sq = np.einsum("ij,ij->i", Z, Z)
    return Z, sq, y, start, scol


def _both_scans(Z, sq, y, i0, i1, low, high, tol, start, cols, cap):
    outs = []
    for mod in (np_pairs, nb_pairs):
        B = i1 - i0
        ki = np.full((B, cap), -1, np.int64)
        kj = np.full((B, cap), -1, np.int64)
        kv = np.full((B, cap), np.nan)
        counts = np.full(B, -1, np.int64)
        rowmax = np.full(B, np.nan)
        mod.scan_pair_block(Z, sq, y, i0, i1, low, high, tol, start, cols,
                            ki, kj, kv, counts, rowmax)
        outs.append((ki, kj, kv, counts, rowmax))
    return outs


@pytest.mark.parametrize("cap", [1, 3, 1000])
@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e100])
@pytest.mark.parametrize("with_skip", [False, True])
def test_scan_pair_block_matches_the_kernel(cap, scale, with_skip):
    Z, sq, y, start, cols = _scan_inputs(cap, scale=scale,
                                         n_skip=300 if with_skip else 0)
    low, high = 2.0 * scale ** 2, 6.0 * scale ** 2
    for i0, i1 in ((0, 70), (0, 16), (16, 32), (64, 70), (69, 70)):
        a, b = _both_scans(Z, sq, y, i0, i1, low, high, 0.05, start, cols, cap)
        np.testing.assert_array_equal(a[3], b[3])           # counts
        assert b[3][:i1 - i0 - 1].sum() > 0 or i1 - i0 == 1
        np.testing.assert_allclose(a[4], b[4], rtol=1e-12)  # row maxima
        # the ring buffers: the same pairs in the same slots
        filled = np.arange(cap)[None, :] < np.minimum(b[3], cap)[:, None]
        np.testing.assert_array_equal(a[0][filled], b[0][filled])
        np.testing.assert_array_equal(a[1][filled], b[1][filled])
        np.testing.assert_allclose(a[2][filled], b[2][filled], rtol=1e-12)


def test_scan_pair_block_of_a_block_without_pairs():
    Z, sq, y, start, cols = _scan_inputs(0, n=4)
    # the last row has no pair i < j: nothing counted, nothing kept
    a, b = _both_scans(Z, sq, y, 3, 4, 1.0, 2.0, 0.0, start, cols, 5)
    for x in (a, b):
        assert x[3][0] == 0 and x[4][0] == 0.0
        assert np.all(x[0] == -1)


@pytest.mark.parametrize("with_skip", [False, True])
@pytest.mark.parametrize("max_new", [40, None])
def test_label_pair_oracle_same_pairs_on_both_paths(with_skip, max_new):
    rng = np.random.RandomState(1)
    n = 70
    X = rng.randn(n, 3)
    X[5] = X[4]
    y = rng.randint(0, 3, n)
    A = np.cov(rng.randn(3, 10)) + np.eye(3)
    found = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        oracle = LabelPairOracle(X, y, 2.0, 6.0, block_size=16,
                                 max_new=max_new, kernels=kernels)
        act = LogDetPointPairConstraints(np.eye(3), 1.0, X, (2.0, 6.0),
                                         random_state=0, kernels=kernels)
        if with_skip:
            I, J, delta, _ = oracle(A, 0.05, act)
            act.add(I[::3], J[::3], delta[::3])
            act.project()
        found.append((oracle(A, 0.05, act), dict(oracle.log)))
    (a, la), (b, lb) = found
    assert la["n_violated"] == lb["n_violated"]
    assert la["n_active_violated"] == lb["n_active_violated"]
    assert lb["n_violated"][-1] > 40
    # the 40 most violated (or all), in scan order
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    assert a[0].size == (40 if max_new else lb["n_violated"][-1])
    assert a[3] == pytest.approx(b[3], rel=1e-12)


@pytest.mark.parametrize("gamma", [1.0, 0.3, np.inf])
@pytest.mark.parametrize("scale", [1.0, 1e-60, 1e60])
def test_logdet_pair_sweep_matches_the_kernel_and_the_listed_sweep(gamma,
                                                                   scale):
    rng = np.random.RandomState(4)
    n, d, m = 30, 4, 120
    X = rng.randn(n, d) * scale
    X[7] = X[6]                                 # a zero difference: skipped
    I = rng.randint(0, n, m).astype(np.int32)
    J = ((I + 1 + rng.randint(0, n - 1, m)) % n).astype(np.int32)
    I[0], J[0] = 6, 7
    delta = np.where(rng.rand(m) < 0.5, 1, -1).astype(np.int8)
    xi = np.where(delta > 0, 0.3, 3.0) * scale ** 2
    lam = np.where(rng.rand(m) < 0.3, rng.rand(m), 0.0) / scale ** 2
    order = np.concatenate((rng.permutation(m), [5, 5, 9])).astype(np.int32)
    A0 = np.eye(d) + 0.1 * np.ones((d, d))
    states, outs = [], []
    for run in ("numpy", "numba", "listed"):
        A, x, z = A0.copy(), xi.copy(), lam.copy()
        w, wn, v, vn = (np.empty(d) for _ in range(4))
        for _ in range(3):
            if run == "listed":
                out = nb_bregman.logdet_sweep(
                    A, np.ascontiguousarray(X[I] - X[J]),
                    delta.astype(np.float64), x, z, order.astype(np.int64),
                    gamma, w, wn)
            else:
                mod = np_bregman if run == "numpy" else nb_bregman
                out = mod.logdet_pair_sweep(A, X, I, J, delta, x, z, order,
                                            gamma, w, wn, v, vn)
        states.append((A, x, z))
        outs.append(out)
    # the kernel is the listed sweep, bit for bit
    for a, b in zip(states[1], states[2]):
        assert np.array_equal(a, b)
    assert outs[1] == outs[2] and outs[1][2] > 30
    # the twin, to rounding
    for a, b in zip(states[0], states[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9,
                                   atol=1e-12 * np.abs(b).max())
    np.testing.assert_allclose(outs[0][:2], outs[1][:2], rtol=1e-9)
    empty = np.empty(0, np.int32)
    assert np_bregman.logdet_pair_sweep(A0, X, I, J, delta, xi, lam, empty,
                                        1.0, *(np.empty(d),) * 4) == (0.0, 0.0, 0)


@pytest.mark.parametrize("scale", [1.0, 1e-80, 1e80])
def test_active_pair_residuals_match_the_kernel(scale):
    rng = np.random.RandomState(5)
    n, d, m = 40, 3, 200
    Z = rng.randn(n, d) * scale
    I = rng.randint(0, n, m).astype(np.int32)
    J = ((I + 1 + rng.randint(0, n - 1, m)) % n).astype(np.int32)
    delta = np.where(rng.rand(m) < 0.5, 1, -1).astype(np.int8)
    dist = np.sum((Z[I] - Z[J]) ** 2, axis=1)
    xi = dist * np.exp(rng.randn(m) * 0.01)      # near tight
    lam = np.where(rng.rand(m) < 0.5, rng.rand(m), 0.0)
    for tol in (0.0, 1e-3, 1e-2, 1.0):
        a = np_pairs.active_pair_residuals(Z, I, J, delta, xi, lam, tol)
        b = nb_pairs.active_pair_residuals(Z, I, J, delta, xi, lam, tol)
        assert a[1] == b[1]
        assert a[0] == pytest.approx(b[0], rel=1e-12)
    r = (dist - xi) / xi
    ref = np.where(lam > 0, np.abs(r), delta * r)
    assert b[0] == pytest.approx(max(0.0, ref.max()), rel=1e-12)
    for mod in (np_pairs, nb_pairs):
        e = np.empty(0, np.int32)
        assert mod.active_pair_residuals(Z, e, e, np.empty(0, np.int8),
                                         np.empty(0), np.empty(0), 0.1) == (0.0, 0)


def test_point_pair_active_set_runs_on_the_kernels_it_is_given():
    rng = np.random.RandomState(6)
    n, d = 50, 4
    X = rng.randn(n, d)
    I, J = np.triu_indices(n, 1)
    delta = np.where(rng.rand(I.size) < 0.3, 1, -1)
    sets = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        act = LogDetPointPairConstraints(np.eye(d), 1.0, X, (1.0, 8.0),
                                         random_state=0, kernels=kernels)
        act.add(I, J, delta)
        for _ in range(4):
            act.project()
        act.forget()
        sets.append(act)
    a, b = sets
    np.testing.assert_array_equal(a.key, b.key)
    assert 0 < len(b) < I.size
    np.testing.assert_allclose(a.A, b.A, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.violations(), b.violations(), rtol=1e-9,
                               atol=1e-12)
    assert b.nbytes == 25 * len(b)


def test_fixed_list_oracle_same_on_both_paths():
    A, V, delta, xi, _ = _logdet_problem(3)
    got = []
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        act = LogDetPairConstraints(A, 1.0, kernels=kernels)
        act.add(np.array([1, 2]), V[1:3], delta[1:3], xi[1:3])
        got.append(FixedListOracle(V, delta, xi, kernels=kernels)(A, 0.0, act))
    for x, z in zip(*got):
        np.testing.assert_allclose(x, z, rtol=1e-12)


# ---------------------------------------------------------------------------
# the fits: the path chosen once, the same solution on both paths

def test_the_fit_asks_once_with_its_family_and_size(monkeypatch):
    calls = []
    real = _backend.choose

    def spy(family, *size):
        kernels = real(family, *size)
        calls.append((family, size, kernels))
        return kernels

    monkeypatch.setattr(_backend, "choose", spy)
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ITML_Supervised(random_state=0).fit(X, y)
        ProjectAndForget(random_state=0, max_iter=3).fit(X[::2], y[::2])
    assert [c[:2] for c in calls] == [("logdet_listed", (360, 4)),
                                     ("logdet_all_pairs", (75 * 74 // 2, 4))]
    assert all(c[2] is _backend.NUMPY for c in calls)   # the tests' mode


def test_the_limits_of_the_families(monkeypatch):
    from metric_estimators import _compilation

    listed, dim = _backend.FAMILIES["logdet_listed"].limits
    pairs, pdim = _backend.FAMILIES["logdet_all_pairs"].limits
    assert _backend.within_limits("logdet_listed", listed, dim)
    assert not _backend.within_limits("logdet_listed", listed + 1, dim)
    assert not _backend.within_limits("logdet_listed", 10, dim + 1)
    # the most points whose pairs fit the limit, and one more
    n = int((1 + np.sqrt(1 + 8 * pairs)) // 2)
    assert n * (n - 1) // 2 <= pairs < n * (n + 1) // 2
    assert _backend.within_limits("logdet_all_pairs", n * (n - 1) // 2, pdim)
    assert not _backend.within_limits("logdet_all_pairs", n * (n + 1) // 2, pdim)
    # ProjectAndForget on wine (15,753 pairs in 13 dimensions) is within
    assert _backend.within_limits("logdet_all_pairs", 15_753, 13)
    with _backend.use("auto"):
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: False)
        assert _backend.choose("logdet_listed", 10, 4) is _backend.NUMPY
        assert _backend.choose("logdet_all_pairs", 10, 4) is _backend.NUMPY
        assert _backend.choose("logdet_listed", listed + 1, 4) is _backend.NUMBA
        assert _backend.choose("logdet_all_pairs", pairs + 1, 4) is _backend.NUMBA
        monkeypatch.setattr(_compilation, "kernels_ready", lambda names: True)
        assert _backend.choose("logdet_listed", 10, 4) is _backend.NUMBA
        assert _backend.choose("logdet_all_pairs", 10, 4) is _backend.NUMBA
    with _backend.use("numba"):
        assert _backend.choose("logdet_all_pairs", 10, 4) is _backend.NUMBA
    with _backend.use("numpy"):
        assert _backend.choose("logdet_listed", 10 ** 9, 10 ** 4) is _backend.NUMPY


def _both_paths(make, *args):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in ("numpy", "numba"):
            with _backend.use(path):
                out.append(make().fit(*args))
    return out


def _standardised(load, scale=1.0):
    X, y = load(return_X_y=True)
    return StandardScaler().fit_transform(X) * scale, y


@pytest.mark.parametrize("scale", [1.0, 1e-80, 1e80])
@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_itml_supervised_same_on_both_paths(load, scale):
    X, y = _standardised(load, scale)
    a, b = _both_paths(lambda: ITML_Supervised(random_state=0), X, y)
    assert a.n_iter_ == b.n_iter_
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    np.testing.assert_allclose(Ma, Mb, rtol=1e-9, atol=1e-9 * np.abs(Mb).max())


@pytest.mark.parametrize("gamma, n_pairs", [(1.0, 120), (10.0, 60)])
def test_itml_pairs_same_on_both_paths(gamma, n_pairs):
    X, y = _standardised(load_iris)
    rng = np.random.RandomState(0)
    i, j = rng.randint(0, 150, (2, n_pairs))
    keep = i != j
    pairs = np.stack([X[i[keep]], X[j[keep]]], axis=1)
    labels = np.where(y[i[keep]] == y[j[keep]], 1, -1)
    a, b = _both_paths(lambda: ITML(gamma=gamma, random_state=0, max_iter=3000),
                       pairs, labels)
    assert a.n_iter_ == b.n_iter_ < 3000
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    np.testing.assert_allclose(Ma, Mb, rtol=1e-8, atol=1e-8 * np.abs(Mb).max())


@pytest.mark.parametrize("data, scale", [("iris[::2]", 1.0), ("iris[::2]", 1e-80),
                                         ("wine", 1.0)])
def test_project_and_forget_same_on_both_paths(data, scale):
    X, y = _standardised(load_iris if data.startswith("iris") else load_wine, scale)
    if data == "iris[::2]":
        X, y = X[::2], y[::2]
    a, b = _both_paths(lambda: ProjectAndForget(random_state=0), X, y)
    assert a.converged_ and b.converged_
    Ma, Mb = a.get_mahalanobis_matrix(), b.get_mahalanobis_matrix()
    # the two paths may add constraints in another order: same fixed point,
    # to the solver's tolerance (relative violations and dual change 1e-3)
    np.testing.assert_allclose(Ma, Mb, rtol=0, atol=1e-3 * np.abs(Mb).max())
    assert a.loss_curve_[-1] == pytest.approx(b.loss_curve_[-1], rel=1e-3)


def test_first_fits_within_the_limits_load_no_numba(tmp_path):
    # the first-contact cases, in a fresh process on an empty numba cache
    code = textwrap.dedent("""
        import json, sys, warnings
        warnings.simplefilter("ignore")
        from sklearn.datasets import load_breast_cancer, load_wine
        from sklearn.preprocessing import StandardScaler
        import metric_estimators as me
        X, y = load_wine(return_X_y=True)
        me.ProjectAndForget(random_state=0).fit(StandardScaler().fit_transform(X), y)
        X, y = load_breast_cancer(return_X_y=True)
        me.ITML_Supervised(random_state=0).fit(StandardScaler().fit_transform(X), y)
        print(json.dumps(sorted(m for m in sys.modules
                                if m == "numba" or m.startswith("metric_estimators._kernels"))))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env[_backend.VARIABLE] = "auto"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env=env, timeout=600, cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-3000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "numba" not in loaded
    assert all(m.startswith("metric_estimators._kernels.numpy")
               or m == "metric_estimators._kernels" for m in loaded), loaded
