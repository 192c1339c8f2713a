"""Constants of the kernels that code without numba must read too.

Where a kernel module and its twin in :mod:`metric_estimators._kernels.numpy`
promise the same bits (the hashes of LMNN's impostor pairs and of Project and
Forget's cycle constraints) or the same decisions (which LogDet projection is
skipped), they read the numbers from here, so that the two copies cannot
drift apart; so does the backend for the sizes from which the parallel
kernels run.  This module imports numpy only: the twins and the backend load
it without numba.  numba kernels take these module-level values as
compile-time constants (a change recompiles them: the kernels' cache stamp
covers every file of this package).
"""

import numpy as np

__all__ = ["APSP_PARALLEL_MIN_NODES", "CC_PAIRS_PARALLEL_MIN_PAIRS", "GOLDEN",
           "HASH_STEP_ADD", "MIX1", "MIX2", "PAIR_ORACLE_PARALLEL_MIN_POINTS", "P_TINY",
           "SHORT_EDGE_PARALLEL_MIN_NODES", "TRIANGLE_PARALLEL_MIN_NODES"]

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

# -- Sizes from which the parallel kernels run ------------------------------
# Below each size a kernel module calls the serial counterpart of its
# parallel kernel (the same results), which compiles in a fraction of the
# time; the parallel one is compiled only when a problem this large comes.
# The backend (metric_estimators._backend) reads them without importing
# numba, to know which kernels a fit of a given size needs compiled.

#: The dense triangle oracle (triangle_oracle), in nodes.  Kept low (one tile
#: of 128 columns) because the serial plain loop falls behind the tiled
#: vectorised kernel as n grows: warm fits must not slow down.
TRIANGLE_PARALLEL_MIN_NODES = 128
#: All-pairs shortest paths and their first hops (shortest_paths), in nodes.
APSP_PARALLEL_MIN_NODES = 256
#: The short-edge triangle oracle's passes (short_edge_triangles), in nodes.
SHORT_EDGE_PARALLEL_MIN_NODES = 256
#: ProjectAndForget's pair oracle scans the rows of a block in parallel
#: (pair_oracle), in points: below, a call scans at most 125,000 pairs, too
#: little work to share between threads.
PAIR_ORACLE_PARALLEL_MIN_POINTS = 500
#: A pass of correlation clustering's pair projections (cc_pair_projections),
#: in pairs: below, the threads' start-up costs more than the pass.
CC_PAIRS_PARALLEL_MIN_PAIRS = 1 << 16
