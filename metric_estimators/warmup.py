"""Fill numba's on-disk cache for every kernel: ``python -m metric_estimators.warmup``.

The numba kernels (``metric_estimators._kernels``) are cached on disk once
compiled (next to their source, or under ``NUMBA_CACHE_DIR``).  On a fresh
installation nothing is compiled: fits run on the numpy twins, and a fit
that is worth it starts compiling its family in a background process (see
:mod:`metric_estimators._backend`), so the kernels arrive by themselves
within a minute of use.  This command compiles them all at once, in the
foreground: it fits every estimator that has kernels once on small
synthetic data, on the numba kernels (``_backend.use("numba")``), so that
every kernel is compiled for the argument types that real fits use.  It
prints each fit with its time, then for each kernel module how many
specialisations were compiled now and how many were already cached, the
total time, and the kernels still not compiled.

The parallel kernels of the dense oracles, which mid-size problems already
call (the triangle oracle from
:data:`~metric_estimators._kernels._constants.TRIANGLE_PARALLEL_MIN_NODES`
nodes on), are compiled too.  Those that only large problems use
(ProjectAndForget's pair oracle from
:data:`~metric_estimators._kernels._constants.PAIR_ORACLE_PARALLEL_MIN_POINTS`
points, the sparse graphs' parallel passes) compile slowly and are left out
unless ``--large``.

Run it where background compilation is not wanted or cannot help: before
timing a first fit, on a cluster whose workers are short-lived (build the
image with it), with ``METRIC_ESTIMATORS_BACKGROUND_COMPILE=0``, or for an
installation that will be read-only (set ``NUMBA_CACHE_DIR`` to the same
directory at build and at run time; without it, a read-only installation
caches the kernels per user, see :mod:`metric_estimators._compilation`).
Running it again is cheap: everything then comes from the cache.

    python -m metric_estimators.warmup            # the kernels of small and mid-size problems
    python -m metric_estimators.warmup --large    # and the parallel ones of large problems
    python -m metric_estimators.warmup --family lmnn   # one family (what a background compilation runs)
"""

import contextlib
import importlib
import os
import pkgutil
import sys
import time
import warnings

import numpy as np
from scipy import sparse

__all__ = ["not_compiled", "warm_up"]


