"""The correlation-clustering solve: the LP, its certificate, its rounding and its bound.

One sequence of steps for dense and sparse graphs (the problem object,
``graph``, hides what differs):

1. solve the regularised LP by continuation in gamma
   (:func:`~metric_estimators.solvers.continuation.solve_continuation`,
   each stage by Project and Forget), interrupted, with ``certify_tol`` or
   ``max_time``, by the checks of a
   :class:`~metric_estimators.solvers.certificates.CertificateStop`, each a
   rounding and a lower bound (:func:`round_then_bound`);
2. keep the clipped iterate if the solve converged or was stopped (on a
   large graph its closure can cost more than the solve), else its closure
   (``graph.closure``: a feasible point, whose LP value bounds the optimum
   from above);
3. round that point into the fit's
   :class:`~metric_estimators.solvers.cc_rounding.ClusteringPool`, then
   bound the LP from below (:func:`round_then_bound`), unless the last check
   did both at this very point.

The rounding goes before the bound: near a deadline, on large sparse graphs,
the rounding's crossings lower the cost by more than the refinement raises
the bound; the rounding leaves :data:`BOUND_SHARE` of the time left to the
bound.  The one exception is the final step of a graph whose
``bound_before_rounding`` is True (dense graphs): its bound is not refined,
so it needs no time, and it is made before the ``n x n`` solution matrix
exists, so that its ``O(n^2)`` temporaries do not add to that matrix (the
peak memory of a dense fit); that rounding then has no deadline.  The bound (:func:`certified_lower_bound`) is the LP's
weak-duality bound, refined by L-BFGS-B
(:func:`~metric_estimators.solvers.dual_bounds.refine_box_duals`) where
``graph.refine_bound`` says it is affordable (sparse graphs).

The solver imports no problem and no estimator: it reads the LP state
(:class:`~metric_estimators._problems.correlation_clustering.WeightedCorrelationLP`),
the graph and the oracle through their methods.
"""

import time
from typing import NamedTuple

import numpy as np

from .bregman import bregman_project_forget
from .certificates import CertificateStop, CheckResult
from .continuation import gamma_stages, solve_continuation
from .dual_bounds import refine_box_duals

__all__ = ["BOUND_SHARE", "CCSolution", "certified_lower_bound",
           "round_then_bound", "solve_and_round"]

#: share of the time left to ``max_time`` that a check or the final
#: rounding leaves to the refinement of the bound after it
BOUND_SHARE = 0.25


def certified_lower_bound(lp, refine, deadline=None):
    """The LP's weak-duality lower bound, refined by L-BFGS-B if ``refine``.

    ``lp.lp_lower_bound()``, then, with ``refine`` and a non-empty active
    set, :func:`~metric_estimators.solvers.dual_bounds.refine_box_duals`
    from ``lp.box_form()`` (weights ``lp.w``): about ``O(nnz)`` per
    iteration, a few thousand iterations, stopped at ``deadline`` (a
    :func:`time.perf_counter` time) with the best multipliers so far.
    Certified either way.
    """
    bound = lp.lp_lower_bound()
    if refine and len(lp.active):
        c, k, A, y0 = lp.box_form()
        refined, _ = refine_box_duals(c, k, A, y0, weights=lp.w,
                                      deadline=deadline)
        bound = max(bound, refined)
    return bound


def round_then_bound(lp, pool, X, w_scale, refine, deadline):
    """Round ``X`` into ``pool``, then bound the LP; return ``(bound, detail, once)``.

    With a ``deadline``, the rounding's trials and crossings stop early
    enough to leave :data:`BOUND_SHARE` of the time left to the bound's
    refinement, which stops at the deadline.  ``bound`` is in the units of
    the graph (times ``w_scale``); ``detail`` gives the time of each part;
    ``once`` is the seconds of the LP-free optima, made by the first
    rounding only (:meth:`~metric_estimators.solvers.cc_rounding.ClusteringPool.round`).
    """
    start = time.perf_counter()
    cross_by = (None if deadline is None else
                deadline - BOUND_SHARE * max(deadline - start, 0.0))
    once = pool.round(X, cross_by)
    mid = time.perf_counter()
    bound = certified_lower_bound(lp, refine, deadline) * w_scale
    free = f" (LP-free optima {once:.2f} s)" if once else ""
    return bound, (f"rounding {mid - start:.2f} s{free}, bound "
                   f"{time.perf_counter() - mid:.2f} s"), once


class CCSolution(NamedTuple):
    """What :func:`solve_and_round` found (LP values in the graph's units)."""

    lp_solution: object
    lp_objective: float
    lower_bound: float
    converged: bool
    certified: bool
    timed_out: bool
    n_checks: int
    n_iter: int
    stages: np.ndarray
    history: dict
    violation: float
    relative_gap: float
    gamma: float
    n_active: int
    detail: str


def _stop_message(certificate, n_calls):
    if certificate is not None and certificate.certified_:
        return (f"LP stopped after {n_calls} oracle calls: clustering "
                f"certified within {1.0 + certificate.tol:.4g} of the "
                f"lower bound")
    if certificate is not None and certificate.timed_out_:
        return f"LP stopped by max_time after {n_calls} oracle calls"
    return f"LP stopped after {n_calls} oracle calls"


