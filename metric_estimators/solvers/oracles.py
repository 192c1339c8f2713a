"""Violated-constraint oracles for Project and Forget (no scikit-learn here).

An oracle looks at the current iterate and returns constraints it violates;
Project and Forget (Sonthalia & Gilbert, "Project and Forget: Solving
Large-Scale Metric Constrained Problems", JMLR 23, 2022) only ever stores the
constraints an oracle returned and has not forgotten since.

For metric problems the constraints are the cycle inequalities
``x_uv <= sum_{f in P} x_f`` for a path ``P`` from ``u`` to ``v``.  On a graph
whose edge lengths are the current ``x``, the edge ``uv`` violates some cycle
inequality exactly when the shortest ``u``-``v`` path is shorter than
``x_uv``, and the most violated inequality for that edge is the one with the
shortest path; the oracles return one such constraint per violated edge.

* :class:`DenseShortestPathOracle` -- complete graphs: blocked Floyd-Warshall
  with a next-hop matrix (numba), O(n^3) time and O(n^2) memory per call.
* :class:`DenseTriangleOracle` -- complete graphs, triangles only (a
  min-plus square instead of shortest paths).
* :class:`SparseShortestPathOracle` -- sparse graphs: Dijkstra from every
  node (``scipy.sparse.csgraph.dijkstra`` with predecessors), in chunks of
  sources so that memory stays O(chunk * n).
"""

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .._kernels.edges import edge_id, edges_to_matrix
from .._kernels.shortest_paths import (
    apsp,
    paths_from_predecessors,
    violated_paths,
)
from .._kernels.triangle_oracle import violated_triangles

__all__ = ["DenseShortestPathOracle", "DenseTriangleOracle",
           "SparseShortestPathOracle", "ORACLE_PASS_RATIO", "n_edges"]

# Cost of one oracle call relative to one stored path entry of a projection
# pass; the estimators set how many passes run between two oracle calls
# (deterministically) from it.  Calibrated on
# benchmarks/bench_metric_nearness.py: the tiled triangle oracle costs about
# 0.0125 n^3 path-entry visits of the unit-weight projection kernel.
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
    """

    supports_float32 = True

    def __init__(self, n, edge_mask=None):
        self.n = int(n)
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

    def __call__(self, x, threshold, precision="float64"):
        """Constraints violated by more than ``threshold`` at ``x``.

        ``precision="float32"`` runs the shortest-path computation in single
        precision (twice the SIMD width, half the memory traffic); the
        violation of every returned path is still computed exactly in
        float64, and the largest violation is then accurate to about
        ``1e-6`` times the largest edge length.

        Returns ``(cons_edge, ptr, path, max_violation)``: the constraints in
        CSR form (see :mod:`metric_estimators._kernels.edges`) and
        the largest violation of any cycle inequality (or negativity).
        """
        n = self.n
        if n < 3:
            return (np.empty(0, np.int64), np.zeros(1, np.int64),
                    np.empty(0, np.int32), 0.0)
        X = self._X
        # lengths must be non-negative for shortest paths; negative entries
        # (transient in Hildreth's iterates) are reported as violations of
        # x >= 0 below, and projected by the problem's own constraints
        edges_to_matrix(np.maximum(x, 0.0), n, X)
        dtype = np.float32 if precision == "float32" else np.float64
        D = self._buffer(dtype)
        np.maximum(X, 0.0, out=D, casting="unsafe")
        apsp(D)
        ce, ptr, path, maxv = violated_paths(X, D, n, threshold,
                                             self.edge_mask)
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(maxv, neg)


class DenseTriangleOracle(DenseShortestPathOracle):
    """Triangle oracle on the complete graph: for every edge ``uv`` violating
    some triangle inequality, the most violated triangle ``(u, w, v)``.

    On a complete graph the triangle inequalities already describe the metric
    polytope, so this oracle is as complete as the shortest-path one; it
    returns shallower cuts but its paths never need a hop-by-hop recovery:
    one min-plus square ``X (x) X`` with its argmin, on the upper triangle
    only (O(n^3 / 2), tiled, vectorised and parallel,
    :func:`~metric_estimators._kernels.triangle_oracle.triangle_argmin`).  It is the better choice when shortest
    paths are long (many near-zero lengths, as in correlation clustering).
    """

    def __call__(self, x, threshold, precision="float64"):
        """Most violated triangle of every edge violated by more than
        ``threshold``.

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
        edges_to_matrix(np.maximum(x, 0.0), n, X)
        dtype = np.float32 if precision == "float32" else np.float64
        M = self._buffer(dtype)
        mscale = 1.0
        if dtype == np.float64:
            Xp = X
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
        ce, ptr, path, maxv = violated_triangles(X, Xp, M, self._W, n,
                                                 threshold, self.edge_mask,
                                                 mscale)
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(maxv, neg)