def _fits():
    """(name, callable) pairs that together call every kernel."""
    from . import (
        ITML,
        LMNN,
        LODML,
        MLKR,
        OMDML,
        CorrelationClustering,
        ITML_Supervised,
        LSML_Supervised,
        MetricNearness,
        ProjectAndForget,
        SCML_Supervised,
    )
    from .constraints import knn_triplets

    rng = np.random.RandomState(0)
    X = rng.randn(60, 4)
    y = np.repeat([0, 1, 2], 20)
    X[:, 0] += y
    pairs = np.stack([X[:30], X[30:]], axis=1)
    pair_y = np.where(y[:30] == y[30:], 1, -1)
    pair_y[:10] = 1
    D = np.abs(rng.randn(25, 25))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0)
    g = rng.randint(0, 3, 25)
    A = np.where(g[:, None] == g[None], 1.0, -1.0)
    np.fill_diagonal(A, 0)
    mask = rng.rand(25, 25) < 0.5
    # a tenth of the signs flipped: the LP needs every stage of its oracle
    flip = np.triu(rng.rand(25, 25) < 0.1, 1)
    noisy = np.where(flip | flip.T, -A, A)
    # twelve groups: few short pairs, so the LP's oracle searches short edges
    groups = rng.randint(0, 12, 25)
    few = np.where(groups[:, None] == groups[None], 1.0, -1.0)
    np.fill_diagonal(few, 0)
    W = rng.rand(25, 25) + 0.5
    W = (W + W.T) / 2
    return [
        ("LMNN (lbfgs)", "lmnn", lambda: LMNN(random_state=0, max_iter=5).fit(X, y)),
        ("LMNN (sampled impostors)", "lmnn",
         lambda: LMNN(random_state=0, max_iter=5, max_impostors=20).fit(X, y)),
        ("LMNN (subgradient)", "lmnn",
         lambda: LMNN(solver="subgradient", random_state=0, max_iter=5).fit(X, y)),
        ("LMNN (sgd)", "lmnn",
         lambda: LMNN(solver="sgd", random_state=0, max_iter=2).fit(X, y)),
        # the sampling of impostors once their memory cap is hit (large data)
        ("LMNN (impostors over the memory cap)", "lmnn", _lmnn_capped_sampling),
        ("ITML", "logdet_listed", lambda: ITML(random_state=0, max_iter=20).fit(pairs, pair_y)),
        ("ITML_Supervised", "logdet_listed",
         lambda: ITML_Supervised(random_state=0, max_iter=20).fit(X, y)),
        ("OMDML (cholesky)", "neighbours", lambda: OMDML().fit(X, y)),
        ("OMDML (lbfgs)", "neighbours", lambda: OMDML(solver="lbfgs", max_iter=5).fit(X, y)),
        ("LODML", "ordinal", lambda: LODML(max_iter=5, random_state=0).fit(X, y)),
        ("ProjectAndForget", "logdet_all_pairs",
         lambda: ProjectAndForget(random_state=0, max_iter=5).fit(X, y)),
        # to convergence: the oracle searches in float32 while far from the
        # tolerance and in float64 near it, and both must be compiled
        ("MetricNearness (l2, triangle)", "cycles", lambda: MetricNearness().fit(D)),
        ("MetricNearness (l2, triangle, weighted)", "cycles",
         lambda: MetricNearness().fit(D, sample_weight=W)),
        ("MetricNearness (kl, shortest_path)", "cycles",
         lambda: MetricNearness(divergence="kl", oracle="shortest_path",
                                max_iter=3).fit(D)),
        ("MetricNearness (l2, two triangles per edge)", "cycles",
         lambda: MetricNearness(triangles_per_edge=2, max_iter=3).fit(D)),
        ("MetricNearness (l2, shortest_path)", "cycles",
         lambda: MetricNearness(oracle="shortest_path", max_iter=3).fit(D)),
        ("MetricNearness (sparse)", "cycles",
         lambda: MetricNearness(max_iter=3).fit(sparse.csr_matrix(D * (mask & mask.T)))),
        ("CorrelationClustering", "correlation_clustering",
         lambda: CorrelationClustering(random_state=0).fit(A)),
        ("CorrelationClustering (noisy signs)", "correlation_clustering",
         lambda: CorrelationClustering(random_state=0).fit(noisy)),
        ("CorrelationClustering (many small groups: short-edge search)", "correlation_clustering",
         lambda: CorrelationClustering(random_state=0).fit(few)),
        ("CorrelationClustering (stopped: the closure)", "correlation_clustering",
         lambda: CorrelationClustering(random_state=0, max_iter=1).fit(noisy)),
        # cycles longer than triangles (the LP's path search on larger graphs)
        ("cycle constraints longer than triangles", "correlation_clustering",
         _path_constraints),
        ("CorrelationClustering (sparse graph, stopped: the closure)", "sparse_correlation_clustering",
         lambda: CorrelationClustering(random_state=0, max_iter=1).fit(
             sparse.csr_matrix(noisy * (mask & mask.T)))),
        ("CorrelationClustering (sparse graph)", "sparse_correlation_clustering",
         lambda: CorrelationClustering(random_state=0, max_iter=3).fit(
             sparse.csr_matrix(A * (mask & mask.T)))),
        # in-process sparse fits search per component; the per-node
        # searches run on Dask workers (which read this cache)
        ("SparseShortestPathOracle (per-node searches)", "sparse_correlation_clustering",
         lambda: _per_node_searches(sparse.triu(
             sparse.csr_matrix(A * (mask & mask.T)), 1).tocoo())),
        ("knn_triplets", "neighbours", lambda: knn_triplets(X, y)),
        ("SCML_Supervised", "scml",
         lambda: SCML_Supervised(random_state=0, max_iter=50, output_iter=25).fit(X, y)),
        ("MLKR", "mlkr", lambda: MLKR(random_state=0, max_iter=5).fit(X, X[:, 0])),
        ("LSML_Supervised", "lsml",
         lambda: LSML_Supervised(random_state=0, max_iter=5).fit(X, y)),
        ("NCA (large-data evaluation)", "nca", lambda: _nca_evaluation(X, y)),
    ]


