"""Continuation in gamma for the regularised correlation-clustering LP.

The regularised problem of Veldt, Gleich, Wirth & Saunderson (SIAM J. Math.
Data Sci. 2019; see
:mod:`metric_estimators._problems.correlation_clustering`) solves the LP for
large ``gamma``, but Hildreth's method started at ``f = -gamma`` needs
``O(gamma)`` passes to unwind the pair duals.  :func:`solve_continuation`
therefore solves at ``gamma_k = 1, 10, 100, ..., gamma``
(:func:`gamma_stages`), each stage warm-started from the previous duals
scaled by the gamma ratio (``problem.rescale_gamma``), each stage by the one
Project-and-Forget driver.
"""

__all__ = ["INTERMEDIATE_GAP_TOL", "SETTLE_PASSES", "gamma_stages",
           "solve_continuation"]

#: relative QP gap at which a continuation stage before the last one stops
INTERMEDIATE_GAP_TOL = 1e-4


def gamma_stages(gamma):
    """Continuation stages ``1, 10, 100, ..., gamma`` (``[gamma]`` if ``gamma <= 10``)."""
    gamma = float(gamma)
    if gamma <= 10.0:
        return [gamma]
    stages = []
    g = 1.0
    while g < gamma:
        stages.append(g)
        g *= 10.0
    stages.append(gamma)
    return stages


#: most passes over the pair constraints alone before a stage
SETTLE_PASSES = 50


def solve_continuation(problem, oracle, driver, *, gamma, tol, gap_tol,
                       max_iter, max_passes, report=None, extra_row=None,
                       min_passes=5, certificate=None):
    """Solve ``problem`` at ``gamma`` through the stages of :func:`gamma_stages`.

    ``problem`` is a
    :class:`~metric_estimators._problems.correlation_clustering.WeightedCorrelationLP`
    and ``driver`` is :func:`metric_estimators.solvers.bregman.bregman_project_forget`.
    Before each stage, up to :data:`SETTLE_PASSES` passes over the pair
    constraints alone (``problem.pair_pass``) bring them within ``tol / 10``;
    every stage then runs the driver with the gap rule (``problem.make_stop_rule``;
    the stages before the last only warm-start the next one and stop at a
    relative gap of ``max(gap_tol, INTERMEDIATE_GAP_TOL)``)
    and the pair pass as the fixed pass, on the remaining oracle-call budget,
    with at least ``min_passes`` passes after an oracle call that added more
    than 5 % of the active set (``max_passes`` otherwise; the sparse path,
    whose oracle calls cost many passes, asks for ``max_passes`` always).
    With a ``certificate``
    (:class:`~metric_estimators.solvers.certificates.CertificateStop`) every
    stage's stop rule also runs its checks, and the solve stops, at
    whatever stage, once a check certifies or the deadline passes
    (``certificate.stopped_``).
    Returns ``(results, stages)``: one driver result per stage run.
    """
    results = []
    stages = gamma_stages(gamma)
    used = 0
    for k, g in enumerate(stages):
        if k:
            problem.rescale_gamma(g)
        for _ in range(SETTLE_PASSES):  # the pairs alone, before any triangle
            if problem.pair_pass() <= tol / 10.0:
                break
        if report is not None and len(stages) > 1:
            report.phase(f"stage {k + 1}/{len(stages)}: gamma {g:.3g}")
        stop_rule = problem.make_stop_rule(
            tol, gap_tol if k == len(stages) - 1
            else max(gap_tol, INTERMEDIATE_GAP_TOL))
        if certificate is not None:
            stop_rule = certificate.wrap(stop_rule)
        res = driver(
            problem.active, oracle, objective=problem.lp_objective, tol=tol,
            max_iter=max(max_iter - used, 1),
            max_passes=max_passes, pass_budget=0.0,
            min_passes=min(min_passes, max_passes), settle_fraction=0.05,
            fixed_pass=problem.fixed_pass, add_threshold=tol / 10.0,
            report=report, stop_rule=stop_rule,
            pass_tol=tol / 100.0, extra_row=extra_row,
        )
        used += res.n_iter
        results.append(res)
        if certificate is not None and certificate.stopped_:
            break
        if used >= max_iter and k < len(stages) - 1:
            break
    return results, stages
