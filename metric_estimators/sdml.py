"""Sparse Distance Metric Learning: SDML and SDML_Supervised.

Qi, Tang, Zha, Chua & Zhang, "An efficient sparse metric learning in
high-dimensional space via l1-penalized log-determinant regularization",
ICML 2009.

The problem (:mod:`metric_estimators._problems.sdml`) is a graphical lasso,
solved by :func:`sklearn.covariance.graphical_lasso`.

Differences from metric-learn 0.7.0 (same class names and parameters)
----------------------------------------------------------------------
* ``balance_param`` defaults to ``'auto'`` (metric-learn: 0.5): half the
  largest value for which ``S = prior covariance + balance_param * K`` is
  positive definite, at most 0.5
  (:func:`metric_estimators._problems.sdml.auto_balance`), so that a fit
  at the defaults needs no shift; the value used is ``balance_param_``.
* When the matrix ``S = prior covariance + balance_param * K`` handed to the
  graphical lasso is not positive definite -- the usual case for pairs drawn
  from labels, where dissimilar pairs outweigh similar ones -- metric-learn
  warns and then fails ("There was a problem in SDML ..."; with
  scikit-learn 1.7 it fails on every input, as it passes ``cov_init`` to
  ``graphical_lasso``).  Here ``S`` is shifted by ``shift_ * I``, with a
  warning that names the largest ``balance_param`` avoiding it (the
  smallest shift making it PSD plus a margin of 10 % of the spread of its
  eigenvalues, see
  :func:`metric_estimators._problems.sdml.shift_to_pd`), which is the same as
  adding ``shift_ * I`` to the prior covariance; ``shift_`` is 0 when ``S``
  is positive definite, and the problem is then exactly metric-learn's.
* ``max_iter`` and ``tol`` of the graphical lasso are parameters (scikit-
  learn's defaults, 100 and 1e-4); its cost per iteration is ``loss_curve_``.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.covariance import graphical_lasso
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._docstrings import fill_doc
from ._problems.logdet import prior_matrix
from ._problems.sdml import (
    auto_balance,
    largest_pd_balance,
    sdml_covariance,
    shift_to_pd,
)
from ._reporting import ITERATION, OBJECTIVE, Column, FitReport, convergence_warning
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._tuple_classifiers import PairsClassifierMixin
from ._validation import check_prior, validate_labelled_points
from .base import MahalanobisMixin, components_from_matrix
from .constraints import SMALL_ALL_PAIRS_WORK, default_labelled_pairs
from .exceptions import NonPSDError

__all__ = ["SDML", "SDML_Supervised"]

_DUAL_GAP = Column("Dual gap", ".3e")


def _graphical_lasso(S, est, eig, tau):
    """``(precision, costs, n_iter)`` of the graphical lasso of ``S``."""
    if S.shape[0] == 1:  # no off-diagonal entry: the minimiser is 1 / S
        return 1.0 / S, [], 0
    try:
        _, M, costs, n_iter = graphical_lasso(
            S, alpha=float(est.sparsity_param), mode="cd", tol=est.tol,
            max_iter=est.max_iter, return_costs=True, return_n_iter=True)
    except FloatingPointError as exc:
        raise FloatingPointError(
            f"SDML's graphical lasso failed ({exc}); its input matrix has "
            f"eigenvalues in [{eig[0] + tau:.3g}, {eig[-1] + tau:.3g}]. "
            "Increase sparsity_param, decrease balance_param or use "
            "prior='identity'."
        ) from None
    return M, costs, n_iter


class _BaseSDML(MahalanobisMixin, BaseEstimator):
    """Shared parameters and the solver call of SDML and SDML_Supervised."""

    _parameter_constraints: dict = {
        "balance_param": [StrOptions({"auto"}),
                          Interval(Real, 0, None, closed="left")],
        "sparsity_param": [Interval(Real, 0, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), "array-like"],
        "verbose": ["verbose"],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, balance_param="auto", sparsity_param=0.01, prior="identity",
                 verbose=False, preprocessor=None, random_state=None, *,
                 max_iter=100, tol=1e-4):
        self.balance_param = balance_param
        self.sparsity_param = sparsity_param
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.max_iter = max_iter
        self.tol = tol

    def _solve(self, V, y, points, rng, report):
        """Run the graphical lasso on ``S`` of pair differences ``V``; set attributes."""
        n_features = V.shape[1]
        prior = check_prior(self.prior, n_features)
        M0 = prior_matrix(prior, points, n_features, rng)
        P = np.linalg.inv(M0)
        if isinstance(self.balance_param, str):  # "auto"
            limit = largest_pd_balance(V, y, P)
            balance = auto_balance(limit)
            report.phase(f"balance_param='auto': {balance:.4g} (S is positive "
                         f"definite below {limit:.4g})")
        else:
            limit, balance = None, float(self.balance_param)
        S = sdml_covariance(V, y, P, balance)
        S_pd, tau, eig = shift_to_pd(S)
        report.phase(f"{V.shape[0]} pairs; S eigenvalues in [{eig[0]:.4g}, "
                     f"{eig[-1]:.4g}], shift {tau:.4g}")
        if tau > 0:
            if limit is None:
                limit = largest_pd_balance(V, y, P)
            self._warn_shift(limit, balance, eig, tau)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            M, costs, n_iter = _graphical_lasso(S_pd, self, eig, tau)
        for w in caught:
            if not issubclass(w.category, ConvergenceWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        for i, (cost, gap) in enumerate(costs, start=1):
            report.row(i, float(cost), float(gap))
        if not np.all(np.isfinite(M)):
            raise FloatingPointError(
                "SDML's graphical lasso returned a non-finite matrix. Increase "
                "sparsity_param or decrease balance_param.")
        try:
            self.components_ = components_from_matrix(M, name="the SDML matrix")
        except NonPSDError as exc:
            raise NonPSDError(
                f"{exc} Increase sparsity_param or decrease balance_param."
            ) from None
        self.n_iter_ = int(n_iter)
        self.loss_curve_ = np.array([c[0] for c in costs], dtype=np.float64)
        self.dual_gap_curve_ = np.array([c[1] for c in costs], dtype=np.float64)
        self.balance_param_ = balance
        self.shift_ = tau
        self.prior_ = M0
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            report.finish(f"stopped after {self.n_iter_} iterations")
            convergence_warning(
                self, max_iter=self.max_iter, tol=self.tol,
                history=self.loss_curve_,
                detail=f"graphical lasso dual gap {self.dual_gap_curve_[-1]:.3g}",
                stacklevel=5)
        else:
            report.finish(f"converged after {self.n_iter_} iterations")
        return self


    def _warn_shift(self, limit, balance, eig, tau):
        if limit < balance:
            advice = (f"balance_param below {limit:.3g} (now {balance:g}), "
                      "e.g. balance_param='auto',")
        else:
            advice = "a better conditioned prior"
        warnings.warn(
            f"{type(self).__name__}: S = prior covariance + balance_param * K "
            f"is not positive definite (smallest eigenvalue {eig[0]:.3g}), so "
            f"the SDML problem has no solution; it was solved with S + "
            f"shift_ * I, shift_={tau:.3g} (metric-learn raises here).  Use "
            f"{advice} to solve the problem unshifted.", UserWarning,
            stacklevel=5)


class SDML(PairsClassifierMixin, _BaseSDML):
    """Sparse Distance Metric Learning on labelled pairs.

    Learns a sparse Mahalanobis matrix ``M`` minimising
    ``tr(M P) - log det M + balance_param * sum_c y_c d_M(pair_c)^2 +
    sparsity_param * ||M||_1`` (off-diagonal), with ``P`` the inverse of the
    prior (Qi et al., ICML 2009), by the graphical lasso.

    Parameters
    ----------
    balance_param : 'auto' or float, default='auto'
        Weight ``eta`` of the pair term.  ``'auto'``: half the largest
        ``eta`` for which ``S = P + eta * K`` is positive definite, at most
        0.5 (metric-learn's default, which ``'auto'`` is whenever ``S``
        stays positive definite up to ``eta = 1``), so that no shift is
        needed; see :ref:`sdml_guide`.  A float is used as it is, shifted
        with a warning where ``S`` is not positive definite.
    sparsity_param : float, default=0.01
        Weight ``lambda`` of the off-diagonal L1 penalty.
    prior : {'identity', 'covariance', 'random'} or array of shape \
            (n_features, n_features), default='identity'
        The prior matrix ``M0``: the identity, the inverse covariance of the
        points, a random SPD matrix (``random_state``) or a positive definite
        array.
    verbose : bool or int, default=False
        Print the graphical lasso's cost and dual gap per iteration.
    preprocessor : array-like, callable or None, default=None
        If given, ``pairs`` may be ``(n_pairs, 2)`` indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds ``prior='random'``.
    max_iter : int, default=100
        Most graphical lasso iterations (not in metric-learn).
    tol : float, default=1e-4
        The graphical lasso's tolerance on its dual gap (not in metric-learn).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``M = L^T L``.
    balance_param_ : float
        The ``eta`` used (the value ``'auto'`` chose, or ``balance_param``).
    shift_ : float
        The multiple of the identity added to ``S`` to make it positive
        definite (0 when it already was, always with ``balance_param='auto'``
        on a well-conditioned prior; else with a warning that says which
        ``balance_param`` avoids it); see the module docstring.
    prior_ : ndarray of shape (n_features, n_features)
        ``M0``.
    n_iter_ : int
        Graphical lasso iterations.
    loss_curve_, dual_gap_curve_ : ndarray of shape (n_iter,)
        The graphical lasso's cost and dual gap per iteration.
    threshold_ : float
        Distance threshold of :meth:`predict`, calibrated on the training
        pairs.
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    References
    ----------
    G.-J. Qi, J. Tang, Z.-J. Zha, T.-S. Chua and H.-J. Zhang. An efficient
    sparse metric learning in high-dimensional space via l1-penalized
    log-determinant regularization. ICML 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import SDML
    >>> pairs = np.array([[[1.2, 7.5], [1.3, 1.5]], [[6.4, 2.6], [6.2, 9.7]],
    ...                   [[1.3, 4.5], [3.2, 4.6]], [[6.2, 5.5], [5.4, 5.4]]])
    >>> sdml = SDML(balance_param=0.01).fit(pairs, [1, 1, -1, -1])
    >>> sdml.shift_
    0.0
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
        self : SDML
        """
        report = FitReport(self, (ITERATION, OBJECTIVE, _DUAL_GAP),
                           verbose=self.verbose)
        V, y_pairs, points = self._training_pairs(pairs, y, calibration_params)
        self._solve(V, y_pairs, points, check_random_state(self.random_state),
                    report)
        return self._calibrate_on_training_pairs(pairs, y_pairs,
                                                 calibration_params)


@fill_doc
class SDML_Supervised(TransformerMixin, _BaseSDML):
    """SDML with pairs from class labels.

    On small data every pair of training points; otherwise, or with
    ``n_constraints`` given, ``n_constraints`` same-class and as many
    different-class pairs drawn uniformly
    (:func:`metric_estimators.constraints.pairs_from_labels`, reproducible
    with ``random_state``).  SDML's problem is then solved on them.

    Parameters
    ----------
    balance_param, sparsity_param, prior, verbose, preprocessor, random_state, max_iter, tol
        As in :class:`SDML`; ``random_state`` also seeds the pair sampling.
        With an array ``preprocessor``, ``X`` may be 1-D indices into it.
    n_constraints : int or None, default=None
        Number of pairs of each kind to draw; None grows with the data
        %(default_pairs_all)s

    Attributes
    ----------
    components_, balance_param_, shift_, prior_, n_iter_, loss_curve_, dual_gap_curve_, n_features_in_
        As in :class:`SDML`.
    pairs_ : ndarray of shape (n_pairs, 2)
        The drawn index pairs into ``X``.
    pair_labels_ : ndarray of shape (n_pairs,)
        +1 same class, -1 different classes.
    """

    _parameter_constraints: dict = {
        **_BaseSDML._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, balance_param="auto", sparsity_param=0.01, prior="identity",
                 n_constraints=None, verbose=False, preprocessor=None,
                 random_state=None, *, max_iter=100, tol=1e-4):
        super().__init__(balance_param=balance_param,
                         sparsity_param=sparsity_param, prior=prior,
                         verbose=verbose, preprocessor=preprocessor,
                         random_state=random_state, max_iter=max_iter, tol=tol)
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
        self : SDML_Supervised
        """
        report = FitReport(self, (ITERATION, OBJECTIVE, _DUAL_GAP),
                           verbose=self.verbose)
        self._check_preprocessor()
        X, y, labels = validate_labelled_points(
            self, self._points(X), y, minus_one_note=True)
        rng = check_random_state(self.random_state)
        pairs, labels = default_labelled_pairs(
            y, X.shape[1], self.n_constraints, all_pairs_work=SMALL_ALL_PAIRS_WORK,
            random_state=rng)
        self._solve(X[pairs[:, 0]] - X[pairs[:, 1]], labels, X, rng, report)
        self.pairs_ = pairs
        self.pair_labels_ = labels
        return self
