"""Fill numba's on-disk cache for every kernel: ``python -m metric_estimators.warmup``.

The numba kernels (``metric_estimators._kernels``) are compiled on their
first call and cached next to their source (or under ``NUMBA_CACHE_DIR``).
Without a cache, the first fit of each estimator in a new environment spends
several seconds compiling; with it, a fresh process only loads the compiled
code.  This command fits every estimator once on small synthetic data (on
the numba path, which small problems otherwise skip: see
:data:`metric_estimators._problems.neighbours.NUMPY_MAX_SAMPLES`), so
that every kernel is compiled for the argument types that real fits use, and
prints for each kernel module how many specialisations were compiled now and
how many were already cached.

It is worth running once after installing (or upgrading) the package, or
numba, and before timing a first fit, starting many short processes (a grid
search with ``n_jobs``, Dask workers) or working on a read-only installation
whose cache directory is writable only at build time (set
``NUMBA_CACHE_DIR`` to the same directory for both).  Running it again is
cheap: everything then comes from the cache.
"""

import importlib
import pkgutil
import sys
import time
import warnings

import numpy as np
from scipy import sparse

__all__ = ["warm_up"]


def _fits():
    """(name, callable) pairs that together call every kernel."""
    from . import (
        ITML,
        LMNN,
        LODML,
        OMDML,
        CorrelationClustering,
        ITML_Supervised,
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
    return [
        ("LMNN (lbfgs)", lambda: LMNN(random_state=0, max_iter=5).fit(X, y)),
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
        ("MetricNearness (kl, shortest_path)",
         lambda: MetricNearness(divergence="kl", oracle="shortest_path",
                                max_iter=3).fit(D)),
        ("CorrelationClustering",
         lambda: CorrelationClustering(random_state=0).fit(A)),
        ("CorrelationClustering (sparse graph)",
         lambda: CorrelationClustering(random_state=0, max_iter=3).fit(
             sparse.csr_matrix(A * (mask & mask.T)))),
        ("knn_triplets", lambda: knn_triplets(X, y)),
        ("SCML_Supervised",
         lambda: SCML_Supervised(random_state=0, max_iter=50, output_iter=25).fit(X, y)),
    ]


def _kernel_stats():
    """{module: (cache hits, cache misses)} over every numba dispatcher."""
    from numba.core.registry import CPUDispatcher

    from . import _kernels

    stats = {}
    for info in pkgutil.iter_modules(_kernels.__path__):
        module = importlib.import_module(f"{_kernels.__name__}.{info.name}")
        hits = misses = 0
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__:
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
        stats[info.name] = (hits, misses)
    return stats


def warm_up(verbose=True):
    """Call every numba kernel once so that numba's disk cache holds them all.

    Parameters
    ----------
    verbose : bool, default=True
        Print one line per fit and a table of kernel modules.

    Returns
    -------
    stats : dict
        Kernel module name -> ``(loaded_from_cache, compiled_now)``: numbers
        of specialisations.
    """
    from ._problems.neighbours import numpy_max_samples

    start = time.perf_counter()
    # small problems run in numpy by default: force numba to reach every kernel
    with warnings.catch_warnings(), numpy_max_samples(-1):
        # the fits are deliberately short: their convergence does not matter
        warnings.simplefilter("ignore")
        for name, fit in _fits():
            t0 = time.perf_counter()
            fit()
            if verbose:
                print(f"  {name:<36s} {time.perf_counter() - t0:6.2f} s", flush=True)
    stats = _kernel_stats()
    if verbose:
        print(f"{'kernel module':<24s} {'from cache':>10s} {'compiled now':>13s}")
        for name, (hits, misses) in sorted(stats.items()):
            print(f"{name:<24s} {hits:>10d} {misses:>13d}")
        total = sum(m for _, m in stats.values())
        print(f"numba cache filled in {time.perf_counter() - start:.1f} s "
              f"({total} specialisations compiled now).")
    return stats


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    print("Compiling metric_estimators' numba kernels into the cache ...", flush=True)
    warm_up()
    return 0


if __name__ == "__main__":
    sys.exit(main())
