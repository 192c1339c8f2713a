"""LogDet pair-constraint oracles (ITML's problem).

* :class:`FixedListOracle` -- a given list of pairs (ITML).
* :class:`LabelPairOracle` -- every same-class / different-class pair of a
  labelled data set (ProjectAndForget), scanned in blocks of rows.

See :mod:`metric_estimators.solvers.oracles` for the calling convention.
"""

import numpy as np

from ..._backend import NUMBA
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
    kernels : :class:`~metric_estimators._backend.Kernels`, default=NUMBA
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

    def __init__(self, V, delta, xi0, *, kernels=NUMBA):
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
    different-class pairs ``d_A(x_i, x_j)^2 >= high``.  A call scans all
    ``n (n - 1) / 2`` pairs in blocks of ``block_size`` rows
    (:func:`~metric_estimators._kernels.pair_oracle.scan_pair_block`, memory
    ``O(block_size * n)``), skipping the remembered pairs and ``skip_pairs``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : int ndarray of shape (n,)
        Class indices.
    low, high : float
        The bounds.
    block_size : int, default=512
        Rows per block of the scan.
    max_new : int, default=5000
        At most this many violated pairs (the most violated) are returned
        per call.
    skip_pairs : int ndarray of shape (k, 2) or None
        Pairs ``i < j`` that are never constraints (different-class pairs of
        identical points, which no metric separates).
    kernels : :class:`~metric_estimators._backend.Kernels`, default=NUMBA
        The path the fit runs on (:func:`metric_estimators._backend.choose`,
        family ``"logdet_all_pairs"``).

    Notes
    -----
    Pairs are keyed ``i * n + j``.  The largest violation returned covers
    every pair: the scanned ones against their bound, the remembered ones
    against their current slack.  ``last_n_violated`` is the number of pairs
    outside the active set violated beyond the threshold at the last call
    (all of them, not only the ``max_new`` returned).
    """

    supports_float32 = False

    def __init__(self, X, y, low, high, *, block_size=512, max_new=5000,
                 skip_pairs=None, kernels=NUMBA):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.low = float(low)
        self.high = float(high)
        self.block_size = int(block_size)
        self.max_new = int(max_new)
        n = self.X.shape[0]
        skip = (np.empty((0, 2), np.int64) if skip_pairs is None
                else np.asarray(skip_pairs, dtype=np.int64).reshape(-1, 2))
        self.skip_keys = skip[:, 0] * n + skip[:, 1]
        self.last_n_violated = None
        self.kernels = kernels

    @property
    def n_pairs(self):
        """Number of pairs that are constraints (all pairs but ``skip_pairs``)."""
        n = self.X.shape[0]
        return n * (n - 1) // 2 - self.skip_keys.size

    def _scan(self, Z, skip, threshold):
        """Return ``(i, j, violation, max)`` of the violated pairs outside ``skip``."""
        n = Z.shape[0]
        B = self.block_size
        cap = max(16, min(n, 4 * self.max_new // max(B, 1) + 16))
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
            I.append(ki[:r][mask])
            J.append(kj[:r][mask])
            Vv.append(kv[:r][mask])
        return (np.concatenate(I), np.concatenate(J), np.concatenate(Vv),
                maxv, total)

    def __call__(self, A, threshold, active, precision="float64"):
        """Return ``(key, V, delta, xi0, max_violation)`` of the violated pairs."""
        X = self.X
        Z = np.ascontiguousarray(X @ gram_factor(A))
        skip = np.concatenate((active.key, self.skip_keys))
        skip.sort()
        I, J, viol, maxv, total = self._scan(Z, skip, threshold)
        self.last_n_violated = total
        maxv = max(maxv, active.max_violation())
        if I.size > self.max_new:
            top = np.argsort(-viol, kind="stable")[:self.max_new]
            top.sort()
            I, J = I[top], J[top]
        delta = np.where(self.y[I] == self.y[J], 1.0, -1.0)
        xi0 = np.where(delta > 0, self.low, self.high)
        return I * X.shape[0] + J, X[I] - X[J], delta, xi0, maxv
