"""Fill numba's on-disk cache for every kernel: ``python -m metric_estimators.warmup``.

The numba kernels (``metric_estimators._kernels``) are compiled on their
first call and cached next to their source (or under ``NUMBA_CACHE_DIR``).
Without a cache, the first fit of each estimator in a new environment spends
several seconds compiling; with it, a fresh process only loads the compiled
code.  This command fits every estimator that has kernels once on small
synthetic data, on the numba kernels (``_backend.use("numba")``: on a cold
installation small fits would run on the numpy twins instead, see
:mod:`metric_estimators._backend`), so that every kernel is compiled for the
argument types that real fits use.  It prints each fit with its time, then
for each kernel module how many specialisations were compiled now and how
many were already cached, the total time, and the kernels still not
compiled (the parallel ones of large problems, unless ``--large``).

The parallel kernels that only large problems use (the dense oracles from
:data:`~metric_estimators._kernels.triangle_oracle.PARALLEL_MIN_NODES` nodes
on, ProjectAndForget's pair oracle from
:data:`~metric_estimators._kernels.pair_oracle.PARALLEL_MIN_POINTS` points)
compile slowly and are left out by default: the first large problem
compiles them (once).  ``--large`` compiles them too.

It is worth running once after installing (or upgrading) the package, or
numba, and before timing a first fit, starting many short processes (a grid
search with ``n_jobs``, Dask workers) or building an image whose
installation will be read-only (set ``NUMBA_CACHE_DIR`` to the same
directory at build and at run time; without it, a read-only installation
caches the kernels per user, see :mod:`metric_estimators._compilation`).
Running it again is cheap: everything then comes from the cache.

    python -m metric_estimators.warmup            # the kernels of small and mid-size problems
    python -m metric_estimators.warmup --large    # and the parallel ones of large problems
"""

import contextlib
import importlib
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
        ("LMNN (lbfgs)", lambda: LMNN(random_state=0, max_iter=5).fit(X, y)),
        ("LMNN (sampled impostors)",
         lambda: LMNN(random_state=0, max_iter=5, max_impostors=20).fit(X, y)),
        ("LMNN (subgradient)",
         lambda: LMNN(solver="subgradient", random_state=0, max_iter=5).fit(X, y)),
        ("ITML", lambda: ITML(random_state=0, max_iter=20).fit(pairs, pair_y)),
        ("ITML_Supervised",
         lambda: ITML_Supervised(random_state=0, max_iter=20).fit(X, y)),
        ("OMDML (cholesky)", lambda: OMDML().fit(X, y)),
        ("OMDML (lbfgs)", lambda: OMDML(solver="lbfgs", max_iter=5).fit(X, y)),
        ("LODML", lambda: LODML(max_iter=5, random_state=0).fit(X, y)),
        ("ProjectAndForget",
         lambda: ProjectAndForget(random_state=0, max_iter=5).fit(X, y)),
        ("MetricNearness (l2, triangle)", lambda: MetricNearness(max_iter=3).fit(D)),
        ("MetricNearness (l2, triangle, weighted)",
         lambda: MetricNearness(max_iter=3).fit(D, sample_weight=W)),
        ("MetricNearness (l2, two triangles per edge)",
         lambda: MetricNearness(triangles_per_edge=2, max_iter=3).fit(D)),
        ("MetricNearness (l2, shortest_path)",
         lambda: MetricNearness(oracle="shortest_path", max_iter=3).fit(D)),
        ("MetricNearness (kl, shortest_path)",
         lambda: MetricNearness(divergence="kl", oracle="shortest_path",
                                max_iter=3).fit(D)),
        ("CorrelationClustering",
         lambda: CorrelationClustering(random_state=0).fit(A)),
        ("CorrelationClustering (noisy signs)",
         lambda: CorrelationClustering(random_state=0).fit(noisy)),
        ("CorrelationClustering (many small groups: short-edge search)",
         lambda: CorrelationClustering(random_state=0).fit(few)),
        ("CorrelationClustering (sparse graph, stopped: the closure)",
         lambda: CorrelationClustering(random_state=0, max_iter=1).fit(
             sparse.csr_matrix(noisy * (mask & mask.T)))),
        ("CorrelationClustering (sparse graph)",
         lambda: CorrelationClustering(random_state=0, max_iter=3).fit(
             sparse.csr_matrix(A * (mask & mask.T)))),
        # in-process sparse fits search per component; the per-node
        # searches run on Dask workers (which read this cache)
        ("SparseShortestPathOracle (per-node searches)",
         lambda: _per_node_searches(sparse.triu(
             sparse.csr_matrix(A * (mask & mask.T)), 1).tocoo())),
        ("knn_triplets", lambda: knn_triplets(X, y)),
        ("SCML_Supervised",
         lambda: SCML_Supervised(random_state=0, max_iter=50, output_iter=25).fit(X, y)),
        ("MLKR", lambda: MLKR(random_state=0, max_iter=5).fit(X, X[:, 0])),
        ("LSML_Supervised",
         lambda: LSML_Supervised(random_state=0, max_iter=5).fit(X, y)),
        ("NCA (large-data evaluation)", lambda: _nca_evaluation(X, y)),
    ]


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
    from ._kernels import pair_oracle, short_edge_triangles, shortest_paths, triangle_oracle

    switches = [(shortest_paths, "PARALLEL_MIN_NODES"), (triangle_oracle, "PARALLEL_MIN_NODES"),
                (short_edge_triangles, "PARALLEL_MIN_NODES"), (pair_oracle, "PARALLEL_MIN_POINTS")]
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


