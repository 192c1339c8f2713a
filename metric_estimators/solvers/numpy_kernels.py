"""The numpy path of the Bregman engine: the kernels of small problems, without numba.

On a small problem, compiling the numba kernels of
:mod:`metric_estimators._kernels` costs far more than the whole fit (seconds
of CPU per estimator on an empty cache, against milliseconds of work), so
:func:`~metric_estimators.solvers.bregman.bregman_project_forget` runs small
problems on the functions of this module instead: the same arguments and
in-place outputs as the kernels they stand for, in vectorised numpy.  The
driver picks the path once per run (:func:`use_numpy`) and tells the active
set and the oracle (their ``numpy`` attribute).

Which path a fit takes
----------------------
A problem above this module's size limits runs the numba kernels.  Within
them, :func:`small_problem_path` decides, by default (``"auto"``) from what
is compiled: the numpy path while one of the kernels the problem needs
(:data:`KERNELS_OF`) would have to be compiled -- a first fit on an empty
cache then compiles nothing -- and the kernels once they are all compiled,
in this process or in numba's on-disk cache (after ``python -m
metric_estimators.warmup``), where they are faster: so a warm installation
is never slower than the kernels.  The check reads one directory listing
and compiles or imports nothing (:func:`metric_estimators._compilation.kernels_ready`).
Never from a clock.  ``"numpy"`` makes the choice depend on the size alone
(the numpy path within the limits, whatever the cache holds), ``"numba"``
runs the kernels on every size; the environment variable
``METRIC_ESTIMATORS_SMALL_PROBLEMS`` sets it for a process.  The two paths
give the same solution to the solver's tolerance, not the same bits (see
below), except for the sparse graph searches, which are bit-identical.

Cycle constraints (MetricNearness, CorrelationClustering)
---------------------------------------------------------
Hildreth's projections onto half-spaces that share no variable commute: a
*batch* of variable-disjoint constraints projected at once in numpy gives
exactly what projecting them one after the other gives.  :class:`Batches`
colours an active set greedily into such batches (a constraint joins the
first batch none of whose constraints touches one of its edges), and a pass
projects batch after batch (:func:`project_cycles`).  The order of the
projections differs from the kernels' (constraint by constraint, in
storage order), so iterates differ along the way; the fixed point, and so
the solution to the solver's tolerance, is the same.  The triangle oracle
(:func:`violated_triangles`) is the exact float64 min-plus search over
every apex at once (``O(n^3)`` memory, hence small ``n`` only), which is
also what the short-edge oracle of correlation clustering returns.

Dense correlation clustering adds the pair constraints of its LP
(:func:`project_pairs_w`: each pair's two constraints touch only its own
``x_e`` and ``f_e``, so the vectorised pass is the kernel's, bit for bit),
the shortest-path closure (:func:`apsp`) and the rounding's local search
(:func:`best_one_element_moves`: the kernel's moves in the kernel's order,
hence the same labels).

Which sizes take this path, and why, is documented at each limit below;
``benchmarks/bench_numpy_paths.py`` measures both paths.
"""

import importlib
import os
import warnings
from contextlib import contextmanager

import numpy as np

__all__ = [
    "CC_NUMPY_MAX_NODES",
    "CC_SPARSE_NUMPY_MAX_NODES",
    "CYCLE_NUMPY_MAX_NODES",
    "KERNELS_OF",
    "apsp",
    "best_one_element_moves",
    "sparse_cost",
    "sparse_one_element_moves",
    "constraint_hashes",
    "disjoint_batches",
    "edge_id",
    "edges_to_matrix",
    "lazy_kernel",
    "matrix_to_edges",
    "numpy_limits",
    "small_problem_path",
    "small_problems_on",
    "project_cycles",
    "project_nonnegative",
    "project_pairs_w",
    "takes_numpy_path",
    "use_numpy",
    "use_numpy_sparse_cc",
    "violated_triangles",
]

