"""The LMNN problem: target neighbours, the impostor active set, the objective.

Weinberger, K. Q. and Saul, L. K. (2009). Distance metric learning for large
margin nearest neighbor classification. JMLR 10, 207-244.

:class:`LMNNObjective` is the loss and gradient in the flattened map ``L``
that the solvers (:mod:`metric_estimators.solvers.lbfgs`,
:mod:`metric_estimators.solvers.subgradient`) minimise; between impostor
searches it is evaluated on the candidate pairs of an :class:`ImpostorSet`.
The inner loops are the kernels of :mod:`metric_estimators._kernels.lmnn`
(numba) or of their numpy twin, as the fit's ``kernels``
(:func:`metric_estimators._backend.choose`) say; every object here takes
them as an argument.
"""

import time
import warnings

import numpy as np

from .._threads import ordered_map, usable_cpus
from .neighbours import nearest_in_groups

__all__ = ["ImpostorSet", "LMNNObjective", "SampledLMNNObjective", "find_target_neighbors",
           "impostor_budget", "search_threads", "uniform_subset"]

# Candidate impostors are searched within ``SLACK`` times the margin radius,
# so that small changes of L do not require a new search (see ImpostorSet).
SLACK = 1.5
# Entries of a distance block computed at once (memory ~ 8 bytes each).
BLOCK = 1 << 21
# Peak memory per stored impostor pair, all arrays alive at once included:
# the int32 pair (8 bytes) twice during a search or a refresh (old and new
# store) plus the sorted int64 keys of the old store, or the pair, its
# distance and its weight (float64) during an objective evaluation.
PAIR_BYTES = 32
# max_impostors='auto' with impostor_memory='auto': the budget is this many
# times the memory of X, and at least MIN_IMPOSTOR_MEMORY bytes (1,000,000
# pairs: PyLMNN's memory at its default of 500,000 sampled impostors; on
# 7,000 training points of the panel's families a 64 MB floor gave the same
# 3-NN accuracy at 1.4 to 1.5 times the CPU time, benchmarks/results/lmnn_ablation.md).
AUTO_MEMORY_FACTOR = 4
MIN_IMPOSTOR_MEMORY = 32 * 10**6
# Sampled searches with a sampling fraction at most this test the pair's
# fixed number before its distance (no BLAS block; see _search_hashed).
HASHED_SCAN_FRACTION = 0.05
# Hashed searches of at least this many points run on ImpostorSet.threads
# threads (a search of 5,000 points costs about 20 ms of CPU).
THREADED_SEARCH_SAMPLES = 5000
# Most threads of a search.
MAX_SEARCH_THREADS = 8


def search_threads():
    """Threads of a large hashed search: the CPUs this process may use, at most
    :data:`MAX_SEARCH_THREADS`."""
    return max(1, min(usable_cpus(), MAX_SEARCH_THREADS))


