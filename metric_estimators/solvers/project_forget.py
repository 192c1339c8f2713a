"""Project and Forget: Bregman projections with an active set of constraints.

Sonthalia & Gilbert, "Project and Forget: Solving Large-Scale Metric
Constrained Problems", JMLR 23 (2022), arXiv:2005.03853.

The problem is ``min_x D_f(x, x0)`` over the intersection of very many
half-spaces ``a_c^T x <= b_c`` that are never listed: an *oracle* returns
violated ones on demand.  Every iteration

1. asks the oracle for constraints violated at the current ``x`` and adds the
   new ones to the active set (a hash of the edge and path keeps the set free
   of duplicates);
2. projects onto every constraint of the active set (and onto the fixed,
   explicitly listed constraints of the problem, if any) with Hildreth's
   correction (Hildreth 1957; Bregman 1967): each constraint carries a dual
   ``z_c >= 0`` and a projection moves ``x`` by at most what restores
   ``z_c`` to zero;
3. *forgets* the constraints whose dual is zero: they are satisfied and carry
   no information, and the oracle will return them again if they become
   violated.

Memory is proportional to the active set, never to the number of possible
constraints (``n^3`` triangles for metric nearness on ``n`` points).

Stopping.  Hildreth's iterate becomes feasible long before it is optimal (the
duals are still wrong).  The solver stops only when both hold:

* the oracle finds no constraint violated by more than ``tol_abs``, and
* the last pass over the active set found every constraint with a positive
  dual tight and every other satisfied, within ``tol_abs`` (complementary
  slackness; equivalently, a full pass moves nothing by more than the
  tolerance).

Squared L2, weighted squared L2 (``f(x) = 1/2 sum_e w_e x_e^2``) and the
generalised Kullback-Leibler divergence (``f(x) = sum_e x_e log x_e - x_e``,
closed-form projections because cycle constraints have +-1 coefficients) are
the divergences implemented for cycle constraints; the ITML LogDet divergence is
handled by :mod:`metric_estimators.solvers.bregman` with the same active-set
logic (see :class:`metric_estimators.ProjectAndForget`).
"""

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._kernels.constraint_store import (
    build_hash_table,
    compact_constraints,
    constraint_hashes,
    filter_new,
)
from .._kernels.cycle_projections import (
    project_paths_kl,
    project_paths_l2,
    project_triangles_unit,
)

__all__ = ["ActiveSet", "ProjectForgetResult", "project_and_forget",
           "ConvergenceWarningMessage"]

ConvergenceWarningMessage = (
    "Project and Forget stopped at max_iter={max_iter} before convergence "
    "(largest violation {viol:.3g}, duals residual {resid:.3g}, tolerance "
    "{tol:.3g}); increase max_iter or tol."
)


class ActiveSet:
    """Cycle constraints ``x_e - sum_{f in P} x_f <= 0`` with their duals.

    Stored in CSR form: ``edge[c]``, path edges ``path[ptr[c]:ptr[c+1]]``,
    dual ``z[c]`` and a 64-bit ``hashes[c]`` of (edge, path) for
    de-duplication.
    """

    def __init__(self):
        self.edge = np.empty(0, dtype=np.int64)
        self.ptr = np.zeros(1, dtype=np.int64)
        self.path = np.empty(0, dtype=np.int32)
        self.z = np.empty(0, dtype=np.float64)
        self.hashes = np.empty(0, dtype=np.uint64)
        self._table = None
        self.triangles = True  # every path has two edges

    def __len__(self):
        return int(self.edge.size)

    @property
    def nnz(self):
        """Number of stored path entries (plus one per constraint)."""
        return int(self.path.size + self.edge.size)

    @property
    def nbytes(self):
        return (self.edge.nbytes + self.ptr.nbytes + self.path.nbytes
                + self.z.nbytes + self.hashes.nbytes)

    def add(self, edge, ptr, path):
        """Append the constraints not already present; return how many."""
        if edge.size == 0:
            return 0
        h = constraint_hashes(edge, ptr, path)
        if self._table is None:
            self._table = build_hash_table(self.hashes)
        keep = filter_new(self._table, h)
        if not keep.all():
            edge, ptr, path, _, h = compact_constraints(
                edge, ptr, path, np.zeros(edge.size), h, keep)
        k = int(edge.size)
        if k == 0:
            return 0
        if self.triangles and not np.all(np.diff(ptr) == 2):
            self.triangles = False
        self.path = np.concatenate((self.path, path))
        self.ptr = np.concatenate((self.ptr, ptr[1:] + self.ptr[-1]))
        self.edge = np.concatenate((self.edge, edge))
        self.z = np.concatenate((self.z, np.zeros(k)))
        self.hashes = np.concatenate((self.hashes, h))
        self._table = None
        return k

    def forget(self):
        """Drop the constraints whose dual is zero; return how many."""
        keep = self.z > 0.0
        dropped = int(keep.size - np.count_nonzero(keep))
        if dropped:
            (self.edge, self.ptr, self.path, self.z,
             self.hashes) = compact_constraints(
                self.edge, self.ptr, self.path, self.z, self.hashes, keep)
            self._table = None
        return dropped

    def project(self, x, winv, start=0, uniform=None, divergence="l2"):
        """One Hildreth pass from constraint ``start``.

        ``divergence="l2"``: weighted squared L2; ``uniform`` is the common
        value of ``winv`` if all weights are equal (a faster kernel for
        triangles), else ``None``.  ``divergence="kl"``: the Kullback-Leibler
        divergence (``winv`` and ``uniform`` unused).
        """
        if divergence == "kl":
            return project_paths_kl(x, self.edge, self.ptr, self.path, self.z,
                                    start, self.edge.size)
        if uniform is not None and self.triangles:
            return project_triangles_unit(x, float(uniform), self.edge,
                                          self.path, self.z, start,
                                          self.edge.size)
        return project_paths_l2(x, winv, self.edge, self.ptr, self.path,
                                self.z, start, self.edge.size)

    def paths(self):
        """List of (edge, path edges) pairs (for inspection and tests)."""
        return [(int(self.edge[c]), self.path[self.ptr[c]:self.ptr[c + 1]])
                for c in range(len(self))]


