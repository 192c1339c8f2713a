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
with its step rule. Their objective values are not comparable, so each gets
its own panel; both fits run until their own stopping rule holds (no
``ConvergenceWarning``), which takes a few hundred iterations at most here.

The active counts (the same definition for both) tell them apart.  A
squared hinge charges a barely violated triplet almost nothing, so the
L-BFGS optimum tolerates many *slightly* active triplets; the plain hinge
charges every violation linearly and keeps fewer triplets active, but its
subgradient steps need more iterations to settle.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)

fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), layout="constrained")
for k, (solver, color, loss) in enumerate((
        ("lbfgs", "C0", "squared hinge"), ("subgradient", "C1", "hinge"))):
    lmnn = LMNN(n_neighbors=3, solver=solver, max_iter=1000, random_state=0)
    lmnn.fit(X, y)  # converges: a ConvergenceWarning here would be a bug
    it = range(1, len(lmnn.loss_curve_) + 1)
    axes[k].plot(it, lmnn.loss_curve_, color=color)
    axes[k].set(xlabel="iteration", ylabel=f"objective ({loss})", yscale="log",
                title=f"solver='{solver}': converged in {lmnn.n_iter_} it.")
    axes[2].plot(it, lmnn.n_active_curve_, color=color, label=solver)
    print(f"{solver:12s} iterations={lmnn.n_iter_:3d}, "
          f"final objective={lmnn.loss_curve_[-1]:.4g}, "
          f"active triplets {lmnn.n_active_curve_[0]} -> "
          f"{lmnn.n_active_curve_[-1]}")

axes[2].set(xlabel="iteration", ylabel="active triplets (n_active_curve_)",
            yscale="log", title="Active impostor triplets")
axes[2].legend()
for ax in axes:
    ax.grid(alpha=0.3)
plt.show()
