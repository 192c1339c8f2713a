"""Constants that a numba kernel and its numpy twin must share exactly.

Where a kernel module and its twin in :mod:`metric_estimators._kernels.numpy`
promise the same bits (the hashes of LMNN's impostor pairs and of Project and
Forget's cycle constraints) or the same decisions (which LogDet projection is
skipped), they read the numbers from here, so that the two copies cannot
drift apart.  This module imports numpy only: the twins load it without
numba.  numba kernels take these module-level values as compile-time
constants (a change recompiles them: the kernels' cache stamp covers every
file of this package).
"""

import numpy as np

__all__ = ["GOLDEN", "HASH_STEP_ADD", "MIX1", "MIX2", "P_TINY"]

#: splitmix64's increment, the odd integer nearest ``2**64`` divided by the
#: golden ratio: multiplying by it spreads consecutive integers over 64 bits.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: splitmix64's two finalising multipliers (each after an xor-shift).
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
#: Added to each path vertex before a constraint hash mixes it in, so that
#: vertex 0 still changes the hash.
HASH_STEP_ADD = np.uint64(0x632BE59BD9B4E019)

#: LogDet projections: ``p = v^T A v`` at or below this means ``v`` is
#: (numerically) in the null space of ``A``; the constraint cannot be
#: projected onto and is skipped.
P_TINY = 1e-300
