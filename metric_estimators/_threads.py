"""When to run BLAS on a single thread.

On small dense products BLAS threads do not pay off and, on busy cores, their
spinning makes fits many times slower; there the learners cap BLAS at one
thread with threadpoolctl.  Below :data:`TINY_BLAS_WORK` they do not: BLAS
does not start threads for such products anyway, and threadpoolctl's first
call in a process (a scan of every loaded library, measured at 30-100 ms)
would cost more than the whole fit.
"""

from contextlib import nullcontext

from threadpoolctl import ThreadpoolController

__all__ = ["TINY_BLAS_WORK", "one_blas_thread"]

#: multiply-adds of the fit's typical product below which no limit is set
TINY_BLAS_WORK = 1e6

# One controller per process: building it scans every loaded library (about
# 2 ms at each fit otherwise); its limit() only sets and restores the
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
