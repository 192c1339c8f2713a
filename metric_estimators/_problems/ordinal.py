"""The ordinal learners' problems: OMDML's least squares objective, LODML's PSD hinge.

OMDML (after Yu & Li 2018)
--------------------------
Yu & Li, "Ordinal Distance Metric Learning with MDS for Image Ranking",
Asia-Pacific J. Oper. Res. 35(1), 2018 (arXiv 1902.10284).  Only the abstract
and the beginning of the introduction were available to us.  What it states:
write the metric as ``A = L^T L``, so learning ``A`` becomes learning a linear
map between the feature space and a target space; keep the order of the
labels by classical multidimensional scaling (MDS); fit with a least squares
term that also keeps the local structure; the problem is unconstrained, and
faster and better ranking than LODML.  The exact model implemented here is
ours, built on those statements:

1. *Label embedding.*  The ``m`` levels ``c_1 < ... < c_m`` get a
   dissimilarity ``Delta`` (``'absolute'``: ``|c_a - c_b|``; ``'rank'``:
   ``|a - b|``; ``'sqrt'``: ``|c_a - c_b|^(1/2)``; or a callable).  Classical
   MDS of ``Delta`` (double centring of ``-Delta^2 / 2``, top eigenvectors
   scaled by the square roots of the positive eigenvalues) places level
   ``a`` at ``t_a`` in ``R^r``.  Signs are fixed so that every coordinate
   increases with the level on average; for ``'absolute'`` and ``'rank'`` the
   embedding is exactly one-dimensional and monotone (``t_a = c_a - mean``),
   for ``'sqrt'`` it is a curve in ``m - 1`` dimensions whose first
   coordinate is monotone (checked at fit time, tested).
2. *Targets.*  Sample ``i`` with level ``a(i)`` gets the target
   ``y_i = t_{a(i)}``.
3. *Model.*  With ``X`` and ``Y`` centred (distances do not depend on a
   translation, so there is no intercept), ``L`` of shape ``(r, d)`` minimises::

       J(L) = 1/n ||X L^T - Y||_F^2
              + local_weight / (n k) * sum_{(i, j) in G} ||L (x_i - x_j) - (y_i - y_j)||^2
              + ridge * s * ||L||_F^2

   ``G`` holds, for every ``i``, its ``k = n_neighbors`` nearest neighbours in
   the input space *among the points of the same level* (``local_graph=
   'same_level'``, then ``y_i - y_j = 0`` and the term keeps neighbouring
   points of one level together: a local, within-level Fisher criterion) or
   among all points (``'all'``: the local differences of the embedding must
   fit the local differences of the targets).  ``s = trace(X^T X) / (n d)``
   makes ``ridge`` independent of the scale of ``X``.  Both local terms are
   least squares terms over k-NN pairs, our reading of "a least squares
   fitting term ... which can also maintain the local data structure".
4. *Solver.*  ``J`` is a convex quadratic in ``L``: with ``K`` the
   (scaled) graph Laplacian of ``G``, the minimiser solves
   ``C L^T = X^T Y / n + X^T K Y`` with ``C = X^T X / n + X^T K X + ridge s I``
   (``solver='cholesky'``).  ``solver='lbfgs'`` minimises the same ``J``
   matrix-free (``O(n d r)`` per evaluation, for very many features).

Choices the abstract leaves open, and what we chose, on selection splits
disjoint from the reported ones (benchmarks/results/ordinal_ablation.md):
the label dissimilarity (default ``'absolute'``: its 1-D target gave a lower
MAE than the ``(m - 1)``-dimensional curve of ``'sqrt'`` on all four data
sets; with it classical MDS simply returns the centred label values, so the
MDS step matters only for other dissimilarities), the local graph (default
``'same_level'`` with ``local_weight=1`` and ``n_neighbors=5``: slightly
better than no local term on the synthetic sets, equal on diabetes; the
unsupervised ``'all'`` graph was worse).  The number of components is the MDS
dimension ``r`` (capped at ``n_features``).

LODML-style baseline (after Li, Liu, Liu & Lu, IEEE TNNLS 26(7), 2015)
----------------------------------------------------------------------
"Ordinal Distance Metric Learning for Image Ranking": a linear ordinal
Mahalanobis model that preserves the local geometry and the ordinal
relationship of the data, PSD constrained.  The paper's body was not
available either; the baseline implemented here is::

    min_{A PSD}  1/n [ (1 - mu) * sum_{i, j in N_i} w_ij d_A(x_i, x_j)
                 + mu * sum_{(i, j, l)} [margin + d_A(x_i, x_j) - d_A(x_i, x_l)]_+ ]

with ``N_i`` the ``n_neighbors`` Euclidean nearest neighbours of ``i``,
``w_ij = 1 / (1 + |rank_i - rank_j|)`` (rank = level index), and one ordinal
triplet ``(i, j, l)`` for every pair ``j, l`` in ``N_i`` with
``|y_i - y_j| < |y_i - y_l|``; ``d_A`` is the squared distance.  It is solved
by projected subgradient descent (step x1.01 after a decrease, halved and
rolled back after an increase: :mod:`metric_estimators.solvers.subgradient`)
with the projection onto the PSD cone by eigenvalue clipping; the hinge and
its active set are a numba kernel.

Here are their pieces as the solvers need them (objective, gradient or
subgradient, projection).  Neighbourhoods come
from :mod:`metric_estimators._problems.neighbours`, the label targets and
ordinal triplets from :mod:`metric_estimators._problems.label_mds`, the hinge
from the kernel :func:`metric_estimators._kernels.ordinal.triplet_hinge`
(numba, or its numpy twin: the fit's ``kernels``).
"""

