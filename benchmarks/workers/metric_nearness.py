"""L2 / KL metric nearness on one dense random instance, by one method.

Job: ``{"dataset": "<kind>-<n>", "impl": <method>, "params": {"tol": 1e-6,
"seed": 0}}`` with kind ``normal`` (symmetric ``D_ij = |N(0, 1)|``) or
``dirichlet`` (0/1 dissimilarities from random label sets: node ``i`` draws
``p_i ~ Dirichlet(0.3 * 1_10)`` and holds the labels with ``p_ik > 1/10``;
``D_ij = 0`` when ``i`` and ``j`` share a label, else 1), and method

* ``ours``: ``MetricNearness(tol=tol, max_iter=2000)`` (triangle oracle, L2),
* ``ours_shortest_path``: the same with ``oracle="shortest_path"``,
* ``ours_apexes``: the same with ``triangles_per_edge=APEXES`` (up to 32
  violated triangles per deeply violated edge and oracle call) and
  ``max_passes=APEX_MAX_PASSES`` (200: the duals' settling, which is most of
  the remaining calls, runs longer between two calls),
* ``ours_kl``: the same with ``divergence="kl"`` (needs ``D_ij > 0``: normal only),
* ``triangle_fixing``: Brickell et al. 2008 (:mod:`.triangle_fixing`),
* ``cvxpy``: the L2 problem with every triangle inequality, cvxpy + Clarabel.

``fit_time`` is the solve alone, after a tiny warm-up solve that loads the
numba cache. Reported: objective, iterations / sweeps, active-set size, the
exact largest triangle violation relative to ``max D`` (checked blockwise,
O(n^3), for n <= 1200), ``fit_peak_rss_gb`` (``ru_maxrss`` right after the
solve) and ``peak_rss_gb`` (at the end, so including the check); GB here is
``ru_maxrss`` KiB / 1e6, as in the published numbers.
"""

from __future__ import annotations

import resource
import sys
import time
import warnings

from benchmarks.workers import _protocol

MAX_ITER = 2000
# Sonthalia & Gilbert's type 2: Dirichlet(1) over 100 labels, top 20 kept
DIRICHLET_LABELS = 100
DIRICHLET_KEEP = 20
DIRICHLET_SHARED = 1e-8
KINDS = ("normal", "signed", "dirichlet", "labels01")
CHECK_MAX_N = 1200
METHODS = ("ours", "ours_shortest_path", "ours_apexes", "ours_kl", "triangle_fixing",
           "cvxpy")
APEXES = 32
APEX_MAX_PASSES = 200


