"""ProjectAndForget: ITML's objective over *all* labelled pairs.

ITML (Davis et al., ICML 2007) learns a Mahalanobis matrix ``A`` from a
random subset of same-class / different-class pairs.  Project and Forget
(Sonthalia & Gilbert, "Project and Forget: Solving Large-Scale Metric
Constrained Problems", JMLR 23, 2022) makes the full problem tractable::

    minimise    D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)
    subject to  d_A(x_i, x_j)^2 <= xi_c   for every same-class pair c = (i, j)
                d_A(x_i, x_j)^2 >= xi_c   for every different-class pair

(``xi0_c = low`` or ``high``; O(n^2) constraints) by keeping only an active
set of them: an oracle scans every pair in blocks (numba,
:mod:`metric_estimators._kernels.pair_oracle`) for violated ones, the active
set is swept with ITML's exact LogDet Bregman projection with Hildreth's
correction (:func:`metric_estimators._kernels.bregman.logdet_sweep`, the same
kernel as :class:`metric_estimators.ITML`), and constraints whose dual
returns to zero are forgotten (exactly: their slack is back at ``xi0``).
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from ._kernels.bregman import logdet_sweep
from ._kernels.pair_oracle import scan_pair_block
from ._validation import power_of_two_scale, validate_points
from .base import MahalanobisMixin, components_from_matrix
from .itml import _check_bounds, _default_bounds, _prior_matrix

__all__ = ["ProjectAndForget"]


class ProjectAndForget(MahalanobisMixin, BaseEstimator):
    """Mahalanobis metric learning with ITML's objective over all pairs.

    Every same-class pair must be closer than ``low`` and every
    different-class pair farther than ``high`` (squared learned distances),
    softly with ITML's LogDet slack; the problem is solved by Project and
    Forget (Sonthalia & Gilbert, JMLR 2022): sweeps of LogDet Bregman
    projections with Hildreth's correction over an active set that a
    block-scan oracle over all O(n^2) pairs keeps supplied with violated
    constraints, and from which constraints with a zero dual are forgotten.

    Parameters
    ----------
    gamma : float, default=1.0
        Slack weight (``np.inf``: hard constraints), as in ITML.
    max_iter : int, default=200
        Maximum number of oracle calls.
    tol : float, default=1e-3
        Convergence tolerance: stop when no pair is violated by more than
        ``tol`` (relative to its bound) and a sweep of the active set changes
        the duals by at most ``tol`` relative (ITML's measure).
    max_sweeps : int, default=10
        Maximum number of sweeps over the active set between oracle calls.
    max_new_constraints : int, default=5000
        At most this many violated pairs (the most violated) join the active
        set per oracle call, so memory stays bounded by
        ``max_iter * max_new_constraints * n_features`` in the worst case and
        is usually far smaller (constraints are forgotten).
    block_size : int, default=512
        Rows of the pair scan per block.
    prior : {"identity", "covariance", "random"} or array-like, default="identity"
        ``A0``, as in ITML.
    verbose : int, default=0
        Print a table (iteration, objective, violation, active constraints,
        added, time).
    random_state : int, RandomState instance or None, default=None
        Seeds the sweep order (and ``prior="random"``).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
    bounds_ : ndarray (low, high)
    n_iter_ : int
    loss_curve_ : ndarray
        Objective after each iteration.
    n_active_ : int
        Constraints remembered at the end (positive dual).
    active_pairs_ : ndarray of shape (n_active, 2)
    duals_, slack_ : ndarray of shape (n_active,)
    max_violation_ : float
        Largest relative violation ``delta (d - xi) / xi`` over *all* pairs
        at the end (``xi = xi0`` for the pairs outside the active set).
    n_pairs_ : int
        Number of labelled pairs considered (all of them).
    converged_ : bool
    history_ : dict of lists
    """

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_sweeps": [Interval(Integral, 1, None, closed="left")],
        "max_new_constraints": [Interval(Integral, 1, None, closed="left")],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), "array-like"],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, gamma=1.0, max_iter=200, tol=1e-3, max_sweeps=10,
                 max_new_constraints=5000, block_size=512, prior="identity",
                 verbose=0, random_state=None):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.max_new_constraints = max_new_constraints
        self.block_size = block_size
        self.prior = prior
        self.verbose = verbose
        self.random_state = random_state

    # -- the oracle ---------------------------------------------------------
    def _scan(self, X, y_idx, A, skip_start, skip_cols, low, high, tol):
        """All violated pairs outside ``skip``: (i, j, violation), max viol."""
        n = X.shape[0]
        L = components_from_matrix(A, name="the current matrix")
        Z = np.ascontiguousarray(X @ L.T)
        sq = np.einsum("ij,ij->i", Z, Z)
        B = int(self.block_size)
        cap = max(16, min(n, 4 * self.max_new_constraints // max(B, 1) + 16))
        I, J, Vv = [], [], []
        maxv = 0.0
        n_viol = 0
        ki = np.empty((B, cap), dtype=np.int64)
        kj = np.empty((B, cap), dtype=np.int64)
        kv = np.empty((B, cap), dtype=np.float64)
        counts = np.empty(B, dtype=np.int64)
        rowmax = np.empty(B, dtype=np.float64)
        for i0 in range(0, n, B):
            i1 = min(n, i0 + B)
            scan_pair_block(Z, sq, y_idx, i0, i1, low, high, tol, skip_start,
                            skip_cols, ki, kj, kv, counts, rowmax)
            r = i1 - i0
            maxv = max(maxv, float(rowmax[:r].max()))
            c = np.minimum(counts[:r], cap)
            n_viol += int(counts[:r].sum())
            mask = np.arange(cap)[None, :] < c[:, None]
            I.append(ki[:r][mask])
            J.append(kj[:r][mask])
            Vv.append(kv[:r][mask])
        return (np.concatenate(I), np.concatenate(J), np.concatenate(Vv), maxv,
                n_viol)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, bounds=None):
        """Learn the metric from class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        bounds : (low, high) or None
            Bounds on squared distances; default: the 5th / 95th percentiles
            of squared prior distances between distinct points (as ITML).

        Returns
        -------
        self
        """
        X, y = validate_points(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                f"ProjectAndForget needs samples of at least 2 classes in y; "
                f"got {classes.size} class."
            )
        X = np.ascontiguousarray(X, dtype=np.float64)
        y_idx = y_idx.astype(np.int64)
        n, d = X.shape
        rng = check_random_state(self.random_state)
        A0 = _prior_matrix(self.prior, X, d, rng)
        if bounds is None:
            low, high = _default_bounds(X, A0, rng)
        else:
            low, high = _check_bounds(bounds)
        gamma = float(self.gamma)
        tol = float(self.tol)
        # Data of extreme scale: X / s and bounds / s^2 (s a power of two,
        # exact) pose the same problem in A, without overflow / underflow.
        s = power_of_two_scale(X)
        bounds_in = (low, high)
        if s != 1.0:
            X = X / s
            low, high = low / s / s, high / s / s

        # different-class pairs of identical points: never constraints
        _, inv = np.unique(X, axis=0, return_inverse=True)
        inv = inv.ravel()
        dup_pairs = []
        if np.unique(inv).size < n:
            order = np.argsort(inv, kind="stable")
            groups = np.split(order, np.flatnonzero(np.diff(inv[order])) + 1)
            for g in groups:
                if g.size > 1:
                    for a_ in range(g.size):
                        for b_ in range(a_ + 1, g.size):
                            i, j = sorted((g[a_], g[b_]))
                            if y_idx[i] != y_idx[j]:
                                dup_pairs.append((i, j))
        dup_pairs = np.array(dup_pairs, dtype=np.int64).reshape(-1, 2)

        A = A0.copy()
        # active set: pairs (pi, pj), V rows, delta, xi, lambda
        pi = np.empty(0, np.int64)
        pj = np.empty(0, np.int64)
        V = np.empty((0, d))
        delta = np.empty(0)
        xi = np.empty(0)
        lam = np.empty(0)
        w = np.empty(d)
        wn = np.empty(d)
        hist = {k: [] for k in ("objective", "max_violation", "measure",
                                "n_active", "n_added", "sweeps", "time")}
        A0_inv = np.linalg.inv(A0)
        logdet_A0 = np.linalg.slogdet(A0)[1]

        def objective():
            sign, logdet = np.linalg.slogdet(A)
            if sign <= 0:
                return np.inf
            val = np.sum(A * A0_inv) - logdet + logdet_A0 - d
            if np.isfinite(gamma) and xi.size:
                xi0 = np.where(delta > 0, low, high)
                r = xi / xi0
                val += gamma * np.sum(r - np.log(r) - 1.0)
            return float(val)

        if self.verbose:
            print(f"[ProjectAndForget] {'Iteration':>9} {'Objective':>14} "
                  f"{'Violation':>10} {'Measure':>10} {'Active':>8} "
                  f"{'Added':>7} {'Time(s)':>8}")
            print("[ProjectAndForget] " + "-" * 72)
        t0 = time.perf_counter()
        measure = np.inf
        converged = False
        maxv = np.inf
        it = 0
        for it in range(1, self.max_iter + 1):
            skip = np.concatenate((pi * n + pj, dup_pairs[:, 0] * n + dup_pairs[:, 1]))
            skip.sort()
            srow = skip // n
            scol = (skip % n).astype(np.int64)
            skip_start = np.searchsorted(srow, np.arange(n + 1)).astype(np.int64)
            I, J, vv, maxv, n_viol = self._scan(X, y_idx, A, skip_start, scol,
                                                low, high, tol)
            # the active constraints' own violation (against their slack)
            if pi.size:
                Va = V
                p = np.einsum("ij,jk,ik->i", Va, A, Va)
                act_v = float(np.max(delta * (p - xi) / xi))
                maxv = max(maxv, act_v)
            if maxv <= tol and measure <= tol:
                converged = True
                it -= 1
                break
            if I.size > self.max_new_constraints:
                top = np.argsort(-vv, kind="stable")[:self.max_new_constraints]
                top.sort()
                I, J = I[top], J[top]
            added = int(I.size)
            if added:
                pi = np.concatenate((pi, I))
                pj = np.concatenate((pj, J))
                V = np.ascontiguousarray(np.concatenate((V, X[I] - X[J])))
                dn = np.where(y_idx[I] == y_idx[J], 1.0, -1.0)
                delta = np.concatenate((delta, dn))
                xi = np.concatenate((xi, np.where(dn > 0, low, high)))
                lam = np.concatenate((lam, np.zeros(added)))
            sweeps = 0
            for sweeps in range(1, self.max_sweeps + 1):
                order = rng.permutation(pi.size).astype(np.int64)
                change, _, _ = logdet_sweep(A, V, delta, xi, lam, order, gamma,
                                            w, wn)
                total = lam.sum()
                measure = change / total if total > 0 else (0.0 if change == 0 else np.inf)
                if measure <= tol:
                    break
            keep = lam > 0
            if not keep.all():
                # forgetting is exact: a zero dual means xi is back at xi0
                pi, pj, V = pi[keep], pj[keep], np.ascontiguousarray(V[keep])
                delta, xi, lam = delta[keep], xi[keep], lam[keep]
            obj = objective()
            for k_, v_ in (("objective", obj), ("max_violation", maxv),
                           ("measure", measure), ("n_active", int(pi.size)),
                           ("n_added", added), ("sweeps", sweeps),
                           ("time", time.perf_counter() - t0)):
                hist[k_].append(v_)
            if self.verbose:
                print(f"[ProjectAndForget] {it:>9d} {obj:>14.6e} {maxv:>10.3e} "
                      f"{measure:>10.3e} {pi.size:>8d} {added:>7d} "
                      f"{hist['time'][-1]:>8.3f}", flush=True)
        if not converged:
            warnings.warn(
                f"[ProjectAndForget] did not converge in max_iter="
                f"{self.max_iter} oracle calls (largest violation {maxv:.3g}, "
                f"dual change {measure:.3g}, tol={tol}).", ConvergenceWarning)
        if not np.all(np.isfinite(A)):
            raise FloatingPointError("ProjectAndForget produced a non-finite "
                                     "matrix; check the scale of the data.")
        self.prior_ = A0
        self.components_ = components_from_matrix(A, name="the learned matrix")
        self.bounds_ = np.array(bounds_in)
        self.n_iter_ = int(it)
        self.loss_curve_ = np.asarray(hist["objective"])
        self.history_ = hist
        self.n_active_ = int(pi.size)
        self.active_pairs_ = np.column_stack((pi, pj))
        self.duals_ = lam / s / s
        self.slack_ = xi * s * s
        self.max_violation_ = float(maxv)
        self.converged_ = converged
        n_same = int(sum(c * (c - 1) // 2 for c in np.bincount(y_idx)))
        self.n_pairs_ = n * (n - 1) // 2 - dup_pairs.shape[0]
        self.n_same_pairs_ = n_same
        return self
