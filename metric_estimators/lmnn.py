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
from ._problems.lmnn import LMNNObjective, SampledLMNNObjective, find_target_neighbors
from ._reporting import ACTIVE, ITERATION, OBJECTIVE, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._threads import one_blas_thread
from ._validation import (
    check_init,
    check_n_components,
    for_message,
    parse_memory,
    renamed_parameter,
    validate_labelled_points,
)
from .base import MahalanobisMixin
from .solvers.impostors import ImpostorSet, impostor_budget, search_threads
from .solvers.lmnn_runs import run_lbfgs, run_sgd, run_subgradient

__all__ = ["LMNN", "find_target_neighbors"]

# Below this n_samples * n_features * n_components, BLAS runs single-threaded:
# the products of an LMNN iteration (X L^T, Z^T Lap X, the search's blocks)
# are a small part of its time next to the single-threaded pair kernels, and
# on busy cores threaded BLAS threads spin, costing many times the CPU of the
# product itself; only products far larger than a typical fit's gain from
# threads (see metric_estimators._threads).
_SMALL_BLAS = 2e9

# regularization='auto': the push weight mu by the number of training points
# (see the parameter's docstring and benchmarks/results/lmnn_panel.md).
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

    over impostors ``l`` with ``y_l != y_i``, with ``p = 1`` (the paper's
    hinge, ``loss='hinge'``, the default of ``solver='lbfgs'`` and
    ``solver='subgradient'``) or ``p = 2`` (squared hinge, smooth,
    ``loss='squared_hinge'``, the only loss of ``solver='sgd'``).

    Impostors are searched exactly, blockwise in the embedded space (memory
    bounded by a block, never ``n x n``), within 1.5 times the margin
    radius, and kept as an active set between searches; searches get rarer
    while they find nothing new, and the solver only stops once a search at
    the final ``L`` confirms that no active impostor was missing, so the
    result is a stationary point of the exact loss.  The store is bounded by
    ``max_impostors`` / ``impostor_memory``; beyond it the push term is
    estimated on a fixed hashed subset of the impostor pairs (a warning says
    what the exact loss would cost).

    Parameters
    ----------
    n_neighbors : int, default=3
        Number of target neighbours per point.  A class with ``n_c <=
        n_neighbors`` points gives its points ``n_c - 1`` targets (with a
        warning); a point alone in its class has no targets but still acts
        as an impostor for the others.

    n_components : int, default=None
        Dimension of the embedding; ``None`` keeps ``n_features``.

    init : {'auto', 'pca', 'lda', 'identity', 'random'} or ndarray of shape \
            (n_components, n_features), default='auto'
        Initial ``L``; ``'auto'`` as in scikit-learn's NCA (LDA when
        ``n_components <= min(n_features, n_classes - 1)``, else PCA when
        ``n_components < n_features``, else the identity), except that it
        does not take LDA when a class has at most ``n_neighbors`` points
        (see ``docs/user_guide/lmnn.rst``).

    max_iter : int, default=1000
        Maximum number of iterations of the solver, a safety net: with the
        default ``tol`` fits on the usual small data sets stop long before it
        (the ``n_iter`` column of ``benchmarks/results/lmnn_defaults.md``).

    tol : float, default=1e-4
        Convergence tolerance on the relative decrease of the objective.
        ``solver='lbfgs'`` stops once the objective decreased by less than
        ``tol`` per iteration, relative, over the last 10 iterations on an
        unchanged impostor set (or at scipy's own tests, projected gradient
        below ``tol / 10``), and a search at the final ``L`` confirmed the
        impostor set; ``solver='subgradient'`` once an accepted step
        decreased it by at most ``tol``, relative.  The gradient of LMNN's
        sum of many hinge terms stays large long after the objective has
        settled, which is why the objective change decides.

    regularization : float or 'auto', default='auto'
        Weight ``mu`` of the push (impostor) term; ``1 - mu`` weighs the
        pull term.  Named as in metric-learn.  ``'auto'``: 0.5 (the paper's,
        metric-learn's and PyLMNN's value) below 2,000 training points,
        0.25 from 2,000 on; the value used is ``regularization_``.  Why: on
        the data sets of ``benchmarks/bench_lmnn.py --panel``
        (``benchmarks/results/lmnn_panel.md``) a smaller push weight raised
        the 3-NN accuracy of the sets with thousands of points, whose classes
        overlap, while on the small ones no value below 0.5 moved it
        consistently either way (a few test points up or down); 0.1 raised
        it further on the large ones but made most of their fits slower
        than at 0.5, 0.25 kept the median fit time (``regularization=0.1``
        for that accuracy at that cost; ``docs/user_guide/lmnn.rst``).

    max_impostors : int or 'auto', default='auto'
        Most impostor pairs kept at once (PyLMNN's name and meaning; at most
        32 bytes each at the peak of a fit).  ``'auto'``: as many as fit in
        ``impostor_memory``.  If more are near-active, the push term is
        estimated on a fixed random subset of all impostor pairs, reweighted
        to stay unbiased, with a warning that says how much memory and time
        the exact loss would need; the subset depends on ``random_state``
        only, so the objective stays one fixed function of ``L``.

    impostor_memory : int or str, default='auto'
        Memory budget of the impostor store when ``max_impostors='auto'``:
        bytes (int) or a string with units (``'256MB'``, ``'1GB'``,
        ``'1.5GiB'``).  ``'auto'``: 4 times the memory of the training data
        (float64), at least 32 MB, so the budget scales with the data.
        Unused with an int ``max_impostors`` and with ``solver='sgd'``.

    loss : {'auto', 'hinge', 'squared_hinge'}, default='auto'
        ``p = 1`` or ``p = 2`` above; ``'auto'``: ``'hinge'`` for
        ``solver='lbfgs'`` and ``solver='subgradient'``, ``'squared_hinge'``
        for ``solver='sgd'`` (which has no other).  L-BFGS on the hinge
        stops where its line search cannot decrease the piecewise smooth
        loss any more (and a search confirms the impostor set), as PyLMNN's
        does.  On most data sets of the benchmark panel its 3-NN accuracy is
        higher than the squared hinge's, which pushes harder on the few worst
        impostors (``benchmarks/results/lmnn_panel.md`` against the
        squared-hinge rows of ``benchmarks/results/lmnn_ablation.md``).

    solver : {'lbfgs', 'subgradient', 'sgd'}, default='lbfgs'
        ``'lbfgs'``: scipy's L-BFGS-B.  ``'subgradient'``:
        the paper's subgradient method with its step rule (step times 1.01 after a
        decrease, halved with a roll-back after an increase).  ``'sgd'``:
        the squared hinge by mini-batch AMSGrad
        (:mod:`metric_estimators.solvers.minibatch`) for data too large for
        the others (millions of points, ``benchmarks/results/lmnn_scale.md``):
        each batch of ``batch_size`` anchors
        meets a fresh uniform sample of 4096 points as candidate impostors,
        reweighted so that the gradient is unbiased
        (:class:`~metric_estimators._problems.lmnn.SampledLMNNObjective`);
        memory does not grow with ``n_samples`` beyond the data and the
        target neighbours.  ``max_iter`` counts epochs, ``tol`` the relative
        decrease of the epoch's mean objective; ``max_impostors`` is unused.

    learn_rate : float, default=None
        Initial step of ``solver='subgradient'`` (``None`` picks ``0.01 *
        ||L||_F / ||grad||_F``) and of ``solver='sgd'`` (``None``: ``0.01 *
        max |L0|``, divided by ``sqrt(epoch)`` later).  Ignored by L-BFGS.

    batch_size : int, default=256
        Anchors per mini-batch of ``solver='sgd'``.

    warm_start : bool, default=False
        Start from the ``components_`` of the previous ``fit`` (when their
        shape fits) instead of ``init``.

    callback : callable, default=None
        ``callback(estimator, iteration)`` after every iteration, with
        ``estimator.components_`` set to the current ``L``; returning True
        stops the fit (without a ConvergenceWarning).

    verbose : int, default=0
        1: print the phases (start, target neighbours, impostor searches
        with candidate counts, throttled progress lines inside long
        searches) and a throttled table of iteration, objective, active
        triplets and time since the start of ``fit``; 2: every row of the
        table.  The first line comes right after input validation.  In a
        Jupyter notebook with `tqdm <https://tqdm.github.io>`_ installed
        (optional), a progress bar over ``max_iter`` is shown too.

    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``X`` in ``fit`` and ``transform`` may be a 1-D array of
        indices into it (array) or of ids it maps to points (callable), as
        in metric-learn.

    random_state : int, RandomState instance or None, default=None
        Used by ``init='random'``, ``init='pca'`` and the impostor subset
        drawn when ``max_impostors`` is exceeded.

    k, convergence_tol : default="deprecated"
        metric-learn's names of ``n_neighbors`` and ``tol``: accepted with a
        FutureWarning and used as those.

    min_iter : int, default="deprecated"
        metric-learn's minimum number of iterations, accepted with a
        FutureWarning for ``solver='subgradient'`` (no stop before it).
        ``solver='lbfgs'`` cannot honour it (it stops only at a verified
        stationary point, where more iterations would not change ``L``): a
        ``ValueError`` there.

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
        Active triplets (target neighbour, impostor) with a positive hinge
        after each iteration, as in the ``verbose`` table; aligned with
        ``loss_curve_``.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in,)
        Defined only when X has string feature names.
    target_neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Indices of the training targets (-1 where a class is too small).
    n_impostor_searches_ : int
        Number of full impostor searches (for the curious).

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
        "init": [
            StrOptions({"auto", "pca", "lda", "identity", "random"}),
            np.ndarray,
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "regularization": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "max_impostors": [Interval(Integral, 1, None, closed="left"),
                          StrOptions({"auto"})],
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
        "min_iter": [Interval(Integral, 0, None, closed="left"),
                     StrOptions({"deprecated"})],
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
        # BLAS threads do not pay off on small products and, when the cores
        # are busy (grid searches, shared machines), spinning threads make
        # them several times slower; large problems keep the default pool.
        with one_blas_thread(X.size * L0.shape[0], upper=_SMALL_BLAS):
            targets = find_target_neighbors(X, y_idx, params["n_neighbors"],
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
            warnings.warn(_subsample_message(impostors.subsample), UserWarning,
                          stacklevel=3)
        if not converged and not stopped:
            convergence_warning(self, max_iter=self.max_iter, tol=params["tol"],
                                history=history.curve, stacklevel=4)
        return self

    def _initial_components(self, X, y_idx, s, rng, n_neighbors):
        """``L0``: the previous map (``warm_start``) or ``init``, for the scaled ``X``."""
        warm = self._warm_components(X.shape[1])
        init = warm if warm is not None else self._resolve_init(
            check_init(self.init, X.shape[1], self.n_components), y_idx,
            X.shape[1], n_neighbors)
        L0 = initialize_components(init, X, y_idx, self.n_components, rng)
        if warm is not None or isinstance(self.init, np.ndarray):
            L0 = L0 * s  # a given L acts on the data in the user's units
        return L0

    def _resolve_init(self, init, y_idx, n_features, n_neighbors):
        """``init``, with ``'auto'`` kept from LDA when a class has at most ``n_neighbors`` points.

        LDA's start whitens the pooled within-class scatter.  A class of one
        point adds none, so a feature that varies only through such classes
        has none: LDA stretches it without bound and may return fewer rows
        than ``n_components`` (the fit then learns a lower-rank map).  Classes of up to
        ``n_neighbors`` points are the ones whose points get fewer target
        neighbours (the warning of ``fit``); with any of them ``'auto'``
        takes PCA or the identity, its choice when LDA's shape condition
        fails.  Evidence: ``benchmarks/results/lmnn_small_followup.md``.
        """
        if not (isinstance(init, str) and init == "auto"):
            return init
        if np.bincount(y_idx).min() > n_neighbors:
            return init
        n_components = n_features if self.n_components is None else self.n_components
        return "pca" if n_components < n_features else "identity"

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
        if isinstance(self.n_neighbors, (str, np.ndarray)):
            raise ValueError(
                f"LMNN got n_neighbors={self.n_neighbors!r}: metric-learn's "
                "LMNN takes init as its first positional parameter, this one "
                "takes n_neighbors; pass parameters by keyword, e.g. "
                "LMNN(init='auto', n_neighbors=3)."
            )
        super()._validate_params()

    def _resolve_parameters(self):
        """Our parameters after metric-learn's names; refuse what cannot be honoured."""
        params = {
            "n_neighbors": renamed_parameter(self, "k", "n_neighbors", 3,
                                             stacklevel=5),
            "tol": renamed_parameter(self, "convergence_tol", "tol", 1e-4,
                                     stacklevel=5),
            "min_iter": 0,
            "loss": self.loss,
        }
        params["impostor_memory"] = self.impostor_memory
        if self.loss == "auto":
            params["loss"] = "squared_hinge" if self.solver == "sgd" else "hinge"
        elif self.loss == "hinge" and self.solver == "sgd":
            raise ValueError(
                "LMNN(solver='sgd') minimises the squared hinge only; pass "
                "loss='squared_hinge' (or 'auto'), or solver='lbfgs' for the "
                "hinge.")
        if not (isinstance(self.impostor_memory, str)
                and self.impostor_memory == "auto"):
            params["impostor_memory"] = parse_memory(  # bytes; early errors
                self.impostor_memory, "impostor_memory")
        if not (isinstance(self.min_iter, str) and self.min_iter == "deprecated"):
            if self.solver == "lbfgs":
                raise ValueError(
                    f"LMNN(min_iter={self.min_iter}) cannot be honoured by "
                    "solver='lbfgs', which stops only at a verified "
                    "stationary point (more iterations would not change L). "
                    "Drop min_iter, or use solver='subgradient'."
                )
            warnings.warn(
                "LMNN: min_iter is metric-learn's parameter; it is honoured "
                "by solver='subgradient' (no stop before min_iter "
                "iterations) and will be removed in a future release.",
                FutureWarning, stacklevel=4)
            params["min_iter"] = int(self.min_iter)
        if self.learn_rate is not None and self.solver == "lbfgs":
            warnings.warn(
                f"LMNN: learn_rate={self.learn_rate} is used by "
                "solver='subgradient' and solver='sgd' only; solver='lbfgs' "
                "(the default) chooses its own steps. Drop learn_rate, or "
                "pass solver='subgradient'.", UserWarning, stacklevel=4)
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

    def _warm_components(self, n_features):
        """The previous ``components_`` when ``warm_start`` applies, else None."""
        L = getattr(self, "components_", None) if self.warm_start else None
        if L is None or L.shape[1] != n_features or (
                self.n_components is not None and L.shape[0] != self.n_components):
            return None
        return L.copy()


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


def _size(n_bytes):
    """A byte count for messages: '812 kB', '37 MB', '1.2 GB'."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{int(n_bytes)} B"


def _subsample_message(note):
    """The warning that the push term is sampled, and what the exact loss would cost.

    ``note``: the oracle's :class:`~metric_estimators.solvers.impostors.SubsampleNote`.
    The exact loss needs its near-active pairs plus 20 % of room; an
    objective evaluation makes about three passes over the pairs
    (distances, weights, gradient).
    """
    full = 1.2 * note.near_active
    budget = "" if note.budget is None else f" (impostor_memory={_size(note.budget)})"
    per_pass = 3.0 * note.seconds_per_pair
    return (
        f"More than max_impostors={note.cap}{budget} impostor pairs are near-"
        f"active (about {note.near_active:.3g}); the push term is estimated on a "
        f"fixed random subset of impostor pairs (fraction {note.fraction:.3g}). "
        f"The exact LMNN loss needs max_impostors >= {full:.3g} (impostor_memory "
        f">= {_size(note.pair_bytes * full)}): about "
        f"{_size(note.pair_bytes * max(full - note.cap, 0.0))} more memory, and "
        f"roughly {per_pass * full:.2g} s instead of {per_pass * note.n_kept:.2g} s "
        f"on impostors per objective evaluation (this search took "
        f"{note.search_seconds:.2g} s)."
    )