def warm_up(verbose=True, large=False):
    """Call every numba kernel once so that numba's disk cache holds them all.

    Parameters
    ----------
    verbose : bool, default=True
        Print one line per fit and a table of kernel modules.
    large : bool, default=False
        Also compile the parallel kernels that only large problems use.

    Returns
    -------
    stats : dict
        Kernel module name -> ``(loaded_from_cache, compiled_now)``: numbers
        of specialisations.
    """
    from . import _backend

    start, cpu = time.perf_counter(), time.process_time()
    # on a cold installation small fits run on the numpy twins: force the kernels
    with warnings.catch_warnings(), _backend.use("numba"):
        # the fits are deliberately short: their convergence does not matter
        warnings.simplefilter("ignore")
        fits = _fits()
        if large:
            fits += [(f"{name} (parallel kernels)", fit)
                     for name, fit in fits
                     if name.startswith(("MetricNearness",
                                         "CorrelationClustering",
                                         "ProjectAndForget"))]
        for name, fit in fits:
            t0 = time.perf_counter()
            with _parallel_from(0) if name.endswith("(parallel kernels)") \
                    else contextlib.nullcontext():
                fit()
            if verbose:
                print(f"  {name:<52s} {time.perf_counter() - t0:6.2f} s",
                      flush=True)
    stats = _kernel_stats()
    if verbose:
        print(f"{'kernel module':<24s} {'from cache':>10s} {'compiled now':>13s}")
        for name, (hits, misses) in sorted(stats.items()):
            print(f"{name:<24s} {hits:>10d} {misses:>13d}")
        total = sum(m for _, m in stats.values())
        print(f"numba cache filled in {time.perf_counter() - start:.1f} s "
              f"({time.process_time() - cpu:.1f} s of CPU; {total} specialisations "
              f"compiled now) in {cache_location()}.")
        left = not_compiled()
        if left:
            why = ("no fit here calls them" if large else
                   "the parallel kernels of large problems: add --large")
            print(f"not compiled ({why}): {', '.join(left)}")
    return stats


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    large = "--large" in argv
    unknown = [a for a in argv if a != "--large"]
    if unknown:
        print(f"unknown argument(s): {' '.join(unknown)}\n{__doc__}", file=sys.stderr)
        return 2
    print("Compiling metric_estimators' numba kernels into the cache ...", flush=True)
    warm_up(large=large)
    return 0


if __name__ == "__main__":
    sys.exit(main())
