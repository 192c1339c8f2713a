"""Ordinal metric learning: the MDS-based learner ``OMDML`` and the ``LODML`` baseline.

Both learn a Mahalanobis metric ``d(x, x')^2 = (x - x')^T L^T L (x - x')``
from points with *ordered* labels (ages, grades, ratings ...), for ranking
by nearest neighbours: given a query, the training points closest in the
learned metric should be those whose labels are closest to the query's.

Ordered labels ``y``
--------------------
``y`` is a 1-D array of real numbers whose *order* is meaningful: integers
(ranks, ages, grades) or floats.  Every distinct value is one level; levels
are sorted by value.  Strings and categories are rejected: encode ordered
categories as integers first (e.g. ``OrdinalEncoder`` with an explicit
category order).  Booleans are treated as the levels 0 < 1.

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
rolled back after an increase) with the projection onto the PSD cone by
eigenvalue clipping; the hinge and its active set are a numba kernel.
"""

import numbers
import time
import warnings

import numpy as np
from scipy import linalg, sparse
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ._kernels.ordinal import triplet_hinge
from ._validation import power_of_two_scale, validate_points
from .base import MahalanobisMixin

__all__ = ["OMDML", "LODML", "classical_mds", "label_embedding"]


# ---------------------------------------------------------------------------
# ordered labels and their MDS embedding
# ---------------------------------------------------------------------------


def _validate_xy(estimator, X, y):
    """Validate ``X`` and ordered labels ``y``; return (X, y, levels, level_idx)."""
    name = type(estimator).__name__
    if y is None:
        raise ValueError(
            f"{name} requires y to be passed, but the target y is None."
        )
    y_arr = np.asarray(y) if not hasattr(y, "dtype") else y
    kind = getattr(getattr(y_arr, "dtype", None), "kind", "O")
    if kind == "c":
        raise ValueError(
            f"{name}: Complex data not supported in y; ordered labels must be real."
        )
    if kind in "US" or (kind == "O" and _has_non_numbers(y_arr)):
        raise TypeError(
            f"{name}: y must hold ordered numeric labels (integers or floats); "
            f"got dtype {getattr(y_arr, 'dtype', type(y))}. Encode ordered "
            "categories as integers first (e.g. OrdinalEncoder with an "
            "explicit category order)."
        )
    X, y = validate_points(
        estimator, X, y, dtype=[np.float64, np.float32], y_numeric=True
    )
    y = np.asarray(y, dtype=np.float64)
    n_samples = X.shape[0]
    if n_samples < 2:
        raise ValueError(
            f"{name} needs at least 2 samples, got n_samples = {n_samples}."
        )
    levels, level_idx = np.unique(y, return_inverse=True)
    if levels.size < 2:
        raise ValueError(
            f"{name} needs at least 2 distinct label values in y (ordered "
            f"levels); got only {levels[0]!r} (1 class)."
        )
    return X, y, levels, level_idx


def _has_non_numbers(y):
    flat = np.ravel(np.asarray(y, dtype=object))
    return any(
        not isinstance(v, (numbers.Real, np.bool_)) or isinstance(v, complex)
        for v in flat[:1000]
    )


def classical_mds(D, n_components=None, *, tol=1e-10):
    """Classical (Torgerson) multidimensional scaling of a dissimilarity matrix.

    Parameters
    ----------
    D : ndarray of shape (m, m)
        Symmetric dissimilarities with a zero diagonal.
    n_components : int or None
        Number of coordinates to keep; None keeps every coordinate with a
        positive eigenvalue (larger than ``tol`` times the largest).
    tol : float
        Relative threshold below which eigenvalues count as zero.

    Returns
    -------
    coords : ndarray of shape (m, r)
        Coordinates; column ``q`` is the eigenvector of the ``q``-th largest
        eigenvalue of ``B = -J D^2 J / 2`` scaled by its square root.
    eigenvalues : ndarray of shape (m,)
        All eigenvalues of ``B``, in decreasing order.
    """
    D = np.asarray(D, dtype=np.float64)
    D2 = D * D
    row = D2.mean(axis=1)
    B = -0.5 * (D2 - row[:, None] - row[None, :] + row.mean())
    w, V = linalg.eigh((B + B.T) / 2)
    w, V = w[::-1], V[:, ::-1]
    positive = w > tol * max(w[0], np.finfo(float).tiny)
    r = int(np.sum(positive))
    if n_components is not None:
        r = min(r, n_components)
    coords = V[:, :r] * np.sqrt(w[:r])
    return coords, w


