"""SCML's problem: a triplet hinge over sparse combinations of rank-one matrices.

Shi, Bellet & Sha, "Sparse compositional metric learning", AAAI 2014: the
metric is ``M = sum_k w_k b_k b_k^T`` over a fixed basis ``B`` (one unit
vector ``b_k`` per row) with weights ``w >= 0``, and ``w`` minimises

    F(w) = (1 / |T|) sum_{(a, b, c) in T} max(0, 1 + d_w(a, b) - d_w(a, c))
           + beta * ||w||_1,

``d_w`` the squared distance.  ``F`` is convex in ``w`` (each hinge is the
positive part of an affine function of ``w``).  This module builds the
bases (:func:`triplet_diffs_basis`, :func:`lda_basis`) and the problem
object (:class:`TripletHingeProblem`) the stochastic solver asks for
mini-batch gradients and full objectives, computed by the kernels of
:mod:`metric_estimators._kernels.scml` (numba, or their numpy twins: the
fit's ``kernels``).
"""

import numpy as np
from scipy import linalg
from sklearn.cluster import KMeans
from sklearn.neighbors import NearestNeighbors

from .._threads import one_blas_thread

__all__ = ["TripletHingeProblem", "default_n_basis", "triplet_diffs_basis", "lda_basis",
           "check_basis", "unique_points"]

#: Projections ``P = X @ B.T`` are precomputed when they hold at most this
#: many numbers (256 MB); otherwise they are computed per mini-batch / chunk.
MAX_PROJECTIONS = 2 ** 25
#: Shrinkage of the within-class scatter in the local LDAs of basis='lda'.
LDA_SHRINKAGE = 0.1
#: The full objective runs on numba's thread pool above this many
#: triplet-basis products (below, the pool's start-up costs more than it saves).
PARALLEL_WORK = 2 ** 26
#: At most this many triplets estimate the scatters of the contrast directions.
MAX_CONTRAST_TRIPLETS = 20000
#: Triplets per chunk when projections are computed on the fly.
CHUNK = 4096
def default_n_basis(n_features):
    """``20 * n_features`` basis elements (before the caps of each basis)."""
    return 20 * n_features


