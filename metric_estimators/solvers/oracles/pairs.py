"""LogDet pair-constraint oracles (ITML's problem).

* :class:`FixedListOracle` -- a given list of pairs (ITML).
* :class:`LabelPairOracle` -- every same-class / different-class pair of a
  labelled data set (ProjectAndForget), scanned in blocks of rows.

See :mod:`metric_estimators.solvers.oracles` for the calling convention.
"""

import numpy as np

from ..._linalg import gram_factor

__all__ = ["FixedListOracle", "LabelPairOracle"]


class FixedListOracle:
    """Oracle over a fixed list of LogDet pair constraints (ITML).

    Parameters
    ----------
    V : ndarray of shape (m, d)
        Difference vectors of the listed pairs.
    delta : ndarray of shape (m,)
        +1 for similar (``v^T A v <= xi``), -1 for dissimilar pairs.
    xi0 : ndarray of shape (m,)
        Positive bounds.
    kernels : :class:`~metric_estimators._backend.Kernels`
        The path the fit runs on (:func:`metric_estimators._backend.choose`,
        family ``"logdet_listed"``).

    Notes
    -----
    A call checks every listed constraint at ``A``
    (:func:`~metric_estimators._kernels.bregman.logdet_violations`):
    those outside the active set against ``xi0`` -- the violated ones are
    returned, keyed by their index in the list -- and the remembered ones
    against their current slack.
    """

    supports_float32 = False

    def __init__(self, V, delta, xi0, *, kernels):
        self.V = np.ascontiguousarray(V, dtype=np.float64)
        self.delta = np.ascontiguousarray(delta, dtype=np.float64)
        self.xi0 = np.ascontiguousarray(xi0, dtype=np.float64)
        self.kernels = kernels

    def __call__(self, A, threshold, active, precision="float64"):
        """Return ``(key, V, delta, xi0, max_violation)`` of violated listed pairs."""
        outside = np.ones(self.V.shape[0], dtype=np.bool_)
        outside[active.key] = False
        idx = np.flatnonzero(outside).astype(np.int64)
        viol = np.empty(idx.size)
        self.kernels.bregman.logdet_violations(A, self.V, self.delta,
                                               self.xi0, idx, viol)
        maxv = max(float(viol.max()) if idx.size else 0.0,
                   active.max_violation())
        new = idx[viol > threshold]
        return new, self.V[new], self.delta[new], self.xi0[new], maxv


