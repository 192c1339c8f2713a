"""Ordinal metric learning: the MDS-based learner ``OMDML`` and the ``LODML`` baseline.

Both learn a Mahalanobis metric ``d(x, x')^2 = (x - x')^T L^T L (x - x')``
from points with *ordered* labels (ages, grades, ratings ...), for ranking
by nearest neighbours: given a query, the training points closest in the
learned metric should be those whose labels are closest to the query's.

Ordered labels ``y``: real numbers whose order is meaningful; every distinct
value is one level (strings are rejected: encode ordered categories as
integers first; booleans are the levels 0 < 1).

The two models (OMDML's, built on what Yu & Li state, and the LODML-style
baseline), with the choices made where the papers were not available, are
stated in :mod:`metric_estimators._problems.ordinal`.

This module holds the estimators only.  Label dissimilarities, MDS and
ordinal triplets are in ``_problems/label_mds.py``, the k-NN search in
``_problems/neighbours.py``, the two objectives in ``_problems/ordinal.py``,
the solvers in ``solvers/`` (quadratic, lbfgs, subgradient).
"""

import numbers
import warnings

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._linalg import power_of_two_scale
from ._problems.label_mds import classical_mds, label_embedding, ordinal_triplets
from ._problems.ordinal import LODMLProblem, OMDMLProblem
from ._reporting import ACTIVE, ITERATION, OBJECTIVE, Column, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._validation import check_n_components, validate_ordered_points
from .base import MahalanobisMixin
from .solvers.lbfgs import lbfgs
from .solvers.quadratic import solve_normal_equations
from .solvers.subgradient import adaptive_subgradient

__all__ = ["OMDML", "LODML", "classical_mds", "label_embedding", "ordinal_triplets"]

STEP = Column("Step", ".3e")


