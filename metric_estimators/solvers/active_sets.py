"""Active sets of the Project-and-Forget / Bregman driver: constraints with their duals.

An active set holds the constraints an oracle returned and the driver
(:func:`metric_estimators.solvers.bregman.bregman_project_forget`) has not
forgotten, one dual ``z_c >= 0`` each, and the iterate they act on.  Every
active set offers the same small interface:

``point``
    The iterate, updated in place (an edge vector, or a matrix).
``add(*constraints) -> int``
    Append the constraints an oracle returned (in the layout of that
    oracle's output, minus its last item) with a zero dual; return how many
    were new.
``project(start=0) -> float``
    One Hildreth pass (Hildreth 1957; Bregman 1967) over the constraints
    ``start, start + 1, ...``; returns the pass's residual (see each class),
    which the driver compares with its tolerance.
``forget() -> int``
    Drop the constraints whose dual is zero; return how many.
``len(active)``, ``nnz``, ``nbytes``
    Number of constraints, the cost of a pass in stored entries, and the
    memory held.

Two kinds of constraints:

* :class:`CycleConstraints` -- ``x_e - sum_{f in P} x_f <= 0`` for an edge
  ``e`` and a path ``P`` (metric nearness, correlation clustering), with the
  squared L2, weighted squared L2 or generalised KL divergence;
* :class:`LogDetPairConstraints` -- ITML's pair constraints
  ``delta_c (v_c^T A v_c - xi_c) <= 0`` under the LogDet divergence with
  ``gamma``-weighted slack (Davis et al., ICML 2007);
  :class:`LogDetPointPairConstraints` the same constraints between points
  of one data set, stored by index (ProjectAndForget's millions of pairs).
"""

import numpy as np

__all__ = ["CycleConstraints", "LogDetPairConstraints",
           "LogDetPointPairConstraints"]

_TINY = np.finfo(np.float64).tiny