def impostor_budget(max_impostors, impostor_memory, X):
    """Most impostor pairs to store, from ``max_impostors`` or a memory budget.

    An int ``max_impostors`` is the cap itself.  ``'auto'`` divides the
    memory budget by :data:`PAIR_BYTES`: ``impostor_memory`` bytes (an int;
    the estimator parses strings with units through
    :func:`~metric_estimators._validation.parse_memory`), or for
    ``impostor_memory='auto'`` :data:`AUTO_MEMORY_FACTOR` times the memory of
    ``X`` and at least :data:`MIN_IMPOSTOR_MEMORY` bytes, so the impostor
    store scales with the data and never dwarfs it.

    Returns
    -------
    cap : int
    budget : int or None
        The memory budget in bytes (None for an int ``max_impostors``).
    """
    if not isinstance(max_impostors, str):
        return int(max_impostors), None
    if isinstance(impostor_memory, str) and impostor_memory == "auto":
        budget = max(MIN_IMPOSTOR_MEMORY, AUTO_MEMORY_FACTOR * X.nbytes)
    else:
        budget = int(impostor_memory)
    return max(1, budget // PAIR_BYTES), budget


def find_target_neighbors(X, y_idx, n_neighbors, progress=None, kernels=None):
    """The ``n_neighbors`` nearest same-class points of every point.

    Exact Euclidean search (:func:`~metric_estimators._problems.neighbours.nearest_in_groups`):
    equal distances go to the lower index, a point is never its own target
    neighbour (its duplicates, at distance 0, come first), and classes with
    ``n_c <= n_neighbors`` points give their points ``n_c - 1`` targets (the
    row is padded with -1).  ``kernels``: the fit's (None: the backend's
    choice for the search alone).

    Returns
    -------
    targets : ndarray of shape (n_samples, n_neighbors), int64
    """
    return nearest_in_groups(X, y_idx, n_neighbors, progress=progress, kernels=kernels)


def _size(n_bytes):
    """A byte count for messages: '812 kB', '37 MB', '1.2 GB'."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{int(n_bytes)} B"


class ImpostorSet:
    """Candidate impostor pairs, refreshed by exact blockwise searches.

    A search at the current ``L`` stores, for each anchor ``i``, every
    other-class point ``l`` with ``||L (x_i - x_l)||^2 < SLACK * R_i``, where
    ``R_i = max_j ||L (x_i - x_j)||^2 + 1`` is the margin radius over the
    targets ``j`` of ``i``: all impostors that are active now, plus those
    close to becoming active.  Between searches the loss is evaluated on the
    stored pairs only (the active-set idea of Weinberger & Saul's solver).
    Searches become rarer while they find no missing active impostor (the
    interval, in solver iterations, doubles); and the optimiser only stops
    after a run in which the active set did not change has converged and a
    search at the final ``L`` has confirmed that no active impostor was
    missing, so the returned ``L`` is a stationary point of the exact loss.

    At most ``max_impostors`` pairs are stored (int32 indices; the cap comes
    from :func:`impostor_budget`).  Beyond it the push term is estimated on a
    fixed hashed subset of all pairs (see :meth:`_search`); with a sampling
    fraction of at most :data:`HASHED_SCAN_FRACTION` a search tests each
    pair's hash before its distance (:meth:`_search_hashed`), so it needs
    neither BLAS blocks nor a list of candidate pairs.  Large hashed
    searches run on ``threads`` Python threads over a numba kernel that
    releases the GIL: no spinning thread pool, and the same pairs as a
    serial search.  (Blockwise searches stay serial: on digits and the
    pen-based digits two threads made them no faster.)
    """

    def __init__(self, y_idx, has_targets, max_impostors, kernels, seed=0, log=None,
                 progress=None, threads=1):
        self.y_idx = y_idx
        self.log = log  # called with a line of text after every search
        self.progress = progress  # called during a search (throttled there)
        self.has_targets = has_targets
        self.max_impostors = max_impostors
        self.n_samples = y_idx.size
        # the points sorted by class (stable): class c is
        # order[bounds[c]:bounds[c + 1]], so blocks are contiguous slices
        self.order = np.argsort(y_idx, kind="stable")
        self.bounds = np.searchsorted(y_idx[self.order], np.unique(y_idx))
        self.bounds = np.append(self.bounds, self.n_samples)
        self.imp_i = np.empty(0, dtype=np.int32)
        self.imp_l = np.empty(0, dtype=np.int32)
        self.n_searches = 0
        self.n_changes = 0  # searches that found missing active impostors
        self.interval = 1
        self.since_search = None  # None: never searched
        self.fraction = 1.0  # sampling fraction of impostor pairs
        self.seed = int(seed)
        self.hashes = None  # per-point hashes, made once sampling is needed
        self.budget = None  # memory budget (bytes) behind max_impostors, if any
        self.search_seconds = 0.0  # wall time of the last search
        self.kernels = kernels  # the fit's (numba or numpy twins)
        self.threads = threads  # of a large hashed search
        # the stored pairs' distances (float32) at the embedding ref_Z, for
        # the bound of LMNNObjective; stale once the bound has got weak
        self.ref_Z = None
        self.ref_root = None
        self.ref_stale = True

    def tick(self):
        """Count one solver iteration; True when a search is due."""
        self.since_search += 1
        return self.since_search >= self.interval

    def refresh(self, Z, R, n_held=None):
        """Search at the current embedding; return how many active impostors were missed.

        Counts the active impostor pairs that the previous candidates did
        not hold; the search interval doubles when none was missed.
        ``n_held``, if known, is the number of stored pairs within their
        radius ``R`` at ``Z``: every one of them is found again (the search
        keeps all pairs within ``SLACK * R``, of the same sampled subset
        while the fraction stays), so the missed ones are the difference
        of the counts, without matching the pairs.
        """
        first = self.since_search is None
        start = time.perf_counter()
        self.ref_Z = self.ref_root = None
        start_fraction = self.fraction
        new_i, new_l = self._search(Z, R)
        self.search_seconds = time.perf_counter() - start
        n_missing = 0
        # the new pairs' distances at Z: the reference of LMNNObjective's bound
        root = np.empty(new_i.size, dtype=np.float32)
        act_i, act_l = self.kernels.lmnn.pairs_within(Z, new_i, new_l, R, root)
        if not first and n_held is not None and self.fraction == start_fraction:
            n_missing = int(act_i.size) - int(n_held)
        elif not first:
            n = self.n_samples
            new_keys = act_i.astype(np.int64) * n + act_l
            old_keys = self.imp_i.astype(np.int64) * n + self.imp_l
            self.imp_i = self.imp_l = None  # the old store is no longer needed
            old_keys.sort()
            pos = np.searchsorted(old_keys, new_keys)
            pos = np.minimum(pos, max(old_keys.size - 1, 0))
            found = old_keys[pos] == new_keys if old_keys.size else np.zeros(
                new_keys.size, dtype=bool
            )
            n_missing = int(new_keys.size - found.sum())
        if not first:
            self.n_changes += n_missing > 0
            if n_missing == 0:
                self.interval = min(2 * self.interval, 64)
        del act_i, act_l
        self.imp_i, self.imp_l = new_i, new_l
        self.ref_Z, self.ref_root, self.ref_stale = Z, root, False
        self.since_search = 0
        self.n_searches += 1
        if self.log is not None:
            missed = "" if first else f", {n_missing} active missed"
            self.log(f"impostor search {self.n_searches}: {new_i.size} "
                     f"candidate pairs{missed}")
        return n_missing

    # -- searches --------------------------------------------------------
    def _search(self, Z, R):
        """All (anchor, impostor) pairs within ``SLACK * R`` of the anchors.

        If more than ``max_impostors`` are found, the push term is estimated
        on a fixed pseudo-random subset of all impostor pairs: pair ``(i, l)``
        is kept iff its hash-derived number ``u(i, l)`` is below the sampling
        ``fraction``, and the push weight is divided by ``fraction``.  The
        subset does not depend on ``L``, so the sampled objective is one
        fixed function that L-BFGS can minimise (unlike sampling afresh at
        every evaluation); the fraction only ever decreases, on the fly, which
        also bounds the search's memory.
        """
        self._search_start = time.perf_counter()
        R_safe = np.where(self.has_targets, R, -np.inf)
        rho = SLACK * R_safe
        n = self.n_samples
        start_fraction = self.fraction
        if self.hashes is None:
            self.hashes = self.kernels.lmnn.point_hashes(n, self.seed)
        sq = np.einsum("ij,ij->i", Z, Z)
        # Inner products in float32 halve the cost of the search; their
        # round-off (~1e-7 |z|^2) must stay far below the slack of the radius
        # (at least 0.5 R >= 0.5), else float64 is used.
        Zs = Z.astype(np.float32) if sq.max(initial=0.0) < 1e5 else Z
        if self.fraction == 1.0 and self.since_search is None:
            # first search: estimate the number of pairs from a sample of
            # anchors, and sample from the start if it exceeds the budget
            # (else the scan would hold every in-radius pair of a block)
            expected = self._estimate_pairs(Zs, sq, rho)
            if expected > self.max_impostors:
                self.fraction = 0.5 * self.max_impostors / expected
        if self.fraction <= HASHED_SCAN_FRACTION:
            del Zs
            kept_i, kept_l = self._search_hashed(Z, rho)
        else:
            kept_i, kept_l = self._search_blocks(Zs, sq, rho)
        if self.fraction < start_fraction:
            self.n_changes += start_fraction < 1.0 or self.since_search is not None
            if start_fraction == 1.0:
                self._warn_subsample(Z, kept_i, kept_l)
        return kept_i, kept_l

    def _search_blocks(self, Zs, sq, rho):
        """The search by BLAS blocks of distances (``Zs``: the embedding, maybe float32)."""
        acc_i, acc_l = [], []
        n_acc = 0
        cap = self.max_impostors
        n = self.n_samples
        n_done = 0
        # one gather per search; every block is then a pair of slices
        order = self.order
        Zo, sqo, rhoo = Zs[order], sq[order], rho[order]
        for r0, r1, c0 in self._blocks():
            if self.progress is not None:
                self.progress(f"impostor search {self.n_searches + 1}: "
                              f"{n_done} of {n} anchors, {n_acc} candidates")
            n_done += r1 - r0
            G = Zo[r0:r1] @ Zo[c0:].T
            a, b = self.kernels.lmnn.threshold_block(
                G, sqo[r0:r1], sqo[c0:], rhoo[r0:r1], rhoo[c0:], order[r0:r1],
                order[c0:], True, self.hashes, self.fraction,
            )
            if a.size == 0:
                continue
            acc_i.append(a)
            acc_l.append(b)
            n_acc += a.size
            if n_acc > cap:
                acc_i, acc_l, n_acc = self._shrink(acc_i, acc_l, cap, n_acc)
        kept_i = np.concatenate(acc_i) if acc_i else np.empty(0, dtype=np.int32)
        kept_l = np.concatenate(acc_l) if acc_l else np.empty(0, dtype=np.int32)
        return kept_i, kept_l

    def _shrink(self, acc_i, acc_l, cap, n_acc):
        """Lower the sampling fraction so that about ``cap / 2`` of the ``n_acc`` pairs remain.

        Returns the kept pairs (one array each, in a list) and their number.
        """
        self.fraction *= 0.5 * cap / n_acc
        i = np.concatenate(acc_i)
        l_ = np.concatenate(acc_l)
        keep = self.kernels.lmnn.pair_uniform(i, l_, self.hashes) < self.fraction
        return [i[keep]], [l_[keep]], int(keep.sum())

    def _warn_subsample(self, Z, kept_i, kept_l):
        """Warn that the push term is sampled: what the exact loss would cost.

        Memory from :data:`PAIR_BYTES`; time from the distance computation of
        ``2**16`` stored pairs (repeated if fewer), timed here, scaled to the
        exact number of pairs (an objective evaluation makes about three such
        passes: distances, weights, gradient).
        """
        cap = self.max_impostors
        full = 1.2 * kept_i.size / self.fraction  # pairs of the exact loss, +20 %
        m = 1 << 16
        sample_i, sample_l = np.resize(kept_i, m), np.resize(kept_l, m)
        start = time.perf_counter()
        self.kernels.lmnn.pair_sqdist(Z, sample_i, sample_l)
        per_pair = (time.perf_counter() - start) / m
        budget = "" if self.budget is None else f" (impostor_memory={_size(self.budget)})"
        warnings.warn(
            f"More than max_impostors={cap}{budget} impostor pairs are near-"
            f"active (about {full / 1.2:.3g}); the push term is estimated on a "
            f"fixed random subset of impostor pairs (fraction "
            f"{self.fraction:.3g}). The exact LMNN loss needs max_impostors >= "
            f"{full:.3g} (impostor_memory >= {_size(PAIR_BYTES * full)}): about "
            f"{_size(PAIR_BYTES * max(full - cap, 0.0))} more memory, and "
            f"roughly {3.0 * per_pair * full:.2g} s instead of "
            f"{3.0 * per_pair * kept_i.size:.2g} s on impostors per objective "
            f"evaluation (this search took "
            f"{time.perf_counter() - self._search_start:.2g} s).",
            UserWarning,
        )

    def _estimate_pairs(self, Zs, sq, rho, n_anchors=256):
        """Estimated number of (anchor, impostor) pairs within ``rho``.

        From a fixed sample of anchors (every pair counted for its anchor),
        a few anchors at a time (memory within a block).
        """
        n = self.n_samples
        rng = np.random.RandomState(self.seed)
        anchors = np.sort(rng.choice(n, min(n, n_anchors), replace=False))
        step = max(1, BLOCK // (4 * n))
        count = 0
        everyone = np.arange(n)
        for start in range(0, anchors.size, step):
            a = anchors[start:start + step]
            # the pairs within radius (same class too), as in a search's block
            ia, il = self.kernels.lmnn.threshold_block(
                Zs[a] @ Zs.T, sq[a], sq, rho[a], rho, a, everyone, False,
                self.hashes, 1.0)
            count += int(np.count_nonzero(self.y_idx[ia] != self.y_idx[il]))
        return float(count) * n / anchors.size

    def _search_hashed(self, Z, rho, n_chunks=16):
        """Sampled search that tests each pair's fixed number before its distance.

        ``O(n^2)`` hash tests and ``O(fraction n^2 c)`` for the distances,
        instead of ``O(n^2 c)``; memory: the kept pairs only.  Returns exactly
        what a full scan at the same ``fraction`` would (as a set).  Anchors
        go in chunks (progress lines; the fraction shrinks as soon as the
        budget is exceeded), on ``threads`` threads from
        :data:`THREADED_SEARCH_SAMPLES` points on: the kernel releases the
        GIL, each thread scans its own chunk and only waits for work at the
        end, so a busy core delays the search by at most one chunk.  The
        chunks are taken in order and each is cut to the fraction in force
        when it is taken, so the fractions and the result do not depend on
        the number of threads.
        """
        n, cap = self.n_samples, self.max_impostors
        Zd = np.ascontiguousarray(Z, dtype=np.float64)
        acc_i, acc_l, n_acc = [], [], 0
        step = max(1, -(-n // n_chunks))

        def scan(start):
            fraction = self.fraction
            hint = max(1024, (cap - n_acc) // 4)
            pairs = self.kernels.lmnn.sampled_pairs_within(
                Zd, self.y_idx, self.hashes, fraction, rho, start,
                min(start + step, n), hint)
            return fraction, pairs

        n_threads = self.threads if n >= THREADED_SEARCH_SAMPLES else 1
        for start, (fraction, (a, b)) in zip(
                range(0, n, step), ordered_map(scan, range(0, n, step), n_threads)):
            if self.progress is not None:
                self.progress(f"impostor search {self.n_searches + 1}: {start} "
                              f"of {n} anchors, {n_acc} candidates")
            if fraction > self.fraction:  # scanned before the last shrink
                keep = self.kernels.lmnn.pair_uniform(a, b, self.hashes) < self.fraction
                a, b = a[keep], b[keep]
            acc_i.append(a)
            acc_l.append(b)
            n_acc += a.size
            if n_acc > cap:
                acc_i, acc_l, n_acc = self._shrink(acc_i, acc_l, cap, n_acc)
        return np.concatenate(acc_i), np.concatenate(acc_l)

    def _blocks(self):
        """Yield blocks ``(r0, r1, c0)`` covering every pair of different classes once.

        Positions in :attr:`order` (points sorted by class): rows
        ``r0:r1`` of one class against columns ``c0:`` (every later class).
        Both points of a pair are tried as anchors.
        """
        bounds = self.bounds
        for c in range(bounds.size - 2):
            c0 = bounds[c + 1]
            step = max(1, BLOCK // (self.n_samples - c0))
            for r0 in range(bounds[c], c0, step):
                yield r0, min(r0 + step, c0), c0


class LMNNObjective:
    """LMNN loss and gradient in the flattened components ``L``."""

    def __init__(self, X, targets, impostors, push_weight, squared, n_components):
        """``impostors``: an :class:`ImpostorSet`, whose kernels this objective uses."""
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

        The last result is kept: the solvers search (:meth:`verify`) at the
        point they last evaluated.
        """
        if self._at(flat):
            return self._last[1:4]
        self._last = None  # no second embedding held at once
        Z = self.X @ flat.reshape(self.shape).T
        td = self.kernels.lmnn.target_sqdist(Z, self.targets)
        R = np.where(self.has_targets, td.max(axis=1) + 1.0, -np.inf)
        # the last slot: (search count, stored pairs within R at Z), set by
        # an evaluation (see verify)
        self._last = [flat.copy(), Z, td, R, None]
        return Z, td, R

    def _at(self, flat):
        """Whether the last embedding was made at ``flat``."""
        return self._last is not None and np.array_equal(self._last[0], flat)

    def __call__(self, flat):
        """Loss and gradient (flattened) at the flattened map ``flat``."""
        X, targets = self.X, self.targets
        Z, td, R = self._embed(flat)
        imps = self.impostors
        if imps.since_search is None:
            imps.refresh(Z, R)
        kernels = self.kernels.lmnn
        imp_i, imp_l, d_imp = self._near_pairs(Z, R)
        self._last[4] = (imps.n_searches, imp_i.size)  # see verify
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
        embedding (:attr:`ImpostorSet.ref_root`, set by every search),
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

    def verify(self, flat):
        """Search at ``flat``; return how many active impostors were missing."""
        imps = self.impostors
        n_held = None
        if self._at(flat) and self.kernels.lmnn.exact_near_pairs:
            held = self._last[4]  # counted by the last evaluation, at flat
            if held is not None and held[0] == imps.n_searches:
                n_held = held[1]
        Z, _, R = self._embed(flat)
        return imps.refresh(Z, R, n_held)


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