def _label_dissimilarity(levels, kind):
    m = levels.size
    if callable(kind):
        D = np.asarray(kind(levels[:, None], levels[None, :]), dtype=np.float64)
        if D.shape != (m, m):
            raise ValueError(
                "label_dissimilarity callable must return an (m, m) array for "
                f"m = {m} levels when called as f(levels[:, None], "
                f"levels[None, :]); got shape {D.shape}."
            )
        if not np.all(np.isfinite(D)):
            raise ValueError("label_dissimilarity returned NaN or infinity.")
        if np.any(D < 0):
            raise ValueError("label_dissimilarity returned negative values.")
        scale = max(np.abs(D).max(), np.finfo(float).tiny)
        if not np.allclose(D, D.T, atol=1e-12 * scale, rtol=1e-10):
            raise ValueError("label_dissimilarity must be symmetric.")
        if np.any(np.abs(np.diag(D)) > 1e-12 * scale):
            raise ValueError("label_dissimilarity must be 0 between equal labels.")
        return (D + D.T) / 2
    if kind == "absolute":
        return np.abs(levels[:, None] - levels[None, :])
    if kind == "rank":
        r = np.arange(m, dtype=np.float64)
        return np.abs(r[:, None] - r[None, :])
    if kind == "sqrt":
        return np.sqrt(np.abs(levels[:, None] - levels[None, :]))
    raise ValueError(f"Unknown label_dissimilarity {kind!r}.")


def label_embedding(levels, label_dissimilarity="absolute", n_components=None):
    """Place ordered levels in a target space by classical MDS.

    Parameters
    ----------
    levels : array-like of shape (m,)
        The distinct label values, sorted increasingly.
    label_dissimilarity : {'absolute', 'rank', 'sqrt'} or callable
        See :class:`OMDML`.
    n_components : int or None
        Keep at most this many coordinates.

    Returns
    -------
    T : ndarray of shape (m, r)
        The level coordinates.  Each column is oriented so that it increases
        with the level on average (non-negative covariance with the level
        index), so the first column is increasing whenever the embedding keeps
        the order.
    eigenvalues : ndarray of shape (m,)
        Eigenvalues of the double-centred matrix, in decreasing order.
    """
    levels = np.asarray(levels, dtype=np.float64)
    m = levels.size
    if isinstance(label_dissimilarity, str) and label_dissimilarity in (
        "absolute",
        "rank",
    ):
        # Dissimilarities of points on a line: classical MDS recovers the line
        # exactly (B = t t^T with t centred); no eigendecomposition needed.
        base = levels if label_dissimilarity == "absolute" else np.arange(m, dtype=float)
        t = base - base.mean()
        eigenvalues = np.zeros(m)
        eigenvalues[0] = t @ t
        T = t[:, None]
    else:
        D = _label_dissimilarity(levels, label_dissimilarity)
        T, eigenvalues = classical_mds(D, n_components)
    if n_components is not None:
        T = T[:, :n_components]
    idx = np.arange(m) - (m - 1) / 2.0
    signs = np.where(idx @ T < 0, -1.0, 1.0)
    return T * signs, eigenvalues


# ---------------------------------------------------------------------------
# OMDML
# ---------------------------------------------------------------------------


