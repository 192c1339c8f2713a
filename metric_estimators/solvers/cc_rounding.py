"""Rounding an LP solution of correlation clustering: pivots, local search, recombination.

LP-KwikCluster pivoting (Ailon, Charikar & Newman, "Aggregating
inconsistent information: ranking and clustering", J. ACM 2008;
:func:`pivot_rounding`): a random unclustered pivot ``p`` takes every
unclustered ``j`` with probability ``1 - x_pj`` (``"probabilistic"``), or
with ``x_pj < 1/2`` (``"threshold"``, the deterministic threshold variant).
On a dense ``X`` that is a loop over the pivots
(:func:`dense_pivot_rounding`); on a sparse one (the LP values on a
graph's edges) the LP distance of two nodes is their shortest-path
distance, and a pivot takes the unclustered nodes of its ball
(:func:`sparse_pivot_rounding`, ``O(n + |E|)`` memory).

:class:`ClusteringPool` keeps the clusterings of one fit, over the
certificate's checks and the final rounding.  Each rounding
(:meth:`ClusteringPool.round`) makes ``n_trials`` pivot orders; with the
local search
(:func:`~metric_estimators.solvers.cc_local_search.local_search`: best
one-element moves and merges, which never raise the cost):

* on a dense graph the cheapest trial is improved (a sweep is
  ``O(n^2)``);
* on a sparse graph every trial is (a sweep is ``O(|E|)``, and the trial
  that rounds cheapest is rarely the one that improves best), and the
  cheapest ones are then recombined
  (:func:`~metric_estimators.solvers.cc_local_search.recombine`, the core
  groups of Ovelgönne & Geyer-Schulz 2012: the local search restarted from
  the common refinement of every pair of the :data:`RECOMBINE_SIZE`
  cheapest, for as long as that finds a cheaper clustering).  The first
  rounding also recombines, apart, :data:`N_LP_FREE_STARTS` local optima
  found without the LP and offers their best to the pool: on an early
  iterate of a large graph they are both cheaper and far better than the
  trials.

The solver knows nothing of the estimator nor of the problem: it takes
the signed graph, the cost function and the fit's random stream and
kernels.
"""

import time

import numpy as np
from scipy import sparse

from .. import _backend
from .cc_local_search import local_search, local_search_from_singletons, recombine

__all__ = ["N_LP_FREE_STARTS", "RECOMBINE_SIZE", "ClusteringPool",
           "dense_pivot_rounding", "pivot_rounding", "round_pivots",
           "sparse_pivot_rounding"]

#: local optima found without the LP (local search from singletons, nodes in
#: random orders) recombined on their own at the first rounding of a sparse
#: graph, and offered to the pool beside the LP's roundings
N_LP_FREE_STARTS = 4
#: clusterings a sparse rounding keeps and crosses (every pair once)
RECOMBINE_SIZE = 16


def dense_pivot_rounding(X, rng, rounding="probabilistic"):
    """LP-KwikCluster on a dense LP solution ``X``.

    Pivots are taken in the random order ``rng.permutation(n)``; an
    unclustered ``j`` joins pivot ``p`` with probability ``1 - X[p, j]``
    (``"probabilistic"``) or when ``X[p, j] < 1/2`` (``"threshold"``).

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Cluster ids ``0, 1, ...`` in the order the pivots were taken.
    """
    n = X.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    order = rng.permutation(n)
    k = 0
    for p in order:
        if labels[p] >= 0:
            continue
        free = np.flatnonzero(labels < 0)
        xp = X[p, free]
        if rounding == "threshold":
            join = xp < 0.5
        else:
            join = rng.random(free.size) < 1.0 - xp
        join[free == p] = True
        labels[free[join]] = k
        k += 1
    return labels


