"""Sparse Compositional Metric Learning: SCML and SCML_Supervised.

Shi, Bellet & Sha, "Sparse compositional metric learning", AAAI 2014.

The problem
-----------
The metric is a sparse non-negative combination of rank-one matrices,
``M = sum_k w_k b_k b_k^T``, over a fixed basis ``B`` of unit vectors, and
the weights minimise the L1-regularised triplet hinge::

    F(w) = (1 / |T|) sum_{(a, b, c)} max(0, 1 + d_w(a, b) - d_w(a, c))
           + beta * ||w||_1,      w >= 0,

``d_w`` the squared distance under ``M``.  ``F`` is convex and has only
``n_basis`` unknowns; it is minimised by AdaGrad with regularised dual
averaging on mini-batches of ``batch_size`` triplets
(:func:`metric_estimators.solvers.stochastic.adagrad_rda`), the problem
(bases, mini-batch gradients, full objective) is
:mod:`metric_estimators._problems.scml`, the triplet loops are the numba
kernels of :mod:`metric_estimators._kernels.scml`.

Differences from metric-learn 0.7.0 (same class names and parameters)
----------------------------------------------------------------------
* Every ``output_iter`` iterations, and after the last, the full objective
  is computed; the weights of the best checkpoint are kept (``best_iter_``)
  and the objectives are ``loss_curve_``.
* metric-learn always runs ``max_iter=10000`` iterations.  Here the run
  makes at least ``min_iter`` (10,000) iterations and then stops at the
  first checkpoint where the last ``output_iter`` iterations made at most
  ``tol`` (1 %) of the objective's whole decrease since ``F(0) = 1``, at
  most ``max_iter`` (40,000) iterations; a run that meets the test at
  10,000 is the run metric-learn's schedule gives.  A ``ConvergenceWarning``
  is issued when ``max_iter`` ends the run before the test is met.  The
  decrease is measured against the whole decrease, not against the current
  objective: the objective tends to 0 on separable triplets, where a
  relative change of 1 % is a negligible absolute one and running longer
  does not change the 3-NN accuracy (measured on digits:
  ``benchmarks/README.md``, *Measurements behind choices in the code*).
  ``max_iter=10000`` gives metric-learn's fixed run length.
* ``basis='triplet_diffs'`` draws ``n_basis`` distinct differences
  ``x_a - x_b`` / ``x_a - x_c`` of the triplets; ``basis='lda'`` (the
  default of SCML_Supervised) takes LDA directions of neighbourhoods of
  k-means centres (see :func:`metric_estimators._problems.scml.lda_basis`).
  ``n_basis`` defaults to ``20 * n_features``.
* ``SCML.fit`` takes no ``y`` (triplets are ordered); passing one is an error.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from . import _backend
from ._docstrings import fill_doc
from ._problems.scml import (
    TripletHingeProblem,
    check_basis,
    default_n_basis,
    lda_basis,
    triplet_diffs_basis,
    unique_points,
)
from ._reporting import ITERATION, OBJECTIVE, Column, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._tuple_classifiers import TripletsClassifierMixin
from ._validation import (
    check_no_tuple_labels,
    validate_labelled_points,
    validate_tuples,
)
from .base import MahalanobisMixin, components_from_matrix
from .constraints import Constraints
from .solvers.stochastic import adagrad_rda

__all__ = ["SCML", "SCML_Supervised"]

TABLE_COLUMNS = (ITERATION, OBJECTIVE, Column("Active", "d"),
                 Column("Non-zero", "d"))
#: ``F(0)``: at ``w = 0`` every triplet's hinge ``d(a, b)^2 + 1 - d(a, c)^2``
#: is 1, and the L1 term is 0.
START_OBJECTIVE = 1.0


class _BaseSCML(MahalanobisMixin, BaseEstimator):
    """Shared parameters and the solver call of SCML and SCML_Supervised."""

    _parameter_constraints: dict = {
        "beta": [Interval(Real, 0, None, closed="left")],
        "basis": [StrOptions({"triplet_diffs", "lda"}), "array-like"],
        "n_basis": [Interval(Integral, 1, None, closed="left"), None],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "min_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "output_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def __init__(self, beta=1e-5, basis="triplet_diffs", n_basis=None,
                 gamma=5e-3, max_iter=40000, min_iter=10000, tol=1e-2,
                 output_iter=500, batch_size=10, verbose=False,
                 preprocessor=None, random_state=None):
        self.beta = beta
        self.basis = basis
        self.n_basis = n_basis
        self.gamma = gamma
        self.max_iter = max_iter
        self.min_iter = min_iter
        self.tol = tol
        self.output_iter = output_iter
        self.batch_size = batch_size
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def _check_iterations(self):
        if self.output_iter > self.max_iter:
            raise ValueError(
                f"output_iter={self.output_iter} must be at most "
                f"max_iter={self.max_iter}: no checkpoint would be computed "
                "before the end of the run."
            )

    def _basis(self, points, triplets, X, y, rng, report):
        n_features = points.shape[1]
        if not isinstance(self.basis, str):
            return check_basis(self.basis, n_features)
        if self.n_basis is None:
            n_basis = default_n_basis(n_features)
            report.phase(f"n_basis=None: up to {n_basis} basis elements "
                         f"({n_basis // n_features} per feature)")
        else:
            n_basis = self.n_basis
        if self.basis == "triplet_diffs":
            if n_features > triplets.shape[0]:
                raise ValueError(
                    f"basis='triplet_diffs' needs at least as many triplets "
                    f"as features; got {triplets.shape[0]} triplets and "
                    f"{n_features} features.  Reduce the dimension first "
                    "(e.g. PCA), pass more triplets, or pass the basis as an "
                    "array."
                )
            return triplet_diffs_basis(points, triplets, n_basis, rng)
        if y is None:
            raise ValueError(
                "basis='lda' needs class labels: use it with SCML_Supervised, "
                "or pass basis='triplet_diffs' or an array."
            )
        n_classes = np.unique(y).size
        if n_basis < n_classes:
            warnings.warn(
                f"n_basis={n_basis} is smaller than the number of classes "
                f"({n_classes}): the LDA basis cannot separate every class, "
                "which may give a poor metric.  Raise n_basis (None picks "
                f"{default_n_basis(n_features)}).", UserWarning, stacklevel=4)
        return lda_basis(X, y, n_basis, rng)

    def _solve(self, points, triplets, basis, rng, report, kernels):
        """Run the stochastic solver and set the fitted attributes."""
        report.phase(f"{triplets.shape[0]} triplets, {basis.shape[0]} basis "
                     f"elements, {points.shape[0]} points")
        problem = TripletHingeProblem(points, triplets, basis, kernels)
        result = adagrad_rda(
            problem.batch_gradient, problem.objective, problem.n_triplets,
            problem.n_basis, step=float(self.gamma), l1=float(self.beta),
            nonnegative=True, max_iter=self.max_iter,
            min_iter=min(self.min_iter, self.max_iter), tol=self.tol,
            start_objective=START_OBJECTIVE,
            batch_size=self.batch_size, check_every=self.output_iter,
            rng=rng, kernels=kernels, report=report,
        )
        w = result.w
        M = (basis.T * w) @ basis
        if not np.all(np.isfinite(M)):
            raise FloatingPointError(
                "SCML produced a non-finite metric; standardise the data or "
                "lower gamma."
            )
        self.basis_ = basis
        self.weights_ = w
        self.components_ = self._components(M, basis, w)
        self.n_iter_ = int(result.n_iter)
        self.best_iter_ = int(result.best_iter)
        self.loss_curve_ = np.asarray(result.objective_curve)
        self.n_active_curve_ = np.asarray(result.n_active_curve, dtype=np.int64)
        self.triplets_ = triplets
        report.finish(f"{self.n_iter_} iterations, best at {self.best_iter_}, "
                      f"{np.count_nonzero(w)} non-zero weights, components_ "
                      f"{self.components_.shape[0]} x {self.components_.shape[1]}")
        if not result.converged:
            history = [START_OBJECTIVE] + list(result.objective_curve)
            old, new = history[-2], history[-1]
            total = history[0] - new  # the whole decrease so far
            last = result.checkpoints[-2] if len(result.checkpoints) > 1 else 0
            convergence_warning(
                self, max_iter=self.max_iter, tol=self.tol,
                detail=(f"the last {self.n_iter_ - last} iterations made "
                        f"{100 * (old - new) / max(total, 1e-300):.3g} % of the "
                        f"objective's decrease (more than tol={self.tol:g}; it "
                        f"fell from {old:.4g} to {new:.4g})"),
                stacklevel=5)
        if not np.any(w):
            warnings.warn(
                f"{type(self).__name__} learned the zero metric (every basis "
                f"weight is 0, beta={self.beta:g}): lower beta or raise gamma.",
                UserWarning, stacklevel=4)
        return self

    def _components(self, M, basis, w):
        """``L`` with ``L^T L = M``: ``(n_active, n_features)`` when fewer
        basis elements than features have a non-zero weight.

        A metric of lower rank than the number of features is what SCML's
        sparse weights are for (the directions the triplets need), not a
        fault: the verbose output and the shape of ``components_`` say it,
        and ``transform`` then reduces the dimension.
        """
        active = w > 0
        n_active, n_features = int(np.count_nonzero(active)), basis.shape[1]
        if 0 < n_active < n_features:
            return np.sqrt(w[active])[:, None] * basis[active]
        return components_from_matrix(M, name="the learned matrix")


class SCML(TripletsClassifierMixin, _BaseSCML):
    """Sparse Compositional Metric Learning on triplets.

    Learns ``M = sum_k w_k b_k b_k^T`` with sparse weights ``w >= 0`` over a
    basis of rank-one matrices, so that each triplet ``(a, b, c)`` has
    ``d(a, b)^2 + 1 <= d(a, c)^2`` (hinge loss, L1 penalty ``beta``), by
    AdaGrad-regularised dual averaging on mini-batches (Shi, Bellet & Sha,
    AAAI 2014).

    Parameters
    ----------
    beta : float >= 0, default=1e-5
        Weight of the L1 penalty on the basis weights.
    basis : {'triplet_diffs'} or array-like of shape (n_basis, n_features), \
            default='triplet_diffs'
        The rank-one elements ``b_k b_k^T``: unit differences of points of
        the triplets, or the rows of a given array (normalised to unit
        length).
    n_basis : int or None, default=None
        Number of basis elements drawn for 'triplet_diffs'; None means
        ``20 * n_features`` (fewer if the triplets have fewer distinct
        differences; the verbose output states the number).
        'triplet_diffs' needs at least ``n_features`` triplets.
    gamma : float > 0, default=5e-3
        Learning rate of the AdaGrad steps.
    max_iter : int, default=40000
        Most mini-batch iterations.  ``max_iter=10000`` (with the other
        defaults) is metric-learn's fixed run.
    min_iter : int, default=10000
        Iterations always run (metric-learn's run length) before the
        stopping test; values above ``max_iter`` mean ``max_iter``.
    tol : float or None, default=0.01
        Stop at the first checkpoint after ``min_iter`` where the last
        ``output_iter`` iterations made at most this fraction of the
        objective's whole decrease since ``F(0) = 1``.  None runs
        ``max_iter`` iterations.  The test is relative to the whole
        decrease, not to ``F``, which tends to 0 on separable triplets.
    output_iter : int, default=500
        Every ``output_iter`` iterations the full objective is computed (a
        row of the verbose table, a point of ``loss_curve_``, a candidate
        for the returned weights).  At most ``max_iter``.
    batch_size : int, default=10
        Triplets per mini-batch (drawn uniformly with replacement).
    verbose : int, default=False
        Print the table of checkpoints.
    preprocessor : array-like or callable, default=None
        Points that index triplets (n_triplets, 3) refer to.
    random_state : int, RandomState instance or None, default=None
        Seeds the basis and the mini-batches.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``L`` with ``L^T L = M``: square, unless fewer than ``n_features``
        basis elements have a non-zero weight; then its
        rows are the active elements ``sqrt(w_k) b_k``, and ``transform``
        reduces the dimension.
    basis_ : ndarray of shape (n_basis, n_features)
        The unit vectors ``b_k``.
    weights_ : ndarray of shape (n_basis,)
        The learned weights ``w`` (sparse, non-negative).
    n_iter_ : int
        Iterations run.
    best_iter_ : int
        The checkpoint iteration the weights come from.
    loss_curve_ : ndarray
        Objective ``F(w)`` at each checkpoint.
    n_active_curve_ : ndarray of int
        Triplets with a positive hinge at each checkpoint.
    triplets_ : ndarray of shape (n_triplets, 3)
        The triplets as indices into their distinct points.
    n_features_in_ : int

    See Also
    --------
    SCML_Supervised : the same learner on triplets drawn from class labels.

    Notes
    -----
    A fit costs ``n_iter_ * batch_size * n_basis`` operations for the
    updates, plus ``n_points * n_features * n_basis`` for projecting the
    distinct points on the basis once (when that table fits in 256 MB;
    otherwise projections are computed per mini-batch) and
    per checkpoint ``n_triplets * r`` for the full objective, evaluated in
    the embedding of ``M`` (rank ``r <= min(nnz(w), n_features)``), plus
    ``nnz(w) * n_features^2`` to factor ``M``.

    References
    ----------
    Y. Shi, A. Bellet and F. Sha, "Sparse compositional metric learning",
    AAAI 2014.  J. Duchi, E. Hazan and Y. Singer, "Adaptive subgradient
    methods for online learning and stochastic optimization", JMLR 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import SCML
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 2) * [1.0, 5.0]   # the 2nd feature is noise
    >>> a, b, c = rng.randint(0, 60, (3, 200))
    >>> closer = np.abs(X[a, 0] - X[b, 0]) < np.abs(X[a, 0] - X[c, 0])
    >>> triplets = np.where(closer[:, None], np.c_[a, b, c], np.c_[a, c, b])
    >>> scml = SCML(preprocessor=X, random_state=0, max_iter=2000).fit(triplets)
    >>> scml.score(triplets) > 0.8
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, triplets, y=None):
        """Learn the metric from triplets ``(a, b, c)``: a closer to b than to c.

        Parameters
        ----------
        triplets : array-like of shape (n_triplets, 3, n_features), or \
(n_triplets, 3) indices if the estimator has a ``preprocessor``
        y : None
            Not used: triplets are ordered.  Must be None.

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        self._check_preprocessor()
        pts = validate_tuples(triplets, 3, self.preprocessor_)
        check_no_tuple_labels(y, self, "triplet")
        if isinstance(self.basis, str) and self.basis == "lda":
            raise ValueError(
                "basis='lda' needs class labels: use it with SCML_Supervised, "
                "or pass basis='triplet_diffs' or an array."
            )
        self._check_iterations()
        points, idx = unique_points(pts)
        rng = check_random_state(self.random_state)
        basis = self._basis(points, idx, None, None, rng, report)
        self.n_features_in_ = points.shape[1]
        self.classes_ = np.array([-1, 1])
        return self._solve(points, idx, basis, rng, report,
                           _backend.choose("scml", *points.shape))


class SCML_Supervised(TransformerMixin, _BaseSCML):
    """SCML on nearest-neighbour triplets drawn from class labels.

    For each point, its ``k_genuine`` nearest same-class neighbours and its
    ``k_impostor`` nearest other-class points form ``k_genuine *
    k_impostor`` triplets
    (:meth:`metric_estimators.Constraints.generate_knntriplets`), on which
    the SCML problem is solved.

    Parameters
    ----------
    k_genuine : int, default=3
        Same-class neighbours per point.
    k_impostor : int, default=10
        Other-class neighbours per point.
    beta, n_basis, gamma, max_iter, min_iter, tol, output_iter, batch_size
        As in :class:`SCML`.
    verbose, random_state
        As in :class:`SCML`.
    basis : {'lda', 'triplet_diffs'} or array-like of shape (n_basis, n_features), \
            default='lda'
        'lda': discriminant directions of LDA fitted on neighbourhoods of
        k-means centres (Shi et al., 2014), plus the global LDA directions
        (an ``n_basis`` smaller than the number of classes warns); see
        :class:`SCML` for the others.
    preprocessor : None
        Accepted for metric-learn compatibility, not used (``X`` holds the
        points).

    Attributes
    ----------
    components_, basis_, weights_, n_iter_, best_iter_, loss_curve_, \
    n_active_curve_, n_features_in_
        As in :class:`SCML`.
    triplets_ : ndarray of shape (n_triplets, 3)
        The drawn triplets, as indices into ``X``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> from metric_estimators import SCML_Supervised
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> scml = SCML_Supervised(random_state=0).fit(X, y)
    >>> scml.transform(X).shape
    (178, 13)
    """

    _parameter_constraints: dict = {
        **_BaseSCML._parameter_constraints,
        "k_genuine": [Interval(Integral, 1, None, closed="left")],
        "k_impostor": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, k_genuine=3, k_impostor=10, beta=1e-5, basis="lda",
                 n_basis=None, gamma=5e-3, max_iter=40000, min_iter=10000,
                 tol=1e-2, output_iter=500, batch_size=10, verbose=False,
                 preprocessor=None, random_state=None):
        super().__init__(beta=beta, basis=basis, n_basis=n_basis, gamma=gamma,
                         max_iter=max_iter, min_iter=min_iter, tol=tol,
                         output_iter=output_iter,
                         batch_size=batch_size, verbose=verbose,
                         preprocessor=preprocessor, random_state=random_state)
        self.k_genuine = k_genuine
        self.k_impostor = k_impostor

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y):
        """Learn the metric from class labels.

        Parameters
        ----------
        %(labelled_points)s

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        self._check_preprocessor()
        self._check_iterations()
        X, y, _ = validate_labelled_points(
            self, self._points(X), y, single_sample_reason=(
                "SCML_Supervised finds no same-class neighbours to draw "
                "triplets from"))
        # a class too small for k_genuine / k_impostor: a warning, and the
        # neighbours it has
        kernels = _backend.choose("scml", *X.shape)
        triplets = Constraints(y)._generate_knntriplets(
            X, self.k_genuine, self.k_impostor, kernels=kernels)
        rng = check_random_state(self.random_state)
        basis = self._basis(X, triplets, X, y, rng, report)
        return self._solve(X, triplets.astype(np.intp), basis, rng, report, kernels)
