"""
Correlation clustering of a planted-partition graph
===================================================

A signed graph on 90 nodes with four planted groups: each pair inside a group
is joined by a ``+1`` edge with probability 0.7, each pair across groups by a
``-1`` edge with probability 0.7, and some of the signs are flipped.
:class:`~metric_estimators.CorrelationClustering` solves the LP relaxation
(the distances ``x_ij`` form a metric, ``x_ij`` near 0 means "same cluster")
with Project and Forget, then rounds it by pivoting.  ``lower_bound_`` bounds
the cost of *any* clustering from below, so ``cost_ / lower_bound_`` shows
how far from optimal the rounded clustering can be.  (The LP is solved in
Veldt et al.'s regularised form with ``gamma=10``, so the reported LP
objective may sit slightly above the true LP optimum and even above the
rounded cost; the dual ``lower_bound_`` stays valid.)
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import adjusted_rand_score

from metric_estimators import CorrelationClustering

rng = np.random.default_rng(0)
sizes = [30, 25, 20, 15]
truth = np.repeat(np.arange(len(sizes)), sizes)
n = truth.size
same = truth[:, None] == truth[None, :]
edge = rng.uniform(size=(n, n)) < 0.7
flip = rng.uniform(size=(n, n)) < 0.15
sign = np.where(same, 1.0, -1.0) * np.where(flip, -1.0, 1.0)
A = np.triu(np.where(edge, sign, 0.0), 1)
A = A + A.T
perm = rng.permutation(n)            # hide the planted order
A, truth = A[np.ix_(perm, perm)], truth[perm]

cc = CorrelationClustering(random_state=0).fit(A)
ari = adjusted_rand_score(truth, cc.labels_)
print(f"clusters found: {np.unique(cc.labels_).size}, ARI vs planted: {ari:.3f}")
print(f"cost_={cc.cost_:.1f}, LP objective={cc.lp_objective_:.1f}, "
      f"lower_bound_={cc.lower_bound_:.1f}, oracle calls n_iter_={cc.n_iter_}")

order = np.lexsort((truth, cc.labels_))
fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), layout="constrained")
axes[0].imshow(A, cmap="bwr_r", vmin=-1, vmax=1, interpolation="nearest")
axes[0].set_title("Signed adjacency, shuffled\n(blue +1, red -1, white none)")
axes[1].imshow(A[np.ix_(order, order)], cmap="bwr_r", vmin=-1, vmax=1,
               interpolation="nearest")
axes[1].set_title(f"Reordered by the clustering\n(ARI vs planted {ari:.2f})")
im = axes[2].imshow(cc.lp_solution_[np.ix_(order, order)], cmap="viridis",
                    vmin=0, vmax=1, interpolation="nearest")
axes[2].set_title("LP solution x_ij, same order\n(0: together, 1: apart)")
fig.colorbar(im, ax=axes[2], fraction=0.046)
for ax in axes:
    ax.set_xticks([])
    ax.set_yticks([])
plt.show()
