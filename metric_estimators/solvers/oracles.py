"""Violated-constraint oracles for the Project-and-Forget driver (no scikit-learn here).

An oracle looks at the current iterate and returns constraints it violates;
Project and Forget (Sonthalia & Gilbert, "Project and Forget: Solving
Large-Scale Metric Constrained Problems", JMLR 23, 2022) only ever stores the
constraints an oracle returned and has not forgotten since.  Every oracle is
called as ``oracle(point, threshold, active, precision="float64")`` and
returns ``(*constraints, max_violation)``: the constraints violated by more
than ``threshold``, in the layout the matching active set's ``add`` takes
(:mod:`metric_estimators.solvers.active_sets`), and the largest violation of
*any* constraint (remembered ones included), which the driver's stopping
rule reads.

Cycle constraints (metric nearness, correlation clustering; absolute
violations in the units of ``x``, for
:class:`~metric_estimators.solvers.active_sets.CycleConstraints`):

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
  sources so that memory stays O(chunk * n); the blocks of sources run
  in-process or on a Dask cluster (:class:`InProcessExecutor`,
  :class:`DaskExecutor`).

LogDet pair constraints (ITML's problem; violations relative to the bound,
for :class:`~metric_estimators.solvers.active_sets.LogDetPairConstraints`):

* :class:`FixedListOracle` -- a given list of pairs (ITML): checks every
  listed constraint, returns the violated ones not in the active set.
* :class:`LabelPairOracle` -- every same-class / different-class pair of a
  labelled data set (ProjectAndForget), scanned in blocks of rows by a numba
  kernel (:func:`~metric_estimators._kernels.pair_oracle.scan_pair_block`),
  never materialising the ``n^2`` pairs.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .._kernels.edges import edge_id, edges_to_matrix
from .._kernels.shortest_paths import (
    apsp,
    paths_from_predecessors,
    violated_paths,
)
from .._kernels.triangle_oracle import violated_apexes, violated_triangles
from .._kernels.cc_weighted import short_edge_triangles
from .._kernels.bregman import logdet_violations
from .._kernels.pair_oracle import scan_pair_block
from .._kernels.sparse_graph import bounded_violated_cycles, graph_closure

__all__ = ["DenseShortestPathOracle", "DenseTriangleOracle",
           "ShortEdgeTriangleOracle",
           "SparseShortestPathOracle", "InProcessExecutor", "DaskExecutor",
           "make_executor", "FixedListOracle", "LabelPairOracle",
           "ORACLE_PASS_RATIO", "n_edges"]

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
    """

    def __init__(self, n, edge_mask=None, apexes=1, apex_rel=0.0,
                 apex_depth=0.0):
        super().__init__(n, edge_mask)
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
        if self.apexes == 1:
            ce, ptr, path, maxv = violated_triangles(
                X, Xp, M, self._W, n, threshold, self.edge_mask, mscale)
        else:
            ce, ptr, path, maxv = violated_apexes(
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
    (:func:`~metric_estimators._kernels.cc_weighted.short_edge_triangles`).
    When the short graph gets dense (more than ``dense_fraction`` of the
    pairs, e.g. a planted partition with large clusters), a call falls back
    to :class:`DenseTriangleOracle` (created on first use, ``O(n^2)`` memory).

    Parameters
    ----------
    n : int
        Number of nodes.
    dense_fraction : float, default=0.1
        Fallback threshold on the fraction of short pairs (measured: the
        short-edge search costs as much as one dense min-plus call when
        6-13 % of the pairs are short, independently of ``n``; see
        ``benchmarks/results/cc_short_edge_fallback.md``).

    Attributes
    ----------
    n_short_ : int
        Number of short edges at the last call (-1 after a dense call).
    n_dense_calls_, n_short_calls_ : int
        How many calls used each search.
    """

    supports_float32 = True

    def __init__(self, n, dense_fraction=0.1):
        self.n = int(n)
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
                self._dense = DenseTriangleOracle(self.n)
            self.n_short_ = -1
            self.n_dense_calls_ += 1
            return self._dense(x, threshold, active, precision=precision)
        ce, ptr, path, maxv, n_short = short_edge_triangles(x, self.n,
                                                            threshold)
        self.n_short_ = int(n_short)
        self.n_short_calls_ += 1
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(float(maxv), neg)


class _SparseGraph:
    """The pattern of a sparse graph, shipped once to wherever the searches run.

    ``rows[e] < cols[e]`` are the edges; ``indptr``, ``indices`` are the
    symmetric CSR pattern and ``eid`` the edge id of each stored entry.
    ``search`` is how :func:`_search_sources` searches (see
    :class:`SparseShortestPathOracle`).
    """

    def __init__(self, n, rows, cols, search="full"):
        self.n = int(n)
        self.search = search
        self.rows = np.ascontiguousarray(rows, dtype=np.int64)
        self.cols = np.ascontiguousarray(cols, dtype=np.int64)
        m = self.rows.size
        ids = np.arange(m, dtype=np.int64)
        A = sparse.coo_matrix(
            (np.concatenate((ids, ids)) + 1,
             (np.concatenate((self.rows, self.cols)),
              np.concatenate((self.cols, self.rows)))),
            shape=(n, n),
        ).tocsr()
        A.sort_indices()
        self.indptr = A.indptr.astype(np.int64)
        self.indices = A.indices.astype(np.int64)
        self.eid = (A.data - 1).astype(np.int64)

    @property
    def nbytes(self):
        """Bytes of the arrays (what scattering the graph moves)."""
        return (self.rows.nbytes + self.cols.nbytes + self.indptr.nbytes
                + self.indices.nbytes + self.eid.nbytes)


def _search_sources(graph, x, s0, s1, threshold, chunk, cap=0):
    """Violated cycle constraints of the edges ``(u, v)`` with ``s0 <= u < s1``.

    Dijkstra from the sources ``s0 .. s1 - 1`` (``chunk`` at a time, memory
    ``O(chunk n)``) on the graph with lengths ``max(x, 0)``; returns
    ``(cons_edge, ptr, path, max_violation)`` in source order.  A pure
    function of its arguments: run in-process or on a Dask worker, it gives
    the same bits.  With ``graph.search == "bounded"``: one numba Dijkstra
    per source stopped at the radius ``max_{v > u} x_uv``
    (:func:`~metric_estimators._kernels.sparse_graph.bounded_violated_cycles`,
    memory ``O(n + m)``, ``chunk`` unused), settling at most ``cap`` nodes
    per source if ``cap > 0``.
    """
    n = graph.n
    if getattr(graph, "search", "full") == "bounded":
        return bounded_violated_cycles(x, graph.indptr, graph.indices,
                                       graph.eid, int(s0), int(s1),
                                       float(threshold), int(cap))
    # explicit tiny lengths instead of zeros, which csgraph could drop
    lengths = np.maximum(np.maximum(x, 0.0)[graph.eid], 1e-300)
    G = sparse.csr_matrix((lengths, graph.indices, graph.indptr),
                          shape=(n, n))
    parts = []
    for c0 in range(s0, s1, chunk):
        src = np.arange(c0, min(s1, c0 + chunk))
        dist, pred = csgraph.dijkstra(G, directed=False, indices=src,
                                      return_predecessors=True)
        parts.append(paths_from_predecessors(
            x, graph.rows, graph.cols, src.astype(np.int64), dist,
            pred.astype(np.int64), graph.indptr, graph.indices, graph.eid,
            threshold,
        ))
    return _merge(parts)


def _merge(parts):
    """Concatenate ``(cons_edge, ptr, path, max_violation)`` blocks in order."""
    ces, ptrs, paths = [], [np.zeros(1, np.int64)], []
    maxv = 0.0
    offset = 0
    for ce, ptr, path, mv in parts:
        maxv = max(maxv, float(mv))
        if ce.size:
            ces.append(np.asarray(ce, dtype=np.int64))
            ptrs.append(np.asarray(ptr[1:], dtype=np.int64) + offset)
            paths.append(np.asarray(path, dtype=np.int32))
            offset += int(path.size)
    if not ces:
        return (np.empty(0, np.int64), np.zeros(1, np.int64),
                np.empty(0, np.int32), maxv)
    return (np.concatenate(ces), np.concatenate(ptrs), np.concatenate(paths),
            maxv)


def _bounded_threads():
    """Threads of the in-process bounded search: numba's thread count."""
    try:
        import numba

        return max(1, int(numba.get_num_threads()))
    except Exception:  # pragma: no cover
        return 1


def _owned_edge_blocks(rows, s0, s1, parts):
    """Split the sources ``[s0, s1)`` into at most ``parts`` blocks owning equal numbers of edges.

    A source owns its edges to higher-numbered nodes (``rows`` sorted), as
    the bounded searches check them.
    """
    lo, hi = np.searchsorted(rows, [s0, s1])
    if parts <= 1 or hi <= lo:
        return [(s0, s1)]
    cuts = [s0] + [int(rows[lo + (hi - lo) * i // parts])
                   for i in range(1, parts)] + [s1]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def _map_threads(fn, blocks, threads):
    """``[fn(s0, s1) for (s0, s1) in blocks]`` on ``threads`` threads (GIL-free kernels)."""
    if threads <= 1 or len(blocks) <= 1:
        return [fn(a, b) for a, b in blocks]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda blk: fn(*blk), blocks))


class InProcessExecutor:
    """Run the oracle's blocks of sources one after the other, in this process."""

    n_workers = 1

    def bind(self, graph):
        """Hold the graph (nothing to ship)."""
        self._graph = graph

    def map_sources(self, x, blocks, threshold, chunk, cap=0):
        """Return the per-block results of :func:`_search_sources`, in block order.

        The bounded (numba, GIL-free) search runs its blocks on
        ``numba``'s number of threads; the results are merged in block
        order, so they do not depend on the number of threads.
        """
        graph = self._graph
        threads = _bounded_threads()
        if (getattr(graph, "search", "full") == "bounded" and threads > 1
                and graph.rows.size):
            sub = [b for s0, s1 in blocks
                   for b in _owned_edge_blocks(graph.rows, s0, s1, threads)]
            return [_merge(_map_threads(
                lambda a, b: _search_sources(graph, x, a, b, threshold,
                                             chunk, cap), sub, threads))]
        return [_search_sources(graph, x, s0, s1, threshold, chunk, cap)
                for s0, s1 in blocks]


class DaskExecutor:
    """Run the oracle's blocks of sources on the workers of a Dask cluster.

    The graph pattern is scattered to every worker once (:meth:`bind`); each
    oracle call scatters the edge lengths ``x`` (``8 m`` bytes per worker),
    submits one task per block of sources and gathers the violated cycles,
    which the oracle merges in block order -- so the result is bit for bit
    the in-process one.

    Parameters
    ----------
    client : distributed.Client
        A connected client.
    blocks_per_worker : int, default=4
        Blocks of sources per worker and call (load balance against
        per-task overhead).
    """

    def __init__(self, client, blocks_per_worker=4):
        self.client = client
        self.blocks_per_worker = int(blocks_per_worker)
        self._graph = None

    @property
    def n_workers(self):
        """Number of workers of the cluster (at least 1)."""
        info = self.client.scheduler_info()
        return max(1, len(info.get("workers", {})))

    def bind(self, graph):
        """Scatter the graph pattern to every worker, once."""
        self._graph = self.client.scatter(graph, broadcast=True, hash=False)

    def map_sources(self, x, blocks, threshold, chunk, cap=0):
        """Search the blocks on the workers; return their results in block order."""
        x_f = self.client.scatter(np.ascontiguousarray(x), broadcast=True,
                                  hash=False)
        futures = [self.client.submit(_search_sources, self._graph, x_f,
                                      s0, s1, threshold, chunk, cap,
                                      pure=False)
                   for s0, s1 in blocks]
        try:
            return self.client.gather(futures)
        finally:
            for f in futures:
                f.release()
            x_f.release()


def make_executor(client=None):
    """Return the executor for ``client``: in-process for None, else Dask."""
    if client is None:
        return InProcessExecutor()
    if isinstance(client, (InProcessExecutor, DaskExecutor)):
        return client
    return DaskExecutor(client)


class SparseShortestPathOracle:
    """Shortest-path oracle on a sparse graph (Dijkstra from every node).

    The searches from the ``n`` sources are independent: they run in blocks
    of sources through an *executor*, in this process (default) or on the
    workers of a Dask cluster (``client``): the graph pattern is scattered
    once, each call ships the edge lengths, searches per block of sources
    on the workers and merges the violated cycles here, in source order --
    the same constraints, bit for bit, as in-process.

    Parameters
    ----------
    n : int
        Number of nodes.
    rows, cols : int arrays of shape (m,)
        The edges ``rows[e] < cols[e]``; edge ``e`` has length ``x[e]``.
    chunk : int
        Number of Dijkstra sources per call to scipy (memory ``O(chunk n)``
        wherever the search runs).
    client : distributed.Client or None, default=None
        Run the searches on this Dask cluster (see :class:`DaskExecutor`).
    search : {"full", "bounded"}, default="full"
        ``"full"``: scipy's Dijkstra from every source over the whole graph
        (memory ``O(chunk n)``).  ``"bounded"``: a numba Dijkstra per source
        ``u`` that stops once its targets ``v > u`` that could be violated
        are settled, or at the radius ``max x_uv - threshold`` over those
        not yet settled -- a violated inequality of ``uv`` has a path
        shorter than ``x_uv - threshold`` -- so a call visits balls of the
        current metric only, in ``O(n + m)`` memory (the
        choice for correlation clustering, whose lengths are at most about
        1, on graphs of 10^5 nodes).  Both return a most violated inequality
        per violated edge (their shortest paths may differ on ties).
    cap : int, default=0
        With ``search="bounded"``: calls settle at most ``cap`` nodes per
        source (0: no cap), which returns real violated cycles (maybe not
        the deepest) and an upper bound on the largest violation, until a
        capped call finds fewer than ``max(1, switch m)`` constraints: that
        call is repeated without the cap, and so is every later call (the
        capped searches then miss most of the few violated edges left, and
        exact searches are cheap near the solution).  So the driver's
        stopping rule always reads an exact (or conservative) largest
        violation.  Early iterates of correlation clustering put every
        positive edge at 0, where an uncapped ball is the whole graph.
    switch : float, default=0.01
        A capped call that finds fewer than ``max(1, switch * max(m,
        len(active)))`` constraints is *low-yield*: the cap has done what it
        can at this point.
    growth : int, default=0
        What a low-yield capped call does.  0: repeat it without the cap,
        and search exactly for every later call (``exact_`` becomes True).
        ``> 1``: multiply the cap by ``growth`` and repeat the call (again
        while the yield stays low), going exact once the cap reaches ``n``:
        a schedule of growing balls (e.g. 256, 1024, 4096, exact), so that
        the long cycles are cut while the searches are still bounded --
        an exact search on a point that satisfies only short cycles can
        visit most of the graph from every source.  ``cap_`` is the cap in
        force (0 once exact).
    """

    supports_float32 = False

    def __init__(self, n, rows, cols, chunk=256, client=None, search="full",
                 cap=0, switch=0.01, growth=0):
        if search not in ("full", "bounded"):
            raise ValueError(f"search must be 'full' or 'bounded', got "
                             f"{search!r}.")
        self.graph = _SparseGraph(n, rows, cols, search=search)
        self.cap = int(cap) if search == "bounded" else 0
        self.cap_ = self.cap
        self.switch = float(switch)
        self.growth = int(growth)
        self.exact_ = False
        self.n_capped_calls_ = 0
        self.n_exact_calls_ = 0
        self.last_capped_ = False
        self.n = self.graph.n
        self.rows = self.graph.rows
        self.cols = self.graph.cols
        self.chunk = int(chunk)
        self.executor = make_executor(client)
        self._bound = False

    def _blocks(self):
        """Blocks of sources: one per chunk in-process, a few per worker on Dask."""
        n, chunk = self.n, self.chunk
        k = self.executor.n_workers * getattr(self.executor,
                                              "blocks_per_worker", 1)
        if isinstance(self.executor, InProcessExecutor) or k <= 1:
            return [(0, n)] if n else []
        # whole chunks per block, so the chunks are those of the in-process run
        n_chunks = -(-n // chunk)
        per = max(1, -(-n_chunks // k))
        return [(c * chunk, min(n, (c + per) * chunk))
                for c in range(0, n_chunks, per)]

    def closure(self, lengths):
        """``min(x_e, dist(u, v))`` for every edge, ``dist`` on the lengths ``x >= 0``.

        The same target-stopped searches as a bounded call at threshold 0
        (:func:`~metric_estimators._kernels.sparse_graph.graph_closure`), in
        this process on numba's threads.  The result satisfies every cycle
        inequality of the graph, and equals ``x`` where none is violated.
        """
        g = self.graph
        x = np.ascontiguousarray(lengths, dtype=np.float64)
        y = x.copy()
        threads = _bounded_threads()
        _map_threads(lambda a, b: graph_closure(x, g.indptr, g.indices,
                                                g.eid, a, b, y),
                     _owned_edge_blocks(g.rows, 0, g.n, threads), threads)
        return y

    def __call__(self, x, threshold, active=None, precision="float64"):
        """Return the shortest-path constraints violated beyond ``threshold``."""
        if not self._bound:
            self.executor.bind(self.graph)
            self._bound = True
        x = np.ascontiguousarray(x, dtype=np.float64)
        parts = None
        size = max(self.rows.size, len(active) if active is not None else 0)
        while self.cap_ > 0 and not self.exact_:
            parts = self.executor.map_sources(x, self._blocks(),
                                              float(threshold), self.chunk,
                                              self.cap_)
            found = sum(int(p[0].size) for p in parts)
            if found >= max(1.0, self.switch * size):
                self.n_capped_calls_ += 1
                self.last_capped_ = True
                break
            # too little found at this cap: a larger one, or exact for good
            parts = None
            if self.growth > 1 and self.cap_ * self.growth < self.n:
                self.cap_ *= self.growth
            else:
                self.cap_ = 0
                self.exact_ = True
        if parts is None:
            parts = self.executor.map_sources(x, self._blocks(),
                                              float(threshold), self.chunk)
            self.n_exact_calls_ += 1
            self.last_capped_ = False
        ce, ptr, path, maxv = _merge(parts)
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(maxv, neg)


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

    Notes
    -----
    A call checks every listed constraint at ``A`` (numba,
    :func:`~metric_estimators._kernels.bregman.logdet_violations`):
    those outside the active set against ``xi0`` -- the violated ones are
    returned, keyed by their index in the list -- and the remembered ones
    against their current slack.
    """

    supports_float32 = False

    def __init__(self, V, delta, xi0):
        self.V = np.ascontiguousarray(V, dtype=np.float64)
        self.delta = np.ascontiguousarray(delta, dtype=np.float64)
        self.xi0 = np.ascontiguousarray(xi0, dtype=np.float64)

    def __call__(self, A, threshold, active, precision="float64"):
        """Return ``(key, V, delta, xi0, max_violation)`` of violated listed pairs."""
        outside = np.ones(self.V.shape[0], dtype=np.bool_)
        outside[active.key] = False
        idx = np.flatnonzero(outside).astype(np.int64)
        viol = np.empty(idx.size)
        logdet_violations(A, self.V, self.delta, self.xi0, idx, viol)
        maxv = max(float(viol.max()) if idx.size else 0.0,
                   active.max_violation())
        new = idx[viol > threshold]
        return new, self.V[new], self.delta[new], self.xi0[new], maxv


class LabelPairOracle:
    """Oracle over every labelled pair of a data set (ProjectAndForget).

    Same-class pairs ``(i, j)`` must satisfy ``d_A(x_i, x_j)^2 <= low``,
    different-class pairs ``d_A(x_i, x_j)^2 >= high``.  A call scans all
    ``n (n - 1) / 2`` pairs in blocks of ``block_size`` rows (numba,
    :func:`~metric_estimators._kernels.pair_oracle.scan_pair_block`, memory
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
                 skip_pairs=None):
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

    @property
    def n_pairs(self):
        """Number of pairs that are constraints (all pairs but ``skip_pairs``)."""
        n = self.X.shape[0]
        return n * (n - 1) // 2 - self.skip_keys.size

    def _scan(self, Z, skip, threshold):
        """Return ``(i, j, violation, max)`` of the violated pairs outside ``skip``."""
        n = Z.shape[0]
        sq = np.einsum("ij,ij->i", Z, Z)
        srow = skip // n
        scol = (skip % n).astype(np.int64)
        skip_start = np.searchsorted(srow, np.arange(n + 1)).astype(np.int64)
        B = self.block_size
        cap = max(16, min(n, 4 * self.max_new // max(B, 1) + 16))
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
        Z = np.ascontiguousarray(X @ _factor(A))
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


def _factor(A):
    """Return ``C`` with ``A = C C^T`` (Cholesky, else eigenvalues clipped at 0)."""
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        w, Q = np.linalg.eigh((A + A.T) / 2)
        return Q * np.sqrt(np.maximum(w, 0.0))


# re-exported for convenience
edge_index = edge_id
