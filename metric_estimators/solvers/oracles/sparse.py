"""Cycle-constraint oracle on sparse graphs, and where its searches run.

:class:`SparseShortestPathOracle` runs Dijkstra from every node
(``scipy.sparse.csgraph.dijkstra`` with predecessors, or a bounded search in
numba), in chunks of sources so that memory stays O(chunk * n); the blocks of
sources run in-process or on a Dask cluster (:class:`InProcessExecutor`,
:class:`DaskExecutor`, :func:`make_executor`).

See :mod:`metric_estimators.solvers.oracles` for the calling convention.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from ... import _backend

#: oracle calls over which ``stall_objective`` is compared
STALL_WINDOW = 5

__all__ = ["SparseShortestPathOracle", "InProcessExecutor", "DaskExecutor",
           "make_executor"]


class _SparseGraph:
    """The pattern of a sparse graph, shipped once to wherever the searches run.

    ``rows[e] < cols[e]`` are the edges; ``indptr``, ``indices`` are the
    symmetric CSR pattern and ``eid`` the edge id of each stored entry.
    ``search`` and ``kernels`` are how :func:`_search_sources` searches (see
    :class:`SparseShortestPathOracle`); the kernels pickle as themselves,
    so a Dask worker runs the searches on the same path.
    """

    def __init__(self, n, rows, cols, search="full", *, kernels,
                 component_eps=0.0):
        self.n = int(n)
        self.search = search
        self.kernels = kernels
        self.component_eps = float(component_eps)
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
    per source if ``cap > 0``.  With ``"components"``: one search per
    component of the short edges
    (:func:`~metric_estimators._kernels.sparse_graph.component_violated_cycles`).
    Both run on ``graph.kernels`` (their numpy twins:
    :mod:`metric_estimators._kernels.numpy.sparse_graph`, the same bits).
    ``"full"`` (scipy's Dijkstra, then the paths from its predecessors) has
    no twin and runs on the numba kernels
    (:class:`SparseShortestPathOracle` refuses the twins for it).
    """
    n = graph.n
    if getattr(graph, "search", "full") == "components":
        # the components rooted (smallest node) in [s0, s1)
        return graph.kernels.sparse_graph.component_violated_cycles(
            x, graph.indptr, graph.indices, graph.eid,
            float(graph.component_eps), float(threshold), int(cap), int(s0),
            int(s1))
    if getattr(graph, "search", "full") == "bounded":
        search = graph.kernels.sparse_graph.bounded_violated_cycles
        return search(x, graph.indptr, graph.indices, graph.eid, int(s0),
                      int(s1), float(threshold), int(cap))
    # explicit tiny lengths instead of zeros, which csgraph could drop
    lengths = np.maximum(np.maximum(x, 0.0)[graph.eid], 1e-300)
    G = sparse.csr_matrix((lengths, graph.indices, graph.indptr),
                          shape=(n, n))
    parts = []
    for c0 in range(s0, s1, chunk):
        src = np.arange(c0, min(s1, c0 + chunk))
        dist, pred = csgraph.dijkstra(G, directed=False, indices=src,
                                      return_predecessors=True)
        parts.append(graph.kernels.shortest_paths.paths_from_predecessors(
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


def _threads(kernels):
    """Threads of the in-process searches on ``kernels``.

    numba's thread count for the kernels; one for the numpy twins (plain
    Python, which holds the GIL: threads would not run them at once, and
    asking numba would import it).
    """
    return 1 if kernels.numpy else _bounded_threads()


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


def _component_blocks(graph, x, parts):
    """Split the nodes into at most ``parts`` blocks of component roots holding about equal numbers of nodes.

    The components of the short edges of ``x`` are numbered by their
    smallest node (root); a block ``[r0, r1)`` stands for the components
    rooted there (:func:`_search_sources`).  Roots crowd the small node
    numbers, so blocks of equal node ranges would not balance the work.

    Each block's kernel computes the same forest again rather than
    receiving this one: ``O(n + |E|)``, milliseconds against calls of
    seconds, and cheaper than shipping six arrays of ``n`` to a Dask worker.
    """
    n = graph.n
    if parts <= 1 or n == 0:
        return [(0, n)]
    _, order, cptr, _, _, _ = graph.kernels.sparse_graph.short_edge_forest(
        x, graph.indptr, graph.indices, graph.eid, float(graph.component_eps))
    roots = order[cptr[:-1]]
    cut = np.searchsorted(cptr[1:], np.arange(1, parts) * (n / parts))
    bounds = sorted({0, n} | {int(roots[c]) for c in cut
                              if 0 < c < roots.size})
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


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

        The bounded numba search (GIL-free) runs its blocks on
        ``numba``'s number of threads; the results are merged in block
        order, so they do not depend on the number of threads.
        """
        graph = self._graph
        threads = _threads(graph.kernels)
        if getattr(graph, "search", "full") == "components":
            # blocks of components (see SparseShortestPathOracle._blocks)
            return [_merge(_map_threads(
                lambda a, b: _search_sources(graph, x, a, b, threshold,
                                             chunk, cap), blocks, threads))]
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
    search : {"full", "bounded", "components"}, default="full"
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
        ``"components"``: the edges of length
        ``max(x_e, 0) <= component_eps`` join the nodes into components;
        one multi-source Dijkstra per component finds the cycles through
        the edges that leave it, and paths inside a component follow a BFS
        spanning forest of its short edges
        (:func:`~metric_estimators._kernels.sparse_graph.component_violated_cycles`).
        Where an iterate puts whole communities at length 0, a per-source
        ball capped at a few hundred nodes barely leaves its community;
        one ball per component reaches the cycles through several.  With
        ``component_eps == 0`` and no cap it finds a most violated
        inequality per violated edge, as the other two.  Blocks of
        components of about equal numbers of nodes run on numba's threads,
        or as tasks on the Dask workers; the result does not depend on how
        many.
    cap : int, default=0
        With ``search="bounded"``: calls settle at most ``cap`` nodes per
        source (0: no cap); with ``search="components"``, at most ``cap *
        |C|`` nodes per component ``C`` (the same total work).  Capped
        calls return real violated cycles (maybe not the deepest) and an upper bound on the largest violation, until a
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
    stall_objective : callable or None, default=None
        ``f(x) -> float``, the objective of the solve (e.g. the LP's).  A
        capped search can keep finding as many cycles as the projections
        forget, at a point it cannot move: then the objective stalls while
        the yield stays high.  With ``stall_objective``, a call whose
        ``f(x)`` changed by at most ``stall_rtol`` (relative) over the last
        :data:`STALL_WINDOW` capped calls at this cap is treated as
        low-yield too (``growth`` decides what follows).
    stall_rtol : float, default=1e-3
        See ``stall_objective``.
    kernels : Kernels
        The kernels of the fit (:mod:`metric_estimators._backend`): every
        search and :meth:`closure` run on them.  With ``search="bounded"``
        or ``"components"`` they may be the numpy twins (plain Python, the
        same bits, nothing to compile: small graphs); ``search="full"`` has
        no twin (:data:`metric_estimators._backend.NO_TWIN`): the numba
        kernels only.
    component_eps : float, default=0.0
        With ``search="components"``: the edges of length ``max(x_e, 0) <=
        component_eps`` form the components.  The returned violations are
        the true ones of the emitted paths, but the largest violation
        reported is exact only with 0 (with ``eps > 0`` it is a
        conservative bound: an edge inside a component counts as violated
        by ``x_e``), so a stopping rule on it may not fire.
    """

    supports_float32 = False

    def __init__(self, n, rows, cols, chunk=256, client=None, search="full",
                 cap=0, switch=0.01, growth=0, *, kernels,
                 component_eps=0.0, stall_objective=None, stall_rtol=1e-3):
        if search not in ("full", "bounded", "components"):
            raise ValueError(f"search must be 'full', 'bounded' or "
                             f"'components', got {search!r}.")
        if search == "full":
            _backend.check_twin(kernels, "sparse_correlation_clustering",
                                "search='full'")
        component_eps = float(component_eps)
        if not np.isfinite(component_eps) or component_eps < 0.0:
            raise ValueError(f"component_eps must be a finite number >= 0, "
                             f"got {component_eps!r}.")
        executor = make_executor(client)
        self.graph = _SparseGraph(n, rows, cols, search=search,
                                  kernels=kernels,
                                  component_eps=component_eps)
        self.component_eps = component_eps
        self.cap = int(cap) if search in ("bounded", "components") else 0
        self.cap_ = self.cap
        self.switch = float(switch)
        self.growth = int(growth)
        self.stall_objective = stall_objective
        self.stall_rtol = float(stall_rtol)
        self._stall_values = []
        self.n_stall_growths_ = 0
        self.exact_ = False
        self.n_capped_calls_ = 0
        self.n_exact_calls_ = 0
        self.last_capped_ = False
        self.n = self.graph.n
        self.rows = self.graph.rows
        self.cols = self.graph.cols
        self.chunk = int(chunk)
        self.executor = executor
        self._bound = False

    def _stalled(self, x):
        """Record ``stall_objective(x)``; whether it stalled at this cap."""
        if self.stall_objective is None:
            return False
        values = self._stall_values
        values.append(float(self.stall_objective(x)))
        if len(values) <= STALL_WINDOW:
            return False
        old, new = values[-1 - STALL_WINDOW], values[-1]
        if abs(new - old) <= self.stall_rtol * max(abs(new), 1e-300):
            self.n_stall_growths_ += 1
            return True
        return False

    def _blocks(self, x):
        """Blocks of sources: one per chunk in-process, a few per worker on Dask.

        With ``search="components"``: blocks of component roots of about
        equal numbers of nodes, one per thread in-process, a few per worker
        on Dask.
        """
        n, chunk = self.n, self.chunk
        k = self.executor.n_workers * getattr(self.executor,
                                              "blocks_per_worker", 1)
        if self.graph.search == "components":
            if isinstance(self.executor, InProcessExecutor):
                k = _threads(self.graph.kernels)
            return _component_blocks(self.graph, x, k)
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
        threads = _threads(g.kernels)
        closure = g.kernels.sparse_graph.graph_closure
        _map_threads(lambda a, b: closure(x, g.indptr, g.indices, g.eid, a,
                                          b, y),
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
        stalled = self.cap_ > 0 and not self.exact_ and self._stalled(x)
        while self.cap_ > 0 and not self.exact_:
            if not stalled:
                parts = self.executor.map_sources(x, self._blocks(x),
                                                  float(threshold), self.chunk,
                                                  self.cap_)
                found = sum(int(p[0].size) for p in parts)
                if found >= max(1.0, self.switch * size):
                    self.n_capped_calls_ += 1
                    self.last_capped_ = True
                    break
            # too little found at this cap (or a stall): a larger one, or
            # exact for good
            stalled = False
            parts = None
            self._stall_values = []
            if self.growth > 1 and self.cap_ * self.growth < self.n:
                self.cap_ *= self.growth
            else:
                self.cap_ = 0
                self.exact_ = True
        if parts is None:
            parts = self.executor.map_sources(x, self._blocks(x),
                                              float(threshold), self.chunk)
            self.n_exact_calls_ += 1
            self.last_capped_ = False
        ce, ptr, path, maxv = _merge(parts)
        neg = float(-x.min()) if x.size else 0.0
        return ce, ptr, path, max(maxv, neg)
