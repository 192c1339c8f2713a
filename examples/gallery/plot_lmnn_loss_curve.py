"""
LMNN: loss curve and active impostors per iteration
===================================================

A fitted :class:`~metric_estimators.LMNN` records the objective after every
iteration in ``loss_curve_`` and the number of *active* triplets (target
neighbour ``j`` of ``i`` and impostor ``l`` with a positive hinge
:math:`1 + \\|L(x_i - x_j)\\|^2 - \\|L(x_i - x_l)\\|^2 > 0`) in
``n_active_curve_`` -- the same numbers that ``verbose=1`` prints.

The two solvers minimise different losses: ``solver='lbfgs'`` the squared
hinge (smooth, L-BFGS-B), ``solver='subgradient'`` the paper's plain hinge
with its step rule, so their objective values are not comparable.

The active counts tell them apart.  A squared hinge charges a barely
violated triplet almost nothing, so once the pull term starts shrinking
``L``, the L-BFGS optimum tolerates many *slightly* active triplets: their
number first falls, then rises again while the objective keeps decreasing.
The plain hinge charges every violation linearly and keeps fewer triplets
active, but its subgradient steps converge far more slowly.
"""

import warnings

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for solver, color in (("lbfgs", "C0"), ("subgradient", "C1")):
    lmnn = LMNN(n_neighbors=3, solver=solver, max_iter=100, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        lmnn.fit(X, y)
    stopped = "max_iter" if caught else "converged"
    it = range(1, len(lmnn.loss_curve_) + 1)
    axes[0].plot(it, lmnn.loss_curve_, color=color,
                 label=f"{solver} ({lmnn.n_iter_} it., {stopped})")
    axes[1].plot(it, lmnn.n_active_curve_, color=color, label=solver)
    print(f"{solver:12s} iterations={lmnn.n_iter_:3d} ({stopped}), "
          f"final objective={lmnn.loss_curve_[-1]:.4g}, "
          f"active triplets {lmnn.n_active_curve_[0]} -> "
          f"{lmnn.n_active_curve_[-1]}")

axes[0].set(xlabel="iteration", ylabel="objective (loss_curve_)", yscale="log",
            title="Objective")
axes[1].set(xlabel="iteration", ylabel="active triplets (n_active_curve_)",
            yscale="log", title="Active impostor triplets")
for ax in axes:
    ax.legend()
    ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
