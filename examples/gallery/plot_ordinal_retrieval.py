"""
Ordinal ranking retrieval with OMDML
====================================

Points with *ordered* labels (levels 0 < 1 < ... < 7) from
:func:`~metric_estimators.ranking.make_ordinal`: five informative features
define a latent score, 40 louder noise features hide it from Euclidean
neighbours.  :class:`~metric_estimators.OMDML` places the levels on a line
by classical MDS and fits a map ``L`` whose image follows them, so the
training points nearest to a query have labels near the query's.

Left: NDCG@k of the ranked list of training points returned for each test
query (graded relevance ``1 - |y_q - y_j| / range``), for Euclidean
distances, :class:`~metric_estimators.LODML` (the triplet baseline) and
OMDML.  Right: the labels of the 10 nearest training points of a few test
queries under each metric.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.neighbors import NearestNeighbors
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import LODML, OMDML
from metric_estimators.ranking import make_ordinal, ranking_report, retrieval_ndcg

X, y = make_ordinal(n_samples=600, n_informative=5, n_noise=40, n_levels=8,
                    random_state=0)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0
)
scaler = StandardScaler().fit(X_train)
spaces = {"Euclidean": (scaler.transform(X_train), scaler.transform(X_test))}
for name, learner in (("LODML", LODML(random_state=0)), ("OMDML", OMDML())):
    start = time.perf_counter()
    model = make_pipeline(StandardScaler(), learner).fit(X_train, y_train)
    elapsed = time.perf_counter() - start
    spaces[name] = (model.transform(X_train), model.transform(X_test))
    print(f"{name} fit: {elapsed:.2f} s")

ks = [1, 2, 5, 10, 20, 50]
fig, axes = plt.subplots(1, 2, figsize=(12, 4.4),
                         gridspec_kw={"width_ratios": [1, 1.3]})
for name, (Z_train, Z_test) in spaces.items():
    ndcg = [retrieval_ndcg(Z_train, y_train, Z_test, y_test, k=k) for k in ks]
    axes[0].plot(ks, ndcg, "o-", label=name)
    rep = ranking_report(Z_train, y_train, Z_test, y_test)
    print(f"{name:10s} " + "  ".join(f"{m}={v:.3f}" for m, v in rep.items()))
axes[0].set(xscale="log", xlabel="k", ylabel="mean NDCG@k over test queries",
            title="Retrieval quality")
axes[0].set_xticks(ks, [str(k) for k in ks])
axes[0].legend()

queries = np.array([np.flatnonzero(y_test == level)[0] for level in (1, 4, 6)])
rows, labels = [], []
for name, (Z_train, Z_test) in spaces.items():
    ind = NearestNeighbors(n_neighbors=10).fit(Z_train).kneighbors(
        Z_test[queries], return_distance=False)
    for q, row in zip(queries, ind):
        rows.append(y_train[row])
        labels.append(f"{name}, query level {y_test[q]}")
    rows.append(np.full(10, np.nan))
    labels.append("")
rows, labels = np.array(rows[:-1]), labels[:-1]
im = axes[1].imshow(rows, cmap="viridis", vmin=0, vmax=7, aspect="auto")
axes[1].set_yticks(range(len(labels)), labels)
axes[1].set_xticks(range(10), [str(i) for i in range(1, 11)])
axes[1].set(xlabel="rank of the retrieved training point",
            title="Levels of the 10 nearest training points")
fig.colorbar(im, ax=axes[1], label="level")
fig.tight_layout()
plt.show()
