"""Large Margin Nearest Neighbor (LMNN) metric learning.

Weinberger, K. Q. and Saul, L. K. (2009). Distance metric learning for large
margin nearest neighbor classification. JMLR 10, 207-244.

The estimator only validates, builds the problem and calls a solver: target
neighbours and the objective are in :mod:`metric_estimators._problems.lmnn`,
the impostor oracle (the active set of candidate impostor pairs) in
:mod:`metric_estimators.solvers.impostors`, the solvers in
:mod:`metric_estimators.solvers.lmnn_runs` (L-BFGS, mini-batch AMSGrad and
the subgradient method wired to the impostor oracle).
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._linalg import initialize_components, power_of_two_scale
from ._problems.lmnn import (
    LMNNObjective,
    SampledLMNNObjective,
    find_target_neighbors,
    target_neighbors,
)
from ._reporting import ACTIVE, ITERATION, OBJECTIVE, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._threads import one_blas_thread
from ._validation import (
    check_init,
    check_init_not_first,
    check_n_components,
    for_message,
    lmnn_metric_learn_parameters,
    parse_memory,
    validate_labelled_points,
)
from .base import MahalanobisMixin
from .solvers.impostors import ImpostorSet, impostor_budget, search_threads
from .solvers.lmnn_runs import run_lbfgs, run_sgd, run_subgradient

__all__ = ["LMNN", "find_target_neighbors"]

# Below this n_samples * n_features * n_components, BLAS runs single-threaded
# in fit: the products of an LMNN iteration (X L^T, Z^T Lap X, the search's
# blocks) are a small part of its time next to the single-threaded pair
# kernels, and on busy cores (grid searches, shared machines) threaded BLAS
# spins, costing many times the CPU of the product (metric_estimators._threads).
_SMALL_BLAS = 2e9

# regularization='auto': the push weight mu by the number of training points
# (the parameter's docstring; the evidence in docs/user_guide/lmnn.rst).
_AUTO_MU_SAMPLES = 2000
_AUTO_MU_SMALL, _AUTO_MU_LARGE = 0.5, 0.25


class LMNN(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Large Margin Nearest Neighbor metric learning.

    Learns a linear map ``L`` so that each point's ``n_neighbors`` target
    neighbours (nearest same-class points in the input space) are close and
    points of other classes are at least a unit margin farther away:

    .. math::

        \\varepsilon(L) = (1 - \\mu) \\sum_{i, j \\rightsquigarrow i}
        \\|L(x_i - x_j)\\|^2 + \\mu \\sum_{i, j \\rightsquigarrow i, l}
        [1 + \\|L(x_i - x_j)\\|^2 - \\|L(x_i - x_l)\\|^2]_+^p

    over impostors ``l`` with ``y_l != y_i``, ``p = 1`` (hinge) or ``p = 2``
    (squared hinge, see ``loss``).  Impostors are searched exactly and
    blockwise (memory bounded, never ``n x n``) and kept as an active set;
    the fit stops only once a search at the final ``L`` finds no missing
    impostor, so the result is a stationary point of the exact loss.  Read
    more in the :ref:`User Guide <lmnn_guide>`.

    Parameters
    ----------
    n_neighbors : int, default=3
        Target neighbours per point: the ``k`` of the k-NN classifier that
        will use the metric; more give a slower fit and a smoother metric.
        A class of ``n_c <= n_neighbors`` points gives its points ``n_c - 1``
        targets (with a warning).

    n_components : int, default=None
        Dimension of the embedding; ``None`` keeps ``n_features``.  Fewer
        components give a low-rank metric and a faster fit (2 for a plot).

    init : {'auto', 'pca', 'lda', 'identity', 'random'} or ndarray of shape \
            (n_components, n_features), default='auto'
        Initial ``L``.  ``'auto'`` as in scikit-learn's NCA (LDA when
        ``n_components <= min(n_features, n_classes - 1)``, else PCA when
        ``n_components < n_features``, else the identity), but without LDA
        when a class has at most ``n_neighbors`` points: LDA whitens the
        within-class scatter, to which such classes add little or nothing.

    max_iter : int, default=1000
        Maximum number of iterations (epochs for ``solver='sgd'``), a safety
        net: with the default ``tol`` fits stop long before it.  Raise it
        when a ConvergenceWarning says it cut the fit short.

    tol : float, default=1e-4
        Tolerance on the relative decrease of the objective, which decides
        the stop (the gradient of a sum of hinges stays large long after the
        objective has settled): per iteration over the last 10 for
        ``solver='lbfgs'`` (then a search confirms the impostor set), per
        accepted step for ``'subgradient'``, per epoch for ``'sgd'``.  Lower
        it for a more exact minimum at a longer fit.

    regularization : float or 'auto', default='auto'
        Weight ``mu`` of the push (impostor) term; ``1 - mu`` weighs the pull
        term.  ``'auto'``: 0.5 (the paper's, metric-learn's and PyLMNN's)
        below 2,000 training points, 0.25 from 2,000 on, where classes tend
        to overlap and a weaker push gives a higher k-NN accuracy; the value
        used is ``regularization_``.  Pass 0.5 for metric-learn's weighting
        on every data set, or a smaller value on large, overlapping data for
        more accuracy at a longer fit (the trade is in the user guide).

    max_impostors : int or 'auto', default='auto'
        Most impostor pairs stored at once (PyLMNN's parameter); ``'auto'``:
        as many as fit in ``impostor_memory``.  When more are near-active,
        the push term is estimated on a fixed random subset of the impostor
        pairs, reweighted to stay unbiased (the objective remains one fixed
        function of ``L``), and a warning says what the exact loss would
        cost in memory and time.  Unused by ``solver='sgd'``.

    impostor_memory : int or str, default='auto'
        Memory budget of the impostor store when ``max_impostors='auto'``:
        bytes, or a string with units (``'256MB'``, ``'1.5GiB'``).
        ``'auto'``: 4 times the memory of the training data, at least 32 MB.
        Raise it after that warning when the memory is there and accuracy
        matters more than time.

    loss : {'auto', 'hinge', 'squared_hinge'}, default='auto'
        ``p = 1`` or ``p = 2`` above.  ``'auto'``: the hinge for
        ``solver='lbfgs'`` and ``solver='subgradient'``, the squared hinge
        for ``solver='sgd'`` (its only loss).  The squared hinge is smooth
        but weighs the few worst impostors far more than the many mild ones,
        which usually costs k-NN accuracy.

    solver : {'lbfgs', 'subgradient', 'sgd'}, default='lbfgs'
        ``'lbfgs'``: scipy's L-BFGS-B.  ``'subgradient'``: the paper's
        method (step times 1.01 after a decrease, halved with a roll-back
        after an increase).  ``'sgd'``: mini-batch AMSGrad on the squared
        hinge for data too large for the others (millions of points); each
        batch of ``batch_size`` anchors meets a fresh uniform sample of
        candidate impostors, reweighted to keep the gradient unbiased, so
        memory grows with the data and the targets only.

    learn_rate : float, default=None
        Initial step of ``solver='subgradient'`` and ``'sgd'``; ``None``
        picks one from the scales of ``L`` and of the gradient.

    batch_size : int, default=256
        Anchors per mini-batch of ``solver='sgd'``.

    warm_start : bool, default=False
        Start from the ``components_`` of the previous ``fit`` (when their
        shape fits) instead of ``init``, e.g. to refit on similar data.

    callback : callable, default=None
        ``callback(estimator, iteration)`` after every iteration, with
        ``estimator.components_`` set to the current ``L``; returning True
        stops the fit (without a ConvergenceWarning).

    verbose : int, default=0
        1: the phases of the fit (target neighbours, impostor searches) and a
        throttled table of iteration, objective, active triplets and time;
        2: every row of the table.  In a Jupyter notebook with `tqdm
        <https://tqdm.github.io>`_ installed, a progress bar too.

    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``X`` in ``fit`` and ``transform`` may be a 1-D array of
        indices into it (array) or of ids it maps to points (callable), as
        in metric-learn.

    random_state : int, RandomState instance or None, default=None
        Seeds ``init='random'``, ``init='pca'``, the impostor subset (when
        ``max_impostors`` is exceeded) and the batches of ``solver='sgd'``.

    k, convergence_tol, min_iter : default="deprecated"
        metric-learn's names, accepted with a FutureWarning: ``k`` and
        ``convergence_tol`` as ``n_neighbors`` and ``tol``; ``min_iter`` (no
        stop before it) by ``solver='subgradient'`` only, since
        ``solver='lbfgs'`` stops only at a verified stationary point.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned linear map ``L``.
    n_iter_ : int
        Number of iterations run.
    regularization_ : float
        The push weight ``mu`` used (``regularization``, ``'auto'`` resolved).
    loss_curve_ : list of float
        Objective after each iteration.
    n_active_curve_ : list of int
        Active triplets (with a positive hinge) after each iteration, as in
        the ``verbose`` table; aligned with ``loss_curve_``.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in,)
        Defined only when X has string feature names.
    target_neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Indices of the training targets (-1 where a class is too small).
    n_impostor_searches_ : int
        Number of exact impostor searches made.

    See Also
    --------
    sklearn.neighbors.NeighborhoodComponentsAnalysis

    References
    ----------
    .. [1] Weinberger, K. Q., Saul, L. K. "Distance Metric Learning for Large
       Margin Nearest Neighbor Classification". JMLR 10 (2009) 207-244.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from metric_estimators import LMNN
    >>> X, y = load_iris(return_X_y=True)
    >>> lmnn = LMNN(n_neighbors=3, random_state=0).fit(X, y)
    >>> lmnn.transform(X).shape
    (150, 4)
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "init": [StrOptions({"auto", "pca", "lda", "identity", "random"}), np.ndarray],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "regularization": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "max_impostors": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "impostor_memory": [Interval(Integral, 1, None, closed="left"), str],
        "loss": [StrOptions({"auto", "hinge", "squared_hinge"})],
        "solver": [StrOptions({"lbfgs", "subgradient", "sgd"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learn_rate": [Interval(Real, 0, None, closed="neither"), None],
        "warm_start": ["boolean"],
        "callback": [callable, None],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
        "k": [Interval(Integral, 1, None, closed="left"), StrOptions({"deprecated"})],
        "min_iter": [Interval(Integral, 0, None, closed="left"), StrOptions({"deprecated"})],
        "convergence_tol": [Interval(Real, 0, None, closed="neither"),
                            StrOptions({"deprecated"})],
    }

    def __init__(
        self,
        n_neighbors=3,
        n_components=None,
        *,
        init="auto",
        max_iter=1000,
        tol=1e-4,
        regularization="auto",
        max_impostors="auto",
        impostor_memory="auto",
        loss="auto",
        solver="lbfgs",
        learn_rate=None,
        batch_size=256,
        warm_start=False,
        callback=None,
        verbose=0,
        preprocessor=None,
        random_state=None,
        k="deprecated",
        min_iter="deprecated",
        convergence_tol="deprecated",
    ):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.regularization = regularization
        self.max_impostors = max_impostors
        self.impostor_memory = impostor_memory
        self.loss = loss
        self.solver = solver
        self.learn_rate = learn_rate
        self.batch_size = batch_size
        self.warm_start = warm_start
        self.callback = callback
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.k = k
        self.min_iter = min_iter
        self.convergence_tol = convergence_tol

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the linear map from labelled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : LMNN
        """
        report = FitReport(self, [ITERATION, OBJECTIVE, ACTIVE],
                           verbose=self.verbose, total=self.max_iter)
        params = self._resolve_parameters()
        self._check_preprocessor()
        X, y_idx = self._validate(self._points(X), y, params["n_neighbors"])
        report.phase(f"fit on {X.shape[0]} x {X.shape[1]}, {y_idx.max() + 1} "
                     "classes: searching target neighbours")
        rng = check_random_state(self.random_state)
        # The loss of L on X equals the loss of s L on X / s: data of extreme
        # scale is divided by a power of two s (exact) and the result by s.
        s = power_of_two_scale(X)
        if s != 1.0:
            X = X / s
        L0 = self._initial_components(X, y_idx, s, rng, params["n_neighbors"])
        kernels = _backend.choose("lmnn", *X.shape)
        with one_blas_thread(X.size * L0.shape[0], upper=_SMALL_BLAS):
            targets = target_neighbors(X, y_idx, params["n_neighbors"],
                                       progress=report.progress, kernels=kernels)
            report.phase(f"target neighbours: {params['n_neighbors']} per point")
            mu = self._push_weight(X.shape[0])
            objective, impostors = self._build_problem(
                X, y_idx, targets, L0.shape[0], params, mu, kernels, rng, report)
            history = _History(self, objective, report, L0.shape, s)
            L, n_iter, converged, stopped = self._solve(
                objective, impostors, L0, history.record, params, rng, report)
        n_searches = 0 if impostors is None else impostors.n_searches
        report.finish(f"{'converged' if converged else 'stopped'}"
                      f"{' by the callback' if stopped else ''} after "
                      f"{n_iter} iterations, {n_searches} impostor searches")
        self.components_ = (L / s if s != 1.0 else L).reshape(L0.shape)
        self.n_iter_ = n_iter
        self.regularization_ = float(mu)
        self.loss_curve_ = history.curve
        self.n_active_curve_ = history.active_curve
        self.target_neighbors_ = targets
        self.n_impostor_searches_ = n_searches
        if impostors is not None and impostors.subsample is not None:
            warnings.warn(impostors.subsample.message(), UserWarning, stacklevel=3)
        if not converged and not stopped:
            convergence_warning(self, max_iter=self.max_iter, tol=params["tol"],
                                history=history.curve, stacklevel=4)
        return self

    def _initial_components(self, X, y_idx, s, rng, n_neighbors):
        """``L0`` for the scaled ``X``: the previous map (``warm_start``) or ``init``."""
        L = getattr(self, "components_", None) if self.warm_start else None
        if L is not None and L.shape[1] == X.shape[1] and (
                self.n_components is None or L.shape[0] == self.n_components):
            return L * s  # a given L acts on the data in the user's units
        L0 = initialize_components(
            check_init(self.init, X.shape[1], self.n_components), X, y_idx,
            self.n_components, rng, auto_lda=np.bincount(y_idx).min() > n_neighbors)
        return L0 * s if isinstance(self.init, np.ndarray) else L0

    def _push_weight(self, n_samples):
        """The push weight ``mu`` of this fit (``regularization``, ``'auto'`` resolved)."""
        if self.regularization != "auto":
            return self.regularization
        return _AUTO_MU_SMALL if n_samples < _AUTO_MU_SAMPLES else _AUTO_MU_LARGE

    def _build_problem(self, X, y_idx, targets, n_components, params, mu, kernels, rng,
                       report):
        """The objective, and the impostor oracle it is evaluated on (None for SGD).

        The oracle's seed is drawn for every solver, so that the random
        stream after it (SGD's batches) does not depend on the solver.
        """
        seed = rng.randint(np.iinfo(np.int32).max)
        if self.solver == "sgd":
            return SampledLMNNObjective(X, targets, y_idx, mu,
                                        n_components, kernels), None
        cap, budget = impostor_budget(self.max_impostors, params["impostor_memory"], X)
        impostors = ImpostorSet(
            y_idx, (targets >= 0).any(axis=1), cap, kernels, seed=seed,
            budget=budget, log=report.phase, progress=report.progress,
            threads=search_threads())
        objective = LMNNObjective(X, targets, impostors, mu,
                                  params["loss"] == "squared_hinge", n_components)
        return objective, impostors

    def _solve(self, objective, impostors, L0, record, params, rng, report):
        """Run the chosen solver from ``L0``: ``(L, n_iter, converged, stopped)``."""
        x0 = L0.ravel().copy()
        options = {"max_iter": self.max_iter, "tol": params["tol"]}
        if self.solver == "sgd":
            return run_sgd(objective.sample, x0, record, n_samples=objective.n_samples,
                           random_state=rng, learn_rate=self.learn_rate,
                           batch_size=self.batch_size, progress=report.progress,
                           **options)
        oracle = {"impostors": impostors, "locate": objective.search_point}
        if self.solver == "subgradient":
            return run_subgradient(objective, x0, record, learn_rate=self.learn_rate,
                                   min_iter=params["min_iter"], **oracle, **options)
        return run_lbfgs(objective, x0, record, **oracle, **options)

    def _validate_params(self):
        # metric-learn's LMNN(init, n_neighbors, ...) order, used positionally,
        # lands init in n_neighbors: say so before the generic type error
        check_init_not_first(self, "n_neighbors")
        super()._validate_params()

    def _resolve_parameters(self):
        """Our parameters after metric-learn's names and 'auto'; refuse what cannot be honoured."""
        params = lmnn_metric_learn_parameters(self)  # n_neighbors, tol, min_iter
        params["loss"] = self.loss
        if self.loss == "auto":
            params["loss"] = "squared_hinge" if self.solver == "sgd" else "hinge"
        elif self.loss == "hinge" and self.solver == "sgd":
            raise ValueError(
                "LMNN(solver='sgd') minimises the squared hinge only; pass "
                "loss='squared_hinge' (or 'auto'), or solver='lbfgs' for the "
                "hinge.")
        params["impostor_memory"] = self.impostor_memory
        if not (isinstance(self.impostor_memory, str)
                and self.impostor_memory == "auto"):
            params["impostor_memory"] = parse_memory(  # bytes; early errors
                self.impostor_memory, "impostor_memory")
        return params

    def _validate(self, X, y, n_neighbors):
        """Validated float64 ``X`` and class indices; warn about small classes."""
        X, _, labels = validate_labelled_points(
            self, X, y, single_sample_reason="no target neighbours exist")
        check_n_components(self.n_components, X.shape[1])
        counts = labels.counts
        small = labels.classes[counts <= n_neighbors]
        if small.size:
            warnings.warn(
                f"{small.size} class(es) have at most n_neighbors="
                f"{n_neighbors} samples (e.g. class {for_message(small[0])!r} with "
                f"{counts[counts <= n_neighbors][0]}); their points get "
                "fewer target neighbours.",
                UserWarning,
            )
        return X, labels.indices


class _History:
    """The per-iteration hook of the solvers: loss curve, verbose table, user callback."""

    def __init__(self, estimator, objective, report, shape, scale):
        self.estimator, self.objective, self.report = estimator, objective, report
        self.shape, self.scale = shape, scale
        self.curve, self.active_curve = [], []

    def record(self, f, x, n_iter=None):
        """Store one iteration; True when the user's callback asks to stop."""
        self.curve.append(float(f))
        n_active = getattr(self.objective, "n_active", None)
        self.active_curve.append(n_active)
        it = len(self.curve) if n_iter is None else n_iter
        self.report.row(it, f, n_active)
        est = self.estimator
        if est.callback is None:
            return False
        est.components_ = (x / self.scale).reshape(self.shape)
        return bool(est.callback(est, it))
