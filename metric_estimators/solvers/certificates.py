"""Stop an LP solve once a rounded solution is certified by a lower bound.

For a minimisation whose LP relaxation gives certified lower bounds at any
iterate (weak duality) and whose iterates can be rounded to feasible
solutions, the solve can stop as soon as ::

    cheapest rounded cost  <=  (1 + tol) * largest lower bound

over the checks made so far: the rounded solution is then proved within a
factor ``1 + tol`` of the optimum, whether or not the LP has converged.
:class:`CertificateStop` wraps a driver's stop rule with such checks.

A check (rounding plus bound) costs time, so checks are spaced out: the
first one once the LP objective has stalled (relative change below
:data:`STALL` over the last :data:`STALL_WINDOW` oracle calls: before that
the bound is far from the LP and the iterate rounds poorly), each later one
once the solve has run ``(1 - share) / share`` times as long as the last
check took, so that checks take at most about ``share`` of the time.

A deadline (``max_time``) bounds the whole run, the final bound and
rounding included: the solve stops as soon as one more step (timed as the
last one: projections and an oracle call) followed by a check (timed as
the last check, less what it did once and the next will not do again;
what the caller does after a stopped solve costs about as much) would end
after it.  The rule is also read right after each
check: if it fires there, the solve stops at the point just checked, and
that check's bound and rounding are the final ones (``final_check_``), so
the caller does not pay for them twice.  A check is never started when
the last one, run again, would end after the deadline.  Before the first
check its duration is unknown, so the check receives the deadline itself
(``check(deadline)``): a check that can stop early (the refinement of a
bound can: it stays certified at any moment) ends near the deadline
instead of past it.
"""

import time
from typing import NamedTuple

__all__ = ["STALL", "STALL_WINDOW", "CheckResult", "CertificateStop"]

#: relative change of the objective over :data:`STALL_WINDOW` oracle calls
#: below which the first check is made
STALL = 1e-2
STALL_WINDOW = 5


class CheckResult(NamedTuple):
    """What a check returns (a plain ``(cost, bound)`` tuple also does).

    Attributes
    ----------
    cost : float
        The cheapest rounded cost found.
    bound : float
        A certified lower bound.
    detail : str
        Ends the check's report line (e.g. the time of each part); may be
        empty.
    once : float
        Seconds of the check spent on work that the next check will not
        repeat (e.g. a first search whose result is kept); they are left
        out of the check's duration as a forecast of the next one.
    """

    cost: float
    bound: float
    detail: str = ""
    once: float = 0.0