class OMDML(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Ordinal distance metric learning with MDS targets (after Yu & Li 2018).

    The ordered labels are embedded by classical MDS of a label
    dissimilarity; the linear map ``L`` is the least squares fit of those
    targets, with a term that keeps same-level neighbours together and a
    ridge term.  The problem is an unconstrained convex quadratic, solved in
    closed form.  The exact model is in the module docstring of
    :mod:`metric_estimators.ordinal` and in docs/ordinal.md.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the learned space.  None: every MDS coordinate of the
        label dissimilarity with a positive eigenvalue, at most
        ``n_features``.  An int must not exceed that number.
    label_dissimilarity : {'absolute', 'rank', 'sqrt'} or callable, default='absolute'
        Dissimilarity between two levels ``a`` and ``b``: ``'absolute'``
        ``|a - b|``; ``'rank'`` ``|rank(a) - rank(b)|`` (equally spaced
        levels); ``'sqrt'`` ``|a - b| ** 0.5``.  A callable is called once as
        ``f(levels[:, None], levels[None, :])`` and must return the
        ``(m, m)`` matrix: symmetric, non-negative, zero on the diagonal.
        ``'absolute'`` and ``'rank'`` give a one-dimensional target (so a
        rank-one metric, which ranked best in our benchmark); ``'sqrt'`` an
        ``(m - 1)``-dimensional curve (use it for a 2-D plot, for example).
    n_neighbors : int, default=5
        Neighbours per point in the local-structure graph (fewer when a level
        has fewer other points).
    local_graph : {'same_level', 'all'}, default='same_level'
        Neighbours searched among the points of the same level, or among all
        points (unsupervised, as in locality preserving projections).
    local_weight : float, default=1.0
        Weight of the local-structure term.
    ridge : float, default=1e-6
        Weight of ``||L||_F^2``, relative to the mean feature variance.
    solver : {'auto', 'cholesky', 'lbfgs'}, default='auto'
        ``'cholesky'`` solves the normal equations (``O(n d^2 + d^3)``);
        ``'lbfgs'`` minimises the same objective matrix-free
        (``O(n d r)`` per iteration).  ``'auto'`` uses ``'cholesky'`` up to
        2000 features.
    max_iter : int, default=500
        Maximum L-BFGS iterations (``solver='lbfgs'``).
    tol : float, default=1e-8
        L-BFGS tolerance on the projected gradient, relative to the
        objective's scale (``solver='lbfgs'``).
    verbose : int, default=0
        Print the solver's progress.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``X`` in ``fit`` and ``transform`` may be a 1-D array of
        indices into it (array) or of ids it maps to points (callable).
    random_state : int, RandomState instance or None, default=None
        Unused: both solvers are deterministic (L-BFGS starts from zero).
        Accepted so that code setting ``random_state`` on every learner works.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``.
    levels_ : ndarray of shape (n_levels,)
        The distinct label values, increasing.
    level_embedding_ : ndarray of shape (n_levels, n_components)
        MDS coordinates of the levels (the regression targets).
    mds_eigenvalues_ : ndarray of shape (n_levels,)
        Eigenvalues of the double-centred squared label dissimilarities.
    objective_ : float
        Final value of ``J``.
    loss_curve_ : list of float
        ``J`` after every iteration (one value for the closed form).
    n_iter_ : int
        Iterations of the solver (1 for the closed form).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has feature names.

    See Also
    --------
    LODML : the PSD-constrained triplet baseline.

    References
    ----------
    P. Yu and Q. Li, "Ordinal Distance Metric Learning with MDS for Image
    Ranking", Asia-Pacific Journal of Operational Research 35(1), 2018.

    Examples
    --------
    >>> from metric_estimators import OMDML
    >>> from metric_estimators.ranking import make_ordinal
    >>> X, y = make_ordinal(n_samples=200, random_state=0)
    >>> omdml = OMDML().fit(X, y)
    >>> omdml.transform(X).shape
    (200, 1)
    >>> OMDML(label_dissimilarity="sqrt").fit(X, y).transform(X).shape
    (200, 7)
    """

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "label_dissimilarity": [StrOptions({"absolute", "rank", "sqrt"}), callable],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "local_graph": [StrOptions({"same_level", "all"})],
        "local_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "ridge": [Interval(numbers.Real, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "cholesky", "lbfgs"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        label_dissimilarity="absolute",
        n_neighbors=5,
        local_graph="same_level",
        local_weight=1.0,
        ridge=1e-6,
        solver="auto",
        max_iter=500,
        tol=1e-8,
        verbose=0,
        preprocessor=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.label_dissimilarity = label_dissimilarity
        self.n_neighbors = n_neighbors
        self.local_graph = local_graph
        self.local_weight = local_weight
        self.ridge = ridge
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the linear map to points with ordered labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered numeric labels (see the module docstring).

        Returns
        -------
        self : OMDML
        """
        report = FitReport(self, [ITERATION, OBJECTIVE], verbose=self.verbose)
        self._check_preprocessor()
        X, y, levels, level_idx = validate_ordered_points(self, self._points(X), y)
        n, d = X.shape
        T, eigenvalues = label_embedding(levels, self.label_dissimilarity)
        r = self._n_components(T.shape[1], d, levels.size)
        T = T[:, :r]
        monotone = levels.size <= 2 or np.all(np.diff(T[:, 0]) > 0)
        if callable(self.label_dissimilarity) and not monotone:
            warnings.warn(
                "The first MDS coordinate of label_dissimilarity does not "
                "increase with the label: the target space does not keep "
                "the order of the labels.",
                UserWarning,
            )
        problem = OMDMLProblem(X, level_idx, T, self.n_neighbors,
                               self.local_graph, self.local_weight, self.ridge,
                               _backend.choose("neighbours", X.shape[0]))
        solver = self.solver
        if solver == "cholesky" or (solver == "auto" and d <= 2000):
            L = np.ascontiguousarray(solve_normal_equations(*problem.normal_equations()).T)
            J, _ = problem.objective(L)
            self.loss_curve_ = [float(J)]
            self.n_iter_ = 1
            report.phase(f"closed form: n={n}, d={d}, r={r}, objective {J:.6g}")
        else:
            scale = problem.scale
            curve = []

            def callback(x, f):
                curve.append(f * scale)
                report.row(len(curve), curve[-1])

            res = lbfgs(
                lambda w: problem.scaled_objective(w, (r, d)), np.zeros(r * d),
                max_iter=self.max_iter, gtol=self.tol, ftol=1e-15, callback=callback,
            )
            L, J = res.x.reshape(r, d), float(res.fun) * scale
            self.n_iter_ = int(res.nit)
            self.loss_curve_ = curve if curve else [J]
            report.finish(f"L-BFGS stopped after {self.n_iter_} iterations")
            if res.status == 1:
                convergence_warning(self, max_iter=self.max_iter, tol=self.tol,
                                    history=self.loss_curve_, stacklevel=4)
        self.components_ = L
        self.objective_ = float(J)
        self.levels_ = levels
        self.level_embedding_ = T
        self.mds_eigenvalues_ = eigenvalues
        return self

    def _n_components(self, r_avail, d, n_levels):
        """The dimension of the target space; raise if n_components cannot be met."""
        if self.n_components is None:
            return min(r_avail, d)
        r = self.n_components
        if r > r_avail:
            raise ValueError(
                f"n_components={r} exceeds the {r_avail} dimension(s) of "
                f"the MDS embedding of the label dissimilarity "
                f"{self.label_dissimilarity!r} over {n_levels} levels; "
                "use a smaller n_components or label_dissimilarity='sqrt'."
            )
        check_n_components(r, d)
        return r


class LODML(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """PSD-constrained ordinal metric learning baseline (after Li et al. 2015).

    Minimises a weighted pull of neighbours plus an ordinal triplet hinge
    inside neighbourhoods over the PSD cone, by projected subgradient descent
    with eigenvalue clipping.  The exact model is in the module docstring of
    :mod:`metric_estimators.ordinal`.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows of ``components_``: the square roots of the largest eigenvalues
        of the learned ``A`` times their eigenvectors.  None keeps all
        (``n_features``).
    n_neighbors : int, default=10
        Size of each neighbourhood ``N_i`` (Euclidean, in the input space).
    mu : float in [0, 1], default=0.5
        Weight of the triplet hinge; ``1 - mu`` weighs the pull term.
    margin : float, default=1.0
        Margin of each ordinal triplet, in squared distance.
    max_triplets : int or None, default=None
        Use a uniform random subset of at most this many triplets.
    learning_rate : float, default=0.1
        First step, relative to ``||A_0||_F / ||G_0||_F``.
    max_iter : int, default=1000
    tol : float, default=1e-6
        Stop when an accepted step decreases the objective by at most
        ``tol`` relatively, or when halving has made the step negligible
        (``step ||G||_F <= 1e-12 max(||A||_F, ||A_0||_F)``, see
        :mod:`metric_estimators.solvers.subgradient`).
    verbose : int, default=0
        1: a throttled table of accepted steps (objective, active triplets,
        step, time); 2: every accepted step.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If given, ``X`` in ``fit`` and ``transform`` may be a 1-D array of
        indices into it (array) or of ids it maps to points (callable).

    random_state : int, RandomState instance or None, default=None
        Seeds the triplet subsampling (``max_triplets``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    n_iter_ : int
        Iterations, including rejected steps.
    loss_curve_ : list of float
        Objective after every accepted step (the first is at ``A = I``).
    n_triplets_ : int
    n_active_ : int
        Triplets with a positive hinge at the solution.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has feature names.

    References
    ----------
    C. Li, Q. Liu, J. Liu and H. Lu, "Ordinal Distance Metric Learning for
    Image Ranking", IEEE Trans. Neural Netw. Learn. Syst. 26(7), 2015.
    """

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(numbers.Integral, 2, None, closed="left")],
        "mu": [Interval(numbers.Real, 0, 1, closed="both")],
        "margin": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_triplets": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        n_neighbors=10,
        mu=0.5,
        margin=1.0,
        max_triplets=None,
        learning_rate=0.1,
        max_iter=1000,
        tol=1e-6,
        verbose=0,
        preprocessor=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.mu = mu
        self.margin = margin
        self.max_triplets = max_triplets
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the PSD metric to points with ordered labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered numeric labels.

        Returns
        -------
        self : LODML
        """
        report = FitReport(self, [ITERATION, OBJECTIVE, ACTIVE, STEP],
                           verbose=self.verbose)
        self._check_preprocessor()
        X, y, levels, level_idx = validate_ordered_points(self, self._points(X), y)
        d = X.shape[1]
        check_n_components(self.n_components, d)
        # The objective of A on X equals that of s^2 A on X / s: data of
        # extreme scale is divided by a power of two s (exact), L by s.
        scale = power_of_two_scale(X)
        if scale != 1.0:
            X = X / scale
        problem = LODMLProblem(
            X, y, level_idx, self.n_neighbors, self.mu, self.margin,
            self.max_triplets, check_random_state(self.random_state),
            _backend.choose("ordinal", *X.shape),
        )
        n_triplets = problem.ti.size
        report.phase(f"neighbourhoods: {n_triplets} ordinal triplets")
        if n_triplets == 0:
            warnings.warn(
                "LODML found no ordinal triplet (no neighbourhood holds two "
                "neighbours at different label gaps); only the pull term is "
                "minimised and the metric shrinks towards 0. Increase "
                "n_neighbors.",
                UserWarning,
            )
        A0 = problem.start()
        curve = [problem.value(A0)[0]]

        def callback(n_iter, A, f, accepted, step):
            if accepted:
                curve.append(f)
                report.row(n_iter, f, int(problem.active.sum()), step)

        def first_step(A, G):
            return self.learning_rate * linalg.norm(A) / max(
                linalg.norm(G), np.finfo(float).tiny)

        res = adaptive_subgradient(
            problem.value, A0, step=first_step, max_iter=self.max_iter,
            tol=self.tol, subgradient=problem.subgradient,
            project=problem.project, callback=callback,
        )
        report.finish(f"stopped after {res.n_iter} iterations")
        if not res.converged:
            convergence_warning(self, max_iter=self.max_iter, tol=self.tol,
                                history=curve, stacklevel=4)
        r = d if self.n_components is None else self.n_components
        self.components_ = problem.top_factor(res.x, r) / scale
        if n_triplets and not np.any(self.components_):
            warnings.warn(
                "LODML learned the zero metric (every distance is 0): the "
                "pull term outweighs the ordinal triplets on this data. "
                "Increase mu, or check that the labels are ordered.",
                UserWarning,
            )
        self.n_iter_ = res.n_iter
        self.loss_curve_ = curve
        self.objective_ = float(res.fun)
        self.n_triplets_ = int(n_triplets)
        self.n_active_ = int(problem.active.sum())
        self.levels_ = levels
        return self
