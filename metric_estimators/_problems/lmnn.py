"""The LMNN problem: target neighbours and the objective.

Weinberger, K. Q. and Saul, L. K. (2009). Distance metric learning for large
margin nearest neighbor classification. JMLR 10, 207-244.

:class:`LMNNObjective` is the loss and gradient in the flattened map ``L``
that the solvers (:mod:`metric_estimators.solvers.lbfgs`,
:mod:`metric_estimators.solvers.subgradient`) minimise; between impostor
searches it is evaluated on the candidate pairs that the impostor oracle
(:class:`metric_estimators.solvers.impostors.ImpostorSet`, passed in by the
estimator) holds.  This module only evaluates: the searches, and when to
run them, belong to the oracle and to the drivers of
:mod:`metric_estimators.solvers.lmnn_runs`.  The inner loops are the kernels
of :mod:`metric_estimators._kernels.lmnn` (numba) or of their numpy twin, as
the fit's ``kernels`` (:func:`metric_estimators._backend.choose`) say.
"""

import numpy as np

from .. import _backend
from .neighbours import nearest_in_groups

__all__ = ["LMNNObjective", "SampledLMNNObjective", "find_target_neighbors",
           "target_neighbors",
           "uniform_subset"]


def find_target_neighbors(X, y_idx, n_neighbors, progress=None):
    """The ``n_neighbors`` nearest same-class points of every point.

    Exact Euclidean search (:func:`~metric_estimators._problems.neighbours.nearest_in_groups`):
    equal distances go to the lower index, a point is never its own target
    neighbour (its duplicates, at distance 0, come first), and classes with
    ``n_c <= n_neighbors`` points give their points ``n_c - 1`` targets (the
    row is padded with -1).  The search runs on the kernels that
    :func:`metric_estimators._backend.choose` gives a search among this
    many points (family ``"neighbours"``; both give the same targets).

    Returns
    -------
    targets : ndarray of shape (n_samples, n_neighbors), int64
    """
    return target_neighbors(X, y_idx, n_neighbors, progress=progress,
                            kernels=_backend.choose("neighbours", len(X)))


def target_neighbors(X, y_idx, n_neighbors, progress=None, *, kernels):
    """:func:`find_target_neighbors` on the kernels of a fit (``kernels``)."""
    return nearest_in_groups(X, y_idx, n_neighbors, progress=progress, kernels=kernels)