def unique_points(tuples):
    """Distinct points of ``tuples`` (n, t, d) and the tuples as row indices into them.

    Rows are grouped by a 64-bit hash of their bytes (one sort of integers,
    instead of ``np.unique(axis=0)``'s sort of whole rows, each comparison
    of which reads up to ``d`` values); consecutive rows in hash order start a
    new point unless they are equal, so the mapping is exact even under hash
    collisions (a collision can only leave a duplicate point).
    """
    n, t, d = tuples.shape
    flat = np.ascontiguousarray(tuples.reshape(-1, d), dtype=np.float64)
    flat = flat + 0.0  # -0.0 -> 0.0: equal values, equal bytes
    keys = np.random.RandomState(0).randint(1, 2 ** 62, size=d, dtype=np.int64)
    keys = (keys.view(np.uint64) | np.uint64(1))
    with np.errstate(over="ignore"):
        h = (flat.view(np.uint64) * keys).sum(axis=1, dtype=np.uint64)
    order = np.argsort(h, kind="stable")
    hs, fs = h[order], flat[order]
    new = np.empty(order.size, dtype=bool)
    new[:1] = True
    new[1:] = (hs[1:] != hs[:-1]) | np.any(fs[1:] != fs[:-1], axis=1)
    inverse = np.empty(order.size, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return fs[new], inverse.reshape(n, t)


def _unit_rows(B):
    norms = np.linalg.norm(B, axis=1)
    keep = norms > 1e-12 * max(norms.max(initial=0.0), np.finfo(float).tiny)
    return B[keep] / norms[keep, None]


def triplet_diffs_basis(points, triplets, n_basis, rng):
    """Discriminative directions of the triplets, then unit differences drawn from them.

    The first ``n_features`` elements are the generalised eigenvectors of
    the scatter of the far differences ``x_a - x_c`` against the (shrunk)
    scatter of the near differences ``x_a - x_b`` -- the directions along
    which the triplets want distances large relative to small, the
    triplet analogue of the LDA basis (scatters estimated on at most
    :data:`MAX_CONTRAST_TRIPLETS` triplets drawn with ``rng``); they let the non-negative
    combination single out a subspace even when raw differences are
    dominated by noise.  The rest are distinct non-zero differences ``x_a -
    x_b`` / ``x_a - x_c`` drawn uniformly without replacement, made unit
    (at most ``n_basis`` elements in all).
    """
    sample = triplets
    if sample.shape[0] > MAX_CONTRAST_TRIPLETS:
        sample = sample[np.sort(rng.choice(sample.shape[0], MAX_CONTRAST_TRIPLETS,
                                           replace=False))]
    near = points[sample[:, 0]] - points[sample[:, 1]]
    far = points[sample[:, 0]] - points[sample[:, 2]]
    dirs = [_contrast_directions(far, near)]
    diffs = np.concatenate((triplets[:, [0, 1]], triplets[:, [0, 2]]))
    diffs = np.unique(np.sort(diffs, axis=1), axis=0)
    diffs = diffs[diffs[:, 0] != diffs[:, 1]]
    if diffs.shape[0] == 0:
        raise ValueError(
            "basis='triplet_diffs' needs triplets of distinct points; every "
            "triplet given joins identical points."
        )
    n_draw = max(n_basis - dirs[0].shape[0], 0)
    if diffs.shape[0] > n_draw:
        diffs = diffs[np.sort(rng.choice(diffs.shape[0], n_draw, replace=False))]
    dirs.append(points[diffs[:, 0]] - points[diffs[:, 1]])
    return _unit_rows(np.concatenate(dirs))[:n_basis]


def _contrast_directions(far, near, shrinkage=LDA_SHRINKAGE):
    """Generalised eigenvectors (rows, largest first) of ``far^T far`` against ``near^T near``."""
    d = far.shape[1]
    Sf = far.T @ far / far.shape[0]
    Sn = near.T @ near / near.shape[0]
    scale = np.trace(Sn) / d
    if not scale > 0:
        scale = 1.0
    Sn = (1 - shrinkage) * Sn + shrinkage * scale * np.eye(d)
    _, V = linalg.eigh(Sf, Sn, check_finite=False)
    return V[:, ::-1].T


def lda_basis(X, y, n_basis, rng):
    """Locally discriminative directions: LDA on neighbourhoods of k-means centres.

    As proposed by Shi, Bellet & Sha (2014): the points are clustered by
    k-means into ``ceil(n_basis / r)`` regions (``r = min(n_classes - 1,
    n_features)``, at most ``n_samples // 5`` regions); around each centre
    the ``k`` nearest points (``k = max(10 n_classes, 2 n_features)``,
    capped by ``n_samples``) are fed to an LDA with shrinkage
    :data:`LDA_SHRINKAGE` whose discriminant
    directions (unit length) join the basis.  Regions with a single class
    contribute nothing; the global LDA directions are always included.
    """
    n_samples, n_features = X.shape
    classes = np.unique(y)
    r = min(classes.size - 1, n_features)
    n_regions = int(np.ceil(n_basis / r))
    n_regions = max(1, min(n_regions, n_samples // 5))
    k = min(n_samples, max(10 * classes.size, 2 * n_features))
    # many small dense problems (scatters of k points): one BLAS thread
    # (spinning threads make them many times slower on a busy machine), and
    # no limit at all for tiny ones, where threadpoolctl's scan of the loaded
    # libraries would cost more than the products
    with one_blas_thread(k * n_features ** 2):
        return _lda_basis(X, y, n_basis, rng, r, n_regions, k)


def _lda_basis(X, y, n_basis, rng, r, n_regions, k):
    n_features = X.shape[1]
    dirs = [_lda_directions(X, y, r)]
    if n_regions > 1:
        km = KMeans(n_clusters=n_regions, n_init=1,
                    random_state=rng.randint(np.iinfo(np.int32).max)).fit(X)
        neigh = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(
            km.cluster_centers_, return_distance=False)
        for idx in neigh:
            yl = y[idx]
            n_cls = np.unique(yl).size
            if n_cls < 2:
                continue
            dirs.append(_lda_directions(X[idx], yl, min(n_cls - 1, n_features)))
    B = _unit_rows(np.concatenate(dirs))
    return B[:n_basis]


def _lda_directions(X, y, r, shrinkage=LDA_SHRINKAGE):
    """The ``r`` leading discriminant directions of ``(X, y)``, as rows.

    Generalised eigenvectors of the between-class scatter ``S_b`` against the
    within-class scatter shrunk towards a multiple of the identity,
    ``S_w + shrinkage * (tr(S_w) / d) I`` (so that neighbourhoods with fewer
    points than features still give well-defined directions), largest
    eigenvalue first.

    ``S_b = A A^T`` has rank below the number of classes ``c``: with the
    Cholesky factor ``S_w = C C^T``, the eigenvectors are ``C^{-T} u`` for
    the left singular vectors ``u`` of ``C^{-1} A`` (``d x c``), so one
    Cholesky factorisation and the SVD of a ``d x c`` matrix replace a dense
    ``d x d`` generalised eigenproblem (the same directions up to sign and
    length; a Cholesky factorisation takes a small fraction of the flops of
    a dense symmetric eigensolver).
    """
    classes, yi = np.unique(y, return_inverse=True)
    n, d = X.shape
    counts = np.bincount(yi).astype(np.float64)
    order = np.argsort(yi, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts[:-1]).astype(np.intp)))
    means = np.add.reduceat(X[order], starts, axis=0) / counts[:, None]
    R = X - means[yi]
    Sw = R.T @ R / n
    A = (means - X.mean(axis=0)).T * np.sqrt(counts / n)  # S_b = A A^T
    scale = np.trace(Sw) / d
    if not scale > 0:
        scale = 1.0
    Sw = (1 - shrinkage) * Sw + shrinkage * scale * np.eye(d)
    C = linalg.cholesky(Sw, lower=True, check_finite=False)
    U = linalg.svd(linalg.solve_triangular(C, A, lower=True, check_finite=False),
                   full_matrices=False, check_finite=False)[0]
    V = linalg.solve_triangular(C, U[:, :r], lower=True, trans="T",
                                check_finite=False)
    return V.T


def check_basis(basis, n_features):
    """A user basis: a finite (n_basis, n_features) array with non-zero rows, made unit."""
    B = np.asarray(basis)
    if B.dtype.kind not in "iuf":
        raise TypeError(f"basis must be a real numeric array, got dtype {B.dtype}.")
    if B.ndim != 2 or B.shape[1] != n_features or B.shape[0] == 0:
        raise ValueError(
            f"basis must have shape (n_basis, {n_features}) with n_basis >= 1, "
            f"got {B.shape}."
        )
    B = B.astype(np.float64)
    if not np.all(np.isfinite(B)):
        raise ValueError("basis contains NaN or infinity.")
    U = _unit_rows(B)
    if U.shape[0] != B.shape[0]:
        raise ValueError("basis has a zero row (a rank-one matrix b b^T must "
                         "not be zero).")
    return U


class TripletHingeProblem:
    """SCML's smooth part ``f(w)``: the mean triplet hinge, and its mini-batch gradient.

    Parameters
    ----------
    points : ndarray of shape (n_points, n_features)
    triplets : ndarray of shape (n_triplets, 3), int
        Row indices into ``points``: ``(a, b, c)`` with ``a`` meant closer to
        ``b`` than to ``c``.
    basis : ndarray of shape (n_basis, n_features)
    kernels : Kernels
        The fit's kernels (:func:`metric_estimators._backend.choose`).
    """

    def __init__(self, points, triplets, basis, kernels):
        self.points = np.ascontiguousarray(points, dtype=np.float64)
        self.triplets = np.ascontiguousarray(triplets, dtype=np.intp)
        self.basis = np.ascontiguousarray(basis, dtype=np.float64)
        self.n_triplets = self.triplets.shape[0]
        self.n_basis = self.basis.shape[0]
        if self.points.shape[0] * self.n_basis <= MAX_PROJECTIONS:
            self.P = self.points @ self.basis.T
        else:
            self.P = None
        self.kernels = kernels

    def _local(self, tr):
        # projections of the points of triplets ``tr`` and local indices
        P = self.points[tr.ravel()] @ self.basis.T
        return P, np.arange(P.shape[0], dtype=np.intp).reshape(-1, 3)

    def batch_gradient(self, batch, w, out):
        """Mean hinge subgradient over ``triplets[batch]`` into ``out``; active count."""
        triplet_batch_gradient = self.kernels.scml.triplet_batch_gradient
        if self.P is not None:
            return triplet_batch_gradient(self.P, self.triplets, batch, w, out)
        P, local = self._local(self.triplets[batch])
        return triplet_batch_gradient(P, local, np.arange(batch.size), w, out)

    def embedding(self, w):
        """``Z = points @ L.T`` with ``L^T L = M = sum_k w_k b_k b_k^T`` (``w >= 0``).

        ``d_w(a, b) = ||Z_a - Z_b||^2``.  ``L`` has one row per basis
        element of non-zero weight (``sqrt(w_k) b_k``) when there are at most
        ``n_features`` of them, else one per positive eigenvalue of ``M``
        (at most ``n_features``): the full objective then costs
        ``n_triplets * min(nnz(w), n_features)`` instead of ``n_triplets *
        n_basis``.
        """
        nz = np.flatnonzero(w)
        if nz.size <= self.points.shape[1]:
            L = np.sqrt(w[nz])[:, None] * self.basis[nz]
        else:
            B = self.basis[nz]
            M = (B.T * w[nz]) @ B
            lam, U = linalg.eigh((M + M.T) / 2.0, check_finite=False)
            keep = lam > 0.0
            L = (U[:, keep] * np.sqrt(lam[keep])).T
        return np.ascontiguousarray(self.points @ L.T)

    def hinges(self, w):
        """Hinge of every triplet at weights ``w``: ``max(0, 1 + d_w(a, b) - d_w(a, c))``.

        Computed in the embedding of :meth:`embedding` (the same value as
        ``1 + w . phi`` up to rounding).
        """
        Z = self.embedding(w)
        ones = np.ones(Z.shape[1])
        scml = self.kernels.scml
        kernel = (scml.triplet_hinges_parallel
                  if self.n_triplets * Z.shape[1] > PARALLEL_WORK
                  else scml.triplet_hinges)
        return kernel(Z, self.triplets, ones)

    def objective(self, w):
        """``(f(w), number of triplets with a positive hinge)``."""
        h = self.hinges(w)
        return float(h.sum() / self.n_triplets), int(np.count_nonzero(h))