import numpy as np
from scipy import linalg, sparse

from .label_mds import ordinal_triplets
from .neighbours import knn_edges, knn_indices

__all__ = ["LODMLProblem", "OMDMLProblem", "edge_laplacian"]

def edge_laplacian(rows, cols, n, weights=None):
    """``K`` with ``sum_e w_e (x_a - x_b)(x_a - x_b)^T = X^T K X`` over edges (a, b).

    Parameters
    ----------
    rows, cols : ndarray of int
        The edges ``(rows[e], cols[e])``.
    n : int
        Number of points.
    weights : ndarray or None, default=None
        Edge weights ``w_e``; None: all 1.

    Returns
    -------
    K : scipy.sparse.csr_matrix of shape (n, n)
    """
    if weights is None:
        weights = np.ones(rows.size)
    W = sparse.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    deg = np.asarray(W.sum(axis=1)).ravel() + np.asarray(W.sum(axis=0)).ravel()
    return (sparse.diags(deg) - W - W.T).tocsr()


class OMDMLProblem:
    """OMDML's objective ``J(L)``: least squares to the label targets, local term, ridge.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    level_idx : ndarray of shape (n_samples,), int
        Level of every sample.
    T : ndarray of shape (n_levels, r)
        Level targets (the MDS embedding).
    n_neighbors : int
        Neighbours per point in the local graph.
    local_graph : {'same_level', 'all'}
        Neighbours among the same level, or among all points.
    local_weight : float
        Weight of the local term.
    ridge : float
        Weight of ``||L||_F^2`` relative to the mean feature variance.
    kernels : Kernels
        The fit's kernels (the k-NN search's ranking).

    Attributes
    ----------
    Xc, Yc : ndarray
        Centred data and targets.
    K : scipy.sparse.csr_matrix
        Scaled Laplacian of the local graph (``X^T K X``).
    ridge : float
        The ridge weight in the data's units.
    """

    def __init__(self, X, level_idx, T, n_neighbors, local_graph, local_weight,
                 ridge, kernels):
        n, d = X.shape
        self.Xc = X - X.mean(axis=0)
        Y = T[level_idx]
        self.Yc = Y - Y.mean(axis=0)
        groups = level_idx if local_graph == "same_level" else None
        rows, cols = knn_edges(self.Xc, n_neighbors, groups, kernels=kernels)
        k = max(1, min(n_neighbors, n - 1))
        self.K = edge_laplacian(rows, cols, n) * (local_weight / (n * k))
        scale = float(np.einsum("ij,ij->", self.Xc, self.Xc)) / (n * d)
        self.ridge = ridge * (scale if scale > 0 else 1.0)
        # J's scale, so that L-BFGS's tolerances are relative
        self.scale = max(np.einsum("ij,ij->", self.Yc, self.Yc) / n,
                         np.finfo(float).tiny)

    def objective(self, L):
        """``J(L)`` and its gradient, matrix-free (``O(n d r)``)."""
        Xc, Yc, K, ridge = self.Xc, self.Yc, self.K, self.ridge
        n = Xc.shape[0]
        R = Xc @ L.T - Yc
        KR = K @ R
        J = (
            np.einsum("ij,ij->", R, R) / n
            + np.einsum("ij,ij->", R, KR)
            + ridge * np.einsum("ij,ij->", L, L)
        )
        G = 2.0 * ((R / n + KR).T @ Xc) + 2.0 * ridge * L
        return J, G

    def scaled_objective(self, w, shape):
        """``J / scale`` and its flat gradient at the flat ``w`` (for L-BFGS)."""
        J, G = self.objective(w.reshape(shape))
        return J / self.scale, G.ravel() / self.scale

    def normal_equations(self):
        """``C`` and ``B`` of the minimiser's equations ``C L^T = B``."""
        Xc, Yc, K = self.Xc, self.Yc, self.K
        n, d = Xc.shape
        C = Xc.T @ Xc / n + Xc.T @ (K @ Xc) + self.ridge * np.eye(d)
        B = Xc.T @ Yc / n + Xc.T @ (K @ Yc)
        return C, B


