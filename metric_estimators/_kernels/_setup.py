"""numba, set up for the kernels before any is defined.

Every numba kernel module imports this module: the first import runs
:func:`metric_estimators._compilation.prepare` once (the cache location on a
read-only installation, stale-cache housekeeping and the compile notices).
The package itself imports nothing, so that the numpy twins
(:mod:`metric_estimators._kernels.numpy`) load without numba.
"""

from .._compilation import prepare

prepare()
