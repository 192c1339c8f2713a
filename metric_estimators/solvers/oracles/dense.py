"""Cycle-constraint oracles on complete graphs (dense edge vectors).

* :class:`DenseShortestPathOracle` -- blocked Floyd-Warshall with a next-hop
  matrix (numba), O(n^3) time and O(n^2) memory per call.
* :class:`DenseTriangleOracle` -- triangles only (a min-plus square instead
  of shortest paths).
* :class:`ShortEdgeTriangleOracle` -- triangles through short edges first,
  for correlation clustering's weighted LP.

See :mod:`metric_estimators.solvers.oracles` for the calling convention.
Each oracle calls the kernels it is given (``kernels``, chosen once per fit
by :func:`metric_estimators._backend.choose`): the numba kernels or their
numpy twins.  The shortest-path search (``violated_paths``) and several
triangles per edge (``violated_apexes``) have no twin
(:data:`metric_estimators._backend.NO_TWIN`): such an oracle refuses the
twins, and the fit that builds it asks
:func:`metric_estimators._backend.choose_for`, which answers the numba
kernels.
"""

import numpy as np

from ... import _backend

__all__ = ["DenseShortestPathOracle", "DenseTriangleOracle",
           "ShortEdgeTriangleOracle", "ORACLE_PASS_RATIO", "n_edges"]

# Cost of one oracle call relative to one stored path entry of a projection
# pass; the estimators set how many passes run between two oracle calls
# (deterministically) from it.  Calibrated on
# benchmarks/bench_metric_nearness.py, where the tiled triangle oracle cost
# about 0.0125 n^3 path-entry visits of the unit-weight projection kernel;
# with today's cheaper min-plus square, half or twice the ratio still costs
# more CPU (measured: benchmarks/README.md, *Measurements behind choices in
# the code*; docs/project_and_forget.md).
ORACLE_PASS_RATIO = 0.0125


def n_edges(n):
    """Number of edges of the complete graph on ``n`` nodes."""
    return n * (n - 1) // 2


class DenseShortestPathOracle:
    """Shortest-path oracle on the complete graph with ``n`` nodes.

    Parameters
    ----------
    n : int
        Number of nodes; the iterate is the edge vector of length
        ``n (n - 1) / 2`` (see :func:`~metric_estimators._kernels.edges.edge_id`).
    edge_mask : bool ndarray of shape (n (n - 1) / 2,) or None
        Edges whose cycle inequalities are checked (all by default).
    kernels : Kernels
        The kernels of the fit (:mod:`metric_estimators._backend`).  The
        shortest-path search has no twin: the numba kernels only.
    """

    supports_float32 = True
    #: the option of :data:`metric_estimators._backend.NO_TWIN` this search is
    _no_twin = "oracle='shortest_path'"

    def __init__(self, n, edge_mask=None, *, kernels):
        if self._no_twin is not None:
            _backend.check_twin(kernels, "cycles", self._no_twin)
        self.n = int(n)
        self.kernels = kernels
        m = n_edges(self.n)
        self.edge_mask = (
            np.ones(m, dtype=np.bool_) if edge_mask is None
            else np.ascontiguousarray(edge_mask, dtype=np.bool_)
        )
        self._X = np.empty((self.n, self.n), dtype=np.float64)
        self._D = {}

    def _buffer(self, dtype):
        if dtype not in self._D:
            self._D.clear()  # keep one distance buffer at a time
            self._D[dtype] = np.empty((self.n, self.n), dtype=dtype)
        return self._D[dtype]

    def __call__(self, x, threshold, active=None, precision="float64"):
        """Return the constraints violated by more than ``threshold`` at ``x``.

        ``precision="float32"`` runs the shortest-path computation in single
        precision (twice the SIMD width, half the memory traffic); the
        violation of every returned path is still computed exactly in
        float64, and the largest violation is then accurate to about
        ``1e-6`` times the largest edge length.

        Returns ``(cons_edge, ptr, path, max_violation)``: the constraints in
        CSR form (see :mod:`metric_estimators._kernels.edges`) and
        the largest violation of any cycle inequality (or negativity).
        ``active`` is not used (every edge is checked, and the active set
        drops the constraints it already holds).
        """
        n = self.n
        if n < 3:
            return (np.empty(0, np.int64), np.zeros(1, np.int64),
                    np.empty(0, np.int32), 0.0)
        X = self._X
        # lengths must be non-negative for shortest paths; negative entries
        # (transient in Hildreth's iterates) are reported as violations of
        # x >= 0 below, and projected by the problem's own constraints
        kernels = self.kernels
        kernels.edges.edges_to_matrix(np.maximum(x, 0.0), n, X)
        dtype = np.float32 if precision == "float32" else np.float64
        D = self._buffer(dtype)
        np.maximum(X, 0.0, out=D, casting="unsafe")
        kernels.shortest_paths.apsp(D)
        ce, ptr, path, maxv = kernels.shortest_paths.violated_paths(
            X, D, n, threshold, self.edge_mask)
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(maxv, neg)