class CertificateStop:
    """Checks of a rounded cost against a lower bound, run from a stop rule.

    Parameters
    ----------
    check : callable ``check(deadline) -> CheckResult`` or ``(cost, bound)``
        Rounds the current iterate and bounds the optimum from below; the
        pool of what it found is the caller's (a check may return the
        cheapest cost it has ever found).  ``deadline`` is :attr:`deadline`:
        the check should not run past it where it can help it.  See
        :class:`CheckResult`.
    objective : callable ``objective(point) -> float``
        The objective whose stall starts the checks.
    tol : float or None
        Stop once ``cost <= (1 + tol) * bound`` (best of all checks);
        None: no check (only ``max_time``).
    share : float, default=0.25
        Largest share of the time spent in checks, after the first.
    report : metric_estimators._reporting.FitReport or None
        Receives one phase line per check.
    max_time : float or None, default=None
        A deadline, in seconds from the construction: the wrapped rule
        returns True as soon as the time spent, plus the last step's
        duration (from one call of the rule to the next, checks excluded),
        plus the last check's duration (less its ``once`` part), reaches
        it; before the first
        check, whose duration is unknown, ``reserve * max_time`` stands for
        it.  The caller's final bound and rounding, about one check, then
        end near the deadline rather than one check after it.  The same
        test right after a check stops the solve there, with that check as
        the final one (``final_check_``).
    reserve : float, default=0.25
        Share of ``max_time`` kept for the final bound and rounding until a
        check has timed one.

    Attributes
    ----------
    certified_ : bool
        Whether a check met the ratio (the wrapped rule then returned True).
    timed_out_ : bool
        Whether the deadline stopped the solve.
    final_check_ : bool
        Whether the solve stopped right after a check, with no step in
        between (the check certified, or the deadline fired after it):
        ``best_cost_`` and ``best_bound_`` then include the rounding and the
        bound of the point the solve returns, and the caller can skip its
        own.
    best_cost_, best_bound_ : float
        Cheapest cost and largest bound over the checks (``inf``/``-inf``
        before the first).
    n_checks_ : int
    check_time_ : float
        Seconds spent in checks.
    deadline : float or None
        The :func:`time.perf_counter` time of ``max_time`` (None without
        it).
    """

    def __init__(self, check, objective, tol, share=0.25, report=None,
                 max_time=None, reserve=0.25):
        self.check = check
        self.objective = objective
        self.tol = None if tol is None else float(tol)
        self.share = float(share)
        self.report = report
        self.max_time = None if max_time is None else float(max_time)
        self.reserve = float(reserve)
        self._start = time.perf_counter()
        self.deadline = (None if self.max_time is None
                         else self._start + self.max_time)
        self.certified_ = False
        self.timed_out_ = False
        self.final_check_ = False
        self.best_cost_ = float("inf")
        self.best_bound_ = float("-inf")
        self.n_checks_ = 0
        self.check_time_ = 0.0
        self._values = []
        self._solve_time = 0.0
        self._check_forecast = 0.0
        self._since = None
        self._step = 0.0

    def met(self):
        """Whether the best cost is within ``1 + tol`` of the best bound."""
        return (self.tol is not None
                and self.best_cost_ <= (1.0 + self.tol) * self.best_bound_)

    @property
    def stopped_(self):
        """Whether the solve was stopped here (certified or out of time)."""
        return self.certified_ or self.timed_out_

    def record(self, cost, bound):
        """Fold a cost and a bound found outside the checks into the best."""
        self.best_cost_ = min(self.best_cost_, float(cost))
        self.best_bound_ = max(self.best_bound_, float(bound))

    def _due(self, point):
        self._values.append(float(self.objective(point)))
        if self.n_checks_ == 0:
            if len(self._values) <= STALL_WINDOW:
                return False
            old, new = self._values[-1 - STALL_WINDOW], self._values[-1]
            return abs(new - old) <= STALL * max(abs(new), 1e-300)
        return (self._solve_time
                >= (1.0 - self.share) / self.share * self._check_forecast)

    def wrap(self, stop_rule):
        """Return ``stop_rule`` with the checks: True once converged or certified."""
        def stop(point, max_violation, residual):
            now = time.perf_counter()
            self.final_check_ = False  # a step since: the point moved
            if self._since is not None:
                self._step = now - self._since
                self._solve_time += self._step
            if stop_rule(point, max_violation, residual):
                return True
            if self._out_of_time(now):
                self._stop_for_time("the final bound and rounding")
                return True
            if self.tol is not None and self._due(point):
                cost, bound, detail, once = CheckResult(
                    *self.check(self.deadline))
                took = time.perf_counter() - now
                self.n_checks_ += 1
                self.check_time_ += took
                # the time of the next check (and of the final bound and
                # rounding): this one's, without its once-only part
                self._check_forecast = max(took - once, 0.0)
                self._solve_time = 0.0
                self.record(cost, bound)
                self.certified_ = self.final_check_ = self.met()
                if self.report is not None:
                    self.report.phase(
                        f"check {self.n_checks_}: clustering cost "
                        f"{self.best_cost_:.6g}, certified lower bound "
                        f"{self.best_bound_:.6g}, ratio "
                        f"{self._ratio():.4g} (target {1.0 + self.tol:.4g}; "
                        f"{took:.2f} s{f': {detail}' if detail else ''})")
                if not self.certified_ and self._out_of_time(now + took):
                    # this check is the final one: its point is returned
                    self.final_check_ = True
                    self._stop_for_time("another check", "; the check "
                                        "just made is the final one")
                    return True
            self._since = time.perf_counter()
            return self.certified_
        return stop

    def _time_kept(self):
        """The time kept for a check: the last one's (less its ``once`` part), else ``reserve * max_time``."""
        if self.n_checks_:
            return self._check_forecast
        return self.reserve * self.max_time

    def _out_of_time(self, now):
        """Whether another step and a check, from ``now``, would end late."""
        return (self.max_time is not None
                and now - self._start + self._step + self._time_kept()
                >= self.max_time)

    def _stop_for_time(self, what, tail=""):
        self.timed_out_ = True
        if self.report is not None:
            self.report.phase(
                f"max_time ({self.max_time:.6g} s): another step "
                f"({self._step:.3g} s) and {what} "
                f"(~{self._time_kept():.3g} s) would end after it; the "
                f"solve stops{tail}")

    def _ratio(self):
        if self.best_bound_ > 0.0:
            return self.best_cost_ / self.best_bound_
        return 1.0 if self.best_cost_ <= 0.0 else float("inf")
