"""Mahalanobis Metric for Clustering: MMC and MMC_Supervised.

Xing, Ng, Jordan & Russell, "Distance metric learning, with application to
clustering with side-information", NIPS 2002.

The problems (:mod:`metric_estimators._problems.mmc`)
------------------------------------------------------
Full matrix: maximise the sum of the learned (unsquared) distances of the
dissimilar pairs subject to the sum of the squared distances of the similar
pairs being at most 1, over PSD matrices ``A``.  Diagonal (``diagonal=True``):
minimise ``sum_S d_w^2 - diagonal_c * log(sum_D d_w)`` over ``w >= 0``.  Both
are convex; the scale of the solution is the one these formulations fix
(``sum_S d_A^2 = 1``, respectively ``sum_S d_w^2 = diagonal_c / 2``).

Differences from metric-learn 0.7.0 (same class names and parameters)
----------------------------------------------------------------------
* The full problem is solved to optimality: after whitening by the
  similar-pairs scatter matrix the feasible set is the spectraplex, whose
  projection is exact (one eigendecomposition), so there is no alternating
  projection loop; projected gradient ascent with Barzilai-Borwein steps
  stops on the Frank-Wolfe duality gap (``gap <= tol * objective``), a
  certificate of optimality.  metric-learn alternates up to ``max_proj``
  projections per step and stops when its step gets small.  ``max_proj``
  is accepted and caps the step halvings of one iteration.
* The diagonal problem is solved by L-BFGS-B with bounds ``w >= 0``
  (``tol`` is its relative decrease tolerance) instead of Newton steps
  clipped at 0.
* The exact optimum of the full problem is often of low rank (1 to 3 on the
  usual data sets): MMC spends all its budget on the few directions that
  separate the dissimilar pairs most, and its k-NN accuracy is poor, below
  Euclidean's (measured: benchmarks/README.md, *Every supervised learner
  at its defaults*).  So the exact solve is an
  option (``solver='exact'``) and the default is Xing et al.'s projected
  gradient ascent (``solver='projected_gradient'``,
  :func:`metric_estimators.solvers.constrained.halfspace_psd_ascent`) as
  an early-stopped path: ``init`` scaled onto the constraint boundary
  (``sum_S d_A^2`` equal to the start's; metric-learn instead projects the
  start onto 1/100 of it, which removes the directions of large similar
  scatter), then 10 steps (``max_iter=None``) of step length 0.1, growing
  by 1.05 after an accepted step and halved after a rejected one, with
  metric-learn's stopping rule (step below ``tol`` times the iterate's
  norm) as the other exit.  3-NN accuracies of both solvers are in
  docs/user_guide/mmc.rst.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from ._docstrings import fill_doc
from ._problems.logdet import covariance_pseudo_inverse, prior_matrix
from ._problems.mmc import RIDGE, MMCDiagonalProblem, MMCFullProblem, MMCPathProblem
from ._reporting import ITERATION, OBJECTIVE, Column, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._threads import one_blas_thread
from ._tuple_classifiers import PairsClassifierMixin
from ._validation import check_prior, validate_labelled_points
from .base import MahalanobisMixin, components_from_matrix
from .constraints import SMALL_ALL_PAIRS_WORK, default_labelled_pairs
from .solvers.constrained import (
    halfspace_psd_ascent,
    nonnegative_lbfgs,
    spectraplex_ascent,
)

__all__ = ["MMC", "MMC_Supervised"]

_GAP = Column("Gap", ".3e")
# Below this n_pairs * n_features^2 (and from _threads.TINY_BLAS_WORK on),
# BLAS runs single-threaded: its threads do not pay off on products of this
# size and, on busy cores, spinning threads make the fit many times slower
# (measured: benchmarks/README.md, *Measurements behind choices in the code*).
_LARGE_BLAS = 5e7
_STEP = Column("Step", ".3e")
#: default number of projected-gradient steps (``solver='projected_gradient'``,
#: ``max_iter=None``): chosen by 3-NN accuracy on wine, breast_cancer and
#: digits (docs/user_guide/mmc.rst, benchmarks/results/defaults.md)
PATH_STEPS = 10


class _BaseMMC(MahalanobisMixin, BaseEstimator):
    """Shared parameters and the solver calls of MMC and MMC_Supervised."""

    _parameter_constraints: dict = {
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "max_proj": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"identity", "covariance", "random"}), "array-like"],
        "diagonal": ["boolean"],
        "diagonal_c": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"projected_gradient", "exact"})],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(self, max_iter=None, max_proj=10000, tol=1e-3, init="identity",
                 diagonal=False, diagonal_c=1.0, solver="projected_gradient",
                 verbose=False, preprocessor=None, random_state=None):
        self.max_iter = max_iter
        self.max_proj = max_proj
        self.tol = tol
        self.init = init
        self.diagonal = diagonal
        self.diagonal_c = diagonal_c
        self.solver = solver
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def _solve(self, V, y, points, rng, report):
        """Solve MMC on pair differences ``V`` with labels ``y``; set attributes."""
        n_features = V.shape[1]
        V_sim, V_dis = V[y == 1], V[y == -1]
        if V_sim.shape[0] == 0 or V_dis.shape[0] == 0:
            raise ValueError(
                f"{type(self).__name__} needs both similar (+1) and dissimilar "
                f"(-1) pairs; got {V_sim.shape[0]} similar and "
                f"{V_dis.shape[0]} dissimilar."
            )
        if not np.any(V_dis):
            raise ValueError("every dissimilar pair joins identical points; "
                             "no metric can separate them.")
        if not np.any(V_sim):
            raise ValueError(
                "every similar pair joins identical points: the constraint "
                "on similar pairs does not bound the metric (the MMC problem "
                "is unbounded)."
            )
        A0 = self._initial_matrix(points, n_features, rng)
        self.n_raised_ = 0
        with one_blas_thread(V.shape[0] * n_features ** 2, upper=_LARGE_BLAS):
            if self.diagonal:
                M = np.diag(self._solve_diagonal(V_sim, V_dis, A0, report))
            elif self.solver == "exact":
                M = self._solve_full(V_sim, V_dis, A0, report)
            else:
                M = self._solve_path(V_sim, V_dis, A0, report)
        self.components_ = components_from_matrix(M, name="the learned matrix")
        return self

    def _initial_matrix(self, points, n_features, rng):
        """The starting matrix of ``init``; a singular covariance warns."""
        if isinstance(self.init, str) and self.init == "covariance":
            A0, rank = covariance_pseudo_inverse(points)
            if rank < n_features:
                warnings.warn(
                    f"init='covariance': the covariance of the points has rank "
                    f"{rank} < {n_features} features and is not invertible; "
                    "starting from its pseudo-inverse.  Remove linearly "
                    "dependent features (e.g. reduce the dimension with PCA) "
                    "to make it invertible.", UserWarning, stacklevel=5)
            return A0
        try:
            prior = check_prior(self.init, n_features)
            return prior_matrix(prior, points, n_features, rng)
        except (TypeError, ValueError) as exc:  # name MMC's parameter: init
            raise type(exc)(str(exc).replace("prior", "init")) from None

    def _solve_full(self, V_sim, V_dis, A0, report):
        problem = MMCFullProblem(V_sim, V_dis)
        self.n_raised_ = problem.n_raised
        report.phase(f"{V_sim.shape[0]} similar, {V_dis.shape[0]} dissimilar "
                     f"pairs, full matrix")
        if problem.n_raised:
            warnings.warn(
                f"The similar pairs span {V_sim.shape[1] - problem.n_raised} of "
                f"{V_sim.shape[1]} dimensions: MMC is unbounded along the "
                f"others; their scatter eigenvalues were raised to {RIDGE:g} "
                "times the largest (more similar pairs, or fewer features, "
                "avoid this).", UserWarning, stacklevel=4)
        result = spectraplex_ascent(
            problem, problem.start(A0), max_iter=self._max_iter(), tol=self.tol,
            max_backtrack=self.max_proj,
            callback=lambda it, f, gap, step: report.row(it, f, gap, step))
        self.n_iter_ = int(result.n_iter)
        self.loss_curve_ = np.asarray(result.history["objective"])
        self.gap_curve_ = np.asarray(result.history["gap"])
        self.objective_ = result.value
        self.gap_ = result.gap / max(abs(result.value), np.finfo(float).tiny)
        self.converged_ = result.converged
        if result.converged:
            report.finish(f"converged after {result.n_iter} iterations")
        else:
            report.finish(f"stopped after {result.n_iter} iterations")
            convergence_warning(self, max_iter=self._max_iter(), tol=self.tol,
                                history=self.loss_curve_,
                                detail=f"relative duality gap {self.gap_:.3g}",
                                stacklevel=5)
        return problem.metric(result.B)

    def _max_iter(self):
        """``max_iter``; None: 10 projected-gradient steps, else 100 iterations."""
        if self.max_iter is not None:
            return self.max_iter
        if self.solver == "projected_gradient" and not self.diagonal:
            return PATH_STEPS
        return 100

    def _solve_path(self, V_sim, V_dis, A0, report):
        problem = MMCPathProblem(V_sim, V_dis)
        report.phase(f"{V_sim.shape[0]} similar, {V_dis.shape[0]} dissimilar "
                     f"pairs, full matrix, projected gradient")
        result = halfspace_psd_ascent(
            problem, problem.W, problem.bound(A0), A0, max_iter=self._max_iter(),
            tol=self.tol, max_proj=self.max_proj,
            callback=lambda it, f, rel, ok: report.row(it, f, None, rel))
        self.n_iter_ = int(result.n_iter)
        self.loss_curve_ = np.asarray(result.history["objective"])
        self.objective_ = result.value
        # the path is stopped early by design (max_iter is its budget, not a
        # safeguard): reaching it is not a failure, so no ConvergenceWarning
        self.converged_ = result.converged
        how = "relative step below tol" if result.converged else "max_iter steps"
        report.finish(f"stopped after {result.n_iter} iterations ({how})")
        return result.A

    def _solve_diagonal(self, V_sim, V_dis, A0, report):
        problem = MMCDiagonalProblem(V_sim, V_dis, self.diagonal_c)
        report.phase(f"{V_sim.shape[0]} similar, {V_dis.shape[0]} dissimilar "
                     f"pairs, diagonal")
        w0 = np.maximum(np.diag(A0).astype(np.float64), 0.0)
        if not np.any(w0):
            w0 = np.ones_like(w0)
        # the best multiple of w0 has sum_S d^2 = diagonal_c / 2: start there
        w0 = w0 * (0.5 * self.diagonal_c / max(problem.s @ w0, np.finfo(float).tiny))
        history = []

        def callback(w, value):
            history.append(value)
            report.row(len(history), value, None, None)

        result = nonnegative_lbfgs(problem, w0, max_iter=self._max_iter(),
                                   ftol=self.tol, callback=callback)
        self.n_iter_ = int(result.nit)
        self.loss_curve_ = np.asarray(history, dtype=np.float64)
        self.objective_ = float(result.fun)
        self.converged_ = result.status != 1
        if self.converged_:
            report.finish(f"converged after {self.n_iter_} iterations")
        else:
            report.finish(f"stopped after {self.n_iter_} iterations")
            convergence_warning(self, max_iter=self._max_iter(), tol=self.tol,
                                history=self.loss_curve_, stacklevel=5)
        return result.x


class MMC(PairsClassifierMixin, _BaseMMC):
    """Mahalanobis Metric for Clustering, learned from labelled pairs.

    Learns ``A`` maximising the sum of the distances of dissimilar pairs
    while the sum of the squared distances of similar pairs stays bounded
    (Xing et al., NIPS 2002), or, with ``diagonal=True``, a diagonal ``A``
    minimising ``sum_S d^2 - diagonal_c * log(sum_D d)``.  The full problem
    is followed by Xing et al.'s projected gradient from ``init`` for a few
    steps (the default), or solved to a certified optimum
    (``solver='exact'``); the diagonal one is solved to optimality (module
    docstring of :mod:`metric_estimators.mmc`).

    Parameters
    ----------
    max_iter : int or None, default=None
        Most iterations: steps of the path (``solver='projected_gradient'``),
        of the exact solve (``solver='exact'``), or L-BFGS-B iterations
        (``diagonal=True``).  None: 10 steps of the path (an early stop by
        design, see ``solver``), 100 iterations otherwise.
    max_proj : int, default=10000
        Projected gradient: most rounds of alternating projections per step.
        Exact: most step halvings in one iteration (its projection is exact).
    tol : float, default=1e-3
        Projected gradient: stop when the step is below ``tol`` times the
        Frobenius norm of the iterate (metric-learn's rule).  Exact: stop
        when the Frank-Wolfe duality gap is at most ``tol`` times the
        objective (so the objective is within ``tol``, relative, of its
        maximum).  Diagonal: L-BFGS-B's relative decrease tolerance.
    init : {'identity', 'covariance', 'random'} or array of shape \
            (n_features, n_features), default='identity'
        Starting matrix: the identity, the inverse covariance of the points
        (its pseudo-inverse, with a warning, when the covariance is
        singular), a random SPD matrix (``random_state``) or a positive
        definite array.
        (Diagonal: its diagonal.)  The problem is convex, so it changes the
        path, not the optimum.
    diagonal : bool, default=False
        Learn a diagonal matrix (a scaling of the features).
    diagonal_c : float, default=1.0
        Weight of the dissimilar term of the diagonal problem.
    solver : {'projected_gradient', 'exact'}, default='projected_gradient'
        Full matrix only.  ``'projected_gradient'``: Xing et al.'s projected
        gradient ascent from ``init`` (scaled onto the constraint), stopped
        after ``max_iter`` steps or on a small step; the metric moves from
        ``init`` towards MMC's optimum without reaching it, and keeps the
        directions k-NN needs.  ``'exact'``: the certified optimum (duality
        gap below ``tol``), often of rank 1 to 3 and a poor k-NN metric.
        docs/user_guide/mmc.rst compares the two.
    verbose : bool or int, default=False
        Print a table (iteration, objective, relative gap or step, time).
    preprocessor : array-like, callable or None, default=None
        If given, ``pairs`` may be ``(n_pairs, 2)`` indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds ``init='random'``.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``A = L^T L``.
    n_iter_ : int
    loss_curve_ : ndarray of shape (n_iter,)
        The objective after each iteration (full: the sum of dissimilar
        distances, increasing; diagonal: ``g(w)``, decreasing).
    gap_curve_ : ndarray of shape (n_iter,)
        ``solver='exact'`` only: the relative duality gap after each
        iteration.
    objective_ : float
        The final objective.
    gap_ : float
        ``solver='exact'`` only: the final relative duality gap.
    converged_ : bool
        Exact and diagonal: the stopping test was met.  Projected gradient:
        the step fell below ``tol`` before ``max_iter`` steps (a path stopped
        by ``max_iter`` is the intended early stop: no warning).
    n_raised_ : int
        Eigenvalues of the similar-pairs scatter matrix raised to the floor
        (0 when the similar pairs span the feature space).
    threshold_ : float
        Distance threshold of :meth:`predict`, calibrated on the training
        pairs.
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    References
    ----------
    E. P. Xing, A. Y. Ng, M. I. Jordan and S. Russell. Distance metric
    learning, with application to clustering with side-information.
    NIPS 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import MMC
    >>> pairs = np.array([[[1.2, 7.5], [1.3, 1.5]], [[6.4, 2.6], [6.2, 9.7]],
    ...                   [[1.3, 4.5], [3.2, 4.6]], [[6.2, 5.5], [5.4, 5.4]]])
    >>> mmc = MMC().fit(pairs, [1, 1, -1, -1])
    >>> A = mmc.get_mahalanobis_matrix()
    >>> bool(A[0, 0] > A[1, 1])     # the first feature separates
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, pairs, y, calibration_params=None):
        """Learn the metric from labelled pairs.

        Parameters
        ----------
        %(labelled_pairs)s
        %(calibration_params)s

        Returns
        -------
        self : MMC
        """
        report = FitReport(self, (ITERATION, OBJECTIVE, _GAP, _STEP),
                           verbose=self.verbose)
        V, y_pairs, points = self._training_pairs(pairs, y, calibration_params)
        self._solve(V, y_pairs, points, check_random_state(self.random_state),
                    report)
        return self._calibrate_on_training_pairs(pairs, y_pairs,
                                                 calibration_params)