def _knn_indices(X, k, block=1024):
    """Indices of the ``k`` nearest other points of every row of ``X``.

    Exact, Euclidean, in blocks of rows (``O(block n)`` memory); ties in
    distance are broken by the smaller index, so the result does not depend
    on the BLAS.  A plain numpy search: on small problems it is much faster
    than a tree or a threaded reduction, and the fit costs are dominated by
    it only for ``n`` in the tens of thousands.
    """
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    out = np.empty((n, k), dtype=np.intp)
    for start in range(0, n, block):
        stop = min(start + block, n)
        D = sq[start:stop, None] + sq[None, :] - 2.0 * (X[start:stop] @ X.T)
        np.maximum(D, 0.0, out=D)
        D[np.arange(stop - start), np.arange(start, stop)] = np.inf
        if k < n - 1:
            part = np.argpartition(D, k - 1, axis=1)[:, :k]
            d_part = np.take_along_axis(D, part, axis=1)
            order = np.lexsort((part, d_part), axis=1)
            block_out = np.take_along_axis(part, order, axis=1)
            # Rows where the k-th distance is tied with a point left out:
            # argpartition chose arbitrarily, redo them with a stable sort.
            kth = d_part.max(axis=1)
            tied = np.flatnonzero(np.count_nonzero(D <= kth[:, None], axis=1) > k)
            for r in tied:
                block_out[r] = np.argsort(D[r], kind="stable")[:k]
        else:
            block_out = np.argsort(D, axis=1, kind="stable")[:, :k]
        out[start:stop] = block_out
    return out


def _knn_graph(X, level_idx, n_neighbors, mode):
    """Directed k-NN edges ``(rows, cols)``: j among the k nearest of i."""
    n = X.shape[0]
    rows, cols = [], []
    if mode == "all":
        groups = [np.arange(n)]
    else:
        order = np.argsort(level_idx, kind="stable")
        counts = np.bincount(level_idx)
        groups = np.split(order, np.cumsum(counts)[:-1])
    for members in groups:
        size = members.size
        k = min(n_neighbors, size - 1)
        if k < 1:
            continue
        nbrs = _knn_indices(X[members], k)
        rows.append(np.repeat(members, k))
        cols.append(members[nbrs.ravel()])
    if not rows:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    return np.concatenate(rows), np.concatenate(cols)


def _edge_laplacian(rows, cols, n, weights=None):
    """``K`` with ``sum_e w_e (x_a - x_b)(x_a - x_b)^T = X^T K X`` over edges (a, b)."""
    if weights is None:
        weights = np.ones(rows.size)
    W = sparse.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    deg = np.asarray(W.sum(axis=1)).ravel() + np.asarray(W.sum(axis=0)).ravel()
    return (sparse.diags(deg) - W - W.T).tocsr()