def _lmnn_capped_sampling():
    """The kernel that thins sampled impostor pairs when their memory cap is hit."""
    from ._backend import NUMBA

    pairs = np.arange(4, dtype=np.int32)
    hashes = np.arange(8, dtype=np.uint64).reshape(2, 4)
    NUMBA.lmnn.pair_uniform(pairs, pairs[::-1].copy(), hashes)


def _path_constraints():
    """A store of cycle constraints given a 4-cycle: the kernels of non-triangle constraints."""
    from ._backend import NUMBA
    from .solvers.active_sets import CycleConstraints

    store = CycleConstraints(np.ones(6), kernels=NUMBA)
    # edge 0 against the path of edges 1, 2 and 3
    store.add(np.array([0], dtype=np.int64), np.array([0, 3], dtype=np.int64),
              np.array([1, 2, 3], dtype=np.int32))


def _nca_evaluation(X, y):
    """One evaluation of NCA's objective on the kernel that fits of many points use."""
    from ._backend import NUMBA
    from ._problems.nca import nca_loss_grad

    nca_loss_grad(np.eye(X.shape[1]), X, y.astype(np.int64), kernels=NUMBA)


def _per_node_searches(upper):
    """One call of the per-node (Dask workers') search on the edges of ``upper``."""
    from ._backend import NUMBA
    from .solvers.oracles import SparseShortestPathOracle

    oracle = SparseShortestPathOracle(upper.shape[0], upper.row, upper.col,
                                      search="bounded", cap=16, kernels=NUMBA)
    oracle(np.where(upper.data > 0, 0.0, 1.0), 0.0)


def _kernel_modules():
    """Every numba kernel module, imported."""
    from . import _kernels

    return [importlib.import_module(f"{_kernels.__name__}.{info.name}")
            for info in pkgutil.iter_modules(_kernels.__path__)
            if not info.ispkg and not info.name.startswith("_")]


def not_compiled():
    """The kernels (``"module.function"``) that hold no compiled specialisation in this process."""
    from numba.core.registry import CPUDispatcher

    missing = []
    for module in _kernel_modules():
        for name, obj in vars(module).items():
            if (isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__
                    and not obj.signatures
                    # inlined into their callers: never compiled on their own
                    and obj.targetoptions.get("inline") != "always"):
                missing.append(f"{module.__name__.rsplit('.', 1)[1]}.{name}")
    return sorted(missing)


def _kernel_stats():
    """{module: (cache hits, cache misses)} over every numba dispatcher."""
    from numba.core.registry import CPUDispatcher

    from . import _kernels

    stats = {}
    for info in pkgutil.iter_modules(_kernels.__path__):
        if info.ispkg or info.name.startswith("_"):  # the numpy twins, the set-up
            continue
        module = importlib.import_module(f"{_kernels.__name__}.{info.name}")
        hits = misses = 0
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__:
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
        stats[info.name] = (hits, misses)
    return stats


@contextlib.contextmanager
def _parallel_from(n_nodes):
    """Run the oracles' parallel kernels from size ``n_nodes`` on (restored after)."""
    from ._kernels import (
        cc_pair_projections,
        pair_oracle,
        short_edge_triangles,
        shortest_paths,
        triangle_oracle,
    )

    switches = [(shortest_paths, "PARALLEL_MIN_NODES"), (triangle_oracle, "PARALLEL_MIN_NODES"),
                (short_edge_triangles, "PARALLEL_MIN_NODES"), (pair_oracle, "PARALLEL_MIN_POINTS"),
                (cc_pair_projections, "PARALLEL_MIN_PAIRS")]
    old = [getattr(m, name) for m, name in switches]
    try:
        for m, name in switches:
            setattr(m, name, n_nodes)
        yield
    finally:
        for (m, name), value in zip(switches, old):
            setattr(m, name, value)


def cache_location():
    """The directory numba caches the kernels in (after the package set it up)."""
    from . import _compilation
    from ._kernels import _setup  # noqa: F401  (sets the cache location up)

    return str(_compilation._kernels_cache_path())


#: The families whose parallel kernels the default warm-up compiles too: the
#: dense oracles go parallel at sizes a user meets (the triangle oracle from
#: ``TRIANGLE_PARALLEL_MIN_NODES`` nodes on).  ``--large`` adds the others.
MID_SIZE_PARALLEL = ("cycles", "correlation_clustering")


