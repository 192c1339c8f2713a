"""numba kernels for correlation clustering.

* :func:`project_pairs_cc`: the Hildreth pass over the pair constraints of
  the LP relaxation in Veldt, Gleich, Wirth & Saunderson's regularised form
  (SIAM J. Math. Data Sci. 2019), run beside the cycle constraints of
  :mod:`metric_estimators._kernels.cycle_projections`.
* :func:`best_one_element_moves`: the local search of Elsner & Schudy,
  "Bounding and comparing methods for correlation clustering beyond ILP",
  NAACL-HLT Workshop on Integer Linear Programming for NLP (2009): "BOEM"
  moves one node at a time to the cluster (or a new singleton) that lowers
  the clustering cost most, until no move helps.
"""

import numpy as np
from numba import njit

from .bregman import hildreth_correction
from .cycle_projections import slackness_residual

__all__ = ["best_one_element_moves", "project_pairs_cc"]


@njit(cache=True, nogil=True)
def best_one_element_moves(A, labels, max_sweeps, eps):
    """Improve ``labels`` in place by single-node moves; return the sweeps run.

    ``A`` is the dense symmetric signed weight matrix (zero diagonal),
    ``labels`` integer cluster ids in ``[0, n)``.  For node ``i`` with
    ``S[c] = sum_{j != i, label_j = c} A_ij``, moving ``i`` from cluster ``a``
    to cluster ``b`` changes the cost (positive weights split plus negative
    weights joined) by ``S[a] - S[b]``, and to a new singleton by ``S[a]``.
    Nodes are visited in index order; a move is made only if it lowers the
    cost by more than ``eps``, so the cost strictly decreases and the search
    ends (deterministically) within ``max_sweeps`` sweeps of ``O(n^2)``.
    """
    n = labels.shape[0]
    count = np.zeros(n, dtype=np.int64)
    for i in range(n):
        count[labels[i]] += 1
    # ids of empty clusters, for new singletons
    free = np.empty(n, dtype=np.int64)
    nfree = 0
    for c in range(n - 1, -1, -1):
        if count[c] == 0:
            free[nfree] = c
            nfree += 1
    S = np.zeros(n)
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        moved = False
        for i in range(n):
            Ai = A[i]
            for j in range(n):
                if j != i:
                    S[labels[j]] += Ai[j]
            a = labels[i]
            best = S[a]
            target = a
            for j in range(n):
                if j != i:
                    c = labels[j]
                    if S[c] > best + eps:
                        best = S[c]
                        target = c
            if count[a] > 1 and 0.0 > best + eps and nfree > 0:
                # a new singleton (S = 0) beats staying and every other
                # existing cluster
                nfree -= 1
                target = free[nfree]
            for j in range(n):
                if j != i:
                    S[labels[j]] = 0.0
            S[a] = 0.0
            if target != a:
                count[a] -= 1
                if count[a] == 0:
                    free[nfree] = a
                    nfree += 1
                count[target] += 1
                labels[i] = target
                moved = True
        if not moved:
            break
    return sweeps


@njit(cache=True, nogil=True)
def project_pairs_cc(x, f, d, w, pair_edge, zA, zB):
    """Hildreth pass over the pair constraints of the correlation-clustering LP.

    For each weighted pair ``k`` (edge ``e = pair_edge[k]``, target ``d_k`` in
    {0, 1}, weight ``w_k > 0``): ``x_e - f_k <= d_k`` and ``-x_e - f_k <= -d_k``
    (so ``f_k >= |x_e - d_k|``), with metric ``x`` of weight 1 and ``f`` of
    weight ``w_k`` in the regulariser (Veldt et al. 2019).

    Returns the largest complementary-slackness residual (as
    :func:`~metric_estimators._kernels.cycle_projections.project_paths_l2`).
    """
    resid = 0.0
    for k in range(pair_edge.shape[0]):
        e = pair_edge[k]
        wi = 1.0 / w[k]
        den = 1.0 + wi
        # x_e - f_k <= d_k
        s = x[e] - f[k] - d[k]
        zc = zA[k]
        r = slackness_residual(s, zc)
        if r > resid:
            resid = r
        step, zA[k] = hildreth_correction(zc, -s / den)
        delta = -step
        x[e] -= delta
        f[k] += delta * wi
        # -x_e - f_k <= -d_k
        s = d[k] - x[e] - f[k]
        zc = zB[k]
        r = slackness_residual(s, zc)
        if r > resid:
            resid = r
        step, zB[k] = hildreth_correction(zc, -s / den)
        delta = -step
        x[e] += delta
        f[k] += delta * wi
    return resid