def solve_and_round(lp, oracle, graph, pool, *, w_scale, gamma, tol, gap_tol,
                    max_iter, max_passes, certify_tol=None, max_time=None,
                    report=None, search_label=None):
    """Solve the LP of ``graph``, round it into ``pool`` and bound it (module docstring).

    Parameters
    ----------
    lp : WeightedCorrelationLP
        The LP state at the first stage's gamma, weights divided by
        ``w_scale``.
    oracle : object
        The oracle of ``lp``'s cycle inequalities; dropped once the closure
        is made (pass it without keeping a reference: its buffers go before
        the rounding's).
    graph : DenseSignedGraph or SparseSignedGraph
        ``edge_matrix(x)``, ``closure(x, oracle)``, ``closure_note``,
        ``describe(lp)``, ``min_passes(max_passes)``, ``refine_bound``,
        ``bound_before_rounding``.
    pool : ClusteringPool
        Receives the roundings; its head is the fit's clustering.
    w_scale : float
        The power of two the weights were divided by.
    gamma, tol, gap_tol, max_iter, max_passes, certify_tol, max_time
        As in :class:`~metric_estimators.CorrelationClustering`.
    report : FitReport or None
    search_label : callable ``search_label(oracle) -> str`` or None
        The table's last column: which search the oracle ran.

    Returns
    -------
    CCSolution
    """
    refine = graph.refine_bound
    certificate = None
    if certify_tol is not None or max_time is not None:
        def check(deadline):
            bound, detail, once = round_then_bound(
                lp, pool, graph.edge_matrix(np.clip(lp.x, 0.0, 1.0)),
                w_scale, refine, deadline)
            return CheckResult(pool.best[1], bound, detail, once)

        certificate = CertificateStop(check, lp.lp_objective, certify_tol,
                                      report=report, max_time=max_time)
    stages = gamma_stages(gamma)
    if report is not None:
        report.phase(f"{graph.describe(lp)}, gamma {gamma:.3g}, stages "
                     f"{', '.join(f'{g:.3g}' for g in stages)}")

    def extra_row():
        # the gap is measured once the constraints are within 10 tol: "-" before
        gap = lp.rel_gap if np.isfinite(lp.rel_gap) else None
        return (lp.gamma, gap,
                "" if search_label is None else search_label(oracle))

    results, stages = solve_continuation(
        lp, oracle, bregman_project_forget, gamma=gamma, tol=tol,
        gap_tol=gap_tol, max_iter=max_iter, max_passes=max_passes,
        report=report, extra_row=extra_row,
        min_passes=graph.min_passes(max_passes), certificate=certificate)
    res = results[-1]
    stopped = certificate is not None and certificate.stopped_
    # stopped right after a check: it rounded and bounded this very point
    final = certificate is not None and certificate.final_check_
    converged = res.converged and len(results) == len(stages) and not stopped
    n_iter = sum(r.n_iter for r in results)
    if converged or stopped:
        x = np.clip(lp.x, 0.0, 1.0)
    else:
        # never return a non-metric: the closure of the clipped iterate is a
        # feasible point, its LP value an upper bound
        if report is not None:
            report.phase(graph.closure_note)
        x = graph.closure(lp.x, oracle)
    oracle = None  # its buffers (n x n on a dense graph), before the rounding
    lp_objective = lp.lp_objective(x) * w_scale
    first = graph.bound_before_rounding
    if final:
        lower = certificate.best_bound_
    elif first:
        # made before the solution matrix exists, so that the bound's
        # temporaries do not add to it (see the graph's bound_before_rounding)
        lower = certified_lower_bound(lp, refine) * w_scale
    X = graph.edge_matrix(x)
    x = None
    if not final:
        if report is not None:
            report.phase("lower bound on the optimum, then rounding into "
                         "clusters" if first else "rounding into clusters, "
                         "then lower bound on the optimum")
        if first:
            pool.round(X)
        else:
            lower, detail, _ = round_then_bound(
                lp, pool, X, w_scale, refine,
                None if certificate is None else certificate.deadline)
            if report is not None:
                report.phase(detail)
        if certificate is not None:
            lower = max(lower, certificate.best_bound_)
    if report is not None:
        report.finish(f"LP converged after {n_iter} oracle calls (gamma "
                      f"{lp.gamma:.3g})" if converged
                      else _stop_message(certificate, n_iter))
    history = {k: [v for r in results for v in r.history[k]]
               for k in results[0].history}
    history["gamma"] = [g for r, g in zip(results, stages)
                        for _ in r.history["objective"]]
    return CCSolution(
        lp_solution=X, lp_objective=lp_objective,
        lower_bound=lower, converged=converged,
        certified=certificate is not None and certificate.certified_,
        timed_out=certificate is not None and certificate.timed_out_,
        n_checks=0 if certificate is None else certificate.n_checks_,
        n_iter=n_iter, stages=np.asarray(stages[:len(results)]),
        history=history,
        violation=max(res.max_violation, lp.pair_violation),
        relative_gap=lp.rel_gap, gamma=lp.gamma, n_active=len(lp.active),
        detail=res.detail())
