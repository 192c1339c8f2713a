"""Threads: when to run BLAS on a single thread, and a thread map in order.

On small dense products BLAS threads do not pay off and, on busy cores, their
spinning makes fits many times slower; there the learners cap BLAS at one
thread with threadpoolctl.  Below :data:`TINY_BLAS_WORK` they do not: BLAS
does not start threads for such products anyway, and threadpoolctl's first
call in a process (a scan of every loaded library) would cost more than the
whole fit.  OpenBLAS does start threads for products of a few hundred
thousand multiply-adds (LMNN on scikit-learn's breast_cancer, 569 x 30),
where they cost a first fit more CPU than its work
(``benchmarks/results/first_contact.md``), hence a low threshold.
"""

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

from threadpoolctl import ThreadpoolController

__all__ = ["TINY_BLAS_WORK", "one_blas_thread", "ordered_map", "usable_cpus"]

#: multiply-adds of the fit's typical product below which no limit is set
TINY_BLAS_WORK = 1e4

# One controller per process: building it scans every loaded library (a
# cost at each fit otherwise; measured: benchmarks/README.md, *Measurements
# behind choices in the code*); its limit() only sets and restores the
# thread counts.  BLAS libraries loaded after the first limited fit are not
# seen by it (numpy's and scipy's are loaded before any fit).
_CONTROLLER = []


def _controller():
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def one_blas_thread(work, *, upper=float("inf")):
    """A context capping BLAS at one thread when ``TINY_BLAS_WORK <= work < upper``.

    Parameters
    ----------
    work : float
        Multiply-adds of the typical product of the fit (e.g. ``n * d ** 2``).
    upper : float, default=inf
        From this much work on, BLAS threads pay off: no limit either.

    Returns
    -------
    context : context manager
        A limit of one BLAS thread (threadpoolctl's ``limit(limits=1,
        user_api="blas")`` on a controller kept for the process) or a no-op.
    """
    if TINY_BLAS_WORK <= work < upper:
        return _controller().limit(limits=1, user_api="blas")
    return nullcontext()


def usable_cpus():
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def ordered_map(func, items, n_threads, ahead=None):
    """``func(item)`` for every item on ``n_threads`` threads, yielded in order.

    At most ``ahead`` items (default ``2 * n_threads``) are submitted and not
    yet consumed: a thread whose core is taken by another process holds up
    the others only once they are that far ahead, and ``func`` sees the
    state the consumer left after all but the last ``ahead - 1`` earlier
    items (in LMNN's threaded impostor search: the sampling fraction).  One
    thread: plain serial calls, no pool.
    """
    if n_threads <= 1:
        for item in items:
            yield func(item)
        return
    ahead = 2 * n_threads if ahead is None else max(ahead, n_threads)
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        pending = deque()
        for item in items:
            pending.append(pool.submit(func, item))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
