"""The Bregman driver on LogDet: kernels vs a numpy loop, fixed point vs cvxpy.

The problem that ITML's Bregman iteration solves (Davis et al., ICML 2007,
with the exact projection step)::

    min_{A > 0, xi > 0}  D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)
    s.t.                 delta_c (v_c^T A v_c - xi_c) <= 0

with D_ld(A, A0) = tr(A A0^-1) - log det (A A0^-1) - d and, for scalars,
D_ld(x, y) = x/y - log(x/y) - 1.  Its KKT conditions, with duals lambda >= 0:
A^-1 = A0^-1 + sum_c lambda_c delta_c v_c v_c^T;
gamma / xi_c = gamma / xi0_c - lambda_c delta_c;
lambda_c (v_c^T A v_c - xi_c) = 0.
"""

import io

import numpy as np
import pytest

from metric_estimators import _backend
from metric_estimators._kernels.bregman import (
    hildreth_correction,
    logdet_sweep,
    logdet_violations,
    sym_matvec,
)
from metric_estimators._reporting import FitReport
from metric_estimators.solvers.active_sets import LogDetPairConstraints
from metric_estimators.solvers.bregman import (
    TABLE_COLUMNS,
    bregman_project_forget,
    logdet_bregman,
)
from metric_estimators.solvers.oracles import FixedListOracle


# ---------------------------------------------------------------- references
def numpy_logdet_sweep(A, V, delta, xi, lam, idx, gamma):
    """Plain numpy reference of one sweep (the formulas, nothing fused)."""
    gp = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    for c in idx:
        v = V[c]
        w = A @ v
        p = v @ w
        if p <= 1e-300:
            continue
        s, x = delta[c], xi[c]
        theta = s * gp * (1.0 / p - 1.0 / x)
        alpha = min(lam[c], theta)
        lam[c] -= alpha
        if alpha == 0:
            continue
        beta = s * alpha / (1.0 - s * alpha * p)
        if not np.isinf(gamma):
            xi[c] = gamma * x / (gamma + s * alpha * x)
        A += beta * np.outer(w, w)


def random_problem(rng, d, m, spread=3.0):
    X = rng.standard_normal((2 * m, d))
    V = X[:m] - X[m:]
    delta = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    sq = np.einsum("ij,ij->i", V, V)
    lo, hi = np.percentile(sq, [30, 70])
    xi0 = np.where(delta > 0, lo / spread, hi * spread)
    B = rng.standard_normal((d, d))
    A0 = B @ B.T / d + np.eye(d)
    return A0, V, delta, xi0


def kkt_residuals(A, A0, V, delta, xi, xi0, lam, gamma):
    """Relative residuals of the KKT conditions listed in the module docstring."""
    Ainv = np.linalg.inv(A)
    rhs = np.linalg.inv(A0) + (V.T * (lam * delta)) @ V
    stat = np.abs(Ainv - rhs).max() / np.abs(Ainv).max()
    p = np.einsum("ij,jk,ik->i", V, A, V)
    feas = max(0.0, np.max(delta * (p - xi) / xi))
    comp = np.max(lam * np.abs(p - xi) / xi) / max(lam.max(), 1e-300)
    if np.isinf(gamma):
        slack = np.abs(xi - xi0).max() / xi0.max()
    else:
        slack = np.max(np.abs(gamma / xi - (gamma / xi0 - lam * delta)) * xi / gamma)
    return stat, feas, comp, slack


# ------------------------------------------------------------------ kernels
def test_hildreth_correction():
    assert hildreth_correction(0.0, 1.0) == (0.0, 0.0)  # satisfied, no dual
    assert hildreth_correction(0.5, 1.0) == (0.5, 0.0)  # give the dual back
    assert hildreth_correction(0.5, 0.2) == pytest.approx((0.2, 0.3))
    c, z = hildreth_correction(0.0, -0.7)  # violated: dual grows
    assert c == -0.7 and z == 0.7


@pytest.mark.parametrize("d", [1, 3, 8, 33])
def test_sym_matvec(d):
    rng = np.random.default_rng(d)
    B = rng.standard_normal((d, d))
    A = B + B.T
    v = rng.standard_normal(d)
    out = np.empty(d)
    sym_matvec(A, v, out)
    np.testing.assert_allclose(out, A @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.3, 1.0, 7.0, np.inf])