def _selected(families, large):
    """The warm-up's (name, family, callable) triples for ``families`` (None: all).

    Each fit is followed by its parallel variant where wanted: with
    ``large``, or, in the full warm-up, for the families of
    :data:`MID_SIZE_PARALLEL`.  A background compilation (``families``
    given) compiles the parallel kernels only when asked (``large``), and
    in the order of :func:`_fits`, whose first fits of a family call the
    kernels its fits need most: the fits waiting for them switch as soon as
    those are in the cache.
    """
    out = []
    for name, family, fit in _fits():
        if families is not None and family not in families:
            continue
        out.append((name, family, fit))
        if large or (families is None and family in MID_SIZE_PARALLEL):
            out.append((f"{name} (parallel kernels)", family, fit))
    return out


def warm_up(verbose=True, large=False, families=None):
    """Call every numba kernel once so that numba's disk cache holds them all.

    Parameters
    ----------
    verbose : bool, default=True
        Print one line per fit and a table of kernel modules.
    large : bool, default=False
        Also compile the parallel kernels that only large problems use
        (those of mid-size dense problems are always compiled).
    families : iterable of str, optional
        Only the fits of these kernel families (keys of
        :data:`metric_estimators._backend.FAMILIES`), their parallel kernels
        included when ``large``; what a background compilation runs.

    Returns
    -------
    stats : dict
        Kernel module name -> ``(loaded_from_cache, compiled_now)``: numbers
        of specialisations.
    """
    from . import _backend

    if families is not None:
        families = set(families)
        unknown = families - set(_backend.FAMILIES)
        if unknown:
            raise ValueError(f"unknown kernel famil{'ies' if len(unknown) > 1 else 'y'} "
                             f"{', '.join(sorted(unknown))}; one of "
                             f"{', '.join(sorted(_backend.FAMILIES))}.")
    start, cpu = time.perf_counter(), time.process_time()
    # on a cold installation small fits run on the numpy twins: force the kernels
    with warnings.catch_warnings(), _backend.use("numba"):
        # the fits are deliberately short: their convergence does not matter
        warnings.simplefilter("ignore")
        for name, _, fit in _selected(families, large):
            t0 = time.perf_counter()
            with _parallel_from(0) if name.endswith("(parallel kernels)") \
                    else contextlib.nullcontext():
                fit()
            if verbose:
                print(f"  {name:<52s} {time.perf_counter() - t0:6.2f} s",
                      flush=True)
    stats = _kernel_stats()
    if not verbose:
        return stats
    print(f"{'kernel module':<24s} {'from cache':>10s} {'compiled now':>13s}")
    for name, (hits, misses) in sorted(stats.items()):
        print(f"{name:<24s} {hits:>10d} {misses:>13d}")
    total = sum(m for _, m in stats.values())
    print(f"numba cache filled in {time.perf_counter() - start:.1f} s "
          f"({time.process_time() - cpu:.1f} s of CPU; {total} specialisations "
          f"compiled now) in {cache_location()}.")
    left = not_compiled()
    if left and families is None:
        why = ("no fit here calls them" if large else
               "the parallel kernels of large problems: add --large")
        print(f"not compiled ({why}): {', '.join(left)}")
    return stats


def _parser():
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m metric_estimators.warmup",
        description="Compile metric_estimators' numba kernels into numba's on-disk cache.")
    parser.add_argument("--large", action="store_true",
                        help="also the parallel kernels of large problems")
    parser.add_argument("--family", action="append", dest="families", metavar="NAME",
                        help="only this kernel family (repeatable); what a fit's "
                             "background compilation runs")
    parser.add_argument("--parallel", action="store_true",
                        help="with --family: its parallel kernels too (same as --large)")
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    parser.add_argument("--lock", help=argparse.SUPPRESS)  # a background compilation's lock
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        _parser().print_help()
        return 0
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # argparse said what was wrong on stderr
        return exit_.code
    try:
        if args.lock:
            # a background compilation: yield the cores to the fits
            from ._background import NICENESS

            with contextlib.suppress(AttributeError, OSError):
                os.nice(NICENESS)
        if not args.quiet:
            print("Compiling metric_estimators' numba kernels into the cache ...",
                  flush=True)
        warm_up(verbose=not args.quiet, large=args.large or args.parallel,
                families=args.families)
    finally:
        if args.lock:
            from ._background import release

            release(args.lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
