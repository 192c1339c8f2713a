"""
Learning from triplets: held-out accuracy against the number of triplets
=========================================================================

A *triplet* ``(a, b, c)`` says "a is closer to b than to c".  Here the
points have 6 features of which only the first 2 decide the answers (the
other 4 are larger noise), as when people compare items on a few traits.
:class:`~metric_estimators.SCML` learns a sparse combination of rank-one
metrics from the triplets, given as indices into ``X`` through the
``preprocessor``; ``score`` is the fraction of triplets the learned metric
orders correctly.  The Euclidean metric, blinded by the noise features, is
the baseline (about half of the held-out triplets right, little better
than chance).  A few dozen triplets already beat it, and the accuracy keeps
rising with the number of triplets while only a handful of basis weights
stay non-zero.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from metric_estimators import SCML

rng = np.random.RandomState(0)
X = np.c_[rng.randn(300, 2), 3.0 * rng.randn(300, 4)]


def draw_triplets(n, seed):
    """Triplets ordered by the distance on the first two features."""
    r = np.random.RandomState(seed)
    a, b, c = r.randint(0, len(X), (3, n))
    near = np.linalg.norm(X[a, :2] - X[b, :2], axis=1)
    far = np.linalg.norm(X[a, :2] - X[c, :2], axis=1)
    return np.where((near < far)[:, None], np.c_[a, b, c], np.c_[a, c, b])


test = draw_triplets(3000, seed=1)
d_ab = np.linalg.norm(X[test[:, 0]] - X[test[:, 1]], axis=1)
d_ac = np.linalg.norm(X[test[:, 0]] - X[test[:, 2]], axis=1)
euclidean = np.mean(d_ab < d_ac)

sizes = [25, 50, 100, 200, 400, 800, 1600]
accuracy = []
for n in sizes:
    scml = SCML(preprocessor=X, max_iter=3000, output_iter=500, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scml.fit(draw_triplets(n, seed=2))
    accuracy.append(scml.score(test))
    print(f"{n:5d} triplets: held-out accuracy {accuracy[-1]:.3f}, "
          f"{np.count_nonzero(scml.weights_)} of {scml.weights_.size} basis weights non-zero")

fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogx(sizes, accuracy, "o-", label="SCML")
ax.axhline(euclidean, color="gray", linestyle="--", label="Euclidean")
ax.set_xlabel("training triplets")
ax.set_ylabel("held-out triplet accuracy")
ax.set_title("Learning a metric from relative comparisons")
ax.legend()
fig.tight_layout()
plt.show()