@pytest.mark.parametrize("d,m", [(2, 10), (5, 40), (17, 60)])
def test_kernel_matches_numpy_loop(d, m, gamma):
    rng = np.random.default_rng(d * 100 + m)
    A0, V, delta, xi0 = random_problem(rng, d, m)
    A1, A2 = A0.copy(), A0.copy()
    xi1, xi2 = xi0.copy(), xi0.copy()
    lam1, lam2 = np.zeros(m), np.zeros(m)
    w, wn = np.empty(d), np.empty(d)
    for sweep in range(6):
        # arbitrary index lists: permutations, subsets, repeats
        if sweep % 3 == 0:
            idx = rng.permutation(m)
        elif sweep % 3 == 1:
            idx = rng.choice(m, size=m // 2, replace=False)
        else:
            idx = rng.integers(0, m, size=m)
        idx = idx.astype(np.int64)
        change, viol, n_upd = logdet_sweep(A1, V, delta, xi1, lam1, idx, gamma, w, wn)
        numpy_logdet_sweep(A2, V, delta, xi2, lam2, idx, gamma)
        assert change >= 0 and viol >= 0 and 0 <= n_upd <= idx.size
    scale = np.abs(A2).max()
    assert np.abs(A1 - A2).max() <= 1e-10 * scale
    np.testing.assert_allclose(lam1, lam2, rtol=1e-10, atol=1e-10 * lam2.max())
    np.testing.assert_allclose(xi1, xi2, rtol=1e-10)
    assert np.array_equal(A1, A1.T)  # exactly symmetric
    assert np.all(np.linalg.eigvalsh(A1) > 0)


def test_kernel_empty_index_and_zero_vectors():
    d, m = 3, 4
    A = np.eye(d)
    V = np.zeros((m, d))
    V[2] = [1.0, 0.0, 0.0]
    delta = np.array([1.0, 1.0, -1.0, 1.0])
    xi = np.full(m, 4.0)
    lam = np.zeros(m)
    w, wn = np.empty(d), np.empty(d)
    assert logdet_sweep(A, V, delta, xi, lam, np.empty(0, np.int64), 1.0, w, wn) == (0.0, 0.0, 0)
    logdet_sweep(A, V, delta, xi, lam, np.arange(m, dtype=np.int64), 1.0, w, wn)
    assert np.all(np.isfinite(A))
    assert lam[0] == lam[1] == lam[3] == 0.0  # zero rows are skipped
    assert lam[2] > 0


def test_violations_kernel_matches_blas_check():
    rng = np.random.default_rng(3)
    A0, V, delta, xi0 = random_problem(rng, 6, 30)
    act = LogDetPairConstraints(A0, 1.0, random_state=0, kernels=_backend.NUMBA)
    assert act.add(np.arange(30), V, delta, xi0) == 30
    act.project()
    idx = np.arange(0, 30, 2)
    out = np.empty(idx.size)
    logdet_violations(act.A, act.V, act.delta, act.xi, idx.astype(np.int64), out)
    np.testing.assert_allclose(out, act.violations()[idx], rtol=1e-10, atol=1e-12)
    p = np.einsum("ij,jk,ik->i", V, act.A, V)
    np.testing.assert_allclose(act.violations(), delta * (p - act.xi) / act.xi,
                               rtol=1e-10, atol=1e-12)
    # the fixed-list oracle: the listed pairs outside the active set against
    # xi0, the remembered ones against their slack
    act.forget()
    oracle = FixedListOracle(V, delta, xi0, kernels=_backend.NUMBA)
    key, Vn, dn, xn, maxv = oracle(act.A, 0.0, act)
    outside = np.setdiff1d(np.arange(30), act.key)
    viol0 = delta * (p - xi0) / xi0
    np.testing.assert_array_equal(key, outside[viol0[outside] > 0])
    np.testing.assert_array_equal(Vn, V[key])
    assert maxv == pytest.approx(max(0.0, viol0[outside].max(),
                                     act.violations().max()), rel=1e-10)


# ------------------------------------------------------------ fixed point
def cvxpy_logdet(A0, V, delta, xi0, gamma):
    cp = pytest.importorskip("cvxpy")
    d, m = A0.shape[0], V.shape[0]
    A = cp.Variable((d, d), PSD=True)
    A0inv = np.linalg.inv(A0)
    obj = cp.trace(A0inv @ A) - cp.log_det(A)
    cons = []
    p = cp.hstack([cp.sum(cp.multiply(np.outer(V[c], V[c]), A)) for c in range(m)])
    xi = None
    if np.isinf(gamma):
        cons.append(cp.multiply(delta, p - xi0) <= 0)
    else:
        xi = cp.Variable(m, pos=True)
        obj = obj + gamma * cp.sum(xi / xi0 - cp.log(xi))
        cons.append(cp.multiply(delta, p - xi) <= 0)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10,
               tol_feas=1e-10)
    assert prob.status in ("optimal", "optimal_inaccurate")
    return A.value, (xi0 if xi is None else xi.value)


