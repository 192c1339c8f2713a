"""Large Margin Nearest Neighbor (LMNN) metric learning.

Weinberger, K. Q. and Saul, L. K. (2009). Distance metric learning for large
margin nearest neighbor classification. JMLR 10, 207-244.
"""

import sys
import time
import warnings
from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from threadpoolctl import threadpool_limits

from ._kernels.lmnn import (
    laplacian_product,
    pair_sqdist,
    pair_uniform,
    target_sqdist,
    threshold_block,
    eligible_pairs,
    point_hashes,
    triplet_loss_weights,
)
from ._validation import power_of_two_scale, validate_points
from .base import MahalanobisMixin, initialize_components

__all__ = ["LMNN"]

# Candidate impostors are searched within ``_SLACK`` times the margin radius,
# so that small changes of L do not require a new search (see _ImpostorSet).
_SLACK = 1.5
# Entries of a distance block computed at once (memory ~ 8 bytes each).
_BLOCK = 1 << 21
# Sampled searches switch to the fixed list of eligible pairs when it holds
# at most this many times max_impostors pairs.
_ELIGIBLE_FACTOR = 10
# Below this n_samples * n_features * n_components, BLAS runs single-threaded.
_SMALL_BLAS = 5e7


def find_target_neighbors(X, y_idx, n_neighbors):
    """The ``n_neighbors`` nearest same-class points of every point.

    Exact Euclidean search, blockwise (memory bounded by ``_BLOCK`` entries),
    ties broken by the lower index so the result is deterministic.  A point
    is never its own target neighbour, even with duplicate points.  Classes
    with ``n_c <= n_neighbors`` points give their points ``n_c - 1`` targets
    (the row is padded with -1).

    Returns
    -------
    targets : ndarray of shape (n_samples, n_neighbors), int64
    """
    n = X.shape[0]
    targets = np.full((n, n_neighbors), -1, dtype=np.int64)
    sq = np.einsum("ij,ij->i", X, X)
    for c in np.unique(y_idx):
        members = np.flatnonzero(y_idx == c)
        k = min(n_neighbors, members.size - 1)
        if k < 1:
            continue
        Xc = X[members]
        step = max(1, _BLOCK // members.size)
        for start in range(0, members.size, step):
            rows = np.arange(start, min(start + step, members.size))
            D = sq[members[rows], None] + sq[None, members] - 2.0 * (Xc[rows] @ Xc.T)
            D[np.arange(rows.size), rows] = np.inf  # never its own target
            # stable sort on (distance, index) of the k + 1 smallest
            part = np.argpartition(D, k, axis=1)[:, : k + 1]
            dpart = np.take_along_axis(D, part, axis=1)
            order = np.lexsort((part, dpart), axis=1)
            best = np.take_along_axis(part, order, axis=1)[:, :k]
            targets[members[rows], :k] = members[best]
    return targets


class _ImpostorSet:
    """Candidate impostor pairs, refreshed by exact blockwise searches.

    A search at the current ``L`` stores, for each anchor ``i``, every
    other-class point ``l`` with ``||L (x_i - x_l)||^2 < _SLACK * R_i``, where
    ``R_i = max_j ||L (x_i - x_j)||^2 + 1`` is the margin radius over the
    targets ``j`` of ``i``: all impostors that are active now, plus those
    close to becoming active.  Between searches the loss is evaluated on the
    stored pairs only (the active-set idea of Weinberger & Saul's solver).
    Searches become rarer while they find no missing active impostor (the
    interval, in solver iterations, doubles); and the optimiser only stops
    after a run in which the active set did not change has converged and a
    search at the final ``L`` has confirmed that no active impostor was
    missing, so the returned ``L`` is a stationary point of the exact loss.
    """

    def __init__(self, y_idx, has_targets, max_impostors, seed=0):
        self.y_idx = y_idx
        self.has_targets = has_targets
        self.max_impostors = max_impostors
        self.n_samples = y_idx.size
        self.members = [np.flatnonzero(y_idx == c) for c in np.unique(y_idx)]
        self.imp_i = np.empty(0, dtype=np.int64)
        self.imp_l = np.empty(0, dtype=np.int64)
        self.n_searches = 0
        self.n_changes = 0  # searches that found missing active impostors
        self.interval = 1
        self.since_search = None  # None: never searched
        self.fraction = 1.0  # sampling fraction of impostor pairs
        self.seed = int(seed)
        self.hashes = None  # per-point hashes, made once sampling is needed
        self.eligible = None  # (anchors, impostors) that sampling can return

    def tick(self):
        """Count one solver iteration; True when a search is due."""
        self.since_search += 1
        return self.since_search >= self.interval

    def refresh(self, Z, R):
        """Search at the current embedding; return the number of active
        impostor pairs that the previous candidates missed.

        The search interval doubles when none was missed."""
        first = self.since_search is None
        new_i, new_l = self._search(Z, R)
        n_missing = 0
        if not first:
            n = self.n_samples
            d = pair_sqdist(Z, new_i, new_l)
            act = d < R[new_i]
            new_keys = new_i[act] * n + new_l[act]
            old_keys = np.sort(self.imp_i * n + self.imp_l)
            pos = np.searchsorted(old_keys, new_keys)
            pos = np.minimum(pos, max(old_keys.size - 1, 0))
            found = old_keys[pos] == new_keys if old_keys.size else np.zeros(
                new_keys.size, dtype=bool
            )
            n_missing = int(new_keys.size - found.sum())
            self.n_changes += n_missing > 0
            if n_missing == 0:
                self.interval = min(2 * self.interval, 64)
        self.imp_i, self.imp_l = new_i, new_l
        self.since_search = 0
        self.n_searches += 1
        return n_missing

    # -- searches --------------------------------------------------------
    def _search(self, Z, R):
        """All (anchor, impostor) pairs within ``_SLACK * R`` of the anchors.

        If more than ``max_impostors`` are found, the push term is estimated
        on a fixed pseudo-random subset of all impostor pairs: pair ``(i, l)``
        is kept iff its hash-derived number ``u(i, l)`` is below the sampling
        ``fraction``, and the push weight is divided by ``fraction``.  The
        subset does not depend on ``L``, so the sampled objective is one
        fixed function that L-BFGS can minimise (unlike sampling afresh at
        every evaluation); the fraction only ever decreases, on the fly, which
        also bounds the search's memory.
        """
        R_safe = np.where(self.has_targets, R, -np.inf)
        rho = _SLACK * R_safe
        if self.eligible is not None:
            return self._search_eligible(Z, rho)
        sq = np.einsum("ij,ij->i", Z, Z)
        # Inner products in float32 halve the cost of the search; their
        # round-off (~1e-7 |z|^2) must stay far below the slack of the radius
        # (at least 0.5 R >= 0.5), else float64 is used.
        Zs = Z.astype(np.float32) if sq.max(initial=0.0) < 1e5 else Z
        acc_i, acc_l = [], []
        n_acc = 0
        cap = self.max_impostors
        n = self.n_samples
        start_fraction = self.fraction
        if self.hashes is None:
            self.hashes = point_hashes(n, self.seed)
        for rows, cols in self._blocks():
            G = Zs[rows] @ Zs[cols].T
            a, b = threshold_block(
                G, sq[rows], sq[cols], rho[rows], rho[cols], rows, cols, True,
                self.hashes, self.fraction,
            )
            if a.size == 0:
                continue
            acc_i.append(a)
            acc_l.append(b)
            n_acc += a.size
            if n_acc > cap:
                # shrink the fraction so that about cap / 2 pairs remain
                self.fraction *= 0.5 * cap / n_acc
                i = np.concatenate(acc_i)
                l_ = np.concatenate(acc_l)
                keep = pair_uniform(i, l_, self.hashes) < self.fraction
                acc_i, acc_l = [i[keep]], [l_[keep]]
                n_acc = int(keep.sum())
        if self.fraction < start_fraction:
            self.n_changes += start_fraction < 1.0 or self.since_search is not None
            if start_fraction == 1.0:
                warnings.warn(
                    f"More than max_impostors={cap} impostor pairs are "
                    "active; the push term is estimated on a fixed random "
                    f"subset of impostor pairs (fraction {self.fraction:.3g}). "
                    "Increase max_impostors for the exact LMNN loss.",
                    UserWarning,
                )
        expected = self.fraction * float(n) * n
        if self.fraction < 1.0 and expected <= _ELIGIBLE_FACTOR * cap:
            # from now on only the fixed eligible pairs need distances
            self.eligible = eligible_pairs(self.y_idx, self.hashes, self.fraction)
        if not acc_i:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty
        return np.concatenate(acc_i), np.concatenate(acc_l)

    def _search_eligible(self, Z, rho):
        """Sampled search restricted to the eligible pairs: O(#eligible * c)
        instead of O(n^2 c); returns exactly what a full scan would."""
        ei, el = self.eligible
        keep = pair_sqdist(Z, ei, el) < rho[ei]
        n_keep = int(keep.sum())
        if n_keep > self.max_impostors:
            self.fraction *= 0.5 * self.max_impostors / n_keep
            sel = pair_uniform(ei, el, self.hashes) < self.fraction
            ei, el, keep = ei[sel], el[sel], keep[sel]
            self.eligible = (ei, el)
            self.n_changes += 1
        return ei[keep], el[keep]

    def _blocks(self):
        """Yield (rows, cols) blocks covering every pair of different classes
        once (both points of a pair are tried as anchors)."""
        for c in range(len(self.members) - 1):
            rows_all = self.members[c]
            cols = np.concatenate(self.members[c + 1:])
            step = max(1, _BLOCK // cols.size)
            for start in range(0, rows_all.size, step):
                yield rows_all[start:start + step], cols


class _LMNNObjective:
    """LMNN loss and gradient in the flattened components ``L``."""

    def __init__(self, X, targets, impostors, push_weight, squared, n_components):
        self.X = X
        self.targets = targets
        self.valid = targets >= 0
        self.has_targets = self.valid.any(axis=1)
        self.impostors = impostors
        self.push_weight = push_weight
        self.squared = squared
        self.shape = (n_components, X.shape[1])
        self.n_active = 0
        self.n_active_pairs = 0

    def __call__(self, flat):
        L = flat.reshape(self.shape)
        X, targets = self.X, self.targets
        Z = X @ L.T
        td = target_sqdist(Z, targets)
        R = np.where(self.has_targets, td.max(axis=1) + 1.0, -np.inf)
        imps = self.impostors
        if imps.since_search is None:
            imps.refresh(Z, R)
        d_imp = pair_sqdist(Z, imps.imp_i, imps.imp_l)
        push, w_target, w_imp, n_active = triplet_loss_weights(
            td, targets, imps.imp_i, d_imp, self.push_weight / imps.fraction,
            self.squared,
        )
        pull_weight = 1.0 - self.push_weight
        loss = pull_weight * td[self.valid].sum() + push
        w_target += pull_weight * self.valid
        LX = laplacian_product(X, targets, w_target, imps.imp_i, imps.imp_l, w_imp)
        grad = 2.0 * (Z.T @ LX)
        self.n_active = n_active
        self.n_active_pairs = int(np.count_nonzero(w_imp))
        return loss, grad.ravel()

    def verify(self, flat):
        """Search at ``flat``; return how many active impostors were missing."""
        L = flat.reshape(self.shape)
        Z = self.X @ L.T
        td = target_sqdist(Z, self.targets)
        R = np.where(self.has_targets, td.max(axis=1) + 1.0, -np.inf)
        return self.impostors.refresh(Z, R)


class LMNN(MahalanobisMixin, BaseEstimator):
    """Large Margin Nearest Neighbor metric learning.

    Learns a linear map ``L`` so that each point's ``n_neighbors`` target
    neighbours (nearest same-class points in the input space) are close and
    points of other classes are at least a unit margin farther away:

    .. math::

        \\varepsilon(L) = (1 - \\mu) \\sum_{i, j \\rightsquigarrow i}
        \\|L(x_i - x_j)\\|^2 + \\mu \\sum_{i, j \\rightsquigarrow i, l}
        [1 + \\|L(x_i - x_j)\\|^2 - \\|L(x_i - x_l)\\|^2]_+^p

    over impostors ``l`` with ``y_l != y_i``, with ``p = 2`` (squared hinge,
    smooth, minimised by L-BFGS) for ``solver='lbfgs'`` and ``p = 1`` (the
    paper's hinge, minimised by the paper's subgradient method) for
    ``solver='subgradient'``.

    Impostors are searched exactly, blockwise in the embedded space (memory
    bounded by a block, never ``n x n``), within 1.5 times the margin
    radius, and kept as an active set between searches; searches get rarer
    while they find nothing new, and the solver only stops once a search at
    the final ``L`` confirms that no active impostor was missing, so the
    result is a stationary point of the exact loss.

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
        Initial ``L``; ``'auto'`` as in scikit-learn's NCA.

    max_iter : int, default=50
        Maximum number of iterations of the solver.

    tol : float, default=1e-5
        Convergence tolerance: L-BFGS's ``gtol`` on the projected gradient
        for ``solver='lbfgs'``; the relative decrease of the objective for
        ``solver='subgradient'``.

    regularization : float, default=0.5
        Weight ``mu`` of the push (impostor) term; ``1 - mu`` weighs the
        pull term.  Named as in metric-learn.

    max_impostors : int, default=500_000
        Most impostor pairs kept at once (memory: about 40 bytes each).  If
        more are near-active, the push term is estimated on a fixed random
        subset of all impostor pairs, reweighted to stay unbiased, with a
        warning; the subset depends on ``random_state`` only, so the
        objective stays a fixed smooth function of ``L``.

    solver : {'lbfgs', 'subgradient'}, default='lbfgs'
        ``'lbfgs'``: squared hinge with scipy's L-BFGS-B.  ``'subgradient'``:
        the paper's plain hinge with its step rule (step times 1.01 after a
        decrease, halved with a roll-back after an increase).

    learn_rate : float, default=None
        Initial step of ``solver='subgradient'``; ``None`` picks
        ``0.01 * ||L||_F / ||grad||_F``.  Ignored by L-BFGS.

    verbose : int, default=0
        If positive, print a table of iterations, objective, active triplets
        and time to stdout.

    random_state : int, RandomState instance or None, default=None
        Used by ``init='random'``, ``init='pca'`` and the impostor subset
        drawn when ``max_impostors`` is exceeded.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned linear map ``L``.
    n_iter_ : int
        Number of iterations run.
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
        "regularization": [Interval(Real, 0, 1, closed="both")],
        "max_impostors": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"lbfgs", "subgradient"})],
        "learn_rate": [Interval(Real, 0, None, closed="neither"), None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_neighbors=3,
        n_components=None,
        *,
        init="auto",
        max_iter=50,
        tol=1e-5,
        regularization=0.5,
        max_impostors=500_000,
        solver="lbfgs",
        learn_rate=None,
        verbose=0,
        random_state=None,
    ):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.regularization = regularization
        self.max_impostors = max_impostors
        self.solver = solver
        self.learn_rate = learn_rate
        self.verbose = verbose
        self.random_state = random_state

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
        X, y = validate_points(self, X, y, ensure_min_samples=2)
        X = X.astype(np.float64, copy=False)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                "LMNN needs samples of at least 2 classes; y has 1 class."
            )
        n_samples, n_features = X.shape
        if self.n_components is not None and self.n_components > n_features:
            raise ValueError(
                f"n_components={self.n_components} must be <= n_features="
                f"{n_features}."
            )
        counts = np.bincount(y_idx)
        small = classes[counts <= self.n_neighbors]
        if small.size:
            warnings.warn(
                f"{small.size} class(es) have at most n_neighbors="
                f"{self.n_neighbors} samples (e.g. class {small[0]!r} with "
                f"{counts[counts <= self.n_neighbors][0]}); their points get "
                "fewer target neighbours.",
                UserWarning,
            )
        if np.all(counts < 2):
            raise ValueError(
                "Every class has a single sample: no target neighbours exist."
            )
        rng = check_random_state(self.random_state)
        # The loss of L on X equals the loss of s L on X / s: data of extreme
        # scale is divided by a power of two s (exact) and the result by s.
        s = power_of_two_scale(X)
        if s != 1.0:
            X = X / s
        L0 = initialize_components(
            self.init, X, y_idx, self.n_components, rng
        )
        if isinstance(self.init, np.ndarray):
            L0 = L0 * s  # a given L acts on the data in the user's units
        targets = find_target_neighbors(X, y_idx, self.n_neighbors)
        impostors = _ImpostorSet(
            y_idx, (targets >= 0).any(axis=1), self.max_impostors,
            seed=rng.randint(np.iinfo(np.int32).max),
        )
        objective = _LMNNObjective(
            X, targets, impostors, self.regularization,
            self.solver == "lbfgs", L0.shape[0],
        )
        self._start = time.perf_counter()
        self._active_curve = []
        # BLAS threads do not pay off on small products and, when the cores
        # are busy (grid searches, shared machines), spinning threads make
        # them several times slower; large problems keep the default pool.
        small = X.shape[0] * n_features * L0.shape[0] < _SMALL_BLAS
        blas_limit = threadpool_limits(limits=1, user_api="blas") if small else nullcontext()
        if self.verbose:
            header = f"{'Iteration':>10} {'Objective Value':>20} {'Active triplets':>16} {'Time(s)':>10}"
            print(f"[{type(self).__name__}]")
            print(f"[{type(self).__name__}] {header}")
            print(f"[{type(self).__name__}] {'-' * len(header)}")
        with blas_limit:
            if self.solver == "lbfgs":
                L, n_iter, curve, converged = self._fit_lbfgs(objective, L0)
            else:
                L, n_iter, curve, converged = self._fit_subgradient(objective, L0)
        self.components_ = L / s if s != 1.0 else L
        self.n_iter_ = n_iter
        self.loss_curve_ = curve
        self.n_active_curve_ = self._active_curve
        del self._active_curve
        self.target_neighbors_ = targets
        self.n_impostor_searches_ = impostors.n_searches
        if not converged:
            warnings.warn(
                f"[{type(self).__name__}] LMNN did not converge in "
                f"max_iter={self.max_iter} iterations.",
                ConvergenceWarning,
            )
        return self

    def _report(self, iteration, loss, n_active):
        self._active_curve.append(int(n_active))
        if self.verbose:
            elapsed = time.perf_counter() - self._start
            print(
                f"[{type(self).__name__}] {iteration:>10d} {loss:>20.6e} "
                f"{n_active:>16d} {elapsed:>10.2f}"
            )
            sys.stdout.flush()

    def _fit_lbfgs(self, objective, L0):
        curve = []

        def callback(intermediate_result):
            curve.append(float(intermediate_result.fun))
            self._report(len(curve), curve[-1], objective.n_active)
            if objective.impostors.tick():
                # L-BFGS goes on with the refreshed active set: restarting it
                # (losing its curvature pairs) costs more than the small
                # change of objective; the stopping test below accounts for it
                objective.verify(intermediate_result.x)

        L = L0.ravel()
        n_iter = 0
        converged = False
        while n_iter < self.max_iter:
            changes = objective.impostors.n_changes
            res = minimize(
                objective, L, method="L-BFGS-B", jac=True, callback=callback,
                options={"maxiter": self.max_iter - n_iter, "gtol": self.tol},
            )
            L = res.x
            n_iter += max(int(res.nit), 1)
            if res.status == 1:  # max_iter
                break
            if res.nit > 0 and (
                res.status != 0 or objective.impostors.n_changes != changes
            ):
                # the active set changed during the run, so its stopping test
                # (or failed line search) compared different objectives:
                # restart from the current point
                continue
            # converged, or a fresh run cannot decrease the objective:
            # confirm that no active impostor was missing at L
            if objective.verify(L) == 0:
                converged = True
                break
        return L.reshape(L0.shape), n_iter, curve, converged

    def _fit_subgradient(self, objective, L0):
        L = L0.ravel().copy()
        loss, grad = objective(L)
        curve = []
        lr = self.learn_rate
        if lr is None:
            gnorm = np.linalg.norm(grad)
            lr = 0.01 * np.linalg.norm(L) / gnorm if gnorm > 0 else 1.0
        converged = False
        n_iter = 0
        while n_iter < self.max_iter:
            n_iter += 1
            stalled = not np.any(grad)
            if not stalled:
                candidate = L - lr * grad
                new_loss, new_grad = objective(candidate)
                if new_loss <= loss:
                    decrease = loss - new_loss
                    L, loss, grad = candidate, new_loss, new_grad
                    lr *= 1.01
                    stalled = decrease <= self.tol * abs(loss)
                else:
                    # roll back and halve the step; a step this small relative
                    # to L cannot change the objective any more
                    lr *= 0.5
                    stalled = lr * np.linalg.norm(grad) <= 1e-16 * max(
                        np.linalg.norm(L), 1e-300
                    )
                curve.append(float(loss))
                self._report(n_iter, loss, objective.n_active)
                if objective.impostors.tick() and objective.verify(L):
                    loss, grad = objective(L)  # the objective changed
                    continue
            if stalled:
                if objective.verify(L) == 0:
                    converged = True
                    break
                loss, grad = objective(L)
        return L.reshape(L0.shape), n_iter, curve, converged
