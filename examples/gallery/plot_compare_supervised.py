"""
Every supervised learner on one data set: 3-NN accuracy and fit time
====================================================================

Each learner of class labels is fitted on the same 70 % of the 64-pixel
digits (standardised) and scored by a 3-nearest-neighbour classifier in its
learned space on the other 30 %; the Euclidean distance (no learner) is the
baseline.  The right panel shows the fit time on the machine that built
this page (one fit, so it includes numba's start-up for the first learner
that compiles; ``benchmarks/bench_ml_family.py`` has careful timings).

* iterative: :class:`~metric_estimators.LMNN`,
  :class:`~metric_estimators.NCA`,
  :class:`~metric_estimators.ITML_Supervised`,
  :class:`~metric_estimators.MMC_Supervised` (full and diagonal: MMC's
  convex criterion solved to optimality, a low-rank / sparse metric),
  :class:`~metric_estimators.SDML_Supervised` (a graphical lasso);
* closed forms: :class:`~metric_estimators.LFDA`,
  :class:`~metric_estimators.RCA_Supervised`,
  :class:`~metric_estimators.Covariance` (unsupervised: the inverse
  covariance).

:class:`~metric_estimators.MLKR` learns from real-valued targets (regression)
and is not in this classification comparison.
"""

import time
import warnings

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    LFDA,
    LMNN,
    NCA,
    Covariance,
    ITML_Supervised,
    MMC_Supervised,
    RCA_Supervised,
    SDML_Supervised,
)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0
)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

learners = {
    "Euclidean": None,
    "Covariance": Covariance(),
    "RCA_Supervised": RCA_Supervised(random_state=0),
    "LFDA": LFDA(),
    "ITML_Supervised": ITML_Supervised(random_state=0),
    "LMNN": LMNN(n_neighbors=3, random_state=0),
    "NCA": NCA(random_state=0),
    "MMC_Supervised": MMC_Supervised(random_state=0),
    "MMC_Supervised (diagonal)": MMC_Supervised(diagonal=True, random_state=0),
    "SDML_Supervised": SDML_Supervised(random_state=0),
}

accuracy, fit_time = {}, {}
for name, learner in learners.items():
    Z_train, Z_test = X_train, X_test
    if learner is not None:
        start = time.perf_counter()
        with warnings.catch_warnings():
            # constant pixels: RCA and Covariance give them weight 0
            warnings.simplefilter("ignore")
            learner.fit(X_train, y_train)
        fit_time[name] = time.perf_counter() - start
        Z_train, Z_test = learner.transform(X_train), learner.transform(X_test)
    knn = KNeighborsClassifier(n_neighbors=3).fit(Z_train, y_train)
    accuracy[name] = knn.score(Z_test, y_test)
    print(f"{name:>26}: 3-NN accuracy {accuracy[name]:.3f}"
          + (f", fit {fit_time[name]:.2f} s" if name in fit_time else ""))

fig, (ax_acc, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
names = list(accuracy)
bars = ax_acc.barh(names, [accuracy[n] for n in names], color="tab:blue")
ax_acc.bar_label(bars, fmt="%.3f", padding=2)
ax_acc.set_xlim(min(accuracy.values()) - 0.05, 1.0)
ax_acc.set_xlabel("3-NN test accuracy")
ax_acc.set_title("Accuracy (digits, 30 % held out)")
timed = [n for n in names if n in fit_time]
bars = ax_time.barh(timed, [fit_time[n] for n in timed], color="tab:orange")
ax_time.bar_label(bars, fmt="%.2f s", padding=2)
ax_time.set_xscale("log")
ax_time.set_xlabel("fit time (s, log scale)")
ax_time.set_title("Fit time")
fig.tight_layout()
plt.show()