def sparse_pivot_rounding(X, rng, rounding="probabilistic", *, kernels):
    """LP-KwikCluster on a sparse LP solution ``X`` (edges: LP lengths).

    The LP distance of two nodes is their shortest-path distance in the
    graph with lengths ``clip(X, 0, 1)`` (the completion of the edge
    solution, a metric); a pivot takes the unclustered nodes of its ball:
    distance ``< 1/2`` (``"threshold"``) or with probability ``1 -
    distance`` (``"probabilistic"``).  With ``"threshold"`` the labels are
    those of the dense rounding of the completed metric for the same
    ``rng``.  ``O(n + |E|)`` memory.  The ball pivot runs on ``kernels``,
    those of the fit (:mod:`metric_estimators._backend`; the same labels).
    """
    n = X.shape[0]
    X = sparse.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    lengths = np.ascontiguousarray(X.data, dtype=np.float64)
    order = rng.permutation(n).astype(np.int64)
    seed = 0
    if rounding != "threshold":
        draw = getattr(rng, "integers", None) or rng.randint
        seed = int(draw(0, 2**31 - 1))
    return kernels.sparse_graph.ball_pivot(
        lengths, X.indptr.astype(np.int64), X.indices.astype(np.int64),
        np.arange(lengths.size, dtype=np.int64), order,
        rounding != "threshold", seed)


def round_pivots(X, rng, rounding="probabilistic", *, kernels):
    """:func:`pivot_rounding` on the kernels of a fit (those of a sparse ``X``'s searches)."""
    if sparse.issparse(X):
        return sparse_pivot_rounding(X, rng, rounding, kernels=kernels)
    return dense_pivot_rounding(X, rng, rounding)


def pivot_rounding(X, rng, rounding="probabilistic"):
    """LP-KwikCluster (Ailon, Charikar & Newman 2008) on the LP solution ``X``.

    Pivots are taken in a random order; an unclustered ``j`` joins pivot
    ``p`` with probability ``1 - X[p, j]`` (``"probabilistic"``) or when
    ``X[p, j] < 1/2`` (``"threshold"``).

    A sparse ``X`` (the ``lp_solution_`` of a sparse graph, LP values on
    its edges) is read as its shortest-path completion: the pivot takes the
    unclustered nodes of its ball in the graph with lengths ``X``
    (:func:`sparse_pivot_rounding`, ``O(n + |E|)`` memory, on the kernels
    :func:`metric_estimators._backend.choose` gives a graph of this size;
    both give the same labels); a dense one by :func:`dense_pivot_rounding`.

    Parameters
    ----------
    X : ndarray of shape (n, n) or sparse matrix
        Fractional (pseudo-)metric solution with entries in [0, 1].
    rng : numpy.random.RandomState or numpy.random.Generator
        Source of the pivot order (and of the joins, if probabilistic).
    rounding : {"probabilistic", "threshold"}, default="probabilistic"
        How an unclustered node decides to join a pivot.

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Cluster ids ``0, 1, ...`` in the order the pivots were taken.
    """
    if sparse.issparse(X):
        kernels = _backend.choose("sparse_correlation_clustering", X.shape[0])
        return sparse_pivot_rounding(X, rng, rounding, kernels=kernels)
    return dense_pivot_rounding(X, rng, rounding)


def _late(deadline, seconds):
    """Would work of ``seconds`` started now end after ``deadline``?"""
    return deadline is not None and time.perf_counter() + seconds > deadline