#: Dense cycle-constraint problems with the triangle oracle (MetricNearness)
#: on at most this many nodes run on the numpy path.  A first fit on 60 x 60
#: noisy distances in a fresh process with an empty cache cost 19.7 s of CPU
#: on the numba path (oracle, constraint store, projections and edge
#: conversions compiled) and 1.17 s on the numpy path
#: (``benchmarks/results/numpy_paths_after.md``).  Warm fits of
#: ``MetricNearness()`` on noisy planar distances took 0.04 / 0.002 s (numpy
#: / numba) at 60 nodes, 0.09 / 0.009 s at 100, 0.23 / 0.20 s at 150,
#: 0.42 / 0.22 s at 200 and 1.40 / 0.16 s at 300 (same iterations;
#: ``benchmarks/results/numpy_paths_threshold.md``), and the numpy oracle
#: holds ``n^3 / 2`` floats (32 MB at 200 nodes).  200 nodes keeps the
#: surcharge of a fit on a cold installation (the only one that pays it,
#: :func:`small_problem_path`) near 0.2 s.
CYCLE_NUMPY_MAX_NODES = 200

#: Dense correlation-clustering problems (the short-edge triangle oracle, the
#: pair constraints, the rounding's local search) on at most this many nodes
#: run on the numpy path.  A first fit on a dense 60-node signed graph in a
#: fresh process with an empty cache cost 39.4 s of CPU on the numba path
#: and 1.51 s on the numpy path (``benchmarks/results/numpy_paths_after.md``).
#: Warm fits of ``CorrelationClustering(random_state=0)`` on planted
#: partitions with 10 % flipped signs took 0.36 / 0.02 s (numpy / numba) at
#: 60 nodes, 0.64 / 0.05 s at 100, 1.74 / 0.49 s at 150 and 3.9 / 0.66 s at
#: 200 (same oracle calls; ``benchmarks/results/numpy_paths_threshold.md``):
#: the Hildreth passes over small batches and the local search are Python
#: loops.  100 nodes keeps the surcharge near 0.6 s, paid only while the
#: kernels are not compiled (:func:`small_problem_path`).
CC_NUMPY_MAX_NODES = 100

#: Sparse correlation-clustering problems on at most this many nodes run
#: their graph searches, rounding, local search and cost without numba
#: (:func:`use_numpy_sparse_cc`): the cycle oracle and the ball pivot in
#: Python (:mod:`metric_estimators.solvers.small_graphs`), the one-element
#: moves and the cost in numpy (:func:`sparse_one_element_moves`,
#: :func:`sparse_cost`), all with the kernels' results bit for bit, so that
#: a small first fit does not compile the graph kernels (the LP's
#: projections and constraint store stay numba).  A first fit on a sparse
#: 400-node signed graph in a fresh process with an empty cache thus skips
#: the compilation of the Dijkstra search, the oracle and the ball pivot
#: (about 2.6 s of CPU) and costs about 2.5 s in all
#: (``benchmarks/results/first_contact.md``).  Warm fits of
#: ``CorrelationClustering(random_state=0)`` on sparse planted graphs (about
#: 8 edges per node) took 0.024 / 0.013 s (Python and numpy / numba) at 200
#: nodes, 0.043 / 0.015 s at 400, 0.054 / 0.015 s at 500 and 0.23 / 0.05 s
#: at 800 (``benchmarks/results/numpy_paths_threshold.md``): up to 500 nodes
#: the surcharge stays under 0.05 s.
CC_SPARSE_NUMPY_MAX_NODES = 500

