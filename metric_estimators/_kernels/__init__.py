"""Kernels: plain arrays in, plain arrays out; no estimator or solver logic.

Each module here is numba (``@njit(cache=True)``, compiled on first use and
cached on disk); :mod:`metric_estimators._kernels.numpy` holds the numpy
*twin* of each module that has one: the same module name, the same function
names, arguments and outputs, with no compilation.  Which of the two a fit
runs on is decided once per fit by :func:`metric_estimators._backend.choose`.

Importing this package imports nothing: each numba module imports
:mod:`._setup` first, which sets numba up for the kernels (the cache
location on a read-only installation, stale-cache housekeeping and the
compile notices, :func:`metric_estimators._compilation.prepare`).

Compile time is part of every user's first contact, so kernels avoid what
compiles slowly (measured by ``benchmarks/bench_first_contact.py --kernels``):

* ``parallel=True`` kernels cost seconds to tens of seconds each; where a
  serial kernel does as well on small problems, the parallel one runs (and
  is compiled) only from a size on (``PARALLEL_MIN_NODES``), with the same
  results.
* Copying an array into an array slice (``a[:k] = b``, ``out[i] = row``)
  makes numba compile its shape-mismatch error message (string formatting,
  seconds of CPU once per process; measured: benchmarks/README.md,
  *Measurements behind choices in the code*); kernels copy with element
  loops.
* One signature per kernel: callers pass the dtypes and layouts the kernel
  documents, so that no second specialisation compiles.
"""