class ClusteringPool:
    """The clusterings kept over the checks and the final rounding of a fit.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, n)
        The signed graph (a sparse one: its stored edges only).
    cost : callable ``cost(A, labels) -> float``
        The correlation clustering cost.
    rng : numpy.random.RandomState
        The fit's random stream: pivot orders and LP-free starts.
    rounding : {"threshold", "probabilistic"}
        How a node joins a pivot (:func:`pivot_rounding`).
    n_trials : int
        Pivot orders per rounding.
    local_search : bool
        Improve the trials by moves and merges (and, on a sparse graph,
        recombine them).
    max_sweeps : int
        Sweeps of each local search.
    kernels : Kernels
        Those of the fit, which the pivots and the local search run on.

    Attributes
    ----------
    pool : list of ``(labels, cost, sweeps)``
        Cheapest first (one entry on a dense graph).
    pivot_cost : float
        The cheapest pivot rounding, before any local search.
    crossed : set
        Pairs of clusterings already recombined.
    """

    def __init__(self, A, cost, rng, *, rounding, n_trials, local_search,
                 max_sweeps, kernels):
        self.A = A
        self.cost = cost
        self.rng = rng
        self.rounding = rounding
        self.n_trials = int(n_trials)
        self.local_search = local_search
        self.max_sweeps = max_sweeps
        self.kernels = kernels
        self.pool = []
        self.pivot_cost = np.inf
        self.crossed = set()

    @property
    def best(self):
        """The cheapest ``(labels, cost, sweeps)`` kept."""
        return self.pool[0]

    def polish(self, labels, cost):
        """Moves and merges from ``labels``; return the cheaper ``(labels, cost, sweeps)``."""
        moved, sweeps = local_search(self.A, labels, self.max_sweeps,
                                     kernels=self.kernels)
        moved_cost = self.cost(self.A, moved)
        if moved_cost <= cost:
            return moved, moved_cost, sweeps
        return labels, cost, sweeps

    def _recombine(self, pool, deadline):
        return recombine(self.A, pool, self.cost, self.max_sweeps,
                         size=RECOMBINE_SIZE, crossed=self.crossed,
                         deadline=deadline, kernels=self.kernels)

    def round(self, X, deadline=None):
        """Round ``X`` ``n_trials`` times into the pool; return the LP-free optima's seconds.

        A sparse graph polishes every trial and recombines the trials
        among themselves; the first time it also recombines, on their own,
        :data:`N_LP_FREE_STARTS` local optima found without the LP
        (:func:`~metric_estimators.solvers.cc_local_search.local_search_from_singletons`);
        it then recombines the pool, this rounding's clusterings and the
        best LP-free one together, crossing only the pairs not crossed
        before.  A dense graph polishes the cheapest trial only.  Return
        the seconds spent on the LP-free optima (0 but the first time).

        With a ``deadline`` (a ``time.perf_counter()`` value), the first
        trial and the first LP-free start are always made; a later trial
        starts only if it (timed as the mean trial so far) and the LP-free
        starts still to make (each timed as the mean polish of a trial)
        would end by ``deadline``, a later LP-free start only if it (timed
        as the mean one so far) would, and no crossing starts after it.
        So a rounding short of time keeps the LP-free starts, which on an
        early iterate of a large graph are cheaper and better than the
        trials (``benchmarks/results/sparse_correlation_clustering.md``).
        """
        A, rng, kernels = self.A, self.rng, self.kernels
        n = X.shape[0]
        if n == 0:
            self._update([(np.empty(0, dtype=np.int64), 0.0, 0)], 0.0)
            return 0.0
        polish = self.local_search and n > 1
        each = polish and sparse.issparse(A)
        n_free = N_LP_FREE_STARTS if each and not self.pool else 0
        trials, pivot_cost = [], np.inf
        started, polishing = time.perf_counter(), 0.0
        for k in range(self.n_trials):
            # the next trial and the LP-free starts still to make (each
            # timed as a polish: both are a local search) must end by then
            if k and _late(deadline, (time.perf_counter() - started) / k
                           + n_free * polishing / k):
                break
            labels = round_pivots(X, rng, self.rounding, kernels=kernels)
            cost = self.cost(A, labels)
            pivot_cost = min(pivot_cost, cost)
            if each:
                since = time.perf_counter()
                trials.append(self.polish(labels, cost))
                polishing += time.perf_counter() - since
            else:
                trials.append((labels, cost, 0))
        if not each:
            best = min(trials, key=lambda t: t[1])
            if polish:
                best = self.polish(best[0], best[1])
            self._update(sorted([best, *self.pool], key=lambda t: t[1])[:1],
                         pivot_cost)
            return 0.0
        once, free = 0.0, []
        if n_free:
            since = time.perf_counter()
            for k in range(n_free):
                if k and _late(deadline, (time.perf_counter() - since) / k):
                    break
                labels, sweeps = local_search_from_singletons(
                    A, self.max_sweeps, rng, kernels=kernels)
                free.append((labels, self.cost(A, labels), sweeps))
            free = self._recombine(free, deadline)
            once = time.perf_counter() - since
        # each lineage is crossed apart first (this iterate's roundings,
        # the LP-free optima), then the cheapest of all of them together
        # (of the LP-free ones, the best only): in one pool from the
        # start, the cheapest lineage crowds out the others' parents
        fresh = self._recombine(trials, deadline)
        self._update(self._recombine(self.pool + fresh + free[:1], deadline),
                     pivot_cost)
        return once

    def _update(self, pool, pivot_cost):
        self.pool = pool
        self.pivot_cost = min(self.pivot_cost, pivot_cost)
