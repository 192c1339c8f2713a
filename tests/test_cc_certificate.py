"""Recombination of clusterings and the certificate stop (``certify_tol``)."""

import re
import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.csgraph import dijkstra
from sklearn.exceptions import ConvergenceWarning

from metric_estimators import CorrelationClustering, _backend
from metric_estimators.correlation_clustering import correlation_clustering_cost
from metric_estimators.solvers import cc_rounding, cc_solve, certificates
from metric_estimators.solvers.cc_local_search import (
    cheapest_distinct,
    common_refinement,
    local_search,
    local_search_from_singletons,
    recombine,
)
from metric_estimators.solvers.cc_rounding import ClusteringPool
from metric_estimators.solvers.certificates import CertificateStop


def signed_graph(n, seed, degree=6.0, k=None, noise=0.15):
    """Sparse planted signed graph: groups of about 8, lognormal weights."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k or max(2, n // 8), n)
    m = int(degree * n / 2)
    r, c = rng.integers(0, n, m), rng.integers(0, n, m)
    # half of the edges inside the groups
    inside = rng.random(m) < 0.5
    for e in np.flatnonzero(inside):
        same = np.flatnonzero(g == g[r[e]])
        c[e] = same[rng.integers(same.size)]
    keep = r != c
    r, c = np.minimum(r, c)[keep], np.maximum(r, c)[keep]
    r, c = np.unique(np.stack((r, c)), axis=1)
    sign = np.where(g[r] == g[c], 1.0, -1.0)
    sign[rng.random(sign.size) < noise] *= -1
    a = sign * rng.lognormal(0.0, 1.0, sign.size)
    A = sparse.csr_matrix((np.concatenate((a, a)), (np.concatenate((r, c)),
                                                   np.concatenate((c, r)))),
                          shape=(n, n))
    return A, g


def brute_refinement(a, b):
    n = a.size
    return np.array([[a[i] == a[j] and b[i] == b[j] for j in range(n)]
                     for i in range(n)])


@pytest.mark.parametrize("seed", range(5))
def test_common_refinement_is_the_meet(seed):
    rng = np.random.default_rng(seed)
    n = 40
    a = rng.integers(0, 5, n) * 7 - 3  # arbitrary label names
    b = rng.integers(0, 4, n)
    m = common_refinement(a, b)
    assert set(np.unique(m)) == set(range(m.max() + 1))
    np.testing.assert_array_equal(m[:, None] == m[None, :],
                                  brute_refinement(a, b))


def test_common_refinement_of_nothing():
    assert common_refinement(np.empty(0, int), np.empty(0, int)).size == 0


def best_partition_cost(A):
    """Cheapest clustering of a tiny graph, every set partition tried."""
    n = A.shape[0]

    def partitions(items):
        if not items:
            yield []
            return
        first, rest = items[0], items[1:]
        for p in partitions(rest):
            for i in range(len(p)):
                yield p[:i] + [[first] + p[i]] + p[i + 1:]
            yield [[first]] + p

    best = np.inf
    for p in partitions(list(range(n))):
        labels = np.empty(n, int)
        for c, block in enumerate(p):
            labels[block] = c
        best = min(best, correlation_clustering_cost(A, labels))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_recombine_never_worse_and_costs_are_exact(seed):
    A, g = signed_graph(60, seed)
    rng = np.random.default_rng(seed)
    pool = []
    for _ in range(6):
        labels, sweeps = local_search(A, rng.integers(0, 12, 60), 100, kernels=_backend.NUMBA)
        pool.append((labels, correlation_clustering_cost(A, labels), sweeps))
    out = recombine(A, pool, correlation_clustering_cost, 100, size=4, kernels=_backend.NUMBA)
    assert 1 <= len(out) <= 4
    assert out[0][1] <= min(p[1] for p in pool) + 1e-12
    costs = [c for _, c, _ in out]
    assert costs == sorted(costs)
    for labels, cost, _ in out:
        assert cost == pytest.approx(correlation_clustering_cost(A, labels),
                                     rel=1e-12)
    # distinct clusterings (as partitions, whatever the label names)
    keys = {tuple(np.unique(l, return_index=True)[1]) + tuple(
        np.unique(l, return_inverse=True)[1]) for l, _, _ in out}
    assert len(keys) == len(out)


def test_recombine_finds_the_optimum_of_a_tiny_graph():
    A, _ = signed_graph(9, 3, degree=5.0, k=3)
    rng = np.random.default_rng(0)
    pool = []
    for _ in range(8):
        labels, sweeps = local_search(A, rng.integers(0, 4, 9), 100, kernels=_backend.NUMBA)
        pool.append((labels, correlation_clustering_cost(A, labels), sweeps))
    out = recombine(A, pool, correlation_clustering_cost, 100, kernels=_backend.NUMBA)
    assert out[0][1] >= best_partition_cost(A) - 1e-9
    assert out[0][1] == pytest.approx(best_partition_cost(A), abs=1e-9)


@pytest.mark.parametrize("after", [0, 1, 3, 10**6])
def test_recombine_stops_crossing_at_the_deadline(monkeypatch, after):
    """A clock that ticks once per reading: the deadline at tick ``after``
    lets exactly ``after`` crossings start (all of them if it is never
    reached), marks only those crossed, and still returns a pool that is
    sorted, exact and never costlier than its input."""
    from metric_estimators.solvers import cc_local_search

    A, _ = signed_graph(60, 2)
    rng = np.random.default_rng(2)
    pool = []
    for _ in range(5):
        labels, sweeps = local_search(A, rng.integers(0, 12, 60), 100, kernels=_backend.NUMBA)
        pool.append((labels, correlation_clustering_cost(A, labels), sweeps))
    unbounded = set()
    reference = recombine(A, pool, correlation_clustering_cost, 100, size=5,
                          crossed=unbounded, kernels=_backend.NUMBA)
    ticks = iter(range(10**7))
    monkeypatch.setattr(cc_local_search.time, "perf_counter",
                        lambda: float(next(ticks)))
    crossed = set()
    out = recombine(A, pool, correlation_clustering_cost, 100, size=5,
                    crossed=crossed, deadline=float(after), kernels=_backend.NUMBA)
    assert len(crossed) == min(after, len(unbounded))
    if after >= len(unbounded):
        assert [c for _, c, _ in out] == [c for _, c, _ in reference]
    assert out[0][1] <= min(c for _, c, _ in pool) + 1e-12
    assert [c for _, c, _ in out] == sorted(c for _, c, _ in out)
    for labels, cost, _ in out:
        assert cost == pytest.approx(correlation_clustering_cost(A, labels),
                                     rel=1e-12)


def test_recombine_keeps_a_single_clustering():
    A, g = signed_graph(30, 0)
    pool = [(g, correlation_clustering_cost(A, g), 0)]
    out = recombine(A, pool, correlation_clustering_cost, 100, kernels=_backend.NUMBA)
    assert len(out) == 1 and out[0][1] == pool[0][1]


def test_cheapest_distinct_drops_renamed_copies_and_keeps_order():
    a = np.array([0, 0, 1, 2])
    renamed = np.array([5, 5, 3, 9])          # the same partition as a
    b = np.array([0, 1, 1, 1])
    c = np.array([0, 1, 2, 3])
    entries = [(c, 3.0, "c"), (renamed, 1.0, "renamed"), (a, 1.0, "a"),
               (b, 1.0, "b"), (a.copy(), 0.5, "a cheaper")]
    out = cheapest_distinct(entries, 10)
    # a's cheapest copy first; equal costs keep their input order, and the
    # renamed copy of a at 1.0 is dropped as a duplicate of "a cheaper"
    assert [e[2] for e in out] == ["a cheaper", "b", "c"]
    assert [e[2] for e in cheapest_distinct(entries, 2)] == ["a cheaper", "b"]
    assert cheapest_distinct([], 3) == []


def test_sparse_rounding_crosses_the_lineages_apart_then_together(monkeypatch):
    """The LP's roundings and the LP-free optima are recombined in separate
    calls; the joint call sees at most the best LP-free clustering, so the
    LP-free lineage cannot crowd the pool; and the result is the joint
    call's pool, never costlier than any clustering it was given."""
    A, _ = signed_graph(120, 1)
    calls = []
    real = cc_rounding.recombine

    def spy(A_, pool, cost, max_sweeps, **kw):
        out = real(A_, pool, cost, max_sweeps, **kw)
        calls.append(([e[0].copy() for e in pool], min(e[1] for e in pool),
                      out, kw["size"]))
        return out

    free_keys = []
    real_free = cc_rounding.local_search_from_singletons

    def spy_free(A_, max_sweeps, rng, **kw):
        labels, sweeps = real_free(A_, max_sweeps, rng, **kw)
        free_keys.append(labels.tobytes())
        return labels, sweeps

    monkeypatch.setattr(cc_rounding, "recombine", spy)
    monkeypatch.setattr(cc_rounding, "local_search_from_singletons", spy_free)
    est = CorrelationClustering(max_iter=5, random_state=0,
                                n_rounding_trials=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(A)
    assert len(free_keys) == cc_rounding.N_LP_FREE_STARTS
    # one rounding: the LP-free optima, the trials, then all together
    free_call, trial_call, joint = calls
    assert sorted(l.tobytes() for l in free_call[0]) == sorted(free_keys)
    assert len(trial_call[0]) == 6
    assert not {l.tobytes() for l in trial_call[0]} & set(free_keys)
    free_head = free_call[2][0][0]
    in_joint = [l for l in joint[0]
                if np.array_equal(l, free_head)]
    assert len(in_joint) == 1
    assert len(joint[0]) == len(trial_call[2]) + 1
    assert all(size == cc_rounding.RECOMBINE_SIZE for *_, size in calls)
    assert est.cost_ == joint[2][0][1]
    assert est.cost_ <= min(free_call[1], trial_call[1]) + 1e-12
    assert est.cost_ == pytest.approx(
        correlation_clustering_cost(A, est.labels_), rel=1e-12)


def _timed_rounding(monkeypatch, deadline, trial=10.0, polish=1.0,
                    free=1.0):
    """``ClusteringPool.round`` on a fake clock: a pivot takes ``trial - polish`` s, a polish
    ``polish`` s, an LP-free start ``free`` s (crossings take no time).
    Return ``(trials made, LP-free starts made, the rounded pool)``."""
    from metric_estimators._problems.sparse_correlation_clustering import (
        SparseSignedGraph,
    )

    A, _ = signed_graph(120, 2)
    graph = SparseSignedGraph(A)
    X = graph.edge_matrix((graph.a < 0).astype(float))
    clock = {"t": 0.0}
    counts = {"trials": 0, "free": 0}
    monkeypatch.setattr(cc_rounding.time, "perf_counter", lambda: clock["t"])
    real_pivot = cc_rounding.round_pivots
    real_polish = ClusteringPool.polish
    real_free = cc_rounding.local_search_from_singletons

    def pivot(*args, **kwargs):
        counts["trials"] += 1
        clock["t"] += trial - polish
        return real_pivot(*args, **kwargs)

    def polished(self, *args):
        clock["t"] += polish
        return real_polish(self, *args)

    def lp_free(*args, **kwargs):
        counts["free"] += 1
        clock["t"] += free
        return real_free(*args, **kwargs)

    monkeypatch.setattr(cc_rounding, "round_pivots", pivot)
    monkeypatch.setattr(ClusteringPool, "polish", polished)
    monkeypatch.setattr(cc_rounding, "local_search_from_singletons", lp_free)
    pool = ClusteringPool(graph.csr, correlation_clustering_cost,
                          np.random.RandomState(0), rounding="threshold",
                          n_trials=20, local_search=True, max_sweeps=100, kernels=_backend.NUMBA)
    pool.round(X, deadline)
    return counts["trials"], counts["free"], pool.pool


def test_a_rounding_short_of_time_keeps_the_lp_free_starts(monkeypatch):
    """With a deadline, a trial starts only if it and the LP-free starts
    still to make (timed as polishes) end by it; the LP-free starts are made
    after the trials while they fit; the first of each always is."""
    free = cc_rounding.N_LP_FREE_STARTS
    # trials of 10 s (polish 1 s): after k trials, at 10 k s, the next ends
    # at 10 (k + 1) s and the four LP-free starts 4 s later: the fourth
    # trial fits by 45 s (44 s), not by 43.9 s
    assert _timed_rounding(monkeypatch, 45.0)[:2] == (4, free)
    assert _timed_rounding(monkeypatch, 43.9)[:2] == (3, free)
    # LP-free starts of 5 s with 1 s of polish: the trials stop as above,
    # then starts are made while one more ends by the deadline
    assert _timed_rounding(monkeypatch, 45.0, free=5.0)[:2] == (4, 1)
    assert _timed_rounding(monkeypatch, 50.0, free=5.0)[:2] == (4, 2)
    # past the deadline: one of each all the same
    assert _timed_rounding(monkeypatch, -1.0)[:2] == (1, 1)
    # no deadline, or one never reached: every trial, every start, and the
    # same clustering (the random draws are the same)
    trials, starts, pool = _timed_rounding(monkeypatch, None)
    assert (trials, starts) == (20, free)
    again = _timed_rounding(monkeypatch, 1e9)
    assert again[:2] == (20, free)
    np.testing.assert_array_equal(again[2][0][0], pool[0][0])


# --- CertificateStop ---------------------------------------------------


class Script:
    """A fake check: returns the next (cost, bound) of a script."""

    def __init__(self, values):
        self.values = list(values)
        self.calls = 0
        self.deadlines = []

    def __call__(self, deadline):
        self.calls += 1
        self.deadlines.append(deadline)
        return self.values.pop(0)


def run(stop, objectives):
    """Call the wrapped rule with the objective values; return the call that stopped."""
    values = iter(objectives)
    cert_obj = {}

    def objective(point):
        return cert_obj["v"]

    stop.objective = objective
    rule = stop.wrap(lambda *args: False)
    for i, v in enumerate(values, 1):
        cert_obj["v"] = v
        if rule(None, 1.0, 1.0):
            return i
    return None


def test_first_check_waits_for_the_stall():
    check = Script([(110.0, 100.0)])
    stop = CertificateStop(check, None, tol=0.2)
    # the objective rises by 10 % per call, then flattens
    objs = [100 * 1.1 ** k for k in range(10)] + [260.0] * 10
    i = run(stop, objs)
    assert check.calls == 1
    assert stop.certified_ and stop.n_checks_ == 1
    # the first call whose last STALL_WINDOW calls moved less than 1 %
    w = certificates.STALL_WINDOW
    first = next(k for k in range(w, len(objs))
                 if abs(objs[k] - objs[k - w]) <= 1e-2 * objs[k])
    assert i == first + 1


def test_stops_only_when_the_ratio_is_met_and_keeps_the_best():
    check = Script([(130.0, 100.0), (140.0, 110.0), (125.0, 90.0),
                    (200.0, 119.0)])
    stop = CertificateStop(check, None, tol=0.05, share=1.0)
    # share 1: a check after every call, from the first stall on
    i = run(stop, [5.0] * (certificates.STALL_WINDOW + 4))
    # best cost 125 against best bound 119: 125 <= 1.05 * 119 = 124.95? no;
    # so all four checks run and the solve is never certified
    assert check.calls == 4 and i is None and not stop.certified_
    assert stop.best_cost_ == 125.0 and stop.best_bound_ == 119.0
    check = Script([(130.0, 100.0), (124.0, 110.0), (125.0, 119.0)])
    stop = CertificateStop(check, None, tol=0.05, share=1.0)
    assert run(stop, [5.0] * 40) is not None
    # 124 <= 1.05 * 119 after the third check, which the solve returns
    assert check.calls == 3 and stop.certified_ and stop.final_check_


def test_converged_rule_wins_without_a_check():
    check = Script([(1.0, 1.0)])
    stop = CertificateStop(check, lambda p: 1.0, tol=0.1)
    rule = stop.wrap(lambda *args: True)
    assert rule(None, 0.0, 0.0) and check.calls == 0
    assert not stop.certified_


def test_checks_take_about_their_share_of_the_time(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(certificates.time, "perf_counter", lambda: clock["t"])

    def check(deadline):
        assert deadline is None
        clock["t"] += 10.0  # a check takes 10 s
        return 2.0, 1.0

    stop = CertificateStop(check, lambda p: 1.0, tol=0.01, share=0.2)
    rule = stop.wrap(lambda *args: False)
    for _ in range(400):
        clock["t"] += 1.0  # an oracle call takes 1 s
        rule(None, 1.0, 1.0)
    assert stop.n_checks_ >= 2
    assert stop.check_time_ / clock["t"] == pytest.approx(0.2, abs=0.03)


def test_deadline_reserves_the_next_step_and_a_check(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(certificates.time, "perf_counter", lambda: clock["t"])

    def check(deadline):
        assert deadline == 300.0  # the clock started at 0
        clock["t"] += 50.0  # a check (rounding and bound) takes 50 s
        return 2.0, 1.0

    # share 0.5: a check after the stall, then after 50 s of solving
    stop = CertificateStop(check, lambda p: 1.0, tol=0.01, share=0.5,
                           max_time=300.0)
    rule = stop.wrap(lambda *args: False)
    stopped_at = None
    for _ in range(100):
        clock["t"] += 10.0  # a step (projections, oracle call) takes 10 s
        if rule(None, 1.0, 1.0):
            stopped_at = clock["t"]
            break
    assert stop.timed_out_ and stop.n_checks_ >= 1
    # stopped at the first call where another 10 s step and a 50 s check
    # would pass the deadline: the final bound then ends by 300 s
    assert stopped_at + 10.0 + 50.0 >= 300.0
    assert stopped_at - 10.0 + 10.0 + 50.0 < 300.0
    assert stopped_at + 50.0 <= 300.0
    # without a check yet, the next step and reserve * max_time are kept
    # (95 s: 23.75 s at reserve 0.25, 47.5 s at 0.5; 10 s steps)
    for reserve, stop_time in [(0.25, 70.0), (0.5, 40.0)]:
        clock["t"] = 0.0
        stop = CertificateStop(Script([]), None, tol=None, reserve=reserve,
                               max_time=95.0)
        rule = stop.wrap(lambda *args: False)
        calls = 0
        while not rule(None, 1.0, 1.0):
            calls += 1
            clock["t"] += 10.0
        assert clock["t"] == stop_time and calls == stop_time // 10
        assert stop_time + 10.0 + reserve * 95.0 >= 95.0
        assert stop_time + reserve * 95.0 < 95.0


def test_the_once_only_part_of_a_check_is_not_kept(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(certificates.time, "perf_counter", lambda: clock["t"])
    took = []

    def check(deadline):
        # the first check spends 30 s of its 50 s on a search it keeps
        once = 30.0 if not took else 0.0
        clock["t"] += 20.0 + once
        took.append(20.0 + once)
        return certificates.CheckResult(2.0, 1.0, "", once)

    # share 0.5: a check after the stall (the sixth 10 s step, at 60 s,
    # ending at 110 s), the next after 20 s more solving, not 50 s
    stop = CertificateStop(check, lambda p: 1.0, tol=0.01, share=0.5,
                           max_time=1000.0)
    rule = stop.wrap(lambda *args: False)
    while stop.n_checks_ < 2:
        clock["t"] += 10.0
        assert not rule(None, 1.0, 1.0)
    assert took == [50.0, 20.0] and clock["t"] == 150.0
    assert stop.check_time_ == 70.0
    # the deadline keeps the next step and 20 s: from 150 s, steps of
    # 10 s, checks of 20 s after 20 s of solving; the solve stops at the
    # first call where 10 + 20 s more would pass 1000 s
    while not rule(None, 1.0, 1.0):
        clock["t"] += 10.0
    assert stop.timed_out_ and stop._time_kept() == 20.0
    assert clock["t"] + 10.0 + 20.0 >= 1000.0
    assert clock["t"] + 20.0 <= 1000.0
    # keeping the first check's 50 s, it would have stopped a call earlier
    previous = clock["t"] - 10.0
    assert previous + 10.0 + 50.0 >= 1000.0
    # a plain (cost, bound) pair is still a check result
    stop = CertificateStop(Script([(1.0, 1.0)]), None, tol=0.5, share=1.0)
    assert run(stop, [1.0] * 10) is not None and stop.certified_


def test_a_check_at_the_deadline_is_the_final_one(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(certificates.time, "perf_counter", lambda: clock["t"])

    def check(deadline):
        clock["t"] += 50.0
        return 2.0, 1.0

    # share 1: a check after every step from the sixth call on; 10 s steps;
    # no time kept before the first check
    stop = CertificateStop(check, lambda p: 1.0, tol=0.01, share=1.0,
                           max_time=200.0, reserve=0.0)
    rule = stop.wrap(lambda *args: False)
    finals = []  # final_check_ after each call that did not stop
    for _ in range(100):
        clock["t"] += 10.0
        if rule(None, 1.0, 1.0):
            break
        finals.append(stop.final_check_)
    # the checks end at 110 and 170 s; after the second, another 10 s step
    # and a 50 s check would end at 230 s > 200 s: the solve stops at once,
    # that check standing as the final bound and rounding
    assert stop.timed_out_ and stop.final_check_ and not stop.certified_
    assert stop.n_checks_ == 2 and clock["t"] == 170.0
    assert not any(finals)
    # a step after a check clears it: the point has moved
    stop = CertificateStop(check, lambda p: 1.0, tol=0.01, share=1.0,
                           max_time=1e9)
    stop.final_check_ = True
    stop.wrap(lambda *args: False)(None, 1.0, 1.0)
    assert not stop.final_check_


def test_a_first_check_near_the_deadline_receives_it(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(certificates.time, "perf_counter", lambda: clock["t"])
    seen = []

    def check(deadline):
        # a check that can stop early: 50 s of work, cut at the deadline
        seen.append(deadline)
        clock["t"] = min(clock["t"] + 50.0, deadline)
        return 2.0, 1.0

    # the first check falls due at the sixth step (stall), 60 s in; with
    # max_time 80 it would end at 110 s if it could not stop early (no time
    # kept before the first check: with the default, the solve would stop
    # before it, at 60 s)
    stop = CertificateStop(check, lambda p: 1.0, tol=0.01, max_time=80.0,
                           reserve=0.0)
    rule = stop.wrap(lambda *args: False)
    for _ in range(100):
        clock["t"] += 10.0
        if rule(None, 1.0, 1.0):
            break
    assert seen == [80.0] and stop.deadline == 80.0
    assert clock["t"] == 80.0 and stop.final_check_ and stop.timed_out_
    # no max_time: no deadline
    assert CertificateStop(check, None, tol=0.1).deadline is None


def test_deadline_stops_the_gamma_continuation(monkeypatch):
    from metric_estimators.solvers import continuation

    class Problem:
        active = None
        gamma = 1.0

        def rescale_gamma(self, g):
            stages.append(g)

        def pair_pass(self):
            return 0.0

        def make_stop_rule(self, tol, gap_tol):
            return lambda *args: False

        lp_objective = fixed_pass = None

    def driver(active, oracle, stop_rule=None, **kw):
        assert stop_rule(None, 1.0, 1.0)  # the deadline fires at once

        class Result:
            n_iter = 1
            converged = True
        return Result()

    stages = []
    stop = CertificateStop(Script([]), None, tol=None, max_time=0.0)
    results, all_stages = continuation.solve_continuation(
        Problem(), None, driver, gamma=1000.0, tol=1e-3, gap_tol=1e-3,
        max_iter=100, max_passes=5, certificate=stop)
    assert len(all_stages) > 1 and len(results) == 1 and stages == []


def test_zero_bound_certifies_only_a_zero_cost():
    stop = CertificateStop(Script([(1.0, 0.0)] * 5), None, tol=0.5,
                           share=1.0)
    assert run(stop, [1.0] * 10) is None
    stop = CertificateStop(Script([(0.0, 0.0)]), None, tol=0.0, share=1.0)
    assert run(stop, [1.0] * 10) is not None


# --- the estimator -----------------------------------------------------


def complete_lp(cp, A):
    """The complete-graph LP relaxation by cvxpy: every pair, every triangle."""
    n = A.shape[0]
    X = cp.Variable((n, n), symmetric=True)
    cons = [X >= 0, X <= 1, cp.diag(X) == 0]
    for k in range(n):
        cons.append(X <= X[:, [k]] @ np.ones((1, n))
                    + np.ones((n, 1)) @ X[[k], :] + 2 * np.eye(n))
    U = sparse.triu(A, 1).tocoo()
    w, d = np.abs(U.data), (U.data < 0).astype(float)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(
        w, cp.abs(X[U.row, U.col] - d)))), cons)
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.fixture
def early_checks(monkeypatch):
    """Make the first check due after STALL_WINDOW calls, whatever the objective."""
    monkeypatch.setattr(certificates, "STALL", np.inf)


def test_certified_fit_keeps_its_promise(early_checks, cp):
    A, g = signed_graph(24, 1, degree=8.0, k=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = CorrelationClustering(tol=1e-5, gap_tol=1e-8, certify_tol=0.5,
                                    random_state=0).fit(A)
    assert est.certified_ and not est.converged_
    assert est.n_certificate_checks_ >= 1
    assert est.cost_ <= 1.5 * est.lower_bound_
    assert est.cost_ == pytest.approx(correlation_clustering_cost(A, est.labels_))
    # the bound is below the LP (cvxpy), hence below the optimum
    lp = complete_lp(cp, A)
    assert est.lower_bound_ <= lp + 1e-6 * abs(lp)
    # lp_solution_ is the clipped iterate, its violation reported (an
    # upper bound on the largest cycle violation beyond the oracle's
    # threshold tol / 10)
    X = est.lp_solution_.tocoo()
    assert np.all((X.data >= 0) & (X.data <= 1))
    D = dijkstra(sparse.csr_matrix((np.maximum(X.data, 1e-300),
                                    (X.row, X.col)), shape=X.shape),
                 directed=False)
    worst = float(np.max(X.data - D[X.row, X.col]))
    assert worst <= max(est.violation_, 1e-5 / 10) + 1e-12


def test_certify_tol_none_and_unmet_change_nothing_but_the_clustering(
        early_checks):
    A, _ = signed_graph(80, 2)
    kw = dict(random_state=0, tol=1e-6, gap_tol=1e-9)
    plain = CorrelationClustering(**kw).fit(A)
    unmet = CorrelationClustering(certify_tol=0.0, **kw).fit(A)
    # without certify_tol, certified_ says whether labels_ is proven optimal
    assert plain.certified_ == (plain.cost_ <= plain.lower_bound_)
    assert plain.n_certificate_checks_ == 0
    assert unmet.n_certificate_checks_ >= 1
    if not unmet.certified_:
        # the same LP, and a clustering at least as cheap (checks add to the pool)
        np.testing.assert_array_equal(plain.lp_solution_.toarray(),
                                      unmet.lp_solution_.toarray())
        assert unmet.cost_ <= plain.cost_ + 1e-12
        assert unmet.lower_bound_ >= plain.lower_bound_ - 1e-12
    else:
        assert unmet.cost_ <= unmet.lower_bound_ * (1 + 1e-12)


@pytest.mark.parametrize("dense", [False, True])
def test_certify_tol_on_both_paths(early_checks, dense):
    A, _ = signed_graph(40, 4, degree=10.0)
    if dense:
        A = A.toarray()
    est = CorrelationClustering(tol=1e-6, gap_tol=1e-9, certify_tol=1.0,
                                random_state=0).fit(A)
    assert est.n_certificate_checks_ >= 1 or est.converged_
    if est.certified_:
        assert est.cost_ <= 2.0 * est.lower_bound_ + 1e-9


def test_recombination_is_deterministic():
    A, _ = signed_graph(120, 5)
    a = CorrelationClustering(random_state=3).fit(A)
    b = CorrelationClustering(random_state=3).fit(A)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.cost_ == b.cost_
    assert a.cost_ <= a.pivot_cost_


def test_max_time_stops_the_solve_and_warns():
    A, _ = signed_graph(80, 6)
    with pytest.warns(ConvergenceWarning, match="max_time"):
        est = CorrelationClustering(tol=1e-9, gap_tol=1e-12, max_time=1e-9,
                                    random_state=0).fit(A)
    assert not est.converged_ and not est.certified_
    # stopped after its first oracle call; bound and rounding still valid
    assert est.n_iter_ <= 1
    assert est.cost_ == pytest.approx(correlation_clustering_cost(A, est.labels_))
    assert est.lower_bound_ <= est.cost_ + 1e-9


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("max_time, n_checks", [
    # the first check ends at 6 + 1 = 7 s; the second is due after 3 s of
    # steps (share 1/4), at 10 s, if 10 + 1 + 1 < max_time
    (12.0, 1),  # no: the deadline stops the solve at 10 s; the final
                # rounding follows, ending at 11 s
    (12.5, 2),  # yes: it ends at 11 s, and 11 + 1 + 1 > 12.5, so it stands
                # as the final rounding (run again, it would end at 13 s)
])
def test_a_check_at_the_deadline_is_not_run_twice(
        early_checks, monkeypatch, sparse_input, max_time, n_checks):
    # a clock that only the certificate reads: 1 s per step and per rounding
    clock = {"t": 0.0}
    monkeypatch.setattr(certificates.time, "perf_counter", lambda: clock["t"])
    rounds = []
    round_ = ClusteringPool.round

    def counted(self, *args):
        clock["t"] += 1.0
        rounds.append(clock["t"])
        return round_(self, *args)

    monkeypatch.setattr(ClusteringPool, "round", counted)
    wrap = certificates.CertificateStop.wrap

    def ticking(self, rule):
        wrapped = wrap(self, rule)

        def stop(*args):
            clock["t"] += 1.0
            return wrapped(*args)
        return stop

    monkeypatch.setattr(certificates.CertificateStop, "wrap", ticking)
    A, _ = signed_graph(60, 3)
    A = sparse.csr_matrix(A) if sparse_input else A.toarray()
    with pytest.warns(ConvergenceWarning, match="max_time"):
        est = CorrelationClustering(tol=1e-9, gap_tol=1e-12, certify_tol=0.0,
                                    max_time=max_time, random_state=0).fit(A)
    assert not est.certified_ and est.n_certificate_checks_ == n_checks
    assert rounds == [7.0, 11.0]
    assert est.cost_ == pytest.approx(correlation_clustering_cost(A,
                                                                  est.labels_))
    assert est.cost_ >= est.lower_bound_


@pytest.mark.parametrize("dense", [False, True])
def test_a_check_rounds_then_bounds_and_times_both(
        early_checks, monkeypatch, capsys, dense):
    # near the deadline the crossings are worth more than the refinement:
    # the rounding goes first, its crossings stopped early enough to leave
    # BOUND_SHARE of the time left to the bound, which gets the deadline
    calls = []
    bound_ = cc_solve.certified_lower_bound
    round_ = ClusteringPool.round

    def bound(lp, refine, deadline=None):
        calls.append(("bound", deadline))
        return bound_(lp, refine, deadline)

    def rounding(self, X, deadline=None):
        calls.append(("round", deadline))
        return round_(self, X, deadline)

    monkeypatch.setattr(cc_solve, "certified_lower_bound", bound)
    monkeypatch.setattr(ClusteringPool, "round", rounding)
    A, _ = signed_graph(60, 3)
    if dense:
        A = A.toarray()
    max_time = 1e6
    est = CorrelationClustering(tol=1e-9, gap_tol=1e-12, certify_tol=0.0,
                                max_time=max_time, verbose=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(A)
    checks = est.n_certificate_checks_
    assert checks >= 1
    # each check a (round, bound) pair; so is the sparse fit's final one
    # (the dense one neither refines nor crosses: bound, then round)
    pairs = checks if dense else checks + 1
    assert [c[0] for c in calls[:2 * pairs]] == ["round", "bound"] * pairs
    assert len(calls) == 2 * (checks + 1)
    if dense:
        assert calls[2 * pairs:] == [("bound", None), ("round", None)]
    deadline = calls[1][1]
    assert deadline is not None
    for (_, cross_by), (_, bound_by) in zip(calls[0:2 * pairs:2],
                                            calls[1:2 * pairs:2]):
        assert bound_by == deadline
        # the fit takes seconds: about BOUND_SHARE * max_time is left
        assert abs(cross_by - (deadline - cc_solve.BOUND_SHARE * max_time)) \
            < cc_solve.BOUND_SHARE * 600.0
    lines = [ln for ln in capsys.readouterr().out.splitlines()
             if " check " in ln and "ratio" in ln]
    assert len(lines) == checks
    for i, ln in enumerate(lines):
        # the sparse first rounding also makes the LP-free optima, once
        free = r" \(LP-free optima [0-9.]+ s\)" if i == 0 and not dense else ""
        assert re.search(r"[0-9.]+ s: rounding [0-9.]+ s" + free
                         + r", bound [0-9.]+ s\)", ln), ln


@pytest.mark.parametrize("param, value", [
    ("certify_tol", -0.1), ("certify_tol", "a"), ("certify_tol", np.nan),
    ("max_time", 0.0), ("max_time", -1.0), ("max_time", "x")])
def test_bad_certify_tol_and_max_time(param, value):
    A, _ = signed_graph(20, 0)
    with pytest.raises((ValueError, TypeError), match=param):
        CorrelationClustering(**{param: value}).fit(A)


def test_local_search_from_singletons_is_a_local_optimum():
    A, _ = signed_graph(150, 7)
    rng = np.random.RandomState(0)
    a, _ = local_search_from_singletons(A, 100, rng, kernels=_backend.NUMBA)
    b, _ = local_search_from_singletons(A, 100, rng, kernels=_backend.NUMBA)
    for labels in (a, b):
        cost = correlation_clustering_cost(A, labels)
        assert cost <= correlation_clustering_cost(A, np.arange(150))
        # another local search finds nothing to improve
        again, _ = local_search(A, labels, 100, kernels=_backend.NUMBA)
        assert correlation_clustering_cost(A, again) == pytest.approx(cost)


def test_certificate_stops_every_continuation_stage(early_checks):
    A, _ = signed_graph(60, 8, degree=8.0)
    est = CorrelationClustering(gamma=1000.0, tol=1e-6, gap_tol=1e-9,
                                certify_tol=10.0, random_state=0).fit(A)
    # certified during the first stage (gamma 1): the later stages never run
    assert est.certified_
    assert est.gamma_stages_.tolist() == [1.0]
    assert est.cost_ <= 11.0 * est.lower_bound_
