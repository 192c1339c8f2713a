"""MMC: the convex problems against cvxpy, the optimality certificate, and
the pairs-classifier face."""

import numpy as np
import pytest

import metric_estimators.mmc as mmc_module
from metric_estimators import MMC, MMC_Supervised
from metric_estimators._problems.mmc import MMCDiagonalProblem, MMCFullProblem


def small_pairs(seed=0, n=14, d=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(2 * n, d) * np.array([1.0, 2.0, 0.5])[:d]
    y = (X[:, 0] + 0.3 * rng.randn(2 * n) > 0).astype(int)
    i, j = rng.randint(0, 2 * n, (2, 6 * n))
    keep = i != j
    i, j = i[keep], j[keep]
    pairs = np.stack([X[i], X[j]], axis=1)
    labels = np.where(y[i] == y[j], 1, -1)
    return pairs, labels


def full_objective(A, V_sim, V_dis):
    """Sum of dissimilar distances, with A scaled to sum_S d^2 = 1."""
    A = A / np.einsum("ij,jk,ik->", V_sim, A, V_sim)
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", V_dis, A, V_dis), 0)).sum(), A


def test_full_matches_cvxpy(cp):
    pairs, y = small_pairs()
    V = pairs[:, 0] - pairs[:, 1]
    V_sim, V_dis = V[y == 1], V[y == -1]
    d = V.shape[1]
    A = cp.Variable((d, d), PSD=True)
    W = V_sim.T @ V_sim
    dist = cp.hstack([cp.sqrt(cp.sum(cp.multiply(A, np.outer(v, v)))) for v in V_dis])
    prob = cp.Problem(cp.Maximize(cp.sum(dist)), [cp.trace(A @ W) <= 1])
    prob.solve(solver=cp.SCS, eps=1e-9, max_iters=200000)
    mmc = MMC(solver="exact", tol=1e-9, max_iter=5000).fit(pairs, y)
    ours, A_ours = full_objective(mmc.get_mahalanobis_matrix(), V_sim, V_dis)
    ref, A_ref = full_objective(A.value, V_sim, V_dis)
    assert ours >= ref * (1 - 1e-5)
    np.testing.assert_allclose(ours, prob.value, rtol=1e-4)
    # the formulation fixes the scale: sum_S d^2 = 1 at the optimum
    np.testing.assert_allclose(
        np.einsum("ij,jk,ik->", V_sim, mmc.get_mahalanobis_matrix(), V_sim), 1.0,
        rtol=1e-6)
    np.testing.assert_allclose(A_ours, A_ref, atol=2e-3 * np.abs(A_ref).max())
    assert mmc.converged_ and mmc.gap_ <= 1e-9


def test_diagonal_matches_cvxpy(cp):
    pairs, y = small_pairs(seed=1)
    V = pairs[:, 0] - pairs[:, 1]
    V_sim, V_dis = V[y == 1], V[y == -1]
    c = 2.0
    w = cp.Variable(V.shape[1], nonneg=True)
    s = np.sum(V_sim ** 2, axis=0)
    prob = cp.Problem(cp.Minimize(
        s @ w - c * cp.log(cp.sum(cp.sqrt((V_dis ** 2) @ w)))))
    prob.solve()
    mmc = MMC(diagonal=True, diagonal_c=c, tol=1e-12, max_iter=1000).fit(pairs, y)
    A = mmc.get_mahalanobis_matrix()
    np.testing.assert_allclose(A, np.diag(np.diag(A)), atol=1e-12)
    problem = MMCDiagonalProblem(V_sim, V_dis, c)
    assert problem(np.diag(A))[0] <= prob.value + 1e-6
    np.testing.assert_allclose(np.diag(A), w.value, atol=1e-3 * w.value.max())
    # the optimum of the diagonal problem has sum_S d^2 = c / 2
    np.testing.assert_allclose(s @ np.diag(A), c / 2, rtol=1e-3)


def test_gap_certificate_and_history():
    pairs, y = small_pairs(seed=2)
    mmc = MMC(solver="exact", tol=1e-8, max_iter=1000).fit(pairs, y)
    assert mmc.gap_ <= 1e-8
    assert mmc.n_iter_ == len(mmc.loss_curve_) == len(mmc.gap_curve_)
    # projected gradient ascent with a sufficient-increase test never goes down
    assert np.all(np.diff(mmc.loss_curve_) >= -1e-9 * mmc.loss_curve_[-1])
    V = pairs[:, 0] - pairs[:, 1]
    problem = MMCFullProblem(V[y == 1], V[y == -1])
    # any other feasible point has a smaller objective than the optimum
    rng = np.random.RandomState(0)
    for _ in range(5):
        G = rng.randn(3, 3)
        B = G @ G.T
        B /= np.trace(B)
        assert problem(B)[0] <= mmc.objective_ * (1 + 1e-8)


def test_init_changes_the_path_not_the_optimum():
    pairs, y = small_pairs(seed=3)
    A = [MMC(init=init, solver="exact", tol=1e-10, max_iter=3000, random_state=0)
         .fit(pairs, y).get_mahalanobis_matrix()
         for init in ("identity", "covariance", "random")]
    for other in A[1:]:
        np.testing.assert_allclose(other, A[0], atol=1e-4 * np.abs(A[0]).max())


def test_max_iter_warns_with_gap():
    pairs, y = small_pairs()
    with pytest.warns(Warning, match=r"relative duality gap"):
        MMC(solver="exact", max_iter=1, tol=1e-14).fit(pairs, y)


def test_pairs_classifier_face():
    pairs, y = small_pairs()
    mmc = MMC().fit(pairs, y)
    assert mmc.threshold_ > 0  # a distance, as in metric-learn
    d = mmc.pair_distance(pairs)
    np.testing.assert_array_equal(mmc.predict(pairs),
                                  np.where(d <= mmc.threshold_, 1, -1))
    np.testing.assert_allclose(mmc.decision_function(pairs), -d)
    assert mmc.score(pairs, y) > 0.5


def test_calibration_params_checked_before_solving(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the solver ran")

    monkeypatch.setattr(mmc_module, "spectraplex_ascent", fail)
    monkeypatch.setattr(mmc_module, "halfspace_psd_ascent", fail)
    pairs, y = small_pairs()
    with pytest.raises(ValueError, match="strategy must be one of"):
        MMC().fit(pairs, y, calibration_params={"strategy": "best"})
    with pytest.raises(ValueError, match="min_rate"):
        MMC().fit(pairs, y, calibration_params={"strategy": "max_tpr"})


def test_needs_both_kinds_of_pairs():
    pairs, y = small_pairs()
    with pytest.raises(ValueError, match="needs both similar"):
        MMC().fit(pairs[y == 1], y[y == 1])
    with pytest.raises(ValueError, match="needs both similar"):
        MMC(diagonal=True).fit(pairs[y == -1], y[y == -1])


def test_rank_deficient_similar_pairs_warn():
    """Similar pairs that differ only along the first axis: the problem is
    unbounded along the others; a warning says so, the metric is finite."""
    rng = np.random.RandomState(0)
    a = rng.randn(10, 3)
    b = a.copy()
    b[:, 0] += rng.randn(10)
    c = rng.randn(10, 3)
    pairs = np.concatenate([np.stack([a, b], 1), np.stack([a, c], 1)])
    y = np.r_[np.ones(10), -np.ones(10)]
    with pytest.warns(UserWarning, match="span 1 of 3 dimensions"):
        mmc = MMC(solver="exact").fit(pairs, y)
    assert mmc.n_raised_ == 2
    assert np.all(np.isfinite(mmc.components_))


def test_supervised_is_mmc_on_drawn_pairs(iris):
    X, y = iris
    sup = MMC_Supervised(random_state=0, tol=1e-8).fit(X, y)
    pairs = X[sup.pairs_]
    weak = MMC(tol=1e-8).fit(pairs, sup.pair_labels_)
    np.testing.assert_allclose(sup.components_, weak.components_, atol=1e-10)
    # the default on small data: every pair of points, each once
    assert sup.n_constraints is None and len(sup.pairs_) == 150 * 149 // 2
    assert (sup.pair_labels_ == 1).sum() == 3 * (50 * 49 // 2)
    again = MMC_Supervised(random_state=5, tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(again.pairs_, sup.pairs_)
    diag = MMC_Supervised(diagonal=True, random_state=0).fit(X, y)
    A = diag.get_mahalanobis_matrix()
    np.testing.assert_allclose(A, np.diag(np.diag(A)))


@pytest.mark.parametrize("init, match", [
    (np.diag([1.0, -1.0, 1.0]), "init must be positive definite"),
    (np.eye(2), "init"),
    (np.full((3, 3), np.nan), "init contains NaN"),
])
def test_bad_init_names_init(init, match):
    pairs, y = small_pairs()
    with pytest.raises((ValueError, TypeError), match=match):
        MMC(init=init).fit(pairs, y)


# --- the default solver: Xing et al.'s projected gradient path ---------------

def xing_path_reference(pairs, y, A0, n_steps, tol, rtol=0.01, step=0.1,
                        grow=1.05, max_proj=10000):
    """Plain-numpy Xing et al. (NIPS 2002) projected gradient, written from
    the paper: gradient of g(A) = sum_D ||v||_A made orthogonal to W =
    sum_S v v^T, a step of Frobenius length ``step``, alternating
    projections onto {<W, A> <= t} and the PSD cone, t = <W, A0>."""
    V = pairs[:, 0] - pairs[:, 1]
    S, D = V[y == 1], V[y == -1]
    W = sum(np.outer(v, v) for v in S)
    t = float(np.sum(W * A0))

    def g(A):
        return sum(np.sqrt(max(v @ A @ v, 0.0)) for v in D)

    def grad(A):
        return sum(np.outer(v, v) / (2 * np.sqrt(max(v @ A @ v, 1e-300)))
                   for v in D)

    def project(A):
        for _ in range(max_proj):
            c = np.sum(W * A) - t
            if c > 0:
                A = A - c / np.sum(W * W) * W
            w, Q = np.linalg.eigh((A + A.T) / 2)
            A = Q @ np.diag(np.clip(w, 0, None)) @ Q.T
            if np.sum(W * A) <= t * (1 + rtol):
                return A, True
        return A, False

    def tangent(A):
        G = grad(A)
        G = G - np.sum(G * W) / np.sum(W * W) * W
        return G / np.linalg.norm(G)

    A, _ = project(A0)
    M = tangent(A)
    steps = 0
    for _ in range(n_steps):
        steps += 1
        B, ok = project(A + step * M)
        if ok and g(B) > g(A):
            A, M, step = B, tangent(B), step * grow
        else:
            step /= 2
        if step / np.linalg.norm(A) < tol:
            break
    return A, steps


@pytest.mark.parametrize("seed, max_iter, init", [
    (0, 10, "identity"), (1, 40, "identity"), (2, 25, "covariance")])
def test_path_matches_numpy_reference(seed, max_iter, init):
    pairs, y = small_pairs(seed=seed)
    mmc = MMC(max_iter=max_iter, tol=1e-12, init=init).fit(pairs, y)
    points = pairs.reshape(-1, pairs.shape[-1])
    A0 = (np.eye(3) if init == "identity"
          else np.linalg.inv(np.cov(np.unique(points, axis=0), rowvar=False)))
    A_ref, steps = xing_path_reference(pairs, y, A0, max_iter, 1e-12)
    assert mmc.n_iter_ == steps
    np.testing.assert_allclose(mmc.get_mahalanobis_matrix(), A_ref,
                               atol=1e-8 * np.abs(A_ref).max())


def test_path_feasible_monotone_and_objective():
    pairs, y = small_pairs(seed=4)
    mmc = MMC(max_iter=60).fit(pairs, y)
    A = mmc.get_mahalanobis_matrix()
    V = pairs[:, 0] - pairs[:, 1]
    S, D = V[y == 1], V[y == -1]
    assert np.linalg.eigvalsh(A).min() >= -1e-10 * np.abs(A).max()
    # <W, A> <= t (1 + 0.01), t = <W, I> for the identity start
    assert np.einsum("ij,jk,ik->", S, A, S) <= (S * S).sum() * 1.01
    # the objective is g(A), and accepted steps never lower it
    g = np.sqrt(np.einsum("ij,jk,ik->i", D, A, D)).sum()
    np.testing.assert_allclose(mmc.objective_, g, rtol=1e-6)
    assert np.all(np.diff(mmc.loss_curve_) >= 0)
    assert len(mmc.loss_curve_) == mmc.n_iter_ <= 60
    assert not hasattr(mmc, "gap_")


def test_path_approaches_the_certified_optimum_and_its_fixed_point(cp):
    """A long path reaches cvxpy's optimum (never beyond it), and there the
    KKT conditions of max g(A) s.t. <W, A> <= t, A PSD hold: with
    lambda = g / (2 t) (g is 1/2-homogeneous), grad g - lambda W is
    negative semidefinite and annihilates A."""
    pairs, y = small_pairs()
    V = pairs[:, 0] - pairs[:, 1]
    S, D = V[y == 1], V[y == -1]
    d = V.shape[1]
    A = cp.Variable((d, d), PSD=True)
    dist = cp.hstack([cp.sqrt(cp.sum(cp.multiply(A, np.outer(v, v)))) for v in D])
    prob = cp.Problem(cp.Maximize(cp.sum(dist)), [cp.trace(A @ (S.T @ S)) <= 1])
    prob.solve(solver=cp.SCS, eps=1e-9, max_iters=200000)
    ref, _ = full_objective(A.value, S, D)
    mmc = MMC(max_iter=5000, tol=1e-10).fit(pairs, y)
    A_path = mmc.get_mahalanobis_matrix()
    ours, A_n = full_objective(A_path, S, D)
    assert ours <= ref * (1 + 1e-6)
    assert ours >= ref * (1 - 1e-3)
    W = S.T @ S
    t = np.sum(W * A_n)
    q = np.einsum("ij,jk,ik->i", D, A_n, D)
    G = (D.T / (2 * np.sqrt(q))) @ D
    lam = np.sqrt(q).sum() / (2 * t)
    K = G - lam * W
    scale = lam * np.linalg.norm(W)
    assert np.linalg.eigvalsh(K).max() <= 1e-2 * scale
    assert np.linalg.norm(K @ A_n) <= 1e-2 * scale * np.linalg.norm(A_n)


def test_default_path_keeps_a_full_rank_metric_without_warning():
    """The default (10 path steps) stays near the start: on data whose
    exact optimum has low rank, the path metric keeps every direction."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = MMC_Supervised(random_state=0).fit(X, y)
    exact = MMC_Supervised(solver="exact", random_state=0).fit(X, y)
    s_path = np.linalg.svd(path.components_, compute_uv=False)
    s_exact = np.linalg.svd(exact.components_, compute_uv=False)
    assert path.n_iter_ == 10 and not path.converged_
    assert np.sum(s_path > 1e-6 * s_path[0]) == X.shape[1]
    assert np.sum(s_exact > 1e-3 * s_exact[0]) < np.sum(s_path > 1e-3 * s_path[0])
    np.testing.assert_array_equal(path.pairs_, exact.pairs_)


def test_solver_is_validated():
    pairs, y = small_pairs()
    with pytest.raises(ValueError, match="solver"):
        MMC(solver="newton").fit(pairs, y)


def test_path_on_rank_deficient_similar_pairs_is_finite():
    """Similar pairs along one axis only: the exact problem is unbounded
    (and warns); the path takes max_iter bounded steps from the identity,
    so its metric is finite, feasible and needs no warning."""
    import warnings

    rng = np.random.RandomState(0)
    a = rng.randn(10, 3)
    b = a.copy()
    b[:, 0] += rng.randn(10)
    c = rng.randn(10, 3)
    pairs = np.concatenate([np.stack([a, b], 1), np.stack([a, c], 1)])
    y = np.r_[np.ones(10), -np.ones(10)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mmc = MMC().fit(pairs, y)
    A = mmc.get_mahalanobis_matrix()
    assert np.all(np.isfinite(A)) and mmc.n_iter_ <= 10
    S = (b - a)
    assert np.einsum("ij,jk,ik->", S, A, S) <= (S * S).sum() * 1.01
