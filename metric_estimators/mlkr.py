"""Metric Learning for Kernel Regression (MLKR).

Weinberger & Tesauro, "Metric learning for kernel regression", AISTATS 2007.

MLKR learns a linear map ``L`` such that the leave-one-out Nadaraya-Watson
regressor with the Gaussian kernel ``exp(-||L (x_i - x_j)||^2)`` predicts the
continuous targets well: it minimises the sum of squared leave-one-out errors
(:mod:`metric_estimators._problems.mlkr`) by L-BFGS.  The kernel width is
learned with ``L`` (the scale of ``L`` is free).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.utils import check_random_state

from . import _backend
from ._linalg import initialize_components
from ._problems.mlkr import MLKRObjective
from ._reporting import ITERATION, OBJECTIVE, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._threads import one_blas_thread
from ._validation.matrices import check_init
from ._validation.parameters import check_n_components
from ._validation.points import validate_points
from .base import MahalanobisMixin
from .solvers.lbfgs import lbfgs

__all__ = ["MLKR"]


# Below this many multiply-adds per evaluation (and from
# _threads.TINY_BLAS_WORK on) BLAS runs on one thread: MLKR's products are
# small and many, and on busy cores BLAS's threads spin on them, costing many
# times the CPU of the work (measured: benchmarks/README.md, *Measurements
# behind choices in the code*).
_LARGE_BLAS = 1e8

#: iterations over which ``tol`` compares the loss (as LMNN's L-BFGS runs)
_WINDOW = 10

# What to do when a run without the windowed test (tol=None) hits max_iter.
# The leave-one-out loss can keep falling as L grows and the kernel narrows
# towards each point's nearest neighbours (on scikit-learn's diabetes, at
# every split tried), a descent that more iterations do not turn into better
# held-out scores (docs/user_guide/mlkr.rst); scipy's own tests then never
# stop the run, the windowed relative test of tol does.
_ADVICE = (
    "The kernel narrows as L grows, which lowers the leave-one-out loss but "
    "rarely the held-out error (see the MLKR user guide), so a larger "
    "max_iter seldom helps. To stop once the loss has settled, pass a "
    "relative tolerance, e.g. the default tol=3e-5 (stop once the loss fell "
    "by less than 0.003 % per iteration over the last 10 iterations), and "
    "compare with the Euclidean baseline by cross-validation."
)


class MLKR(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Metric Learning for Kernel Regression of continuous targets.

    Learns ``L`` minimising the leave-one-out squared error of Gaussian-kernel
    regression in the space ``x -> L x`` (Weinberger & Tesauro, AISTATS 2007)::

        sum_i (y_i - yhat_i)^2,
        yhat_i = sum_{j != i} y_j exp(-||L(x_i - x_j)||^2)
                 / sum_{j != i} exp(-||L(x_i - x_j)||^2),

    by scipy's L-BFGS-B with the exact gradient, computed over blocks of rows
    in ``O(n^2 (n_components + n_features))`` time and ``O(n)`` blocks of
    memory (never an ``n x n x n_features`` array).

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the learned space; None means ``n_features``.
    init : {'auto', 'pca', 'identity', 'random'} or ndarray of shape \
            (n_components, n_features), default='auto'
        Initial ``L``.  ``'auto'`` is ``'pca'`` when ``n_components <
        n_features`` and ``'identity'`` otherwise (the targets are continuous,
        so there is no ``'lda'``).
    tol : float or None, default=3e-5
        Stop once the leave-one-out loss fell by less than ``tol`` per
        iteration, relative to the loss, on average over the last 10
        iterations (the stopping test of LMNN's L-BFGS runs).  The loss
        often keeps falling slowly for hundreds of iterations while ``L``
        grows and the kernel narrows, which rarely lowers the held-out
        error (see the MLKR user guide), so a test on the progress of the
        run, rather than on one step or on the gradient, is what ends it.
        The test is relative, so it does not depend on the units of ``y``.
        scipy's own tests (a projected gradient of 1e-5, a relative decrease
        of about 2.2e-9 in one step) stay on; ``tol=None`` keeps only them,
        the paper's full minimisation (and metric-learn's), which can run to
        ``max_iter``.
    max_iter : int, default=1000
        Most L-BFGS iterations.
    verbose : bool or int, default=False
        Print a table (iteration, objective, time) while fitting.
    preprocessor : array-like, callable or None, default=None
        If given, ``X`` may be 1-D indices mapped through it.
    random_state : int, RandomState instance or None, default=None
        Seeds ``init='random'`` (and PCA's solver).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned ``L``.
    n_iter_ : int
        L-BFGS iterations run.
    loss_curve_ : ndarray of shape (n_iter,)
        The objective after each iteration.
    n_features_in_ : int
    preprocessor_ : callable or None

    See Also
    --------
    sklearn.neighbors.KNeighborsRegressor : use ``transform`` (or
        ``get_metric()``) before it.

    References
    ----------
    K. Q. Weinberger and G. Tesauro. Metric learning for kernel regression.
    AISTATS 2007, PMLR 2:612-619.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import MLKR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 3)
    >>> y = np.sin(2 * X[:, 0])          # only the first feature matters
    >>> mlkr = MLKR(random_state=0).fit(X, y)
    >>> w = np.linalg.norm(mlkr.components_, axis=0)
    >>> bool(w[0] > w[1] and w[0] > w[2])
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "init": [StrOptions({"auto", "pca", "identity", "random"}), np.ndarray],
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, init="auto", tol=3e-5, max_iter=1000,
                 verbose=False, preprocessor=None, random_state=None):
        self.n_components = n_components
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn ``L`` from points and continuous targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,)
            indices when a ``preprocessor`` is set.
        y : array-like of shape (n_samples,)
            Real targets.

        Returns
        -------
        self : MLKR
        """
        report = FitReport(self, (ITERATION, OBJECTIVE), verbose=self.verbose)
        self._check_preprocessor()
        X, y = validate_points(self, self._points(X), y, y_numeric=True,
                               ensure_min_samples=2)
        X = X.astype(np.float64, copy=False)
        y = y.astype(np.float64, copy=False)
        n_samples, n_features = X.shape
        if np.all(y == y[0]):
            raise ValueError(
                "MLKR needs at least 2 distinct target values; y is constant "
                "(it holds 1 distinct value), so every metric fits it equally."
            )
        check_n_components(self.n_components, n_features)
        rng = check_random_state(self.random_state)
        L0 = self._initial_components(X, rng)
        objective = MLKRObjective(X, y, L0.shape[0],
                                  _backend.choose("mlkr", n_samples))
        report.phase(f"{n_samples} points, {n_features} features, "
                     f"{L0.shape[0]} components")

        history = []

        def callback(x, f):
            history.append(f)
            report.row(len(history), f)

        # one evaluation: products of n^2 (n_components + n_features)
        # multiply-adds in blocks of rows; single-threaded BLAS below
        # _LARGE_BLAS, where threads do not pay and spin on busy cores
        work = n_samples ** 2 * (L0.shape[0] + n_features)
        with one_blas_thread(work, upper=_LARGE_BLAS):
            result = lbfgs(objective, L0.ravel(), max_iter=self.max_iter,
                           gtol=1e-5, callback=callback,
                           window_tol=self.tol, window=_WINDOW)
        self.components_ = result.x.reshape(L0.shape)
        self.n_iter_ = int(result.nit)
        self.loss_curve_ = np.asarray(history, dtype=np.float64)
        if result.status == 1:
            report.finish(f"stopped after {self.n_iter_} iterations")
            grown = (f"||L|| grew from {np.linalg.norm(L0):.3g} to "
                     f"{np.linalg.norm(self.components_):.3g}")
            convergence_warning(self, max_iter=self.max_iter, tol=self.tol,
                                history=self.loss_curve_, detail=grown,
                                advice=_ADVICE if self.tol is None else None,
                                stacklevel=4)
        else:
            report.finish(f"converged after {self.n_iter_} iterations "
                          f"({result.message})")
        return self

    def _initial_components(self, X, rng):
        n_features = X.shape[1]
        n_components = self.n_components or n_features
        if isinstance(self.init, np.ndarray):
            init = check_init(self.init, n_features, self.n_components)
            return initialize_components(init, X, None, self.n_components, rng)
        init = self.init
        if init == "auto":
            init = "pca" if n_components < n_features else "identity"
        if init == "pca":
            # PCA on X alone (rank-safe): rows beyond X's rank stay 0
            n_pca = min(n_components, X.shape[0], n_features)
            L = np.zeros((n_components, n_features))
            L[:n_pca] = PCA(n_components=n_pca, random_state=rng).fit(
                X).components_
            return L
        return initialize_components(init, X, None, n_components, rng)