class DenseTriangleOracle(DenseShortestPathOracle):
    """Triangle oracle on the complete graph: most violated triangles per edge.

    For every edge ``uv`` violating some triangle inequality it returns the
    most violated triangle ``(u, w, v)``.  On a complete graph the triangle inequalities already describe the metric
    polytope, so this oracle is as complete as the shortest-path one; it
    returns shallower cuts but its paths never need a hop-by-hop recovery:
    one min-plus square ``X (x) X`` with its argmin, on the upper triangle
    only (O(n^3 / 2), tiled, vectorised and parallel,
    :func:`~metric_estimators._kernels.triangle_oracle.triangle_argmin`).
    It is the better choice when shortest paths are long (many near-zero
    lengths, as in correlation clustering).

    Parameters
    ----------
    n : int
        Number of nodes.
    edge_mask : bool ndarray or None
        As :class:`DenseShortestPathOracle`.
    apexes : int, default=1
        Triangles per violated edge and call: 1 is the most violated one;
        ``k > 1`` the ``k`` most violated ones, and 0 every violated one,
        among those violated by more than ``apex_rel`` times the edge's
        largest violation
        (:func:`~metric_estimators._kernels.triangle_oracle.violated_apexes`,
        two ``O(n)`` scans per violated edge after the min-plus square).
    apex_rel : float, default=0.0
        See ``apexes``.
    apex_depth : float, default=0.0
        With ``apexes != 1``, only the edges whose violation exceeds this
        fraction of the call's largest one get several triangles; the others
        get their most violated one.
    kernels : Kernels
        The kernels of the fit (:mod:`metric_estimators._backend`): the
        edge conversion and the search.  Several triangles per edge
        (``apexes != 1``) have no twin: the numba kernels only.
    """

    _no_twin = None

    def __init__(self, n, edge_mask=None, apexes=1, apex_rel=0.0,
                 apex_depth=0.0, *, kernels):
        if int(apexes) != 1:
            _backend.check_twin(kernels, "cycles", "triangles_per_edge!=1")
        super().__init__(n, edge_mask, kernels=kernels)
        self.apexes = int(apexes)
        self.apex_rel = float(apex_rel)
        self.apex_depth = float(apex_depth)

    def __call__(self, x, threshold, active=None, precision="float64"):
        """Return the most violated triangle of each edge violated beyond ``threshold``.

        ``precision="float32"`` runs the min-plus search in single precision
        (twice the SIMD width); the violation of every returned triangle is
        recomputed in float64, and the largest violation is then accurate to
        about ``1e-6`` times the largest edge length.
        """
        n = self.n
        if n < 3:
            return (np.empty(0, np.int64), np.zeros(1, np.int64),
                    np.empty(0, np.int32), 0.0)
        X = self._X
        kernels = self.kernels
        kernels.edges.edges_to_matrix(np.maximum(x, 0.0), n, X)
        dtype = np.float32 if precision == "float32" else np.float64
        M = self._buffer(dtype)
        mscale = 1.0
        if dtype == np.float64:
            Xp = X
            self._Xp = None  # the float32 copy is not needed any more
        else:
            if getattr(self, "_Xp", None) is None:
                self._Xp = np.empty((n, n), dtype=np.float32)
            Xp = self._Xp
            # float32 covers about 1e+-38: search on X / 2^k with X's largest
            # entry near 1 (exact scaling), so that 1e150 does not overflow
            # and 1e-150 does not vanish
            top = float(X.max())
            if top > 0.0:
                mscale = float(2.0 ** np.round(np.log2(top)))
            np.multiply(X, 1.0 / mscale, out=Xp, casting="unsafe")
        if getattr(self, "_W", None) is None:
            self._W = np.empty((n, n), dtype=np.int32)
        if self.apexes == 1:
            ce, ptr, path, maxv = kernels.triangle_oracle.violated_triangles(
                X, Xp, M, self._W, n, threshold, self.edge_mask, mscale)
        else:
            ce, ptr, path, maxv = kernels.triangle_oracle.violated_apexes(
                X, Xp, M, self._W, n, threshold, self.edge_mask, mscale,
                cap=self.apexes, rel=self.apex_rel, depth=self.apex_depth)
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(maxv, neg)