#: The numba kernels (``"module.function"`` under
#: :mod:`metric_estimators._kernels`) that the numba path of a small problem
#: of each kind calls, helpers included: the numpy path is taken only while
#: one of them would have to be compiled (:func:`small_problem_path`).
#: ``tests/test_numpy_engine.py`` checks these lists against what the numba
#: paths compile, and that the warm-up command compiles all of them.
KERNELS_OF = {
    "logdet_listed": (
        "bregman._dot", "bregman._rank1", "bregman._rank1_matvec",
        "bregman.logdet_sweep", "bregman.logdet_violations",
        "bregman.sym_matvec"),
    "logdet_all_pairs": (
        "bregman._dot", "bregman._rank1", "bregman._rank1_matvec",
        "bregman.logdet_sweep", "bregman.logdet_violations",
        "bregman.sym_matvec", "pair_oracle._scan_row",
        "pair_oracle._scan_rows_serial"),
    "cycles": (
        "constraint_store.all_triangles", "constraint_store.append_triangles",
        "constraint_store.compact_in_place",
        "constraint_store.compact_triangles",
        "constraint_store.constraint_hashes", "constraint_store.table_delete",
        "constraint_store.table_delete_triangles",
        "constraint_store.table_insert_new",
        "constraint_store.table_insert_triangles",
        "cycle_projections.project_nonnegative",
        "cycle_projections.project_paths_kl",
        "cycle_projections.project_triangles_l2",
        "cycle_projections.project_triangles_unit", "edges.edge_id",
        "edges.edges_to_matrix", "edges.matrix_to_edges",
        "triangle_oracle._collect_triangles", "triangle_oracle._hop_rows",
        "triangle_oracle.triangle_argmin_serial"),
    "correlation_clustering": (
        "cc_pair_projections._pairs_serial", "constraint_store.all_triangles",
        "constraint_store.append_triangles",
        "constraint_store.compact_triangles",
        "constraint_store.constraint_hashes",
        "constraint_store.table_delete_triangles",
        "constraint_store.table_insert_new",
        "constraint_store.table_insert_triangles",
        "correlation_clustering.best_one_element_moves",
        "cycle_projections.project_triangles_unit", "edges.edge_id",
        "edges.edges_to_matrix", "edges.matrix_to_edges",
        "shortest_paths._apsp_block_row", "shortest_paths._apsp_diagonal",
        "shortest_paths._apsp_edge_block", "shortest_paths._fw_independent",
        "shortest_paths._fw_kouter", "shortest_paths.apsp_serial",
        "triangle_oracle._collect_triangles", "triangle_oracle._hop_rows",
        "triangle_oracle.triangle_argmin_serial"),
    "sparse_correlation_clustering": (
        "correlation_clustering.sparse_cost",
        "correlation_clustering.sparse_one_element_moves",
        "sparse_graph._buffers", "sparse_graph._dijkstra",
        "sparse_graph._reset", "sparse_graph._sort_targets",
        "sparse_graph._walk_back", "sparse_graph.ball_pivot",
        "sparse_graph.component_violated_cycles",
        "sparse_graph.short_edge_forest", "sparse_graph._tree_path"),
}

#: Environment variable read once, at import, for the initial
#: :func:`small_problem_path` (``auto``, ``numpy`` or ``numba``).
PATH_VARIABLE = "METRIC_ESTIMATORS_SMALL_PROBLEMS"
_PATHS = ("auto", "numpy", "numba")
_path = {"value": os.environ.get(PATH_VARIABLE, "auto").strip().lower() or "auto"}
if _path["value"] not in _PATHS:
    warnings.warn(f"{PATH_VARIABLE}={_path['value']!r} is not one of "
                  f"{', '.join(_PATHS)}: 'auto' is used.", stacklevel=2)
    _path["value"] = "auto"


def small_problem_path(path=None):
    """Which path problems within this module's size limits take; set it with ``path``.

    ``"auto"`` (default): the numba kernels when every kernel the problem
    needs is compiled already -- in this process, or in numba's on-disk
    cache (after ``python -m metric_estimators.warmup``, or after a fit that
    compiled them; :func:`metric_estimators._compilation.kernels_ready`,
    which neither imports nor compiles anything) -- and the numpy path
    otherwise, so that a first fit on an empty cache compiles nothing and
    a warm installation runs the kernels, never slower.  ``"numpy"``: the
    numpy path for every problem within the limits, whatever the cache
    holds (the choice then depends on the problem's size alone).
    ``"numba"``: the kernels for every size (compiling them if needed).
    Problems above the limits always run the kernels.  Both paths give the
    same solution to the solver's tolerance (the same labels and bits for
    sparse correlation clustering's graph searches).

    The initial value comes from the environment variable
    ``METRIC_ESTIMATORS_SMALL_PROBLEMS`` (read at import).  Returns the
    value in force before the call; as a context manager
    (:func:`small_problems_on`) it is restored on exit.  Process-wide, not
    thread-local.
    """
    old = _path["value"]
    if path is not None:
        if path not in _PATHS:
            raise ValueError(f"path must be one of {', '.join(map(repr, _PATHS))}, "
                             f"got {path!r}.")
        _path["value"] = path
    return old