class LODMLProblem:
    """LODML's objective over PSD ``A``: weighted neighbour pull plus ordinal triplet hinge.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Ordered labels.
    level_idx : ndarray of shape (n_samples,), int
        Rank of every label.
    n_neighbors : int
        Neighbourhood size.
    mu : float
        Weight of the hinge; ``1 - mu`` weighs the pull.
    margin : float
        Margin of each triplet, in squared distance.
    max_triplets : int or None
        Keep a uniform random subset of at most this many triplets.
    rng : numpy.random.RandomState
        Draws that subset.
    kernels : Kernels
        The fit's kernels (the k-NN search and the hinge).

    Attributes
    ----------
    P : ndarray of shape (n_features, n_features)
        The pull term is ``sum(A * P)``.
    ti, tj, tl : ndarray of int64
        The triplets.
    active : ndarray of uint8
        Triplets with a positive hinge at the last accepted point (set by
        :meth:`subgradient`).
    """

    def __init__(self, X, y, level_idx, n_neighbors, mu, margin, max_triplets,
                 rng, kernels):
        n = X.shape[0]
        self.X, self.mu, self.margin = X, mu, float(margin)
        self.kernels = kernels
        k = min(n_neighbors, n - 1)
        neighbors = knn_indices(X, k, kernels=kernels)
        rows = np.repeat(np.arange(n), k)
        cols = neighbors.ravel()
        w = 1.0 / (1.0 + np.abs(level_idx[rows] - level_idx[cols]))
        self.P = X.T @ (edge_laplacian(rows, cols, n, w) @ X) / n
        ti, tj, tl = ordinal_triplets(y, neighbors)
        if max_triplets is not None and ti.size > max_triplets:
            keep = np.sort(rng.choice(ti.size, max_triplets, replace=False))
            ti, tj, tl = ti[keep], tj[keep], tl[keep]
        self.ti, self.tj, self.tl = ti, tj, tl
        self.active = np.zeros(ti.size, dtype=np.uint8)
        self._factored = (None, None)  # (A, L) of the last projection

    def start(self):
        """The starting point ``A = I`` (its factor ``L = I`` is remembered)."""
        d = self.X.shape[1]
        A = np.eye(d)
        self._factored = (A, np.eye(d))
        return A

    def loss(self, A, L):
        """Objective at ``A = L^T L`` and the active triplets."""
        Z = np.ascontiguousarray(self.X @ L.T)
        hinge, active = self.kernels.ordinal.triplet_hinge(
            Z, self.ti, self.tj, self.tl, self.margin)
        f = ((1.0 - self.mu) * float(np.sum(A * self.P))
             + self.mu * hinge / self.X.shape[0])
        return f, active

    def value(self, A):
        """Objective at ``A`` and the active triplets (the solver's ``value``)."""
        if A is self._factored[0]:
            L = self._factored[1]
        else:
            w, V = linalg.eigh(A, check_finite=False)
            L = np.sqrt(np.clip(w, 0.0, None))[:, None] * V.T
        return self.loss(A, L)

    def subgradient(self, A, active):
        """A subgradient at ``A`` from its active triplets (symmetric)."""
        X = self.X
        n = X.shape[0]
        self.active = active
        sel = active.astype(bool)
        G = (1.0 - self.mu) * self.P
        if np.any(sel):
            i, j, l = self.ti[sel], self.tj[sel], self.tl[sel]
            rows = np.concatenate([i, i])
            cols = np.concatenate([j, l])
            w = np.concatenate([np.ones(i.size), -np.ones(i.size)])
            K = edge_laplacian(rows, cols, n, w)
            G = G + (self.mu / n) * (X.T @ (K @ X))
        return (G + G.T) / 2

    def project(self, B):
        """Projection onto the PSD cone (eigenvalue clipping); its factor is remembered."""
        w, V = linalg.eigh(B, check_finite=False)
        w = np.clip(w, 0.0, None)
        A = (V * w) @ V.T
        self._factored = (A, np.sqrt(w)[:, None] * V.T)
        return A

    @staticmethod
    def top_factor(A, r):
        """The ``r`` rows ``sqrt(w_q) v_q^T`` of the largest eigenpairs of ``A``."""
        w, V = linalg.eigh(A, check_finite=False)
        w, V = np.clip(w[::-1], 0.0, None), V[:, ::-1]
        return np.sqrt(w[:r])[:, None] * V[:, :r].T
