"""NCA: scikit-learn's solve with a faster evaluation, the metric-learner face,
the objective history."""

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NeighborhoodComponentsAnalysis

from metric_estimators import NCA, _backend
from metric_estimators._problems.nca import nca_loss_grad


def reference_objective(L, X, y):
    """Goldberger et al. (2004): sum_i sum_{j in class(i), j != i} p_ij."""
    Z = X @ L.T
    n = len(X)
    f = 0.0
    for i in range(n):
        d = np.array([np.sum((Z[i] - Z[j]) ** 2) if j != i else np.inf
                      for j in range(n)])
        w = np.exp(-(d - d.min()))
        p = w / w.sum()
        f += p[(y == y[i]) & (np.arange(n) != i)].sum()
    return f


@pytest.mark.parametrize("params", [
    {}, {"n_components": 2}, {"init": "random"}, {"init": "pca", "max_iter": 7},
])
def test_components_equal_scikit_learns(iris, params):
    """Same start, same L-BFGS-B run; the evaluations agree to round-off."""
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = NCA(random_state=0, tol=1e-5, **params).fit(X, y)
    theirs = NeighborhoodComponentsAnalysis(random_state=0, tol=1e-5,
                                            max_iter=params.get("max_iter", 100),
                                            **{k: v for k, v in params.items()
                                               if k != "max_iter"}).fit(X, y)
    np.testing.assert_allclose(ours.components_, theirs.components_, rtol=1e-6,
                               atol=1e-6 * np.abs(theirs.components_).max())


@pytest.mark.parametrize("path", ["numpy", "numba"])
def test_each_path_follows_scikit_learns_run(iris, path):
    """On the numba kernel and on its twin, the run is scikit-learn's up to
    round-off."""
    X, y = iris
    with _backend.use(path):
        ours = NCA(random_state=0, n_components=2, tol=1e-5).fit(X, y)
    theirs = NeighborhoodComponentsAnalysis(random_state=0, n_components=2,
                                            max_iter=100).fit(X, y)
    np.testing.assert_allclose(ours.components_, theirs.components_, rtol=1e-6,
                               atol=1e-6 * np.abs(theirs.components_).max())
    np.testing.assert_allclose(ours.loss_curve_[-1],
                               reference_objective(ours.components_, X, y),
                               rtol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (2, 4)])
def test_loss_and_gradient_equal_scikit_learns_and_finite_differences(iris, shape):
    X, y = iris
    X, y = X[::2], y[::2]
    L = np.random.RandomState(0).randn(*shape)
    loss, grad = nca_loss_grad(L, X, y.astype(np.int64), kernels=_backend.NUMBA)
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    sk_loss, sk_grad = sk._loss_grad_lbfgs(L.ravel(), X, y[:, None] == y[None, :])
    np.testing.assert_allclose(loss, sk_loss, rtol=1e-12)
    np.testing.assert_allclose(grad.ravel(), sk_grad, rtol=1e-10,
                               atol=1e-12 * np.abs(sk_grad).max())
    assert np.isclose(loss, reference_objective(L, X, y), rtol=1e-10)
    err = check_grad(lambda v: reference_objective(v.reshape(shape), X, y),
                     lambda v: nca_loss_grad(v.reshape(shape), X,
                                             y.astype(np.int64),
                                             kernels=_backend.NUMBA)[1].ravel(),
                     L.ravel(), epsilon=1e-6)
    assert err < 1e-4 * np.linalg.norm(grad)


def test_loss_curve_is_the_objective_per_iteration(iris):
    X, y = iris
    X, y = X[::3], y[::3]
    nca = NCA(random_state=0, max_iter=30).fit(X, y)
    assert nca.loss_curve_.shape == (nca.n_iter_,)
    np.testing.assert_allclose(nca.loss_curve_[-1],
                               reference_objective(nca.components_, X, y),
                               rtol=1e-10)
    # the objective (maximised) does not decrease along L-BFGS's iterates
    assert np.all(np.diff(nca.loss_curve_) >= -1e-9 * abs(nca.loss_curve_[-1]))


def test_max_iter_warns_and_stops(iris):
    X, y = iris
    with pytest.warns(ConvergenceWarning, match=r"\[NCA\] did not converge within "
                                                r"max_iter=2 iterations"):
        nca = NCA(max_iter=2, random_state=0).fit(X, y)
    assert nca.n_iter_ == 2


def test_verbose_is_the_shared_table(iris, capsys):
    X, y = iris
    NCA(verbose=2, max_iter=5, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith("[NCA] ") for line in lines)
    # the header follows the phase lines (the data, and which kernels run)
    header = next(i for i, line in enumerate(lines) if "Iteration" in line)
    assert "Objective" in lines[header] and "Time(s)" in lines[header]
    assert sum(line.split()[1].isdigit() for line in lines[header + 2:]) == 5


def test_default_tol_is_scipys_as_in_metric_learn(iris):
    """tol=None: scipy's L-BFGS-B defaults (metric-learn's NCA), which run
    past scikit-learn's tol=1e-5 to a higher objective, and stop where
    scipy's relative-decrease rule (about 2.2e-9) or its gradient rule does."""
    X, y = iris
    a = NCA(random_state=0).fit(X, y)
    b = NCA(random_state=0, tol=1e-5).fit(X, y)
    assert a.n_iter_ > b.n_iter_ and a.loss_curve_[-1] > b.loss_curve_[-1]
    assert a.n_iter_ < a.max_iter
    f = a.loss_curve_
    drops = (f[1:] - f[:-1]) / np.maximum(np.maximum(np.abs(f[1:]), np.abs(f[:-1])), 1)
    assert drops[-1] < 1e-5  # past scikit-learn's stopping point