class SparseShortestPathOracle:
    """Shortest-path oracle on a sparse graph (Dijkstra from every node).

    Parameters
    ----------
    n : int
        Number of nodes.
    rows, cols : int arrays of shape (m,)
        The edges ``rows[e] < cols[e]``; edge ``e`` has length ``x[e]``.
    chunk : int
        Number of Dijkstra sources per call to scipy (memory ``O(chunk n)``).
    """

    def __init__(self, n, rows, cols, chunk=256):
        self.n = int(n)
        self.rows = np.ascontiguousarray(rows, dtype=np.int64)
        self.cols = np.ascontiguousarray(cols, dtype=np.int64)
        self.chunk = int(chunk)
        m = self.rows.size
        # symmetric CSR pattern whose data give, for each stored entry, the
        # edge id; lengths are filled in from x at every call
        ids = np.arange(m, dtype=np.int64)
        A = sparse.coo_matrix(
            (np.concatenate((ids, ids)) + 1,
             (np.concatenate((self.rows, self.cols)),
              np.concatenate((self.cols, self.rows)))),
            shape=(n, n),
        ).tocsr()
        A.sort_indices()
        self._indptr = A.indptr.astype(np.int64)
        self._indices = A.indices.astype(np.int64)
        self._eid = (A.data - 1).astype(np.int64)

    supports_float32 = False

    def __call__(self, x, threshold, precision="float64"):
        n = self.n
        # explicit tiny lengths instead of zeros, which csgraph could drop
        lengths = np.maximum(x, 0.0)[self._eid]
        lengths = np.maximum(lengths, 1e-300)
        G = sparse.csr_matrix((lengths, self._indices, self._indptr),
                              shape=(n, n))
        ces, ptrs, paths = [], [], []
        maxv = 0.0
        offset = 0
        for s0 in range(0, n, self.chunk):
            src = np.arange(s0, min(n, s0 + self.chunk))
            dist, pred = csgraph.dijkstra(G, directed=False, indices=src,
                                          return_predecessors=True)
            ce, ptr, path, mv = paths_from_predecessors(
                x, self.rows, self.cols, src.astype(np.int64), dist,
                pred.astype(np.int64), self._indptr, self._indices, self._eid,
                threshold,
            )
            maxv = max(maxv, mv)
            if ce.size:
                ces.append(ce)
                ptrs.append(ptr[1:] + offset)
                paths.append(path)
                offset += path.size
        neg = float(-x.min()) if x.size else 0.0
        maxv = max(maxv, neg)
        if not ces:
            return (np.empty(0, np.int64), np.zeros(1, np.int64),
                    np.empty(0, np.int32), maxv)
        return (np.concatenate(ces), np.concatenate([[0]] + ptrs).astype(np.int64),
                np.concatenate(paths), maxv)


def dense_edge_index(n):
    """(rows, cols) of the edges of the complete graph, in edge-id order."""
    r, c = np.triu_indices(n, k=1)
    return r.astype(np.int64), c.astype(np.int64)


# re-exported for convenience
edge_index = edge_id