def objective(A, A0, xi, xi0, gamma):
    d = A.shape[0]
    M = A @ np.linalg.inv(A0)
    value = np.trace(M) - np.linalg.slogdet(M)[1] - d
    if np.isfinite(gamma):
        r = xi / xi0
        value += gamma * np.sum(r - np.log(r) - 1)
    return value


@pytest.mark.parametrize("gamma", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_fixed_point_matches_cvxpy(seed, gamma):
    rng = np.random.default_rng(seed)
    d, m = 4, 25
    A0, V, delta, xi0 = random_problem(rng, d, m)
    res = logdet_bregman(A0, V, delta, xi0, gamma, tol=1e-12, max_iter=20000,
                         random_state=seed, kernels=_backend.NUMBA)
    assert res.converged
    A_ref, obj_ref = cvxpy_logdet(A0, V, delta, xi0, gamma)
    # Clarabel (1e-10 gap settings) agrees to 1e-10 .. 5e-6 depending on the
    # instance: the comparison tolerance is the interior point solver's.  The
    # KKT residuals below (1e-9) are the sharp certificate of optimality.
    rel = np.abs(res.matrix - A_ref).max() / np.abs(A_ref).max()
    assert rel < 2e-5, rel
    obj = objective(res.matrix, A0, res.slack, xi0, gamma)
    # never worse than the interior point solution (up to its accuracy)
    assert obj <= objective(A_ref, A0, obj_ref, xi0, gamma) + 1e-6 * abs(obj)
    stat, feas, comp, slack = kkt_residuals(res.matrix, A0, V, delta, res.slack, xi0,
                                            res.duals, gamma)
    assert max(stat, feas, comp, slack) < 1e-9, (stat, feas, comp, slack)
    assert np.any(res.duals > 0) and np.any(res.duals == 0)  # a real active set


def test_fixed_point_hard_constraints_cvxpy():
    rng = np.random.default_rng(5)
    d, m = 3, 12
    # feasible by construction: bounds from a ground-truth metric, with margin
    V = rng.standard_normal((m, d))
    G = np.diag([3.0, 1.0, 0.2])
    p = np.einsum("ij,jk,ik->i", V, G, V)
    delta = np.where(p < np.median(p), 1.0, -1.0)
    xi0 = np.where(delta > 0, p * 1.1, p * 0.9)
    res = logdet_bregman(np.eye(d), V, delta, xi0, np.inf, tol=1e-12,
                         max_iter=50000, random_state=0, kernels=_backend.NUMBA)
    assert res.converged
    A_ref, _ = cvxpy_logdet(np.eye(d), V, delta, xi0, np.inf)
    assert np.abs(res.matrix - A_ref).max() / np.abs(A_ref).max() < 2e-5
    stat, feas, comp, slack = kkt_residuals(res.matrix, np.eye(d), V, delta,
                                            res.slack, xi0, res.duals, np.inf)
    assert max(stat, feas, comp, slack) < 1e-9
    assert np.array_equal(res.slack, xi0)


def test_large_gamma_enforces_constraints():
    rng = np.random.default_rng(7)
    d, m = 5, 30
    V = rng.standard_normal((m, d))
    G = np.diag([4.0, 2.0, 1.0, 0.5, 0.1])
    p = np.einsum("ij,jk,ik->i", V, G, V)
    delta = np.where(p < np.median(p), 1.0, -1.0)
    xi0 = np.where(delta > 0, p * 1.05, p * 0.95)
    res = logdet_bregman(np.eye(d), V, delta, xi0, 1e8, tol=1e-10,
                         max_iter=50000, random_state=0, kernels=_backend.NUMBA)
    assert res.converged
    q = np.einsum("ij,jk,ik->i", V, res.matrix, V)
    assert np.max(delta * (q - xi0) / xi0) < 1e-6
    # gamma = 1 leaves some of them violated (w.r.t. xi0): the test has teeth
    soft = logdet_bregman(np.eye(d), V, delta, xi0, 1.0, tol=1e-10, max_iter=50000, kernels=_backend.NUMBA)
    q1 = np.einsum("ij,jk,ik->i", V, soft.matrix, V)
    assert np.max(delta * (q1 - xi0) / xi0) > 1e-3


@pytest.mark.parametrize("shuffle", [True, False])
def test_active_set_gives_same_fixed_point(shuffle):
    rng = np.random.default_rng(11)
    A0, V, delta, xi0 = random_problem(rng, 6, 80)
    full = logdet_bregman(A0, V, delta, xi0, 1.0, tol=1e-11, max_iter=100000,
                          active_set=False, shuffle=shuffle, random_state=0, kernels=_backend.NUMBA)
    act = logdet_bregman(A0, V, delta, xi0, 1.0, tol=1e-11, max_iter=100000,
                         active_set=True, max_passes=3, shuffle=shuffle,
                         random_state=0, kernels=_backend.NUMBA)
    assert full.converged and act.converged
    assert np.abs(full.matrix - act.matrix).max() / np.abs(full.matrix).max() < 1e-8
    np.testing.assert_allclose(full.duals, act.duals, atol=1e-8 * full.duals.max())
    # plain cyclic projections swept everything; the active set skipped work
    assert min(full.history["n_active"]) == V.shape[0]
    assert min(act.history["n_active"]) < V.shape[0]


def test_result_bookkeeping_and_max_iter():
    rng = np.random.default_rng(2)
    A0, V, delta, xi0 = random_problem(rng, 4, 40)
    res = logdet_bregman(A0, V, delta, xi0, 1.0, tol=1e-12, max_iter=3, kernels=_backend.NUMBA)
    assert not res.converged
    assert res.n_iter == 3 and res.n_passes == 3
    for values in res.history.values():
        assert len(values) == 3
    h = res.history
    # the first check adds every constraint violated at A0
    p = np.einsum("ij,jk,ik->i", V, A0, V)
    assert h["n_added"][0] == np.count_nonzero(delta * (p - xi0) > 0)
    n_swept = [a + f for a, f in zip(h["n_active"], h["n_forgotten"])]
    assert res.n_projections == sum(n_swept) + sum(h["n_added"])
    assert res.objective == h["objective"][-1]
    stream = io.StringIO()
    report = FitReport("T", TABLE_COLUMNS, verbose=2, stream=stream)
    res = logdet_bregman(A0, V, delta, xi0, 1.0, tol=1e-3, max_iter=50,
                         report=report, kernels=_backend.NUMBA)
    rows = stream.getvalue().splitlines()
    assert "Iteration" in rows[0] and "Residual" in rows[0]
    assert len(rows) == 2 + res.n_iter and rows[2].split()[1] == "1"


def test_reproducible_with_random_state():
    rng = np.random.default_rng(4)
    A0, V, delta, xi0 = random_problem(rng, 5, 50)
    r1 = logdet_bregman(A0, V, delta, xi0, 1.0, tol=1e-4, random_state=3, kernels=_backend.NUMBA)
    r2 = logdet_bregman(A0, V, delta, xi0, 1.0, tol=1e-4, random_state=3, kernels=_backend.NUMBA)
    assert np.array_equal(r1.matrix, r2.matrix) and r1.n_iter == r2.n_iter


class HalfspaceConstraints:
    """A minimal active set: half-spaces ``a_c^T x <= b_c`` under squared L2."""

    def __init__(self, x, Acon, b):
        self.x, self.Acon, self.b = x, Acon, b
        self.key = np.empty(0, np.int64)
        self.z = np.empty(0)

    point = property(lambda self: self.x)
    nnz = property(lambda self: self.key.size)

    def __len__(self):
        return self.key.size

    def add(self, key):
        self.key = np.concatenate((self.key, key))
        self.z = np.concatenate((self.z, np.zeros(key.size)))
        return key.size

    def project(self, start=0):
        resid = 0.0
        for k in range(start, self.key.size):
            a, bc = self.Acon[self.key[k]], self.b[self.key[k]]
            r = bc - a @ self.x
            # complementary slackness: violated, or slack with a positive dual
            resid = max(resid, -r, r if self.z[k] > 0 else 0.0)
            step, self.z[k] = hildreth_correction(self.z[k], r / (a @ a))
            self.x += step * a
        return resid

    def forget(self):
        keep = self.z > 0
        self.key, self.z = self.key[keep], self.z[keep]
        return int(keep.size - keep.sum())


def test_generic_driver_with_l2_divergence():
    """The driver is divergence-agnostic: nearest point in a polyhedron."""
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(0)
    n, m = 6, 20
    Acon = rng.standard_normal((m, n))
    b = rng.standard_normal(m)
    x0 = rng.standard_normal(n) * 3
    x = x0.copy()
    active = HalfspaceConstraints(x, Acon, b)

    def oracle(x, threshold, active):
        viol = Acon @ x - b
        new = np.setdiff1d(np.flatnonzero(viol > threshold), active.key)
        return new, max(viol.max(), 0.0)

    res = bregman_project_forget(
        active, oracle, objective=lambda x: 0.5 * np.sum((x - x0) ** 2),
        tol=1e-12, max_iter=100000, max_passes=5)
    assert res.converged and res.point is x
    z = np.zeros(m)
    z[active.key] = active.z
    xv = cp.Variable(n)
    cp.Problem(cp.Minimize(cp.sum_squares(xv - x0)), [Acon @ xv <= b]).solve(solver="CLARABEL")
    np.testing.assert_allclose(x, xv.value, atol=1e-6)
    np.testing.assert_allclose(x, x0 - Acon.T @ z, atol=1e-9)  # KKT