class CycleConstraints:
    """Cycle constraints ``x_e - sum_{f in P} x_f <= 0`` on an edge vector, with duals.

    Stored in CSR form: ``edge[c]``, path edges ``path[ptr[c]:ptr[c+1]]``
    and dual ``z[c]``, with a 64-bit hash of (edge, path) per constraint in
    an open-addressing table for de-duplication (an oracle may return a
    remembered constraint again).  Edge and path ids are int32 (the pairs of
    a graph number fewer than 2^31).

    While every constraint is a triangle (``triangles``, the dense oracles'
    output) the store keeps a fixed stride instead: ``path[2c:2c+2]``, no
    ``ptr`` array and no stored hashes (the table's operations hash the
    triangles on the fly, e.g.
    :func:`~metric_estimators._kernels.constraint_store.table_delete_triangles`):
    20 bytes per triangle plus the table, against 40 in the CSR form.
    ``ptr`` and ``hashes`` are then made on request.  The first constraint
    that is not a triangle turns the store into the CSR form.

    Parameters
    ----------
    x : ndarray of shape (m,) or None
        The iterate (edge lengths), projected in place.
    winv : ndarray of shape (m,) or None
        Inverse weights ``1 / w_e`` of the weighted squared L2 divergence
        ``1/2 sum_e w_e (x_e - x0_e)^2``.
    divergence : {"l2", "kl"}, default="l2"
        ``"kl"``: the generalised Kullback-Leibler divergence
        ``sum_e x_e log(x_e / x0_e) - x_e + x0_e`` (unweighted, ``x > 0``;
        ``winv`` unused), whose projections onto cycle constraints are
        multiplicative and in closed form.
    kernels : Kernels
        The kernels the fit runs on (:func:`metric_estimators._backend.choose`):
        the store, its hash table and the passes call
        ``kernels.constraint_store`` and ``kernels.cycle_projections``.
        On the numpy twins the table keeps the twin's own layout and a pass
        projects batches of variable-disjoint constraints at once (same
        fixed point; see :mod:`metric_estimators._kernels.numpy.cycle_projections`).

    Notes
    -----
    The residual of :meth:`project` is the largest complementary-slackness
    error of the pass, in the units of ``x``: a constraint with a positive
    dual that is not tight, or a violated one (see
    :func:`~metric_estimators._kernels.cycle_projections.project_paths_l2`).
    """

    #: the hash table is rebuilt larger before it gets fuller than this
    MAX_LOAD = 0.7

    def __init__(self, x=None, winv=None, divergence="l2", *, kernels):
        if divergence not in ("l2", "kl"):
            raise ValueError(
                f"divergence must be 'l2' or 'kl', got {divergence!r}.")
        self.x = x
        self.winv = (None if winv is None
                     else np.ascontiguousarray(winv, dtype=np.float64))
        self.divergence = divergence
        self.kernels = kernels
        w = self.winv
        # the common value of winv if all weights are equal: a faster kernel
        # for triangles
        self.uniform = (float(w[0]) if w is not None and w.size
                        and np.all(w == w[0]) else None)
        # capacity buffers (grown geometrically: appending costs O(batch)
        # amortised, not a copy of the whole set); edge, path and z are
        # views of their first k (constraints) / plen (path entries)
        # elements, refreshed after every change; _ptr and _hashes are used
        # in the CSR form only
        self._edge = np.empty(0, dtype=np.int32)
        self._ptr = np.zeros(1, dtype=np.int64)
        self._path = np.empty(0, dtype=np.int32)
        self._z = np.empty(0, dtype=np.float64)
        self._hashes = np.empty(0, dtype=np.uint64)
        self._k = 0
        self._plen = 0
        # open-addressing set of the stored hashes, kept up to date by add
        # (insert) and forget (delete), at most MAX_LOAD full
        self._table = np.zeros(16, dtype=np.uint64)
        self._views()
        self.triangles = True  # every path has two edges
        self._csr = False  # the CSR form (ptr, stored hashes) in any case

    @property
    def _strided(self):
        """True while the store holds triangles with a fixed stride (no ptr, no hashes)."""
        return self.triangles and not self._csr

    def _views(self):
        k, p = self._k, self._plen
        self.edge = self._edge[:k]
        self.path = self._path[:p]
        self.z = self._z[:k]

    @property
    def ptr(self):
        """Offsets of the paths in ``path`` (made on request in the strided form)."""
        if self._strided:
            return np.arange(0, 2 * self._k + 1, 2, dtype=np.int64)
        return self._ptr[:self._k + 1]

    @property
    def hashes(self):
        """64-bit hash of each constraint (computed on request in the strided form)."""
        if self._strided:
            return self.kernels.constraint_store.constraint_hashes(
                self.edge, self.ptr, self.path)
        return self._hashes[:self._k]

    def _to_csr(self):
        """Leave the strided form: store ``ptr`` and the hashes."""
        if self._strided:
            k = self._k
            self._ptr = np.arange(0, 2 * k + 1, 2, dtype=np.int64)
            self._hashes = (self.kernels.constraint_store.constraint_hashes(
                self.edge, self._ptr, self.path)
                if k else np.empty(0, dtype=np.uint64))
        self._csr = True

    @staticmethod
    def _grown(buf, need):
        """``buf`` if it holds ``need`` entries, else a copy with room to spare."""
        if buf.size >= need:
            return buf
        new = np.empty(max(need, int(buf.size * 1.5) + 16), dtype=buf.dtype)
        new[:buf.size] = buf
        return new

    @property
    def point(self):
        """The iterate ``x`` (edge vector)."""
        return self.x

    def __len__(self):
        return int(self._k)

    @property
    def nnz(self):
        """Number of stored path entries (plus one per constraint)."""
        return int(self._plen + self._k)

    @property
    def nbytes(self):
        """Memory held by the constraints, in bytes (capacity included)."""
        return (self._edge.nbytes + self._ptr.nbytes + self._path.nbytes
                + self._z.nbytes + self._hashes.nbytes + self._table.nbytes)

    def _reserve_table(self, need):
        """Rebuild the hash table larger if ``need`` hashes would overfill it."""
        size = self._table.size
        if need <= self.MAX_LOAD * size:
            return
        while need > self.MAX_LOAD * size:
            size *= 2
        self._table = None  # free the old table before the new one
        self._table = np.zeros(size, dtype=np.uint64)
        store = self.kernels.constraint_store
        if self._strided:
            store.table_insert_triangles(self._table, self.edge, self.path)
        else:
            store.table_insert_new(self._table, self.hashes)

    def add(self, edge, ptr, path):
        """Append the constraints not already present; return how many."""
        if edge.size == 0:
            return 0
        store = self.kernels.constraint_store
        if self._strided and store.all_triangles(ptr):
            return self._add_triangles(edge, path)
        h = store.constraint_hashes(edge, ptr, path)
        self._reserve_table(self._k + h.size)
        keep = store.table_insert_new(self._table, h)
        k = int(np.count_nonzero(keep))
        if k == 0:
            return 0
        batch_triangles = bool(store.all_triangles(ptr))
        if k < keep.size:
            if batch_triangles:
                edge, path = edge[keep], path.reshape(-1, 2)[keep].ravel()
                ptr = None
            else:
                idx = np.flatnonzero(keep)
                lens = ptr[idx + 1] - ptr[idx]
                sel = np.repeat(keep, np.diff(ptr))
                edge, path = edge[idx], path[sel]
                ptr = np.concatenate(([0], np.cumsum(lens)))
                batch_triangles = bool(store.all_triangles(ptr))
            h = h[keep]
        del keep
        if self.triangles and not batch_triangles:
            self._to_csr()
            self.triangles = False
        k0, p0 = self._k, self._plen
        plen = int(path.size)
        self._edge = self._grown(self._edge, k0 + k)
        self._z = self._grown(self._z, k0 + k)
        self._path = self._grown(self._path, p0 + plen)
        self._edge[k0:k0 + k] = edge
        self._z[k0:k0 + k] = 0.0
        self._path[p0:p0 + plen] = path
        if not self._strided:
            if ptr is None:
                ptr = np.arange(0, 2 * k + 1, 2, dtype=np.int64)
            self._hashes = self._grown(self._hashes, k0 + k)
            self._ptr = self._grown(self._ptr, k0 + k + 1)
            self._hashes[k0:k0 + k] = h
            self._ptr[k0 + 1:k0 + k + 1] = ptr[1:] + p0
        self._k, self._plen = k0 + k, p0 + plen
        self._views()
        return k

    def _add_triangles(self, edge, path):
        """:meth:`add` of a batch of triangles to the strided store.

        The batch is hashed on the fly and its new triangles copied straight
        into the buffers: no hash array and no filtered copy of the batch.
        """
        store = self.kernels.constraint_store
        self._reserve_table(self._k + edge.size)
        keep = store.table_insert_triangles(self._table, edge, path)
        k = int(np.count_nonzero(keep))
        if k == 0:
            return 0
        k0 = self._k
        self._edge = self._grown(self._edge, k0 + k)
        self._z = self._grown(self._z, k0 + k)
        self._path = self._grown(self._path, 2 * (k0 + k))
        store.append_triangles(self._edge, self._path, self._z, k0, edge,
                               path, keep)
        self._k, self._plen = k0 + k, 2 * (k0 + k)
        self._views()
        return k

    def forget(self):
        """Drop the constraints whose dual is zero; return how many."""
        keep = self.z > 0.0
        dropped = int(keep.size - np.count_nonzero(keep))
        store = self.kernels.constraint_store
        if dropped and self._strided:
            store.table_delete_triangles(self._table, self.edge, self.path,
                                         keep)
            k = int(store.compact_triangles(self._edge, self._path, self._z,
                                            keep))
            self._k, self._plen = k, 2 * k
            self._views()
        elif dropped:
            store.table_delete(self._table, self.hashes, keep)
            self._k, self._plen = store.compact_in_place(
                self._edge, self._ptr, self._path, self._z, self._hashes,
                keep)
            self._views()
        return dropped

    def project(self, start=0):
        """One Hildreth pass from constraint ``start``; return its residual."""
        x = self.x
        passes = self.kernels.cycle_projections
        if self.divergence == "kl":
            return passes.project_paths_kl(x, self.edge, self.ptr, self.path, self.z,
                                    start, self.edge.size)
        if self.uniform is not None and self.triangles:
            return passes.project_triangles_unit(x, self.uniform, self.edge,
                                                 self.path, self.z, start,
                                                 self.edge.size)
        if self.triangles:
            return passes.project_triangles_l2(x, self.winv, self.edge,
                                               self.path, self.z, start,
                                               self.edge.size)
        return passes.project_paths_l2(x, self.winv, self.edge, self.ptr,
                                       self.path, self.z, start,
                                       self.edge.size)

    def paths(self):
        """Return the list of (edge, path edges) pairs (for inspection and tests)."""
        return [(int(self.edge[c]), self.path[self.ptr[c]:self.ptr[c + 1]])
                for c in range(len(self))]


