"""Neighborhood Components Analysis (NCA) with the metric-learner face.

Goldberger, J., Roweis, S., Hinton, G. and Salakhutdinov, R. (2004).
Neighbourhood components analysis. Advances in Neural Information
Processing Systems 17, 513-520.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._docstrings import fill_doc
from ._problems.nca import NCAProblem, initial_components
from ._reporting import ITERATION, OBJECTIVE, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._validation.matrices import check_init
from ._validation.parameters import check_n_components
from ._validation.points import validate_labelled_points
from .base import MahalanobisMixin
from .solvers.nca import solve_nca

__all__ = ["NCA"]



class NCA(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Neighborhood Components Analysis: maximise leave-one-out soft k-NN accuracy.

    NCA (Goldberger et al., NIPS 2004) learns ``L`` maximising the expected
    number of training points that a stochastic nearest-neighbour rule
    classifies correctly, ``sum_i sum_{j ~ i} p_ij`` with ``p_ij`` a softmax
    of ``-||L x_i - L x_j||^2`` over ``j != i``.  The start and the
    L-BFGS-B run are those of scikit-learn's
    :class:`~sklearn.neighbors.NeighborhoodComponentsAnalysis` (the same
    ``init`` rule; with ``tol`` given, ``ftol = gtol = tol``); the
    objective and gradient are
    evaluated by a faster kernel (the same values up to round-off, so at
    ``reg=0``, the default, ``components_`` equals scikit-learn's to
    round-off;
    :func:`metric_estimators._problems.nca.nca_loss_grad`), or by its numpy
    twin on a small first fit (:mod:`metric_estimators._backend`, family
    ``"nca"``).  This class
    adds the metric-learner face: metric-learn's parameters, ``preprocessor``,
    ``get_metric`` / ``pair_distance``, the objective per iteration and the
    shared verbose table and ConvergenceWarning.

    Parameters
    ----------
    init : {'auto', 'pca', 'lda', 'identity', 'random'} or ndarray of shape \
            (n_components, n_features), default='auto'
        Initial ``L``, as in scikit-learn ('auto': 'lda' when
        ``n_components <= min(n_features, n_classes - 1)``, else 'pca' when
        ``n_components < n_features``, else 'identity').
    n_components : int or None, default=None
        Dimension of the embedding; None means ``n_features``.
    max_iter : int, default=500
        Maximum number of L-BFGS-B iterations (metric-learn's default is
        100, scikit-learn's 50): fits that converge sooner are unchanged.
        Under scipy's default tolerances (``tol=None``) most fits converge
        within 100 iterations, but a few on small, overlapping or many-class
        data still rise for a few hundred, and would end with a
        ``ConvergenceWarning`` and a map short of the optimum; the budget
        leaves them room to converge.
    tol : float or None, default=None
        L-BFGS-B's tolerance (relative decrease of the objective and
        projected gradient).  None means scipy's defaults, as in
        metric-learn: a relative decrease of about 2.2e-9 and a projected
        gradient of 1e-5 (scikit-learn's NCA stops at a relative decrease
        of 1e-5, which leaves a few hundredths of 3-NN accuracy on some
        small sets while the objective still rises).
    reg : float >= 0 or 'auto', default=0.0
        Weight of a ridge penalty on the map (regularised NCA, Yang, Wang &
        Zuo 2012): the fit maximises ``f(L) / n - reg * ||L S||_F^2``, with
        ``S`` the diagonal of the training features' standard deviations,
        so the penalty does not depend on the units of ``X``.  'auto' is
        ``1 / n_samples``, the default of MATLAB's ``fscnca``.  0 is
        Goldberger et al.'s NCA, scikit-learn's and metric-learn's.  On
        small data that the map can separate, unregularised NCA grows ``L``
        until every soft neighbourhood is one point, which can generalise
        worse than a milder map; the penalty stops that growth.  It helps
        most on small sets with few features and costs accuracy on sets
        with many noisy features and few points per class: see
        :doc:`/user_guide/nca` and the accuracy panel
        (``benchmarks/results/accuracy_panel.md``).  With ``reg > 0`` the
        objective no longer saturates, so L-BFGS-B runs longer at scipy's
        default tolerances; ``tol=1e-5`` keeps the fit about as fast as
        without the penalty.
    verbose : bool or int, default=False
        Print a table (iteration, objective, time) while fitting.
    preprocessor : array-like, callable or None, default=None
        If given, ``X`` may be 1-D indices that it maps to points.
    random_state : int, RandomState instance or None, default=None
        Seeds ``init='random'`` (and 'pca''s randomised solvers).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned linear map.
    n_iter_ : int
        L-BFGS-B iterations run.
    loss_curve_ : ndarray of shape (n_iter,)
        NCA's objective ``f`` (maximised: expected number of correctly
        classified points) after each iteration; with ``reg > 0``, ``f``
        minus the penalty ``n * reg * ||L S||_F^2``.
    n_features_in_ : int

    Notes
    -----
    Time ``O(n^2 (n_features + n_components))`` per iteration and ``O(n^2)``
    memory (scikit-learn's dense formulation).

    With a single class, or with only single-sample classes, the objective
    does not depend on the map: ``fit`` warns and returns the
    initialisation (as metric-learn and scikit-learn do, without the
    warning); ``init='auto'`` is then 'pca' or 'identity' (LDA needs a
    class with two samples).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from metric_estimators import NCA
    >>> X, y = load_iris(return_X_y=True)
    >>> NCA(n_components=2, random_state=0).fit(X, y).transform(X).shape
    (150, 2)
    """

    _parameter_constraints: dict = {
        "init": [StrOptions({"auto", "pca", "lda", "identity", "random"}),
                 np.ndarray],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "reg": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(self, init="auto", n_components=None, max_iter=500, tol=None,
                 reg=0.0, verbose=False, preprocessor=None, random_state=None):
        self.init = init
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.reg = reg
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y):
        """Learn the linear map from labelled points.

        Parameters
        ----------
        %(labelled_points)s

        Returns
        -------
        self : NCA
        """
        report = FitReport(self, [ITERATION, OBJECTIVE], verbose=self.verbose)
        self._check_preprocessor()
        X, y, labels = validate_labelled_points(self, self._points(X), y,
                                                min_classes=1)
        classes, y_idx = labels.classes, labels.indices
        init = self.init
        if classes.size < 2 or labels.counts.max() < 2:
            what = ("y holds a single class" if classes.size < 2 else
                    "every class of y has a single sample")
            warnings.warn(
                f"NCA: {what}, so its objective is the same for every map; "
                "components_ is the initialisation (init).  NCA needs "
                "several classes, some with two or more samples.",
                UserWarning, stacklevel=3)
            if isinstance(init, str) and init == "auto":  # LDA needs classes
                reduce = (self.n_components is not None
                          and self.n_components < X.shape[1])
                init = "pca" if reduce else "identity"
        check_n_components(self.n_components, X.shape[1])
        report.phase(f"{X.shape[0]} points, {classes.size} classes")
        L0 = initial_components(
            check_init(init, X.shape[1], self.n_components), X, y_idx,
            self.n_components, check_random_state(self.random_state))
        reg = 1.0 / X.shape[0] if self.reg == "auto" else float(self.reg)
        problem = NCAProblem(X, y_idx, _backend.choose("nca", X.shape[0]), reg=reg)
        result = solve_nca(problem, L0, max_iter=self.max_iter, tol=self.tol,
                           report=report)
        self.components_ = result.components
        self.n_iter_ = result.n_iter
        self.loss_curve_ = np.asarray(result.history["objective"], dtype=np.float64)
        if result.converged:
            report.finish(f"converged after {result.n_iter} iterations")
        else:
            report.finish(f"stopped after {result.n_iter} iterations")
            convergence_warning(self, max_iter=self.max_iter, tol=self.tol,
                                history=self.loss_curve_, stacklevel=4)
        return self