class LabelPairOracle:
    """Oracle over every labelled pair of a data set (ProjectAndForget).

    Same-class pairs ``(i, j)`` must satisfy ``d_A(x_i, x_j)^2 <= low``,
    different-class pairs ``d_A(x_i, x_j)^2 >= high``.  A call is a full
    check of the optimality conditions at ``A``:

    * it scans all ``n (n - 1) / 2`` pairs in blocks of ``block_size`` rows
      (:func:`~metric_estimators._kernels.pair_oracle.scan_pair_block`,
      memory ``O(block_size * n)``), skipping the remembered pairs and
      ``skip_pairs``: a pair outside the active set has its slack at its
      bound and a zero dual, so it must meet its bound;
    * it checks every remembered pair's complementary slackness against its
      slack and dual
      (:func:`~metric_estimators._kernels.pair_oracle.active_pair_residuals`):
      tight if its dual is positive, met otherwise.

    It returns the violated pairs outside the active set, most violated
    first if there are more than the room left (``max_new`` per call,
    ``growth`` times the active set, and ``max_active`` pairs in the active
    set in all), in the layout of
    :meth:`~metric_estimators.solvers.active_sets.LogDetPointPairConstraints.add`.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : int ndarray of shape (n,)
        Class indices.
    low, high : float
        The bounds.
    block_size : int, default=512
        Rows per block of the scan.
    max_new : int or None, default=None
        At most this many violated pairs are returned per call (None: no
        limit but ``max_active``).
    max_active : int or None, default=None
        The active set may hold at most this many pairs (None: no limit).
    growth : float or None, default=None
        At most ``max(min_new, growth * len(active))`` pairs are returned
        per call (None: no such limit): the active set grows geometrically
        instead of taking every violated pair at once.
    min_new : int, default=100000
        See ``growth``.
    skip_pairs : int ndarray of shape (k, 2) or None
        Pairs ``i < j`` that are never constraints (different-class pairs of
        identical points, which no metric separates).
    kernels : :class:`~metric_estimators._backend.Kernels`
        The path the fit runs on (:func:`metric_estimators._backend.choose`,
        family ``"logdet_all_pairs"``).

    Attributes
    ----------
    log : dict of lists
        Per call: ``n_active`` (pairs in the active set), ``n_violated``
        (pairs outside it violated by more than the threshold: all of them,
        not only those returned), ``n_active_violated`` (remembered pairs
        whose residual exceeds the threshold), ``outside_violation`` and
        ``active_residual`` (the largest of each), ``n_returned``.
    last_n_violated : int or None
        ``log["n_violated"][-1]``.
    best_violation, best_point
        The smallest largest violation seen at a call and a copy of the
        point it was seen at.

    Notes
    -----
    The largest violation returned is the larger of the largest relative
    violation ``delta (d - xi0) / xi0`` outside the active set and the
    largest residual inside it: at most ``tol`` means that ``A`` and the
    active set's slacks and duals satisfy the optimality conditions of the
    problem over all pairs to ``tol`` (the stationarity conditions hold by
    construction of the Bregman projections).
    """

    supports_float32 = False

    def __init__(self, X, y, low, high, *, block_size=512, max_new=None,
                 max_active=None, growth=None, min_new=100_000,
                 skip_pairs=None, kernels):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.low = float(low)
        self.high = float(high)
        self.block_size = int(block_size)
        self.max_new = None if max_new is None else int(max_new)
        self.max_active = None if max_active is None else int(max_active)
        self.growth = None if growth is None else float(growth)
        self.min_new = int(min_new)
        n = self.X.shape[0]
        skip = (np.empty((0, 2), np.int64) if skip_pairs is None
                else np.asarray(skip_pairs, dtype=np.int64).reshape(-1, 2))
        self.skip_keys = np.sort(skip[:, 0] * n + skip[:, 1])
        self.kernels = kernels
        self.log = {k: [] for k in ("n_active", "n_violated",
                                    "n_active_violated", "outside_violation",
                                    "active_residual", "n_returned")}
        self.best_violation = np.inf
        self.best_point = None

    @property
    def n_pairs(self):
        """Number of pairs that are constraints (all pairs but ``skip_pairs``)."""
        n = self.X.shape[0]
        return n * (n - 1) // 2 - self.skip_keys.size

    @property
    def last_n_violated(self):
        """Pairs outside the active set violated at the last call (None before)."""
        return self.log["n_violated"][-1] if self.log["n_violated"] else None

    def _scan(self, Z, skip, threshold, keep_all):
        """Return ``(i, j, violation, max, total)`` of the violated pairs outside ``skip``.

        ``i``, ``j`` int32, ``violation`` float32; all of them if
        ``keep_all``, else at most about ``max_new`` per block.
        """
        n = Z.shape[0]
        B = max(1, min(self.block_size, n))
        if keep_all:
            cap = max(n, 1)
        else:
            cap = max(16, min(n, 4 * self.max_new // B + 16))
        scan_pair_block = self.kernels.pair_oracle.scan_pair_block
        sq = np.einsum("ij,ij->i", Z, Z)
        srow = skip // n
        scol = (skip % n).astype(np.int64)
        skip_start = np.searchsorted(srow, np.arange(n + 1)).astype(np.int64)
        I, J, Vv = [], [], []
        maxv = 0.0
        total = 0
        ki = np.empty((B, cap), dtype=np.int64)
        kj = np.empty((B, cap), dtype=np.int64)
        kv = np.empty((B, cap), dtype=np.float64)
        counts = np.empty(B, dtype=np.int64)
        rowmax = np.empty(B, dtype=np.float64)
        for i0 in range(0, n, B):
            i1 = min(n, i0 + B)
            scan_pair_block(Z, sq, self.y, i0, i1, self.low, self.high,
                            threshold, skip_start, scol, ki, kj, kv, counts,
                            rowmax)
            r = i1 - i0
            maxv = max(maxv, float(rowmax[:r].max()))
            total += int(counts[:r].sum())
            c = np.minimum(counts[:r], cap)
            mask = np.arange(cap)[None, :] < c[:, None]
            I.append(ki[:r][mask].astype(np.int32))
            J.append(kj[:r][mask].astype(np.int32))
            Vv.append(kv[:r][mask].astype(np.float32))
        return (np.concatenate(I), np.concatenate(J), np.concatenate(Vv),
                maxv, total)

    def __call__(self, A, threshold, active, precision="float64"):
        """Return ``(I, J, delta, max_violation)`` of the violated pairs outside ``active``."""
        X = self.X
        Z = np.ascontiguousarray(X @ gram_factor(A))
        skip = np.concatenate((active.key, self.skip_keys))
        skip.sort()
        room = np.inf if self.max_new is None else self.max_new
        if self.max_active is not None:
            room = min(room, max(0, self.max_active - len(active)))
        if self.growth is not None:
            room = min(room, max(self.min_new, self.growth * len(active)))
        I, J, viol, maxv, total = self._scan(Z, skip, threshold,
                                             keep_all=self.max_new is None)
        del skip
        res, n_bad = self.kernels.pair_oracle.active_pair_residuals(
            Z, active.I, active.J, active.delta, active.xi, active.lam,
            threshold)
        if I.size > room:
            room = int(room)
            top = (np.argpartition(-viol, room - 1)[:room] if room
                   else np.empty(0, dtype=np.int64))
            top.sort()
            I, J = I[top], J[top]
        del viol
        worst = max(float(maxv), float(res))
        for key, value in zip(self.log, (len(active), total, int(n_bad),
                                         float(maxv), float(res), I.size)):
            self.log[key].append(value)
        if worst < self.best_violation:
            self.best_violation = worst
            self.best_point = np.array(A, copy=True)
        delta = np.where(self.y[I] == self.y[J], 1, -1).astype(np.int8)
        return I, J, delta, worst