@dataclass
class ProjectForgetResult:
    """Outcome of :func:`project_and_forget`.

    Attributes
    ----------
    x : ndarray
        The solution.
    active : ActiveSet
        The constraints remembered at the end, with their duals ``active.z``.
    converged : bool
    n_iter : int
        Number of oracle calls (outer iterations).
    n_passes : int
        Total number of passes over the active set.
    max_violation : float
        Largest violation (absolute) found by the last oracle call.
    residual : float
        Complementary-slackness residual of the last pass.
    objective : float
        Final objective value.
    history : dict of lists
        Per iteration: ``objective``, ``max_violation``, ``residual``,
        ``n_active``, ``n_added``, ``n_forgotten``, ``passes``, ``time``.
    """

    x: np.ndarray
    active: ActiveSet
    converged: bool
    n_iter: int
    n_passes: int
    max_violation: float
    residual: float
    objective: float
    history: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


def _print_header():
    print(f"{'Iteration':>9} {'Objective':>14} {'Violation':>10} "
          f"{'Residual':>10} {'Active':>10} {'Added':>9} {'Passes':>6} "
          f"{'Time(s)':>8}")
    print("-" * 84)


def project_and_forget(x0, winv, oracle, *, objective, tol_abs, max_iter=100,
                       max_passes=20, pass_budget=None, min_passes=1,
                       fixed_pass=None, add_threshold=None,
                       settle_fraction=0.0, divergence="l2", verbose=0,
                       warn=True, warning_category=UserWarning):
    """Minimise ``1/2 sum_e w_e (x_e - x0_e)^2`` over oracle-given cycle
    constraints (plus fixed constraints handled by ``fixed_pass``).

    Parameters
    ----------
    x0 : ndarray of shape (m,)
        Starting point (the point to project, Hildreth's ``z = 0`` iterate);
        not modified.
    winv : ndarray of shape (m,)
        Inverse weights ``1 / w_e`` of the variables in cycle constraints.
    oracle : callable ``oracle(x, threshold) -> (edge, ptr, path, max_viol)``
        See :mod:`metric_estimators.solvers.oracles`.
    objective : callable ``objective(x) -> float``
    tol_abs : float
        Absolute tolerance on violations and on the duals residual.
    max_iter : int
        Maximum number of oracle calls.
    max_passes : int
        Maximum number of passes over the active set between oracle calls.
    pass_budget : float or None
        Cost of one oracle call in the same units as the number of stored
        path entries (``ActiveSet.nnz``); the number of passes between two
        oracle calls is ``clip(pass_budget / nnz, 1, max_passes)``, or
        ``max_passes`` when the oracle returned nothing new (passes stop
        earlier once the residual is below ``tol_abs``).  ``None``
        means ``max_passes``.  A deterministic rule, so results are
        reproducible.
    min_passes : int
        Lower bound of that number of passes.
    fixed_pass : callable ``fixed_pass(x) -> residual`` or None
        A Hildreth pass over the problem's explicit constraints (it owns their
        duals), run after every pass over the active set.
    add_threshold : float or None
        Only constraints violated by more than this are added
        (default ``tol_abs / 10``).
    divergence : {"l2", "kl"}
        ``"l2"``: weighted squared L2, ``1/2 sum_e w_e (x_e - x0_e)^2``.
        ``"kl"``: generalised Kullback-Leibler divergence
        ``sum_e x_e log(x_e / x0_e) - x_e + x0_e`` (unweighted; ``x0 > 0``;
        ``winv`` is ignored; see :func:`~metric_estimators._kernels.cycle_projections.project_paths_kl`).
    settle_fraction : float
        When an oracle call adds at most this fraction of the active set's
        size, the active set is taken as nearly complete and ``max_passes``
        passes run (the duals settle) instead of the ``pass_budget`` rule.
    verbose : int
        Print one line per iteration if > 0.
    warn : bool
        Emit ``warning_category`` when ``max_iter`` is reached.

    Returns
    -------
    ProjectForgetResult
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    winv = np.ascontiguousarray(winv, dtype=np.float64)
    active = ActiveSet()
    if divergence not in ("l2", "kl"):
        raise ValueError(f"divergence must be 'l2' or 'kl', got {divergence!r}.")
    uniform = (float(winv[0]) if winv.size and np.all(winv == winv[0])
               else None)
    if add_threshold is None:
        add_threshold = tol_abs / 10.0
    hist = {k: [] for k in ("objective", "max_violation", "residual",
                            "n_active", "n_added", "n_forgotten", "passes",
                            "time")}
    t0 = time.perf_counter()
    if verbose:
        _print_header()
    resid = np.inf
    maxv = np.inf
    converged = False
    n_passes_total = 0
    it = 0
    scale = float(np.abs(x).max()) if x.size else 1.0
    use32 = getattr(oracle, "supports_float32", False)
    for it in range(1, max_iter + 1):
        # single-precision shortest paths while far from the tolerance; the
        # final iterations (and the certificate of convergence) in float64
        if use32 and maxv > max(10.0 * tol_abs, 1e-5 * scale):
            edge, ptr, path, maxv = oracle(x, add_threshold,
                                           precision="float32")
        elif use32:
            edge, ptr, path, maxv = oracle(x, add_threshold,
                                           precision="float64")
        else:
            edge, ptr, path, maxv = oracle(x, add_threshold)
        maxv = float(maxv)
        if maxv <= tol_abs and resid <= tol_abs:
            converged = True
            it -= 1  # this oracle call only certified the previous iterate
            break
        start = len(active)
        added = active.add(edge, ptr, path)
        if pass_budget is None or added <= settle_fraction * len(active):
            # (almost) nothing new from the oracle: the active set is nearly
            # right and only the duals need to settle, so spend the whole
            # pass allowance
            n_pass = max_passes
        else:
            n_pass = int(np.clip(pass_budget / max(active.nnz, 1),
                                 min(min_passes, max_passes), max_passes))
        # the new constraints first, then full passes
        if added:
            active.project(x, winv, start, uniform, divergence)
        done = 0
        for done in range(1, n_pass + 1):
            resid = active.project(x, winv, 0, uniform, divergence)
            if fixed_pass is not None:
                resid = max(resid, fixed_pass(x))
            if resid <= tol_abs:
                break
        n_passes_total += done
        forgotten = active.forget()
        obj = float(objective(x))
        hist["objective"].append(obj)
        hist["max_violation"].append(maxv)
        hist["residual"].append(float(resid))
        hist["n_active"].append(len(active))
        hist["n_added"].append(added)
        hist["n_forgotten"].append(forgotten)
        hist["passes"].append(done)
        hist["time"].append(time.perf_counter() - t0)
        if verbose:
            print(f"{it:>9d} {obj:>14.8g} {maxv:>10.3e} {resid:>10.3e} "
                  f"{len(active):>10d} {added:>9d} {done:>6d} "
                  f"{hist['time'][-1]:>8.2f}", flush=True)
    if not converged and warn:
        warnings.warn(
            ConvergenceWarningMessage.format(max_iter=max_iter, viol=maxv,
                                             resid=resid, tol=tol_abs),
            warning_category,
        )
    return ProjectForgetResult(
        x=x, active=active, converged=converged, n_iter=it,
        n_passes=n_passes_total, max_violation=maxv, residual=float(resid),
        objective=float(objective(x)), history=hist,
    )