def test_preprocessor_and_metric(iris):
    X, y = iris
    nca = NCA(preprocessor=X, random_state=0, max_iter=10).fit(np.arange(len(X)), y)
    ref = NCA(random_state=0, max_iter=10).fit(X, y)
    np.testing.assert_array_equal(nca.components_, ref.components_)
    d = nca.pair_distance(np.stack([X[:5], X[5:10]], axis=1))
    metric = nca.get_metric()
    np.testing.assert_allclose(d, [metric(u, v) for u, v in zip(X[:5], X[5:10])])
    np.testing.assert_allclose(nca.pair_score(np.stack([X[:5], X[5:10]], axis=1)), -d)


def test_bad_parameters(iris):
    X, y = iris
    with pytest.raises(ValueError, match="'init' parameter"):
        NCA(init="foo").fit(X, y)
    with pytest.raises(ValueError, match="n_components=5 must be <= n_features=4"):
        NCA(n_components=5).fit(X, y)
    with pytest.raises(ValueError, match="'tol' parameter"):
        NCA(tol=-1.0).fit(X, y)


def test_array_init_is_validated_like_the_other_learners(iris):
    X, y = iris
    with pytest.raises(ValueError, match="init has 2 columns, but X has 4 features"):
        NCA(init=np.eye(2)).fit(X, y)
    with pytest.raises(ValueError, match="init has 2 rows but n_components=3"):
        NCA(init=np.eye(2, 4), n_components=3).fit(X, y)
    L0 = np.random.RandomState(0).randn(2, 4)
    est = NCA(init=L0, max_iter=1).fit(X, y)
    assert est.components_.shape == (2, 4)


def test_default_max_iter_changes_only_fits_that_run_past_metric_learns(iris):
    """max_iter defaults to 500 (metric-learn: 100): a fit that converges
    within 100 iterations is the same either way; one that needs more
    iterations runs them instead of stopping with a ConvergenceWarning."""
    X, y = iris
    assert NCA().max_iter == 500
    ours, theirs = NCA(random_state=0).fit(X, y), NCA(max_iter=100, random_state=0).fit(X, y)
    assert ours.n_iter_ < 100
    np.testing.assert_array_equal(ours.components_, theirs.components_)
    with pytest.warns(ConvergenceWarning):
        short = NCA(max_iter=ours.n_iter_ - 1, random_state=0).fit(X, y)
    assert short.n_iter_ == ours.n_iter_ - 1


# -- regularised NCA (reg) ----------------------------------------------------


def _penalised_reference(L, X, y, reg):
    """-f(L) + n reg ||L S||_F^2, S = diag(population std of each feature),
    from the plain loop of reference_objective."""
    S = np.diag(X.std(axis=0))
    return -reference_objective(L, X, y) + len(X) * reg * np.sum((L @ S) ** 2)


@pytest.mark.parametrize("shape", [(4, 4), (2, 4)])
def test_penalised_loss_and_gradient_match_a_plain_reference(iris, shape):
    from metric_estimators._problems.nca import NCAProblem

    X, y = iris
    X, y = X[::5], y[::5]
    X = X * np.array([1.0, 10.0, 0.1, 3.0])  # features of unequal scale
    reg = 0.05
    L = np.random.RandomState(1).randn(*shape) * 0.3
    for kernels in (_backend.NUMPY, _backend.NUMBA):
        problem = NCAProblem(X, y, kernels, reg=reg)
        value, grad = problem(L.ravel())
        np.testing.assert_allclose(value, _penalised_reference(L, X, y, reg), rtol=1e-10)
        assert problem.penalty(L) > 0
        err = check_grad(lambda v: problem(v)[0], lambda v: problem(v)[1], L.ravel())
        assert err < 1e-5 * max(1.0, np.linalg.norm(grad))


def test_penalty_does_not_depend_on_the_units_of_x(iris):
    """Rescaling feature k by c_k and column k of L by 1 / c_k leaves the
    embedding, f and the penalty unchanged: the penalised objective is the
    same function of the embedding whatever the units."""
    from metric_estimators._problems.nca import NCAProblem

    X, y = iris
    c = np.array([1e3, 1.0, 1e-2, 7.0])
    L = np.random.RandomState(0).randn(3, 4) * 0.5
    a = NCAProblem(X, y, _backend.NUMPY, reg=0.01)(L.ravel())[0]
    b = NCAProblem(X * c, y, _backend.NUMPY, reg=0.01)((L / c).ravel())[0]
    np.testing.assert_allclose(a, b, rtol=1e-10)


def test_reg_shrinks_the_map_and_auto_is_one_over_n(iris):
    X, y = iris
    S = X.std(axis=0)
    sizes = []
    for reg in (0.0, 1.0 / len(X), 10.0 / len(X)):
        est = NCA(reg=reg).fit(X, y)
        sizes.append(np.linalg.norm(est.components_ * S))
    assert sizes[0] > sizes[1] > sizes[2] > 0
    auto = NCA(reg="auto").fit(X, y)
    np.testing.assert_array_equal(
        auto.components_, NCA(reg=1.0 / len(X)).fit(X, y).components_)
    # the curve is f minus the penalty, which ends below the unpenalised f
    plain = NCA().fit(X, y)
    assert auto.loss_curve_[-1] < plain.loss_curve_[-1]


@pytest.mark.parametrize("reg", [-1.0, "1/n", np.nan])
def test_bad_reg(iris, reg):
    X, y = iris
    with pytest.raises((ValueError, TypeError), match="'reg' parameter"):
        NCA(reg=reg).fit(X, y)