class LMNNObjective:
    """LMNN loss and gradient in the flattened components ``L``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    targets : ndarray of shape (n_samples, n_neighbors), int
        Target neighbours (-1: none).
    impostors : ImpostorSet
        The candidate impostor pairs (:class:`metric_estimators.solvers.impostors.ImpostorSet`):
        the objective reads its stored pairs, sampling fraction and search
        count, and keeps the reference distances of its bound there; it
        never searches.  Its ``kernels`` are the ones this objective uses.
    push_weight : float
        ``mu``, the weight of the push term.
    squared : bool
        Squared hinge (else the hinge).
    n_components : int
    """

    def __init__(self, X, targets, impostors, push_weight, squared, n_components):
        self.X = X
        self.targets = targets
        self.valid = targets >= 0
        self.has_targets = self.valid.any(axis=1)
        self.impostors = impostors
        self.push_weight = push_weight
        self.squared = squared
        self.shape = (n_components, X.shape[1])
        self.n_active = 0
        self.n_active_pairs = 0
        self.kernels = impostors.kernels
        self._last = None  # [flat, Z, td, R, held] of the last embedding

    def _embed(self, flat):
        """Embedding ``Z``, target distances and margin radii at ``flat``.

        The last result is kept: the solvers search (:meth:`search_point`)
        at the point they last evaluated.
        """
        if self._at(flat):
            return self._last[1:4]
        self._last = None  # no second embedding held at once
        Z = self.X @ flat.reshape(self.shape).T
        td = self.kernels.lmnn.target_sqdist(Z, self.targets)
        R = np.where(self.has_targets, td.max(axis=1) + 1.0, -np.inf)
        # the last slot: (search count, stored pairs within R at Z), set by
        # an evaluation (see search_point)
        self._last = [flat.copy(), Z, td, R, None]
        return Z, td, R

    def _at(self, flat):
        """Whether the last embedding was made at ``flat``."""
        return self._last is not None and np.array_equal(self._last[0], flat)

    def __call__(self, flat):
        """Loss and gradient (flattened) at the flattened map ``flat``.

        On the stored candidate pairs: the impostors must have been searched
        at least once (:meth:`search_point` gives the search its input).
        """
        X, targets = self.X, self.targets
        imps = self.impostors
        if imps.n_searches == 0:
            raise RuntimeError("LMNNObjective is evaluated on searched impostor "
                               "candidates: search once (at search_point(flat)) first.")
        Z, td, R = self._embed(flat)
        kernels = self.kernels.lmnn
        imp_i, imp_l, d_imp = self._near_pairs(Z, R)
        self._last[4] = (imps.n_searches, imp_i.size)  # see search_point
        push, w_target, w_imp, n_active = kernels.triplet_loss_weights(
            td, targets, imp_i, d_imp, self.push_weight / imps.fraction,
            self.squared,
        )
        pull_weight = 1.0 - self.push_weight
        loss = pull_weight * td[self.valid].sum() + push
        w_target += pull_weight * self.valid
        LX = kernels.laplacian_product(X, targets, w_target, imp_i, imp_l, w_imp)
        grad = 2.0 * (Z.T @ LX)
        self.n_active = n_active
        self.n_active_pairs = int(np.count_nonzero(w_imp))
        return loss, grad.ravel()

    def _near_pairs(self, Z, R):
        """The stored pairs that may hold an active triplet at ``Z``, with their distances.

        :func:`~metric_estimators._kernels.lmnn.near_pairs`: only the pairs
        within their anchor's radius matter to the loss and the gradient
        (the others add exact zeros), and most stored pairs are ruled out
        by a triangle-inequality bound from the distances at a reference
        embedding (:attr:`~metric_estimators.solvers.impostors.ImpostorSet.ref_root`,
        set by every search),
        without computing their distance.  The reference is renewed once the
        bound leaves more than half of the pairs to compute.
        """
        imps = self.impostors
        reset = imps.ref_stale
        if reset:
            if imps.ref_root is None or imps.ref_root.size != imps.imp_i.size:
                imps.ref_root = np.empty(imps.imp_i.size, dtype=np.float32)
            imps.ref_Z = Z
        imp_i, imp_l, d_imp, n_computed = self.kernels.lmnn.near_pairs(
            Z, imps.imp_i, imps.imp_l, R, imps.ref_Z, imps.ref_root, reset)
        imps.ref_stale = not reset and 2 * n_computed > imps.imp_i.size
        return imp_i, imp_l, d_imp

    def search_point(self, flat):
        """What an impostor search at ``flat`` takes: ``(Z, R, n_held)``.

        ``Z``: the embedding, ``R``: the margin radii (``-inf`` for points
        without targets), ``n_held``: the number of stored pairs within their
        radius at ``flat`` when the last evaluation was at ``flat`` on the
        current store and the kernels count them exactly, else None
        (:meth:`metric_estimators.solvers.impostors.ImpostorSet.refresh`).
        """
        imps = self.impostors
        n_held = None
        if self._at(flat) and self.kernels.lmnn.exact_near_pairs:
            held = self._last[4]  # counted by the last evaluation, at flat
            if held is not None and held[0] == imps.n_searches:
                n_held = held[1]
        Z, _, R = self._embed(flat)
        return Z, R, n_held


def uniform_subset(rng, n, m):
    """``m`` distinct indices of ``range(n)`` drawn uniformly, sorted (all if ``m >= n``).

    For ``m`` much smaller than ``n`` (``4 m <= n``) the draws are uniform
    with replacement and repeats are dropped, until ``m`` distinct indices
    are in hand: the set is a uniform ``m``-subset (the stopping rule
    depends only on how many distinct indices were drawn), at ``O(m)`` cost
    instead of the ``O(n)`` permutation behind ``RandomState.choice(n, m,
    replace=False)``, which is used otherwise.
    """
    if m >= n:
        return np.arange(n)
    if 4 * m > n:
        return np.sort(rng.choice(n, m, replace=False))
    draws = rng.randint(n, size=m)
    picked = np.unique(draws)
    while picked.size < m:
        draws = np.concatenate([draws, rng.randint(n, size=m - picked.size)])
        picked = np.unique(draws)
    return picked