class ShortEdgeTriangleOracle:
    """Exact triangle oracle that searches only the *short* edges, dense fallback.

    Returns what :class:`DenseTriangleOracle` returns -- the most violated
    triangle of every edge violated by more than ``threshold``, and the
    largest violation (negative entries included) -- but without the
    ``O(n^3)`` min-plus product: a triangle ``(i, k, j)`` violated by more
    than ``thr`` has ``x_ik + x_kj < x_ij - thr``, so both of its other edges
    are short, and on correlation-clustering iterates of sparse signed graphs
    (almost every pair near 1) the short edges form a sparse graph
    (:func:`~metric_estimators._kernels.short_edge_triangles.short_edge_triangles`).
    When the short graph gets dense (more than ``dense_fraction`` of the
    pairs, e.g. a planted partition with large clusters), a call falls back
    to :class:`DenseTriangleOracle` (created on first use, ``O(n^2)`` memory).

    Parameters
    ----------
    n : int
        Number of nodes.
    dense_fraction : float, default=0.1
        Fallback threshold on the fraction of short pairs: the short-edge
        search costs as much as one dense min-plus call at a fraction of
        about this size, independently of ``n`` (measured:
        ``benchmarks/README.md``, *Measurements behind choices in the code*).
    kernels : Kernels
        The kernels of the fit (:mod:`metric_estimators._backend`), for
        both searches (the twin of the short-edge search is the dense one:
        :mod:`metric_estimators._kernels.numpy.short_edge_triangles`).

    Attributes
    ----------
    n_short_ : int
        Number of short edges at the last call (-1 after a dense call).
    n_dense_calls_, n_short_calls_ : int
        How many calls used each search.
    """

    supports_float32 = True

    def __init__(self, n, dense_fraction=0.1, *, kernels):
        self.n = int(n)
        self.kernels = kernels
        self.dense_fraction = float(dense_fraction)
        self._dense = None
        self.n_short_ = -1
        self.n_dense_calls_ = 0
        self.n_short_calls_ = 0

    def short_fraction(self, x, threshold):
        """Fraction of the pairs the short-edge search would visit at ``x``."""
        if x.size == 0:
            return 0.0
        xp = np.maximum(x, 0.0)
        xmax = float(xp.max())
        level = min(xmax, 1.0)
        cut = max(level - threshold, 0.5 * (xmax - threshold))
        return float(np.count_nonzero(xp < cut)) / x.size

    def __call__(self, x, threshold, active=None, precision="float64"):
        """Return ``(cons_edge, ptr, path, max_violation)`` as the dense oracle."""
        if self.n >= 3 and self.short_fraction(x, threshold) > self.dense_fraction:
            if self._dense is None:
                self._dense = DenseTriangleOracle(self.n,
                                                  kernels=self.kernels)
            self.n_short_ = -1
            self.n_dense_calls_ += 1
            return self._dense(x, threshold, active, precision=precision)
        search = self.kernels.short_edge_triangles.short_edge_triangles
        ce, ptr, path, maxv, n_short = search(x, self.n, threshold)
        self.n_short_ = int(n_short)
        self.n_short_calls_ += 1
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(float(maxv), neg)
