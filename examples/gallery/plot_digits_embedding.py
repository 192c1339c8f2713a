"""
Digits in two dimensions: PCA, LMNN and ITML
============================================

Each method maps the 64-pixel digits to a 2-D plane; the titles give the 3-NN
accuracy *in that plane* on a held-out 30 % split.  PCA keeps the directions
of largest variance, whatever the labels.  :class:`~metric_estimators.LMNN`
with ``n_components=2`` learns a 2-D map whose nearest neighbours share their
class.  :class:`~metric_estimators.ITML_Supervised` learns a full-rank metric
(it has no ``n_components``), so its embedding ``X @ components_.T`` is
projected to 2-D by PCA for the picture.

Both learned maps beat PCA by far, but LMNN's own 2-D map is no better than
-- here slightly below -- ITML's full-rank metric squeezed to 2-D by PCA,
although only LMNN optimises for the 2-D 3-NN.  Two reasons: LMNN's
criterion is local (each point's 3 target neighbours closer than every
impostor by a unit margin), which ten classes cannot satisfy in two
dimensions for most points, so the fit settles for a compromise; and with
``n_components=2`` its problem is not convex, so L-BFGS stops at a local
minimum near its initialisation.  ITML solves a convex problem in all 64
dimensions, and PCA of its embedding keeps the directions it stretched most.
A 2-D map is for looking at: the full-rank LMNN reaches a 3-NN accuracy of
about 0.98 on this split (the README's LMNN table).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, ITML_Supervised

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0
)

models = {
    "PCA": make_pipeline(StandardScaler(), PCA(n_components=2, random_state=0)),
    "LMNN (n_components=2)": make_pipeline(
        StandardScaler(),
        LMNN(n_neighbors=3, n_components=2, max_iter=500, random_state=0),
    ),
    "ITML_Supervised, then PCA": make_pipeline(
        StandardScaler(), ITML_Supervised(random_state=0),
        PCA(n_components=2, random_state=0),
    ),
}

fig, axes = plt.subplots(1, 3, figsize=(12, 4.2), layout="constrained")
accuracy = {}
for ax, (name, model) in zip(axes, models.items()):
    model.fit(X_train, y_train)  # LMNN converges in about 100 iterations
    Z_train, Z_test = model.transform(X_train), model.transform(X_test)
    acc = KNeighborsClassifier(3).fit(Z_train, y_train).score(Z_test, y_test)
    sc = ax.scatter(Z_test[:, 0], Z_test[:, 1], c=y_test, cmap="tab10", s=8)
    accuracy[name] = acc
    ax.set_title(f"{name}\n3-NN accuracy in 2-D: {acc:.3f}", fontsize=10)
    # a few outlying points would squeeze the rest: zoom on the bulk
    lo, hi = np.percentile(Z_test, [0.5, 99.5], axis=0)
    pad = 0.05 * (hi - lo)
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_xticks([])
    ax.set_yticks([])
    print(f"{name:28s} 3-NN test accuracy in 2-D: {acc:.3f}")
fig.colorbar(sc, ax=axes, ticks=range(10), label="digit", shrink=0.9, pad=0.01)
plt.show()

lmnn_acc, itml_acc = accuracy["LMNN (n_components=2)"], accuracy["ITML_Supervised, then PCA"]
print(f"LMNN 2-D minus ITML + PCA: {lmnn_acc - itml_acc:+.3f}")