class SampledLMNNObjective:
    """Unbiased mini-batch estimate of the squared-hinge LMNN loss, per point.

    The loss of :class:`LMNNObjective` with ``squared=True``, divided by
    ``n_samples``, is ``(1/n) sum_i f_i(L)`` with ``f_i`` the pull term of
    anchor ``i`` plus its push terms over all other-class points ``l``.  A
    batch of anchors ``B`` and a uniform sample ``S`` of ``m`` reference
    points (without replacement) give the estimate

    .. math::

        \\frac{1}{|B|} \\sum_{i \\in B} \\Big[(1 - \\mu) \\sum_j d_{ij}
        + \\mu \\frac{n}{m} \\sum_{l \\in S, y_l \\ne y_i} \\sum_j
        [1 + d_{ij} - d_{il}]_+^2\\Big]

    whose expectation is that loss for any ``L`` (every point is in ``S``
    with probability ``m / n``); with ``m >= n`` the push sum is exact.  No
    impostor set is stored: memory is ``O(|B| m)`` per batch whatever
    ``n`` is (stochastic LMNN in the spirit of mlpack's SGD/AMSGrad
    optimisers, here with sampled rather than stored impostors).
    """

    def __init__(self, X, targets, y_idx, push_weight, n_components, kernels):
        self.X = X
        self.targets = targets
        self.valid = targets >= 0
        self.y_idx = y_idx
        self.push_weight = push_weight
        self.shape = (n_components, X.shape[1])
        self.n_samples = X.shape[0]
        self._push_weights = kernels.lmnn.sampled_push_weights

    def __call__(self, flat, batch, refs):
        """Estimated loss and gradient (flattened) at ``flat`` on one batch.

        Parameters
        ----------
        flat : ndarray of shape (n_components * n_features,)
        batch : ndarray of int
            Anchors ``B``.
        refs : ndarray of int
            The reference sample ``S`` (all points for the exact push sum).
        """
        L = flat.reshape(self.shape)
        X, n = self.X, self.n_samples
        mu = self.push_weight
        b = batch.size
        tg = self.targets[batch]
        valid = self.valid[batch]
        XB, XR = X[batch], X[refs]
        ZB, ZR = XB @ L.T, XR @ L.T
        # pull edges (i, j): embedded and input differences
        XT = X[np.where(valid, tg, 0)]                      # (b, k, d)
        dX_t = XB[:, None, :] - XT
        dZ_t = dX_t @ L.T                                   # (b, k, c)
        td = np.einsum("bkc,bkc->bk", dZ_t, dZ_t) * valid    # (b, k)
        # push: one fused pass over the (anchor, reference) pairs
        scale = max(n / refs.size, 1.0) * mu
        push, W, w_push, rs = self._push_weights(
            ZB @ ZR.T, np.einsum("ij,ij->i", ZB, ZB), np.einsum("ij,ij->i", ZR, ZR),
            td, valid, self.y_idx[batch], self.y_idx[refs], scale)
        w_t = (1.0 - mu) * valid.astype(np.float64) + w_push  # d loss / d d_ij
        loss = (1.0 - mu) * td.sum() + push
        # d/dL of sum w ||L (x_a - x_b)||^2 is 2 sum w (z_a - z_b)(x_a - x_b)^T
        cs = W.sum(axis=0)
        G = (ZB * rs[:, None]).T @ XB + (ZR * cs[:, None]).T @ XR
        G -= ZB.T @ (W @ XR) + (W @ ZR).T @ XB
        G += np.einsum("bkc,bk,bkd->cd", dZ_t, w_t, dX_t)
        return loss / b, (2.0 / b) * G.ravel()

    def sample(self, flat, batch, rng, n_refs=4096):
        """:meth:`__call__` on a fresh uniform sample of ``n_refs`` references.

        All points when there are at most ``n_refs`` (the push sum is then
        exact); ``rng`` is a RandomState.
        """
        return self(flat, batch, uniform_subset(rng, self.n_samples, n_refs))

    def full_loss(self, flat, block=512):
        """The exact loss per point (every anchor, every reference)."""
        refs = np.arange(self.n_samples)
        total = 0.0
        for start in range(0, self.n_samples, block):
            batch = refs[start:start + block]
            f, _ = self(flat, batch, refs)
            total += f * batch.size
        return total / self.n_samples