@fill_doc
class MMC_Supervised(TransformerMixin, _BaseMMC):
    """MMC with pairs from class labels.

    On small data every pair of training points is a constraint (same
    class: similar, different classes: dissimilar); otherwise, or with
    ``n_constraints`` given, ``n_constraints`` same-class and as many
    different-class pairs are drawn uniformly
    (:func:`metric_estimators.constraints.pairs_from_labels`, reproducible
    with ``random_state``).  MMC's problem is then solved on them.

    Parameters
    ----------
    max_iter, max_proj, init, diagonal, diagonal_c, solver, verbose, preprocessor, random_state
        As in :class:`MMC`; ``random_state`` also seeds the pair sampling.
        ``preprocessor`` is accepted for metric-learn compatibility; with an
        array, ``X`` may be 1-D indices into it.
    tol : float, default=1e-6
        As in :class:`MMC` (metric-learn's default here is also 1e-6; with
        the default ``max_iter`` the projected-gradient path stops on its
        step budget first).
    n_constraints : int or None, default=None
        Number of pairs of each kind to draw; None grows with the data
        %(default_pairs_all)s

    Attributes
    ----------
    components_, n_iter_, loss_curve_, gap_curve_, objective_, gap_, converged_, n_raised_, n_features_in_
        As in :class:`MMC`.
    pairs_ : ndarray of shape (n_pairs, 2)
        The drawn index pairs into ``X``.
    pair_labels_ : ndarray of shape (n_pairs,)
        +1 same class, -1 different classes.
    """

    _parameter_constraints: dict = {
        **_BaseMMC._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, max_iter=None, max_proj=10000, tol=1e-6,
                 n_constraints=None, init="identity", diagonal=False,
                 diagonal_c=1.0, solver="projected_gradient", verbose=False,
                 preprocessor=None, random_state=None):
        super().__init__(max_iter=max_iter, max_proj=max_proj, tol=tol,
                         init=init, diagonal=diagonal, diagonal_c=diagonal_c,
                         solver=solver, verbose=verbose,
                         preprocessor=preprocessor,
                         random_state=random_state)
        self.n_constraints = n_constraints

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y):
        """Learn the metric from class labels.

        Parameters
        ----------
        %(labelled_points)s

        Returns
        -------
        self : MMC_Supervised
        """
        report = FitReport(self, (ITERATION, OBJECTIVE, _GAP, _STEP),
                           verbose=self.verbose)
        self._check_preprocessor()
        X, y, labels = validate_labelled_points(
            self, self._points(X), y, minus_one_note=True)
        rng = check_random_state(self.random_state)
        pairs, labels = default_labelled_pairs(
            y, X.shape[1], self.n_constraints, all_pairs_work=SMALL_ALL_PAIRS_WORK,
            random_state=rng)
        V = X[pairs[:, 0]] - X[pairs[:, 1]]
        self._solve(V, labels, X, rng, report)
        self.pairs_ = pairs
        self.pair_labels_ = labels
        return self