def instance(kind: str, n: int, seed: int):
    """The dissimilarity matrix ``D`` of an instance (see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if kind == "normal":
        A = np.triu(np.abs(rng.standard_normal((n, n))), 1)
        return A + A.T
    if kind == "signed":
        A = np.triu(rng.standard_normal((n, n)), 1)
        return A + A.T
    if kind == "dirichlet":
        P = rng.dirichlet(np.ones(DIRICHLET_LABELS), size=n)
        top = np.argsort(-P, axis=1, kind="stable")[:, :DIRICHLET_KEEP]
        L = np.zeros((n, DIRICHLET_LABELS), dtype=np.int32)
        np.put_along_axis(L, top, 1, axis=1)
        disjoint = (L @ L.T) == 0
        D = np.where(disjoint, 1.0, DIRICHLET_SHARED)
        np.fill_diagonal(D, 0.0)
        return D
    if kind == "labels01":
        K = 10
        P = rng.dirichlet(0.3 * np.ones(K), size=n)
        L = P > 1.0 / K
        share = (L.astype(np.int32) @ L.T.astype(np.int32)) > 0
        D = np.where(share, 0.0, 1.0)
        np.fill_diagonal(D, 0.0)
        return D
    raise ValueError(f"unknown instance kind {kind!r}")


def parse_dataset(name: str):
    """``"normal-500"`` -> ``("normal", 500)``."""
    kind, _, n = name.rpartition("-")
    return kind, int(n)


def upper_edge_index(n: int, a, b):
    """Position of the pair ``(a, b)`` in the row-major upper triangle (``triu_indices(n, 1)``)."""
    import numpy as np

    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return lo * n - lo * (lo + 1) // 2 + (hi - lo - 1)


def triangles(n: int):
    """Every triangle inequality ``x_ij <= x_ik + x_kj`` as three edge-index arrays."""
    import numpy as np

    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    keep = (i < j) & (k != i) & (k != j)
    i, j, k = i[keep], j[keep], k[keep]
    return upper_edge_index(n, i, j), upper_edge_index(n, i, k), upper_edge_index(n, k, j)


def max_triangle_violation(M) -> float:
    """Largest ``M_ij - M_ik - M_kj`` over all triangles, blockwise."""
    import numpy as np

    n = M.shape[0]
    worst = 0.0
    for s in range(0, n, 64):
        blk = M[s:s + 64]
        worst = max(worst, float(np.max(blk[:, :, None] - blk[:, None, :] - M.T[None, :, :])))
    return worst


def _gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def solve_ours(D, method: str, tol: float) -> tuple:
    """MetricNearness (public API) on ``D``; returns (metric, result fields)."""
    from metric_estimators import MetricNearness

    oracle = "shortest_path" if method == "ours_shortest_path" else "triangle"
    divergence = "kl" if method == "ours_kl" else "l2"
    per_edge = APEXES if method == "ours_apexes" else 1
    MetricNearness(divergence=divergence, triangles_per_edge=per_edge).fit(
        instance("normal", 20, 1))  # load numba's cache
    start = time.perf_counter()
    extra = {"max_passes": APEX_MAX_PASSES} if method == "ours_apexes" else {}
    with warnings.catch_warnings(record=True):
        est = MetricNearness(tol=tol, max_iter=MAX_ITER, oracle=oracle,
                             triangles_per_edge=per_edge,
                             divergence=divergence, **extra).fit(D)
    out = {"fit_time": time.perf_counter() - start, "fit_peak_rss_gb": _gb()}
    out.update(objective=est.objective_, n_iter=est.n_iter_, n_active=est.n_active_,
               converged=bool(est.converged_), violation=est.violation_,
               passes=int(sum(est.history_["passes"])),
               oracle_time=float(sum(est.history_["oracle_time"])))
    return est.metric_, out


def solve_triangle_fixing(D, kind: str, tol: float) -> tuple:
    """The triangle-fixing baseline on ``D``."""
    from benchmarks.workers.triangle_fixing import triangle_fixing

    triangle_fixing(instance(kind, 10, 1))  # compile / load the numba cache
    M, info = triangle_fixing(D, tol=tol)
    return M, {"fit_time": info["time"], "fit_peak_rss_gb": _gb(),
               "objective": info["objective"], "sweeps": info["sweeps"]}


def solve_cvxpy(D) -> dict:
    """The L2 problem with every triangle inequality, cvxpy + Clarabel."""
    import cvxpy as cp
    import numpy as np

    n = D.shape[0]
    d = D[np.triu_indices(n, 1)]
    ij, ik, kj = triangles(n)
    start = time.perf_counter()
    x = cp.Variable(d.size)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - d)), [x[ij] <= x[ik] + x[kj]])
    prob.solve(solver="CLARABEL")
    return {"fit_time": time.perf_counter() - start, "fit_peak_rss_gb": _gb(),
            "objective": float(prob.value)}


def run(job: dict) -> dict:
    """Solve one instance with one method."""
    kind, n = parse_dataset(job["dataset"])
    method, tol, seed = job["impl"], job["params"]["tol"], job["params"].get("seed", 0)
    D = instance(kind, n, seed)
    if method.startswith("ours"):
        M, out = solve_ours(D, method, tol)
    elif method == "triangle_fixing":
        M, out = solve_triangle_fixing(D, kind, tol)
    elif method == "cvxpy":
        M, out = None, solve_cvxpy(D)
    else:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if M is not None and n <= CHECK_MAX_N:
        out["max_triangle_violation_rel"] = max_triangle_violation(M) / D.max()
    out["peak_rss_gb"] = _gb()
    return out


if __name__ == "__main__":
    sys.exit(_protocol.main(run))