class OMDML(MahalanobisMixin, BaseEstimator):
    """Ordinal distance metric learning with MDS targets (after Yu & Li 2018).

    The ordered labels are embedded by classical MDS of a label
    dissimilarity; the linear map ``L`` is the least squares fit of those
    targets, with a term that keeps same-level neighbours together and a
    ridge term.  The problem is an unconstrained convex quadratic, solved in
    closed form.  The exact model is in the module docstring of
    :mod:`metric_estimators.ordinal` and in docs/ordinal.md.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the learned space.  None: every MDS coordinate of the
        label dissimilarity with a positive eigenvalue, at most
        ``n_features``.  An int must not exceed that number.
    label_dissimilarity : {'absolute', 'rank', 'sqrt'} or callable, default='absolute'
        Dissimilarity between two levels ``a`` and ``b``: ``'absolute'``
        ``|a - b|``; ``'rank'`` ``|rank(a) - rank(b)|`` (equally spaced
        levels); ``'sqrt'`` ``|a - b| ** 0.5``.  A callable is called once as
        ``f(levels[:, None], levels[None, :])`` and must return the
        ``(m, m)`` matrix: symmetric, non-negative, zero on the diagonal.
        ``'absolute'`` and ``'rank'`` give a one-dimensional target (so a
        rank-one metric, which ranked best in our benchmark); ``'sqrt'`` an
        ``(m - 1)``-dimensional curve (use it for a 2-D plot, for example).
    n_neighbors : int, default=5
        Neighbours per point in the local-structure graph (fewer when a level
        has fewer other points).
    local_graph : {'same_level', 'all'}, default='same_level'
        Neighbours searched among the points of the same level, or among all
        points (unsupervised, as in locality preserving projections).
    local_weight : float, default=1.0
        Weight of the local-structure term.
    ridge : float, default=1e-6
        Weight of ``||L||_F^2``, relative to the mean feature variance.
    solver : {'auto', 'cholesky', 'lbfgs'}, default='auto'
        ``'cholesky'`` solves the normal equations (``O(n d^2 + d^3)``);
        ``'lbfgs'`` minimises the same objective matrix-free
        (``O(n d r)`` per iteration).  ``'auto'`` uses ``'cholesky'`` up to
        2000 features.
    max_iter : int, default=500
        Maximum L-BFGS iterations (``solver='lbfgs'``).
    tol : float, default=1e-8
        L-BFGS tolerance on the projected gradient, relative to the
        objective's scale (``solver='lbfgs'``).
    verbose : int, default=0
        Print the solver's progress.
    random_state : int, RandomState instance or None, default=None
        Unused: both solvers are deterministic (L-BFGS starts from zero).
        Accepted so that code setting ``random_state`` on every learner works.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``.
    levels_ : ndarray of shape (n_levels,)
        The distinct label values, increasing.
    level_embedding_ : ndarray of shape (n_levels, n_components)
        MDS coordinates of the levels (the regression targets).
    mds_eigenvalues_ : ndarray of shape (n_levels,)
        Eigenvalues of the double-centred squared label dissimilarities.
    objective_ : float
        Final value of ``J``.
    loss_curve_ : list of float
        ``J`` after every iteration (one value for the closed form).
    n_iter_ : int
        Iterations of the solver (1 for the closed form).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has feature names.

    See Also
    --------
    LODML : the PSD-constrained triplet baseline.

    References
    ----------
    P. Yu and Q. Li, "Ordinal Distance Metric Learning with MDS for Image
    Ranking", Asia-Pacific Journal of Operational Research 35(1), 2018.

    Examples
    --------
    >>> from metric_estimators import OMDML
    >>> from metric_estimators.ranking import make_ordinal
    >>> X, y = make_ordinal(n_samples=200, random_state=0)
    >>> omdml = OMDML().fit(X, y)
    >>> omdml.transform(X).shape
    (200, 1)
    >>> OMDML(label_dissimilarity="sqrt").fit(X, y).transform(X).shape
    (200, 7)
    """

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "label_dissimilarity": [StrOptions({"absolute", "rank", "sqrt"}), callable],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "local_graph": [StrOptions({"same_level", "all"})],
        "local_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "ridge": [Interval(numbers.Real, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "cholesky", "lbfgs"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        label_dissimilarity="absolute",
        n_neighbors=5,
        local_graph="same_level",
        local_weight=1.0,
        ridge=1e-6,
        solver="auto",
        max_iter=500,
        tol=1e-8,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.label_dissimilarity = label_dissimilarity
        self.n_neighbors = n_neighbors
        self.local_graph = local_graph
        self.local_weight = local_weight
        self.ridge = ridge
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    # The pieces of the objective, shared by fit and the tests.
    def _problem(self, X, level_idx, T):
        """Centred data, targets and the local-term matrix ``K`` (X^T K X)."""
        n, d = X.shape
        Xc = X - X.mean(axis=0)
        Y = T[level_idx]
        Yc = Y - Y.mean(axis=0)
        rows, cols = _knn_graph(Xc, level_idx, self.n_neighbors, self.local_graph)
        k = max(1, min(self.n_neighbors, n - 1))
        K = _edge_laplacian(rows, cols, n) * (self.local_weight / (n * k))
        scale = float(np.einsum("ij,ij->", Xc, Xc)) / (n * d)
        ridge = self.ridge * (scale if scale > 0 else 1.0)
        return Xc, Yc, K, ridge

    @staticmethod
    def _objective(L, Xc, Yc, K, ridge):
        """``J(L)`` and its gradient, matrix-free."""
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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the linear map to points with ordered labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered numeric labels (see the module docstring).

        Returns
        -------
        self : OMDML
        """
        start = time.perf_counter()
        X, y, levels, level_idx = _validate_xy(self, X, y)
        X = X.astype(np.float64, copy=False)
        n, d = X.shape
        T, eigenvalues = label_embedding(levels, self.label_dissimilarity)
        r_avail = T.shape[1]
        if self.n_components is None:
            r = min(r_avail, d)
        else:
            r = self.n_components
            if r > r_avail:
                raise ValueError(
                    f"n_components={r} exceeds the {r_avail} dimension(s) of "
                    f"the MDS embedding of the label dissimilarity "
                    f"{self.label_dissimilarity!r} over {levels.size} levels; "
                    "use a smaller n_components or label_dissimilarity='sqrt'."
                )
            if r > d:
                raise ValueError(
                    f"n_components={r} must be <= n_features={d}."
                )
        T = T[:, :r]
        if callable(self.label_dissimilarity) and levels.size > 2:
            if not np.all(np.diff(T[:, 0]) > 0):
                warnings.warn(
                    "The first MDS coordinate of label_dissimilarity does not "
                    "increase with the label: the target space does not keep "
                    "the order of the labels.",
                    UserWarning,
                )
        Xc, Yc, K, ridge = self._problem(X, level_idx, T)

        solver = self.solver
        if solver == "auto":
            solver = "cholesky" if d <= 2000 else "lbfgs"
        if solver == "cholesky":
            C = Xc.T @ Xc / n + Xc.T @ (K @ Xc) + ridge * np.eye(d)
            B = Xc.T @ Yc / n + Xc.T @ (K @ Yc)
            try:
                Lt = linalg.solve(C, B, assume_a="pos", check_finite=False)
            except (linalg.LinAlgError, ValueError):
                Lt = linalg.lstsq(C, B, check_finite=False)[0]
            L = np.ascontiguousarray(Lt.T)
            J, _ = self._objective(L, Xc, Yc, K, ridge)
            self.loss_curve_ = [float(J)]
            self.n_iter_ = 1
            if self.verbose:
                print(
                    f"[OMDML] closed form: n={n}, d={d}, r={r}, objective "
                    f"{J:.6g}, {time.perf_counter() - start:.3f} s"
                )
        else:
            L, J = self._fit_lbfgs(Xc, Yc, K, ridge, r, start)
        self.components_ = L
        self.objective_ = float(J)
        self.levels_ = levels
        self.level_embedding_ = T
        self.mds_eigenvalues_ = eigenvalues
        return self

    def _fit_lbfgs(self, Xc, Yc, K, ridge, r, start):
        d = Xc.shape[1]
        curve = []
        scale = max(np.einsum("ij,ij->", Yc, Yc) / Xc.shape[0], np.finfo(float).tiny)
        if self.verbose:
            print(f"[OMDML] {'iter':>5} {'objective':>14} {'time(s)':>9}")

        def fun(w):
            J, G = self._objective(w.reshape(r, d), Xc, Yc, K, ridge)
            return J / scale, G.ravel() / scale

        def callback(intermediate_result):
            curve.append(float(intermediate_result.fun) * scale)
            if self.verbose:
                print(
                    f"[OMDML] {len(curve):>5} {curve[-1]:>14.6g} "
                    f"{time.perf_counter() - start:>9.3f}"
                )

        res = minimize(
            fun,
            np.zeros(r * d),
            jac=True,
            method="L-BFGS-B",
            callback=callback,
            options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 1e-15},
        )
        self.n_iter_ = int(res.nit)
        self.loss_curve_ = curve if curve else [float(res.fun) * scale]
        if res.status == 1:
            warnings.warn(
                f"OMDML (L-BFGS) did not converge in max_iter={self.max_iter} "
                "iterations; increase max_iter.",
                ConvergenceWarning,
            )
        return res.x.reshape(r, d), float(res.fun) * scale


# ---------------------------------------------------------------------------
# LODML baseline
# ---------------------------------------------------------------------------


def ordinal_triplets(y, neighbors):
    """Ordinal triplets inside neighbourhoods.

    For every anchor ``i`` and every pair ``j, l`` of its neighbours
    (``neighbors[i]``) with ``|y_i - y_j| < |y_i - y_l|``, the triplet
    ``(i, j, l)``: ``j`` should be closer to ``i`` than ``l``.

    Returns
    -------
    ti, tj, tl : ndarray of int64
    """
    n, k = neighbors.shape
    gap = np.abs(y[neighbors] - y[:, None])  # (n, k)
    a, b = np.triu_indices(k, 1)
    ga, gb = gap[:, a], gap[:, b]  # (n, p)
    anchors = np.broadcast_to(np.arange(n)[:, None], ga.shape)
    na, nb = neighbors[:, a], neighbors[:, b]
    closer_a = ga < gb
    closer_b = gb < ga
    ti = np.concatenate([anchors[closer_a], anchors[closer_b]])
    tj = np.concatenate([na[closer_a], nb[closer_b]])
    tl = np.concatenate([nb[closer_a], na[closer_b]])
    order = np.lexsort((tl, tj, ti))
    return (
        ti[order].astype(np.int64),
        tj[order].astype(np.int64),
        tl[order].astype(np.int64),
    )


class LODML(MahalanobisMixin, BaseEstimator):
    """PSD-constrained ordinal metric learning baseline (after Li et al. 2015).

    Minimises a weighted pull of neighbours plus an ordinal triplet hinge
    inside neighbourhoods over the PSD cone, by projected subgradient descent
    with eigenvalue clipping.  The exact model is in the module docstring of
    :mod:`metric_estimators.ordinal`.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows of ``components_``: the square roots of the largest eigenvalues
        of the learned ``A`` times their eigenvectors.  None keeps all
        (``n_features``).
    n_neighbors : int, default=10
        Size of each neighbourhood ``N_i`` (Euclidean, in the input space).
    mu : float in [0, 1], default=0.5
        Weight of the triplet hinge; ``1 - mu`` weighs the pull term.
    margin : float, default=1.0
        Margin of each ordinal triplet, in squared distance.
    max_triplets : int or None, default=None
        Use a uniform random subset of at most this many triplets.
    learning_rate : float, default=0.1
        First step, relative to ``||A_0||_F / ||G_0||_F``.
    max_iter : int, default=1000
    tol : float, default=1e-6
        Stop when an accepted step decreases the objective by less than
        ``tol`` relatively, or when the step has become negligible
        (``step * ||G||_F <= 1e-12 max(||A||_F, 1)``) after repeated halving.
    verbose : int, default=0
        Print a table: iteration, objective, active triplets, step, time.
    random_state : int, RandomState instance or None, default=None
        Seeds the triplet subsampling (``max_triplets``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    n_iter_ : int
        Iterations, including rejected steps.
    loss_curve_ : list of float
        Objective after every accepted step (the first is at ``A = I``).
    n_triplets_ : int
    n_active_ : int
        Triplets with a positive hinge at the solution.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has feature names.

    References
    ----------
    C. Li, Q. Liu, J. Liu and H. Lu, "Ordinal Distance Metric Learning for
    Image Ranking", IEEE Trans. Neural Netw. Learn. Syst. 26(7), 2015.
    """

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(numbers.Integral, 2, None, closed="left")],
        "mu": [Interval(numbers.Real, 0, 1, closed="both")],
        "margin": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_triplets": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        n_neighbors=10,
        mu=0.5,
        margin=1.0,
        max_triplets=None,
        learning_rate=0.1,
        max_iter=1000,
        tol=1e-6,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.mu = mu
        self.margin = margin
        self.max_triplets = max_triplets
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    def _problem(self, X, y, level_idx):
        """Pull matrix ``P`` (d x d) and triplets, fixed during the descent."""
        n = X.shape[0]
        k = min(self.n_neighbors, n - 1)
        neighbors = _knn_indices(X, k)
        rows = np.repeat(np.arange(n), k)
        cols = neighbors.ravel()
        w = 1.0 / (1.0 + np.abs(level_idx[rows] - level_idx[cols]))
        Kp = _edge_laplacian(rows, cols, n, w)
        P = X.T @ (Kp @ X) / n
        ti, tj, tl = ordinal_triplets(y, neighbors)
        if self.max_triplets is not None and ti.size > self.max_triplets:
            rng = check_random_state(self.random_state)
            keep = np.sort(rng.choice(ti.size, self.max_triplets, replace=False))
            ti, tj, tl = ti[keep], tj[keep], tl[keep]
        return P, ti, tj, tl

    def _loss(self, A, L, X, P, ti, tj, tl):
        """Objective at ``A = L^T L`` and the active triplets."""
        Z = np.ascontiguousarray(X @ L.T)
        hinge, active = triplet_hinge(Z, ti, tj, tl, float(self.margin))
        f = (1.0 - self.mu) * float(np.sum(A * P)) + self.mu * hinge / X.shape[0]
        return f, active

    def _subgradient(self, X, P, ti, tj, tl, active):
        n = X.shape[0]
        sel = active.astype(bool)
        G = (1.0 - self.mu) * P
        if np.any(sel):
            i, j, l = ti[sel], tj[sel], tl[sel]
            rows = np.concatenate([i, i])
            cols = np.concatenate([j, l])
            w = np.concatenate([np.ones(i.size), -np.ones(i.size)])
            K = _edge_laplacian(rows, cols, n, w)
            G = G + (self.mu / n) * (X.T @ (K @ X))
        return (G + G.T) / 2

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the PSD metric to points with ordered labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered numeric labels.

        Returns
        -------
        self : LODML
        """
        start = time.perf_counter()
        X, y, levels, level_idx = _validate_xy(self, X, y)
        X = X.astype(np.float64, copy=False)
        d = X.shape[1]
        if self.n_components is not None and self.n_components > d:
            raise ValueError(
                f"n_components={self.n_components} must be <= n_features={d}."
            )
        # The objective of A on X equals that of s^2 A on X / s: data of
        # extreme scale is divided by a power of two s (exact), L by s.
        scale = power_of_two_scale(X)
        if scale != 1.0:
            X = X / scale
        P, ti, tj, tl = self._problem(X, y, level_idx)
        if ti.size == 0:
            warnings.warn(
                "LODML found no ordinal triplet (no neighbourhood holds two "
                "neighbours at different label gaps); only the pull term is "
                "minimised and the metric shrinks towards 0. Increase "
                "n_neighbors.",
                UserWarning,
            )

        A = np.eye(d)
        L = np.eye(d)
        f, active = self._loss(A, L, X, P, ti, tj, tl)
        G = self._subgradient(X, P, ti, tj, tl, active)
        gnorm = max(linalg.norm(G), np.finfo(float).tiny)
        eta = self.learning_rate * linalg.norm(A) / gnorm
        curve = [f]
        converged = False
        if self.verbose:
            print(
                f"[LODML] {'iter':>5} {'objective':>14} {'active':>9} "
                f"{'step':>10} {'time(s)':>9}"
            )
        it = 0
        for it in range(1, self.max_iter + 1):
            w, V = linalg.eigh(A - eta * G, check_finite=False)
            w = np.clip(w, 0.0, None)
            A_new = (V * w) @ V.T
            L_new = np.sqrt(w)[:, None] * V.T
            f_new, active_new = self._loss(A_new, L_new, X, P, ti, tj, tl)
            if f_new <= f:
                rel = (f - f_new) / max(abs(f), np.finfo(float).tiny)
                A, L, f, active = A_new, L_new, f_new, active_new
                curve.append(f)
                G = self._subgradient(X, P, ti, tj, tl, active)
                eta *= 1.01
                if self.verbose:
                    print(
                        f"[LODML] {it:>5} {f:>14.6g} {int(active.sum()):>9} "
                        f"{eta:>10.3g} {time.perf_counter() - start:>9.3f}"
                    )
                if rel < self.tol:
                    converged = True
                    break
            else:
                eta *= 0.5
            if eta * linalg.norm(G) <= 1e-12 * max(linalg.norm(A), 1.0):
                # The step has become negligible: a kink of the hinge that
                # no step along the subgradient can leave.
                converged = True
                break
        if not converged:
            warnings.warn(
                f"LODML did not converge in max_iter={self.max_iter} "
                "iterations; increase max_iter or tol.",
                ConvergenceWarning,
            )
        w, V = linalg.eigh(A, check_finite=False)
        w, V = np.clip(w[::-1], 0.0, None), V[:, ::-1]
        r = d if self.n_components is None else self.n_components
        self.components_ = np.sqrt(w[:r])[:, None] * V[:, :r].T / scale
        if ti.size and not np.any(self.components_):
            warnings.warn(
                "LODML learned the zero metric (every distance is 0): the "
                "pull term outweighs the ordinal triplets on this data. "
                "Increase mu, or check that the labels are ordered.",
                UserWarning,
            )
        self.n_iter_ = it
        self.loss_curve_ = curve
        self.objective_ = float(f)
        self.n_triplets_ = int(ti.size)
        self.n_active_ = int(active.sum())
        self.levels_ = levels
        return self