@contextmanager
def small_problems_on(path):
    """:func:`small_problem_path` set to ``path`` inside the block."""
    old = small_problem_path(path)
    try:
        yield
    finally:
        small_problem_path(old)


def takes_numpy_path(kind, within_limits):
    """True when a problem of ``kind`` runs on the numpy path.

    ``within_limits``: the problem is within this module's size limits for
    ``kind``; then :func:`small_problem_path` decides (``"auto"``: numpy
    unless the kernels of :data:`KERNELS_OF` ``[kind]`` are all compiled).
    """
    if not within_limits:
        return False
    path = _path["value"]
    if path == "auto":
        from .._compilation import kernels_ready

        return not kernels_ready(KERNELS_OF[kind])
    return path == "numpy"


def use_numpy(oracle):
    """True when the problem behind ``oracle`` runs on the numpy path.

    An oracle that has a numpy path says how large its problem is with
    ``oracle.numpy_size()``, a tuple ``(kind, size...)`` compared with this
    module's limits, and :func:`takes_numpy_path` decides; any other oracle
    runs on the numba kernels.  The answer is kept on the oracle (its
    ``numpy_choice_``), so that every part of a fit takes the same path.
    """
    choice = getattr(oracle, "numpy_choice_", None)
    if choice is not None:
        return choice
    size = getattr(oracle, "numpy_size", None)
    if size is None:
        return False
    kind, *values = size()
    if kind == "cycles":
        (n_nodes,) = values
        small = n_nodes <= CYCLE_NUMPY_MAX_NODES
    elif kind == "correlation_clustering":
        (n_nodes,) = values
        small = n_nodes <= CC_NUMPY_MAX_NODES
    else:
        return False
    choice = takes_numpy_path(kind, small)
    try:
        oracle.numpy_choice_ = choice
    except AttributeError:
        pass
    return choice


def use_numpy_sparse_cc(n_nodes):
    """True when a sparse correlation-clustering problem on ``n_nodes`` nodes skips the graph kernels.

    Within :data:`CC_SPARSE_NUMPY_MAX_NODES`, as :func:`takes_numpy_path`
    decides.
    """
    return takes_numpy_path("sparse_correlation_clustering",
                            n_nodes <= CC_SPARSE_NUMPY_MAX_NODES)


@contextmanager
def numpy_limits(value):
    """Every limit of this module set to ``value`` inside the block (tests, benchmarks).

    ``-1``: the numba kernels for every size; a huge value: numpy for every
    size (:func:`small_problem_path` is ``"numba"``, resp. ``"numpy"``,
    inside the block, so that what the cache holds does not matter).  Not
    thread-safe: it sets the module constants and restores them.
    """
    names = ("CYCLE_NUMPY_MAX_NODES",
             "CC_NUMPY_MAX_NODES", "CC_SPARSE_NUMPY_MAX_NODES")
    module = globals()
    saved = [module[name] for name in names]
    for name in names:
        module[name] = value
    path = small_problem_path("numba" if value < 0 else "numpy")
    try:
        yield
    finally:
        small_problem_path(path)
        for name, old in zip(names, saved):
            module[name] = old