class LogDetPairConstraints:
    """ITML's pair constraints under the LogDet divergence, with slacks and duals.

    Constraint ``c`` (difference vector ``v_c``, sign ``delta_c``, bound
    ``xi0_c``) reads ``delta_c (v_c^T A v_c - xi_c) <= 0``; the divergence is
    ``D_ld(A, A0) + gamma * sum_c D_ld(xi_c, xi0_c)``.  The projections are
    the exact LogDet Bregman projections with Hildreth's correction of
    :func:`~metric_estimators._kernels.bregman.logdet_sweep`.  Forgetting is
    exact: a constraint whose dual is zero has its slack back at ``xi0``
    (``gamma / xi = gamma / xi0 - lambda delta``).

    Parameters
    ----------
    A0 : ndarray of shape (d, d)
        Positive definite prior (copied; the iterate ``A`` starts there).
    gamma : float
        Slack weight, ``np.inf`` for hard constraints.
    shuffle : bool, default=True
        Visit the constraints of each pass in a fresh random order.  Strongly
        recommended: on constraints built from labels (grouped by class) a
        fixed order converges sublinearly and slowly, a reshuffled order
        linearly (measured on digits: benchmarks/README.md, *Measurements
        behind choices in the code*).
    random_state : None, int or numpy Generator
        Seed of the shuffling.
    keep_all : bool, default=False
        Never forget (plain cyclic projections over every constraint added).
    kernels : Kernels
        The path of the fit (:func:`metric_estimators._backend.choose`):
        ``kernels.bregman`` makes the passes and checks.

    Attributes
    ----------
    A : ndarray of shape (d, d)
        The iterate, exactly symmetric.
    key : int64 ndarray of shape (k,)
        The caller's identifier of each constraint (an index into a list of
        constraints, or ``i * n + j`` for the pair ``(i, j)``).
    V, delta, xi0, xi, lam : ndarrays
        Difference vectors, signs, bounds, slacks and duals.

    Notes
    -----
    The residual of :meth:`project` is ITML's measure: the larger of the
    pass's relative dual change ``sum |d lambda| / sum lambda`` and the
    largest relative violation ``delta (p - xi) / xi`` met before a
    projection.  Below ``tol`` a further pass changes nothing beyond it.
    """

    #: the arrays holding the constraints, one entry per constraint
    _STORED = ("key", "V", "delta", "xi0", "xi", "lam")

    def __init__(self, A0, gamma, *, shuffle=True, random_state=None,
                 keep_all=False, kernels):
        self.A0 = np.ascontiguousarray(A0, dtype=np.float64)
        self.A = self.A0.copy()
        self.gamma = float(gamma)
        self.shuffle = bool(shuffle)
        self.keep_all = bool(keep_all)
        self.kernels = kernels
        self._rng = np.random.default_rng(random_state)
        d = self.A.shape[0]
        self.key = np.empty(0, dtype=np.int64)
        self.V = np.empty((0, d))
        self.delta = np.empty(0)
        self.xi0 = np.empty(0)
        self.xi = np.empty(0)
        self.lam = np.empty(0)
        self._w = np.empty(d)
        self._wn = np.empty(d)
        self._A0_inv = None
        self._logdet_A0 = None

    @property
    def point(self):
        """The iterate ``A`` (full symmetric matrix)."""
        return self.A

    def __len__(self):
        return int(self.key.size)

    @property
    def nnz(self):
        """Stored entries: ``d`` per constraint."""
        return int(self.V.size)

    @property
    def nbytes(self):
        """Memory held by the constraints, in bytes."""
        return sum(getattr(self, name).nbytes for name in self._STORED)

    def add(self, key, V, delta, xi0):
        """Append constraints (the oracles skip remembered ones); return how many."""
        k = int(np.asarray(key).size)
        if k == 0:
            return 0
        self.key = np.concatenate((self.key, np.asarray(key, dtype=np.int64)))
        self.V = np.ascontiguousarray(
            np.concatenate((self.V, np.asarray(V, dtype=np.float64))))
        self.delta = np.concatenate((self.delta, np.asarray(delta, np.float64)))
        xi0 = np.asarray(xi0, dtype=np.float64)
        self.xi0 = np.concatenate((self.xi0, xi0))
        self.xi = np.concatenate((self.xi, xi0))
        self.lam = np.concatenate((self.lam, np.zeros(k)))
        return k

    def forget(self):
        """Drop the constraints with a zero dual (unless ``keep_all``); count them."""
        if self.keep_all:
            return 0
        keep = self.lam > 0.0
        dropped = int(keep.size - np.count_nonzero(keep))
        if dropped:
            for name in self._STORED:
                setattr(self, name,
                        np.ascontiguousarray(getattr(self, name)[keep]))
        return dropped

    def project(self, start=0):
        """One pass of LogDet projections from ``start``; return ITML's measure."""
        k = len(self) - start
        if k <= 0:
            return 0.0
        order = (self._rng.permutation(k) if self.shuffle
                 else np.arange(k)).astype(np.int64) + start
        change, viol, _ = self.kernels.bregman.logdet_sweep(
            self.A, self.V, self.delta, self.xi, self.lam, order, self.gamma,
            self._w, self._wn)
        return self._measure(change, viol)

    def _measure(self, change, viol):
        """ITML's measure of a pass: ``max(sum |d lambda| / sum lambda, viol)``."""
        total = self.lam.sum()
        rel = change / max(total, _TINY) if change > 0 else 0.0
        return float(max(rel, viol))

    def violations(self):
        """Return each constraint's relative violation ``delta (v^T A v - xi) / xi``."""
        out = np.empty(len(self))
        self.kernels.bregman.logdet_violations(
            self.A, self.V, self.delta, self.xi,
            np.arange(len(self), dtype=np.int64), out)
        return out

    def max_violation(self):
        """Return the largest relative violation of the constraints (0 if none)."""
        return float(max(0.0, self.violations().max())) if len(self) else 0.0

    def objective(self, A=None):
        """Return ``D_ld(A, A0) + gamma sum_c D_ld(xi_c, xi0_c)`` (``A``: the iterate)."""
        if self._A0_inv is None:
            self._A0_inv = np.linalg.inv(self.A0)
            self._logdet_A0 = np.linalg.slogdet(self.A0)[1]
        S = self.A if A is None else A
        sign, logdet = np.linalg.slogdet(S)
        if sign <= 0:
            return np.inf
        d = S.shape[0]
        value = np.sum(S * self._A0_inv) - logdet + self._logdet_A0 - d
        if np.isfinite(self.gamma) and len(self):
            r = self.xi / self.xi0
            value += self.gamma * np.sum(r - np.log(r) - 1.0)
        return float(value)


