"""
Repairing a noisy distance matrix with MetricNearness
=====================================================

Distances between points in the plane satisfy every triangle inequality
:math:`D_{ij} \\le D_{ik} + D_{kj}`.  Multiplicative noise breaks many of
them.  :class:`~metric_estimators.MetricNearness` returns the metric ``M``
nearest to the noisy matrix in (weighted) squared error,

.. math::

    \\min_M \\sum_{i<j} w_{ij} (M_{ij} - D_{ij})^2
    \\quad\\text{s.t.}\\quad M_{ij} \\le M_{ik} + M_{kj},

solved by Project and Forget: only the violated triangles the oracle finds
are ever stored.  Left: the violations :math:`D_{ij} - D_{ik} - D_{kj} > 0`
of the noisy matrix and of the repaired one (counting violations above
``1e-5 max(D)``; the solver's tolerance is ``tol = 1e-6`` relative to
``max(D)``).  Right: the repaired entries
against the noisy ones (the repair is small and mostly shrinks the largest
entries), and both against the true distances.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.spatial.distance import pdist, squareform

from metric_estimators import MetricNearness

rng = np.random.default_rng(0)
n = 80
points = rng.uniform(size=(n, 2))
D_true = squareform(pdist(points))
noise = np.exp(rng.normal(scale=0.3, size=(n, n)))
D = D_true * np.triu(noise, 1)
D = D + D.T                       # symmetric, zero diagonal


TOL = 1e-5 * D.max()


def violations(M, tol=TOL):
    """All M_ij - M_ik - M_kj > tol over triangles (i < j, k != i, j)."""
    v = M[:, :, None] - M[:, None, :] - M.T[None, :, :]  # v[i, j, k]
    iu, ju = np.triu_indices(len(M), 1)
    v = v[iu, ju]
    return v[v > tol]


nearness = MetricNearness(tol=1e-6).fit(D)
M = nearness.metric_
before, after = violations(D), violations(M)
n_tri = n * (n - 1) // 2 * (n - 2)
print(f"violated triangles: {before.size} of {n_tri} before, {after.size} after "
      f"(largest {before.max():.3f} -> {after.max() if after.size else 0:.1e})")
print(f"oracle calls n_iter_={nearness.n_iter_}, active constraints at the end "
      f"n_active_={nearness.n_active_}, objective_={nearness.objective_:.4f}")
iu = np.triu_indices(n, 1)
print(f"RMS error to the true distances: noisy "
      f"{np.sqrt(np.mean((D - D_true)[iu] ** 2)):.4f}, repaired "
      f"{np.sqrt(np.mean((M - D_true)[iu] ** 2)):.4f}")

fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
bins = np.linspace(0, before.max(), 40)
axes[0].hist(before, bins, label=f"noisy D: {before.size} violated", alpha=0.7)
axes[0].hist(after, bins, label=f"repaired M: {after.size} violated", alpha=0.7)
axes[0].set(yscale="log", xlabel="violation  D_ij - D_ik - D_kj",
            ylabel="triangles", title="Triangle inequality violations")
axes[0].legend()
axes[1].scatter(D_true[iu], D[iu], s=2, alpha=0.3, label="noisy D")
axes[1].scatter(D_true[iu], M[iu], s=2, alpha=0.3, label="repaired M")
axes[1].plot([0, 1.4], [0, 1.4], "k:", lw=1)
axes[1].set(xlabel="true distance", ylabel="entry", title="Entries")
axes[1].legend(markerscale=6)
fig.tight_layout()
plt.show()
