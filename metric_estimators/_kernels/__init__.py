"""numba kernels: plain arrays in, plain arrays out; no estimator or solver logic.

Importing this package (which every kernel module does first) sets up numba
for the kernels before any is defined: the cache location on a read-only
installation, stale-cache housekeeping and the compile notices
(:func:`metric_estimators._compilation.prepare`, a leaf module).
"""

from .._compilation import prepare as _prepare

_prepare()