class LogDetPointPairConstraints(LogDetPairConstraints):
    """ITML's LogDet pair constraints between points of one data set, stored by index.

    The constraints, divergence, projections and forgetting of
    :class:`LogDetPairConstraints`, for pairs ``(i, j)`` of the rows of
    ``X``: a constraint is stored as ``I[c], J[c]`` (int32), its sign
    ``delta[c]`` (int8), its slack ``xi[c]`` and its dual ``lam[c]``
    (float64): 25 bytes, whatever the dimension; the difference vector
    ``X[i] - X[j]`` is formed when the pair is projected onto
    (:func:`~metric_estimators._kernels.bregman.logdet_pair_sweep`).  The
    bound ``xi0`` is ``low`` for similar and ``high`` for dissimilar pairs.

    Order of the passes: each batch of added pairs is stored in a random
    order, after the earlier ones; a pass visits the store in blocks of
    :attr:`BLOCK` consecutive constraints, the blocks in a fresh random
    order.  The pairs of a pass are then visited in a random order (pairs
    from the labels come grouped by class, on which a fixed order converges
    slowly, see :class:`LogDetPairConstraints`) while the store is read
    block by block, not at random addresses (which costs as much as the
    projections themselves once the set outgrows the caches).

    Parameters
    ----------
    A0 : ndarray of shape (d, d)
        Positive definite prior (copied; the iterate ``A`` starts there).
    gamma : float
        Slack weight, ``np.inf`` for hard constraints.
    X : ndarray of shape (n, d)
        The points.
    bounds : (low, high)
        ``xi0`` of the similar and of the dissimilar pairs.
    random_state : None, int or numpy Generator
        Seed of the orders.
    kernels : Kernels
        ``kernels.bregman`` makes the passes.

    Attributes
    ----------
    A : ndarray of shape (d, d)
    I, J : int32 ndarrays of shape (k,)
        The pairs (``I < J`` as the oracle returns them).
    delta : int8 ndarray of shape (k,)
    xi, lam : float64 ndarrays of shape (k,)
        Slacks and duals.
    key, xi0 : ndarrays of shape (k,)
        ``I * n + J`` and the bounds, made on request.
    """

    #: constraints per block of a pass's order
    BLOCK = 16

    _STORED = ("I", "J", "delta", "xi", "lam")

    def __init__(self, A0, gamma, X, bounds, *, random_state=None,
                 kernels):
        self.A0 = np.ascontiguousarray(A0, dtype=np.float64)
        self.A = self.A0.copy()
        self.gamma = float(gamma)
        self.shuffle = True
        self.keep_all = False
        self.kernels = kernels
        self._rng = np.random.default_rng(random_state)
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.low, self.high = (float(b) for b in bounds)
        self.I = np.empty(0, dtype=np.int32)
        self.J = np.empty(0, dtype=np.int32)
        self.delta = np.empty(0, dtype=np.int8)
        self.xi = np.empty(0)
        self.lam = np.empty(0)
        d = self.A.shape[0]
        self._w, self._wn = np.empty(d), np.empty(d)
        self._v, self._vn = np.empty(d), np.empty(d)
        self._A0_inv = None
        self._logdet_A0 = None

    def __len__(self):
        return int(self.I.size)

    @property
    def key(self):
        """``I * n + J`` of each constraint (int64)."""
        return self.I.astype(np.int64) * self.X.shape[0] + self.J

    @property
    def xi0(self):
        """The bound of each constraint: ``low`` if similar, else ``high``."""
        return np.where(self.delta > 0, self.low, self.high)

    @property
    def nnz(self):
        """Entries read per pass: ``d`` per constraint (its difference vector)."""
        return int(self.I.size * self.X.shape[1])

    def add(self, I, J, delta):
        """Append the pairs ``(I, J)`` with signs ``delta``, in a random order; count them.

        The oracles return pairs outside the active set only.
        """
        k = int(np.asarray(I).size)
        if k == 0:
            return 0
        p = self._rng.permutation(k)
        delta = np.asarray(delta, dtype=np.int8)[p]
        self.I = np.concatenate((self.I, np.asarray(I, dtype=np.int32)[p]))
        self.J = np.concatenate((self.J, np.asarray(J, dtype=np.int32)[p]))
        self.delta = np.concatenate((self.delta, delta))
        self.xi = np.concatenate((self.xi,
                                  np.where(delta > 0, self.low, self.high)))
        self.lam = np.concatenate((self.lam, np.zeros(k)))
        return k

    def order(self, start=0):
        """The constraints ``start, start + 1, ...`` in a pass's order (blocks, shuffled)."""
        k = len(self) - start
        B = self.BLOCK
        nb = -(-k // B)
        dtype = np.int32 if len(self) < 2 ** 31 - B else np.int64
        blocks = self._rng.permutation(nb).astype(dtype)
        order = (blocks[:, None] * dtype(B)
                 + np.arange(B, dtype=dtype)[None, :]).ravel()
        if k % B:
            order = order[order < k]
        order += dtype(start)
        return order

    def project(self, start=0):
        """One pass of LogDet projections from ``start``; return ITML's measure."""
        if len(self) - start <= 0:
            return 0.0
        change, viol, _ = self.kernels.bregman.logdet_pair_sweep(
            self.A, self.X, self.I, self.J, self.delta, self.xi, self.lam,
            self.order(start), self.gamma, self._w, self._wn, self._v,
            self._vn)
        return self._measure(change, viol)

    def violations(self, chunk=1 << 20):
        """Return each constraint's relative violation ``delta (d_A - xi) / xi``."""
        out = np.empty(len(self))
        for a in range(0, len(self), chunk):
            b = min(len(self), a + chunk)
            V = self.X[self.I[a:b]] - self.X[self.J[a:b]]
            p = np.einsum("ij,jk,ik->i", V, self.A, V)
            x = self.xi[a:b]
            out[a:b] = self.delta[a:b] * (p - x) / x
        return out
