"""
ITML: pair scores, ROC curve and threshold calibration
======================================================

:class:`~metric_estimators.ITML` learns from *pairs* labelled +1 (similar)
or -1 (dissimilar).  ``decision_function(pairs)`` is minus the learned
distance, ``threshold_`` is a distance (as in metric-learn): ``predict``
says +1 for the pairs whose learned distance is at most ``threshold_``, and
``score`` is the ROC AUC.  After fitting, ``threshold_`` is calibrated on the training pairs
for accuracy; :meth:`~metric_estimators.ITML.calibrate_threshold` moves it
for another goal on validation pairs, e.g. the largest true positive rate
with a true negative rate of at least 90 %.

Here the pairs are drawn from the wine data's class labels with
:func:`~metric_estimators.constraints.pairs_from_labels`, disjoint points for
training, validation and test.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from metric_estimators import ITML
from metric_estimators.constraints import pairs_from_labels

X, y = load_wine(return_X_y=True)
X = StandardScaler().fit_transform(X)
idx_train, idx_rest = train_test_split(np.arange(len(y)), test_size=0.5,
                                       stratify=y, random_state=0)
idx_val, idx_test = train_test_split(idx_rest, test_size=0.5,
                                     stratify=y[idx_rest], random_state=0)


def pairs_of(idx, n, seed):
    """Same/different-class pairs (as points) among the points ``idx``."""
    ij, labels = pairs_from_labels(y[idx], n, random_state=seed)
    return X[idx][ij], labels


pairs_train, y_train = pairs_of(idx_train, 300, 0)
pairs_val, y_val = pairs_of(idx_val, 150, 1)
pairs_test, y_test = pairs_of(idx_test, 150, 2)

itml = ITML(random_state=0).fit(pairs_train, y_train)
t_acc = itml.threshold_
itml.calibrate_threshold(pairs_val, y_val, strategy="max_tpr", min_rate=0.9)
t_tnr = itml.threshold_

euclid = -np.linalg.norm(pairs_test[:, 0] - pairs_test[:, 1], axis=1)
learned = itml.decision_function(pairs_test)
distance = itml.pair_distance(pairs_test)

fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
for scores, name in ((euclid, "Euclidean"), (learned, "ITML")):
    fpr, tpr, _ = roc_curve(y_test, scores)
    axes[0].plot(fpr, tpr, label=f"{name} (AUC {roc_auc_score(y_test, scores):.3f})")
for t, name, marker in ((t_acc, "accuracy (fit)", "o"),
                        (t_tnr, "max_tpr, TNR >= 0.9", "s")):
    pred = distance <= t
    tpr = np.mean(pred[y_test == 1])
    fpr = np.mean(pred[y_test == -1])
    axes[0].plot(fpr, tpr, marker, color="k", mfc="none", ms=9,
                 label=f"threshold: {name}")
    print(f"threshold {name:22s} {t:8.3f}: test TPR={tpr:.3f} FPR={fpr:.3f}")
axes[0].plot([0, 1], [0, 1], ":", color="grey")
axes[0].set(xlabel="false positive rate", ylabel="true positive rate",
            title="Test pairs: ROC of the pair scores")
axes[0].legend(loc="lower right")

bins = np.linspace(distance.min(), distance.max(), 40)
axes[1].hist(distance[y_test == 1], bins, alpha=0.6, label="similar (+1)")
axes[1].hist(distance[y_test == -1], bins, alpha=0.6, label="dissimilar (-1)")
axes[1].axvline(t_acc, color="k", label="threshold (accuracy)")
axes[1].axvline(t_tnr, color="k", ls="--", label="threshold (max_tpr)")
axes[1].set(xlabel="learned distance (pair_distance)", ylabel="pairs",
            title="Test pairs: distances and thresholds")
axes[1].legend()
fig.tight_layout()
print(f"ITML test ROC AUC (score): {itml.score(pairs_test, y_test):.3f}")
plt.show()
