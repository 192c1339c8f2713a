"""numba kernels: plain arrays in, plain arrays out; no estimator or solver logic.

Importing this package (which every kernel module does first) sets up numba
for the kernels before any is defined: the cache location on a read-only
installation, stale-cache housekeeping and the compile notices
(:func:`metric_estimators._compilation.prepare`, a leaf module).

Compile time is part of every user's first contact, so kernels avoid what
compiles slowly (measured by ``benchmarks/bench_first_contact.py --kernels``):

* ``parallel=True`` kernels cost seconds to tens of seconds each; where a
  serial kernel does as well on small problems, the parallel one runs (and
  is compiled) only from a size on (``PARALLEL_MIN_NODES``), with the same
  results.
* Copying an array into an array slice (``a[:k] = b``, ``out[i] = row``)
  makes numba compile its shape-mismatch error message (string formatting,
  about 2 s of CPU once per process); kernels copy with element loops.
* One signature per kernel: callers pass the dtypes and layouts the kernel
  documents, so that no second specialisation compiles.
"""

from .._compilation import prepare as _prepare

_prepare()
