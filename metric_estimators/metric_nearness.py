"""The nearest metric to a dissimilarity matrix or to a graph's edge lengths.

:class:`MetricNearness` solves the (weighted squared L2, or KL) metric
nearness problem by Project and Forget (Sonthalia & Gilbert, "Project and
Forget: Solving Large-Scale Metric Constrained Problems", JMLR 23, 2022): the
estimator builds the edge vector, the weights and an oracle, and hands them
to the one driver :func:`metric_estimators.solvers.bregman.bregman_project_forget`
with a :class:`~metric_estimators.solvers.active_sets.CycleConstraints`
active set.
"""

import numbers
import warnings

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator

from . import _backend
from ._linalg import power_of_two_scale
from ._problems.edges import CompleteGraphEdges, SparseGraphEdges
from ._problems.metric_nearness import NearnessObjective
from ._reporting import FitReport, convergence_warning
from ._sklearn_private import HasMethods, Interval, StrOptions, _fit_context
from ._validation.matrices import (
    check_sparse_edge_weights,
    check_symmetric_matrix,
)
from .base import DaskClientMixin, DocLinkMixin, PrecomputedMixin
from .solvers.active_sets import CycleConstraints
from .solvers.bregman import TABLE_COLUMNS, bregman_project_forget
from .solvers.oracles import (
    ORACLE_PASS_RATIO,
    DenseShortestPathOracle,
    DenseTriangleOracle,
    SparseShortestPathOracle,
)

__all__ = ["MetricNearness"]

# an oracle call adding at most this fraction of the active set switches to
# max_passes passes (the active set is nearly complete; the duals settle):
# 0/1 ("labels01", "dirichlet") instances need ~2000 passes whatever the oracle does
_SETTLE = 0.05

# with triangles_per_edge != 1: the edges violated by more than _APEX_DEPTH
# times the call's largest violation contribute the triangles violated by
# more than _APEX_REL times the edge's own largest violation (the others
# their most violated one); a depth bounds the memory of the remembered
# triangles, which every violated edge contributing would multiply
# (measured: benchmarks/README.md, *Measurements behind choices in the code*)
_APEX_REL = 0.5
_APEX_DEPTH = 0.5

_SIMILARITY_HINT = (
    "MetricNearness takes dissimilarities (d(i, i) = 0); a non-zero diagonal "
    "usually means a similarity matrix S (a kernel, correlation or affinity "
    "with S[i, i] = 1): pass 1 - S (or S.max() - S) instead."
)


