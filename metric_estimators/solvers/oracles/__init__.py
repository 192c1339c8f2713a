"""Violated-constraint oracles for the Project-and-Forget driver (no scikit-learn here).

An oracle looks at the current iterate and returns constraints it violates;
Project and Forget (Sonthalia & Gilbert, "Project and Forget: Solving
Large-Scale Metric Constrained Problems", JMLR 23, 2022) only ever stores the
constraints an oracle returned and has not forgotten since.  Every oracle is
called as ``oracle(point, threshold, active, precision="float64")`` and
returns ``(*constraints, max_violation)``: the constraints violated by more
than ``threshold``, in the layout the matching active set's ``add`` takes
(:mod:`metric_estimators.solvers.active_sets`), and the largest violation of
*any* constraint (remembered ones included), which the driver's stopping
rule reads.

Cycle constraints (metric nearness, correlation clustering; absolute
violations in the units of ``x``, for
:class:`~metric_estimators.solvers.active_sets.CycleConstraints`):

For metric problems the constraints are the cycle inequalities
``x_uv <= sum_{f in P} x_f`` for a path ``P`` from ``u`` to ``v``.  On a graph
whose edge lengths are the current ``x``, the edge ``uv`` violates some cycle
inequality exactly when the shortest ``u``-``v`` path is shorter than
``x_uv``, and the most violated inequality for that edge is the one with the
shortest path; the oracles return one such constraint per violated edge.

* :class:`DenseShortestPathOracle` -- complete graphs: blocked Floyd-Warshall
  with a next-hop matrix (numba), O(n^3) time and O(n^2) memory per call.
* :class:`DenseTriangleOracle` -- complete graphs, triangles only (a
  min-plus square instead of shortest paths).
* :class:`SparseShortestPathOracle` -- sparse graphs: Dijkstra from every
  node (``scipy.sparse.csgraph.dijkstra`` with predecessors), in chunks of
  sources so that memory stays O(chunk * n); the blocks of sources run
  in-process or on a Dask cluster (:class:`InProcessExecutor`,
  :class:`DaskExecutor`).

LogDet pair constraints (ITML's problem; violations relative to the bound,
for :class:`~metric_estimators.solvers.active_sets.LogDetPairConstraints`):

* :class:`FixedListOracle` -- a given list of pairs (ITML): checks every
  listed constraint, returns the violated ones not in the active set.
* :class:`LabelPairOracle` -- every same-class / different-class pair of a
  labelled data set (ProjectAndForget), scanned in blocks of rows by a numba
  kernel (:func:`~metric_estimators._kernels.pair_oracle.scan_pair_block`),
  never materialising the ``n^2`` pairs.

One module per family: :mod:`~metric_estimators.solvers.oracles.dense`,
:mod:`~metric_estimators.solvers.oracles.sparse` (with its executors) and
:mod:`~metric_estimators.solvers.oracles.pairs`; every public name is
importable from this package.
"""

from .dense import (
    ORACLE_PASS_RATIO,
    DenseShortestPathOracle,
    DenseTriangleOracle,
    ShortEdgeTriangleOracle,
    n_edges,
)
from .pairs import FixedListOracle, LabelPairOracle
from .sparse import (
    DaskExecutor,
    InProcessExecutor,
    SparseShortestPathOracle,
    make_executor,
)

__all__ = ["DenseShortestPathOracle", "DenseTriangleOracle",
           "ShortEdgeTriangleOracle",
           "SparseShortestPathOracle", "InProcessExecutor", "DaskExecutor",
           "make_executor", "FixedListOracle", "LabelPairOracle",
           "ORACLE_PASS_RATIO", "n_edges"]