def lazy_kernel(module, name):
    """A stand-in for the numba kernel ``metric_estimators._kernels.<module>.<name>``.

    Calling it imports the kernel module (and numba) on first use, so that
    the modules of the engine can name their kernels at the top without
    loading numba for the problems that run on the numpy path.
    """
    path = f"metric_estimators._kernels.{module}"

    def kernel(*args, **kwargs):
        return getattr(importlib.import_module(path), name)(*args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"Lazily loaded :func:`{path}.{name}`."
    return kernel


# ---------------------------------------------------------------------------
# Cycle constraints: edges, the active set's store, the triangle oracle and
# the Hildreth passes

def matrix_to_edges(D):
    """:func:`metric_estimators._kernels.edges.matrix_to_edges` in numpy."""
    n = D.shape[0]
    return np.ascontiguousarray(D[np.triu_indices(n, 1)], dtype=np.float64)


def edges_to_matrix(x, n, out):
    """:func:`metric_estimators._kernels.edges.edges_to_matrix` in numpy."""
    i, j = np.triu_indices(n, 1)
    out[i, j] = x
    out[j, i] = x
    out[np.arange(n), np.arange(n)] = 0.0


def edge_id(i, j, n):
    """Number of the edge ``{i, j}`` (arrays, ``i != j``), as the kernels number them."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return lo * n - (lo * (lo + 1)) // 2 - lo - 1 + hi


_H_MUL0 = np.uint64(0x9E3779B97F4A7C15)
_H_ADD = np.uint64(0x632BE59BD9B4E019)
_H_MUL = np.uint64(0xBF58476D1CE4E5B9)


def constraint_hashes(cons_edge, ptr, path):
    """:func:`metric_estimators._kernels.constraint_store.constraint_hashes` in numpy (same bits)."""
    k = cons_edge.shape[0]
    h = cons_edge.astype(np.uint64) * _H_MUL0 + np.uint64(1)
    lens = np.diff(ptr)
    starts = ptr[:-1]
    for p in range(int(lens.max()) if k else 0):
        on = lens > p
        g = h[on]
        g ^= path[starts[on] + p].astype(np.uint64) + _H_ADD
        g *= _H_MUL
        g ^= g >> np.uint64(29)
        h[on] = g
    h[h == 0] = np.uint64(1)
    return h


def project_nonnegative(x, winv, z):
    """:func:`metric_estimators._kernels.cycle_projections.project_nonnegative` in numpy.

    The constraints ``-x_e <= 0`` share no variable: one vectorised step
    gives the kernel's result exactly.
    """
    if x.size == 0:
        return 0.0
    s = -x
    resid = float(np.max(np.where(z > 0.0, np.abs(s), np.maximum(s, 0.0))))
    step, z[:] = _hildreth(z, -s / winv)
    x -= step * winv
    return resid


def _hildreth(z, theta):
    """Vectorised :func:`~metric_estimators._kernels.bregman.hildreth_correction`."""
    less = theta < z
    step = np.where(less, theta, z)
    return step, np.where(less, z - theta, 0.0)


def disjoint_batches(cons_edge, ptr, path):
    """Split constraints into batches that share no variable (greedy, in index order).

    Returns a list of index arrays: in each round, a constraint joins the
    batch when it is the lowest-numbered constraint not yet placed on each
    of its variables (edge and path edges), so no two constraints of a
    batch touch the same variable.
    """
    k = cons_edge.shape[0]
    lens = np.diff(ptr) + 1
    owner = np.repeat(np.arange(k), lens)
    var = np.empty(owner.size, dtype=np.int64)
    first = np.cumsum(lens) - lens
    var[first] = cons_edge
    rest = np.ones(owner.size, dtype=bool)
    rest[first] = False
    var[rest] = path
    batches = []
    left = np.ones(k, dtype=bool)
    size = int(var.max()) + 1 if var.size else 0
    while owner.size:
        low = np.full(size, k, dtype=np.int64)
        np.minimum.at(low, var, owner)
        bad = np.zeros(k, dtype=bool)
        bad[owner[low[var] != owner]] = True
        chosen = np.flatnonzero(left & ~bad)
        batches.append(chosen)
        left[chosen] = False
        stay = left[owner]
        owner, var = owner[stay], var[stay]
    return batches


def project_cycles(x, winv, cons_edge, ptr, path, z, batches, kl=False):
    """One Hildreth pass over cycle constraints, batch after batch.

    ``batches`` from :func:`disjoint_batches` (indices into the
    constraints).  Squared L2 weighted by ``1 / winv`` as
    :func:`~metric_estimators._kernels.cycle_projections.project_paths_l2`
    (and ``project_triangles_unit``), or the KL projections of
    :func:`~metric_estimators._kernels.cycle_projections.project_paths_kl`:
    within a batch the constraints share no variable, so projecting them
    at once equals projecting them in turn.  Returns the pass's largest
    complementary-slackness residual.
    """
    resid = 0.0
    for b in batches:
        if b.size == 0:
            continue
        lens = ptr[b + 1] - ptr[b]
        pos = np.repeat(ptr[b] - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        seg = np.repeat(np.arange(b.size), lens)
        pe = path[pos]
        e = cons_edge[b]
        S = np.bincount(seg, weights=x[pe], minlength=b.size)
        zb = z[b]
        if kl:
            xe = x[e]
            s = xe - S
            step, z[b] = _hildreth(zb, 0.5 * np.log(S / xe))
            x[e] = xe * np.exp(step)
            x[pe] *= np.exp(-step)[seg]
        else:
            s = x[e] - S
            den = winv[e] + np.bincount(seg, weights=winv[pe], minlength=b.size)
            step, z[b] = _hildreth(zb, -s / den)
            x[e] += step * winv[e]
            x[pe] -= step[seg] * winv[pe]
        r = np.where(zb > 0.0, np.abs(s), np.maximum(s, 0.0))
        resid = max(resid, float(r.max()))
    return resid


def violated_triangles(X, n, threshold, edge_mask):
    """The dense triangle oracle's search in numpy (``O(n^3)`` memory: small ``n`` only).

    As :func:`metric_estimators._kernels.triangle_oracle.violated_triangles`
    in float64: the most violated triangle ``(u, w, v)`` of every edge
    ``uv`` (``u < v``, in ``edge_mask``) violated by more than
    ``threshold``, and the largest violation.  Returns ``(cons_edge, ptr,
    path, max_violation)``; ties between apexes go to the lowest ``w``.
    """
    i, j = np.triu_indices(n, 1)
    T = X[i] + X[j]                     # T[e, w] = x_uw + x_wv
    W = np.argmin(T, axis=1)
    viol = X[i, j] - T[np.arange(i.size), W]
    viol = np.where(edge_mask, viol, 0.0)
    maxv = float(max(0.0, viol.max())) if viol.size else 0.0
    hit = np.flatnonzero(viol > threshold)
    u, v, w = i[hit], j[hit], W[hit]
    path = np.empty(2 * hit.size, dtype=np.int32)
    path[0::2] = edge_id(u, w, n)
    path[1::2] = edge_id(w, v, n)
    return (hit.astype(np.int64), np.arange(hit.size + 1, dtype=np.int64) * 2,
            path, maxv)


# ---------------------------------------------------------------------------
# Correlation clustering (dense): pair constraints, shortest paths, moves

def project_pairs_w(x, f, d, w, zA, zB, edges=None):
    """:func:`metric_estimators._kernels.cc_pair_projections.project_pairs_w` in numpy.

    ``edges`` given: :func:`~metric_estimators._kernels.cc_pair_projections.project_pairs_w_subset`.
    The two constraints of a pair touch only ``x_e`` and ``f_e``: all pairs
    are projected at once (first constraint, then the second), which is the
    kernel's result exactly.
    """
    e = np.flatnonzero(w > 0.0) if edges is None else edges[w[edges] > 0.0]
    if e.size == 0:
        return 0.0
    we = w[e]
    s = x[e] - f[e] - d[e]
    za = zA[e]
    r1 = np.where(za > 0.0, np.abs(s), np.maximum(s, 0.0))
    step, zA[e] = _hildreth(za, -0.5 * s * we)
    dx = step / we
    xe = x[e] + dx
    fe = f[e] - dx
    s = d[e] - xe - fe
    zb = zB[e]
    r2 = np.where(zb > 0.0, np.abs(s), np.maximum(s, 0.0))
    step, zB[e] = _hildreth(zb, -0.5 * s * we)
    dx = step / we
    x[e] = xe - dx
    f[e] = fe - dx
    return float(max(r1.max(), r2.max()))


def apsp(D):
    """All-pairs shortest paths in place (Floyd-Warshall, one numpy step per node)."""
    n = D.shape[0]
    for k in range(n):
        np.minimum(D, D[:, k, None] + D[None, k, :], out=D)


def _one_element_moves(labels, max_sweeps, eps, cluster_sums):
    """The sweeps of the one-element moves, shared by the dense and sparse twins.

    ``cluster_sums(i)`` returns ``(S, met)``: the sums of node ``i``'s
    weights per cluster (``S`` of length ``n``, or None when ``i`` has no
    weight) and the clusters of its weights in the order the kernel's scan
    meets them.  A node moves to the first cluster whose sum beats its own
    by more than ``eps``, or to a free (empty) cluster when every sum,
    its own included, is below ``-eps``: the kernels' rule.
    """
    n = labels.shape[0]
    count = np.bincount(labels, minlength=n)
    free = [c for c in range(n - 1, -1, -1) if count[c] == 0]
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        moved = False
        for i in range(n):
            a = int(labels[i])
            best = 0.0
            target = a
            S, met = cluster_sums(i)
            if S is not None:
                best = S[a]
                for c in met:
                    if S[c] > best + eps:
                        best, target = S[c], c
            if count[a] > 1 and 0.0 > best + eps and free:
                target = free.pop()
            if target != a:
                count[a] -= 1
                if count[a] == 0:
                    free.append(a)
                count[target] += 1
                labels[i] = target
                moved = True
        if not moved:
            break
    return sweeps


def _in_scan_order(lab):
    """The distinct values of ``lab`` in order of first appearance."""
    _, first = np.unique(lab, return_index=True)
    return lab[np.sort(first)].tolist()


def best_one_element_moves(A, labels, max_sweeps, eps):
    """:func:`metric_estimators._kernels.correlation_clustering.best_one_element_moves` in numpy.

    The same moves in the same order (a loop over the nodes; the sums of a
    node's weights per cluster by ``np.bincount``), so the same labels.
    """
    n = labels.shape[0]
    idx = np.arange(n)

    def cluster_sums(i):
        others = idx != i
        lab_o = labels[others]
        return (np.bincount(lab_o, weights=A[i, others], minlength=n),
                _in_scan_order(lab_o))

    return _one_element_moves(labels, max_sweeps, eps, cluster_sums)


def sparse_one_element_moves(indptr, indices, data, labels, max_sweeps, eps):
    """:func:`metric_estimators._kernels.correlation_clustering.sparse_one_element_moves` in numpy.

    The same moves in the same order (a loop over the nodes; a node's
    weights summed per neighbouring cluster by ``np.bincount``, in the
    stored order as the kernel adds them), so the same labels.
    """
    n = labels.shape[0]

    def cluster_sums(i):
        lo, hi = indptr[i], indptr[i + 1]
        if hi <= lo:
            return None, ()
        lab_n = labels[indices[lo:hi]]
        return (np.bincount(lab_n, weights=data[lo:hi], minlength=n),
                _in_scan_order(lab_n))

    return _one_element_moves(labels, max_sweeps, eps, cluster_sums)


def sparse_cost(rows, cols, a, labels):
    """:func:`metric_estimators._kernels.correlation_clustering.sparse_cost` in numpy.

    The same terms added in the same order (``np.cumsum`` adds one after
    the other; a term of an edge that costs nothing is ``0``), so the same
    bits.
    """
    same = labels[rows] == labels[cols]
    terms = np.where(a > 0.0, np.where(same, 0.0, a), np.where(same, -a, 0.0))
    return float(np.cumsum(terms)[-1]) if terms.size else 0.0