class MetricNearness(PrecomputedMixin, DaskClientMixin, DocLinkMixin, BaseEstimator):
    """Nearest metric to a dissimilarity matrix (weighted squared L2, or KL).

    Solves ::

        minimise    sum_{i<j} w_ij (M_ij - D_ij)^2
        subject to  M_ij <= M_ik + M_kj   for all i, j, k

    or, with ``divergence="kl"``, the same problem with the generalised
    Kullback-Leibler divergence ``sum_{i<j} M_ij log(M_ij / D_ij) - M_ij +
    D_ij`` as objective (unweighted, ``D_ij > 0``; the Bregman projections
    onto cycle inequalities are then multiplicative and in closed form)

    (the metric nearness problem of Brickell, Dhillon, Sra & Tropp, SIAM J.
    Matrix Anal. Appl. 2008) with Project and Forget (Sonthalia & Gilbert,
    JMLR 2022): Bregman projections with Hildreth's correction onto an active
    set of cycle inequalities ``M_uv <= sum of M over a path from u to v``,
    which an oracle (most violated triangles, or all-pairs shortest paths, on
    the current ``M``) keeps supplied with violated ones and from which
    constraints with a zero dual are forgotten.  Memory is proportional to the active set, never to the
    ``n^3`` triangle inequalities.

    If ``D`` is a scipy sparse matrix it is a graph: only its stored entries
    are variables, the constraints are the graph's cycle inequalities plus
    ``M_e >= 0``, and the oracle runs Dijkstra from every node.

    It is not a transformer: it repairs the one matrix it is fitted on
    (``metric_``, also returned by ``fit_transform``) and has no
    ``transform`` of new points. It takes dissimilarities (zero diagonal);
    for a similarity matrix ``S`` with ``S[i, i] = 1`` pass ``1 - S``.

    With the L2 divergence ``D`` may hold negative entries (e.g. the signed
    ``N(0, 1)`` instances of Sonthalia & Gilbert): the triangle inequalities
    ``M_ij <= M_ik + M_kj`` and ``M_ik <= M_ij + M_jk`` over distinct
    ``i, j, k`` add up to ``M_ij >= 0``, so the problem is well posed and
    ``metric_`` is non-negative.  Only ``divergence="kl"`` needs ``D > 0``.

    Parameters
    ----------
    tol : float, default=1e-6
        Convergence tolerance, relative to the largest absolute entry of
        ``D``: the run stops when no cycle inequality (nor ``M >= 0``) is
        violated by more than ``tol * max|D|`` and the duals are consistent (every remembered
        constraint with a positive dual is tight, within the same tolerance).
    max_iter : int, default=500
        Maximum number of oracle calls.
    max_passes : int, default=50
        Maximum number of projection passes over the active set between two
        oracle calls.
    oracle : {"triangle", "shortest_path"}, default="triangle"
        Oracle for a dense ``D``.  ``"shortest_path"``: for every violated
        edge, the cycle inequality of its shortest path (all-pairs shortest
        paths, blocked Floyd-Warshall, paths recovered hop by hop) -- the
        oracle of Sonthalia & Gilbert.  ``"triangle"``: the most violated
        triangle of every violated edge (a min-plus square, no path
        recovery); on a complete graph the triangles describe the same
        polytope, and it is faster, by far on 0/1 data, whose many zero
        distances make shortest paths long (measured in
        ``benchmarks/README.md``, *Measurements behind choices in the code*).
        Sparse graphs always use Dijkstra shortest paths.
    triangles_per_edge : int, default=1
        Triangle oracle only: how many violated triangles each violated edge
        contributes per oracle call.  1: its most violated one.  ``k > 1``:
        the edges violated by more than half the call's largest violation
        contribute their ``k`` most violated triangles among those violated
        by more than half their own largest violation (0: all of those),
        the other edges their most violated one.  Worth it when an edge is
        violated through many apexes at once -- Sonthalia & Gilbert's type 2
        instances, where a pair with disjoint label sets is violated through
        every node close to both, need about one oracle call per apex with
        1 and a few with 32 (see ``benchmarks/results/metric_nearness.md``);
        each call then costs two ``O(n)`` scans per violated edge more, and
        the active set is larger.
    divergence : {"l2", "kl"}, default="l2"
        ``"l2"``: weighted squared L2 (``sample_weight`` allowed).  ``"kl"``:
        generalised KL divergence ``KL(M || D)``; every off-diagonal entry of
        ``D`` (every stored entry of a sparse ``D``) must be positive and
        ``sample_weight`` must be None.  KL penalises relative rather than
        absolute changes, so small dissimilarities move less.
    verbose : int, default=0
        Print the Project-and-Forget table (oracle call, objective, largest
        violation, duals residual, active-set size, added, passes, time; see
        :data:`metric_estimators.solvers.bregman.TABLE_COLUMNS`); 1 throttles
        it, 2 prints every row.
    client : distributed.Client or None, default=None
        Sparse ``D`` only (ignored for dense input): run the shortest-path
        oracle's Dijkstra searches on this Dask cluster -- the graph is
        scattered to the workers once, every oracle call searches per block
        of sources there and merges the violated cycles here; the solution
        is bit for bit the in-process one (see ``docs/dask.rst``, "The
        shortest-path oracle on a cluster").  ``None``: in this process.
        ``clone`` shares the client; pickling drops it (``None``).

    Attributes
    ----------
    metric_ : ndarray of shape (n, n), or sparse matrix for a sparse ``D``
        The nearest metric found.
    objective_ : float
        ``sum_{i<j} w_ij (metric_ij - D_ij)^2``, or the KL divergence
        ``sum_{i<j} metric_ij log(metric_ij / D_ij) - metric_ij + D_ij``.
    violation_ : float
        Largest violation of a cycle inequality at the end, relative to
        ``max|D|``.
    n_iter_ : int
        Number of oracle calls.
    n_active_ : int
        Constraints remembered at the end (those with a positive dual).
    converged_ : bool
    history_ : dict of lists
        Per iteration: objective, largest violation (absolute), duals
        residual, active-set size, constraints added and forgotten, passes,
        time.  ``D`` whose largest absolute entry is outside
        ``[2**-20, 2**20]`` is divided internally by a power of two (the
        nearest metric to ``c D`` is ``c`` times that of ``D``);
        ``history_`` is in those units, every other attribute in the units of
        ``D``.
    loss_curve_ : ndarray
        ``history_["objective"]`` as an array.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import MetricNearness
    >>> D = np.array([[0, 1, 4], [1, 0, 1], [4, 1, 0]], dtype=float)
    >>> M = MetricNearness().fit_transform(D)
    >>> bool(M[0, 2] <= M[0, 1] + M[1, 2] + 1e-6)
    True
    """

    _parameter_constraints = {
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_passes": [Interval(numbers.Integral, 1, None, closed="left")],
        "oracle": [StrOptions({"triangle", "shortest_path"})],
        "triangles_per_edge": [Interval(numbers.Integral, 0, None, closed="left")],
        "divergence": [StrOptions({"l2", "kl"})],
        "verbose": ["verbose"],
        "client": [None, HasMethods(["scatter", "submit", "gather"])],
    }

    def __init__(self, tol=1e-6, max_iter=500, max_passes=50,
                 oracle="triangle", triangles_per_edge=1, divergence="l2",
                 verbose=0, client=None):
        self.tol = tol
        self.max_iter = max_iter
        self.max_passes = max_passes
        self.oracle = oracle
        self.triangles_per_edge = triangles_per_edge
        self.divergence = divergence
        self.verbose = verbose
        self.client = client

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, D, y=None, sample_weight=None):
        """Compute the nearest metric to ``D``.

        Parameters
        ----------
        D : array-like of shape (n, n) or sparse matrix
            Symmetric, finite, zero diagonal.  Entries may be negative with
            ``divergence="l2"`` (the triangle inequalities over distinct
            triples imply ``M >= 0``, so the problem stays well posed; a
            sparse ``D`` has ``M_e >= 0`` as explicit constraints); with
            ``divergence="kl"`` they must be strictly positive off the
            diagonal.
        y : ignored
        sample_weight : array-like of shape (n, n) or None
            Symmetric, strictly positive weights ``w_ij`` (the diagonal is
            ignored); ``None`` means all ones.

        Returns
        -------
        self
        """
        report = FitReport(self, TABLE_COLUMNS, verbose=self.verbose)
        # signed D is fine for L2 (the triangle inequalities over distinct
        # triples imply M >= 0); KL checks positivity itself (_check_kl)
        D = check_symmetric_matrix(D, "D", accept_sparse=True,
                                   zero_diagonal=True,
                                   diagonal_hint=_SIMILARITY_HINT)
        is_sparse = sparse.issparse(D)
        self._check_triangles_per_edge(is_sparse)
        # the kernels of the whole fit, chosen once (the options without a
        # twin are the backend's table, _backend.NO_TWIN)
        kernels = _backend.choose_for("cycles", self._options(is_sparse),
                                      D.shape[0])
        edges = (SparseGraphEdges(D) if is_sparse
                 else CompleteGraphEdges(D, kernels=kernels))
        we = self._edge_weights(sample_weight, D, edges)
        # entries of extreme scale are divided by a power of two: the
        # nearest metric to c D is c times that of D
        unit = power_of_two_scale(edges.values, center=False)
        d = edges.values / unit if unit != 1.0 else edges.values
        objective = NearnessObjective(
            d, we, self._check_kl(d, sample_weight is not None), kernels=kernels)
        # max |D| (= max D for non-negative D): the unit of tol
        scale = float(np.abs(d).max()) if d.size else 0.0
        tol_abs = self.tol * scale if scale > 0 else 1.0
        oracle, pass_budget, settle_fraction = self._oracle(edges, kernels)
        report.phase(f"{d.size} edges, {type(oracle).__name__}, tolerance "
                     f"{tol_abs:.3g}")
        res = bregman_project_forget(
            CycleConstraints(objective.start(), objective.winv,
                             self.divergence, kernels=kernels),
            oracle, objective=objective, tol=tol_abs, max_iter=self.max_iter,
            max_passes=self.max_passes, pass_budget=pass_budget,
            settle_fraction=settle_fraction, fixed_pass=objective.fixed_pass,
            report=report)
        objective.finish(res.point)
        self._store(res, edges, scale, unit, report)
        self.n_features_in_ = D.shape[0]
        return self

    def _options(self, is_sparse):
        """The options of this fit that :data:`metric_estimators._backend.NO_TWIN` may list."""
        if is_sparse:
            return ("sparse",)
        return (f"oracle={self.oracle!r}",
                "triangles_per_edge!=1" if self.triangles_per_edge != 1
                else "triangles_per_edge=1")

    def _check_triangles_per_edge(self, is_sparse):
        if self.triangles_per_edge != 1 and (is_sparse
                                             or self.oracle != "triangle"):
            warnings.warn(
                f"triangles_per_edge={self.triangles_per_edge} is ignored: it "
                "applies to the triangle oracle of a dense D only (this fit "
                "uses shortest paths). Leave it at 1, or pass a dense D with "
                "oracle='triangle'.", UserWarning, stacklevel=3)

    @staticmethod
    def _edge_weights(sample_weight, D, edges):
        """The validated weights on ``edges`` (ones if ``sample_weight`` is None)."""
        if sample_weight is None:
            return np.ones_like(edges.values)
        if isinstance(edges, SparseGraphEdges):
            return check_sparse_edge_weights(sample_weight, D, edges.rows,
                                             edges.cols)
        return edges.vector(check_symmetric_matrix(
            sample_weight.toarray() if sparse.issparse(sample_weight)
            else sample_weight, "sample_weight", edges.n, like="D",
            nonnegative=True, positive_off_diagonal=True))

    def _oracle(self, edges, kernels):
        """``(oracle, pass_budget, settle_fraction)`` for ``edges``.

        Dense: the triangle or shortest-path oracle (``self.oracle``), a
        pass budget of :data:`ORACLE_PASS_RATIO` times its ``n^3`` and
        :data:`_SETTLE`; sparse: Dijkstra from every node, ``20 n |E|``.
        """
        n = edges.n
        if isinstance(edges, SparseGraphEdges):
            return (SparseShortestPathOracle(n, edges.rows, edges.cols,
                                             client=self.client,
                                             search="bounded",
                                             kernels=kernels),
                    ORACLE_PASS_RATIO * 20.0 * n * max(edges.values.size, 1),
                    0.0)
        oracle = (DenseTriangleOracle(n, apexes=self.triangles_per_edge,
                                      apex_rel=_APEX_REL,
                                      apex_depth=_APEX_DEPTH, kernels=kernels)
                  if self.oracle == "triangle"
                  else DenseShortestPathOracle(n, kernels=kernels))
        return oracle, ORACLE_PASS_RATIO * float(n) ** 3, _SETTLE

    def _check_kl(self, d, weighted):
        """True for the KL divergence, after checking its requirements."""
        if self.divergence != "kl":
            return False
        if weighted:
            raise ValueError("sample_weight is not supported with "
                             "divergence='kl' (weighted KL projections have "
                             "no closed form); use divergence='l2'.")
        n_neg = int(np.count_nonzero(d < 0))
        n_zero = int(np.count_nonzero(d == 0))
        if n_neg or n_zero:
            raise ValueError(
                "divergence='kl' needs strictly positive dissimilarities off "
                "the diagonal of D (x log(x / d) is undefined for d <= 0); D "
                f"has {n_neg} negative and {n_zero} zero entries off the "
                "diagonal (each pair i < j counted once). Use "
                "divergence='l2', which accepts signed D, or make D positive "
                "(e.g. add a constant c > 0 off the diagonal).")
        return True

    def _store(self, res, edges, scale, unit, report):
        """Set the fitted attributes from the driver's result; warn if it did not converge.

        ``res`` is in the units of ``D / unit``; ``history_`` stays in those
        units (the squared L2 objective scales as ``unit^2``, KL as
        ``unit``).
        """
        if res.converged:
            report.finish(f"converged after {res.n_iter} oracle calls")
        else:
            report.finish(f"stopped after {res.n_iter} oracle calls")
            convergence_warning(self, max_iter=self.max_iter,
                                unit="oracle calls", tol=self.tol,
                                history=res.history["objective"],
                                detail=res.detail(scale=max(scale, 0.0) or 1.0)
                                + " (relative to the largest absolute entry of D)",
                                stacklevel=4)
        metric = edges.matrix(res.point)
        self.metric_ = metric * unit if unit != 1.0 else metric
        power = 1 if self.divergence == "kl" else 2
        self.objective_ = res.objective * unit ** power
        self.violation_ = (res.max_violation / scale if scale > 0
                           else res.max_violation)
        self.n_iter_ = res.n_iter
        self.n_active_ = len(res.active)
        self.converged_ = res.converged
        self.history_ = res.history
        self.loss_curve_ = (np.asarray(res.history["objective"])
                            * unit ** power)

    def fit_transform(self, D, y=None, sample_weight=None):
        """Fit and return ``metric_``."""
        return self.fit(D, y, sample_weight=sample_weight).metric_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # only the KL divergence needs D > 0; L2 takes signed D
        tags.input_tags.positive_only = self.divergence == "kl"
        return tags
