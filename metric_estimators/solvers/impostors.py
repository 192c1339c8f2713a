"""The impostor oracle of LMNN: candidate impostor pairs, kept as an active set.

Weinberger, K. Q. and Saul, L. K. (2009). Distance metric learning for large
margin nearest neighbor classification. JMLR 10, 207-244.

An impostor of an anchor ``i`` is a point ``l`` of another class inside the
margin radius ``R_i = max_j ||L (x_i - x_j)||^2 + 1`` over the target
neighbours ``j`` of ``i``.  :class:`ImpostorSet` searches them exactly at a
given embedding ``Z = X L^T`` (blockwise, memory bounded by a block, never
``n x n``), keeps every pair within ``SLACK * R`` as candidates, and says how
many active impostors the previous candidates had missed; the LMNN objective
(:class:`metric_estimators._problems.lmnn.LMNNObjective`) is evaluated on
the candidates between searches, and the drivers of
:mod:`metric_estimators.solvers.lmnn_runs` decide when to search.

The oracle takes plain arrays (class indices, radii, embeddings) and the
fit's ``kernels`` (:func:`metric_estimators._backend.choose`); it knows
nothing about the problem's objects nor about scikit-learn, and never warns:
when it has to sample the impostor pairs it leaves a
:class:`SubsampleNote` (and its message) for the estimator to warn with.
"""

import time
from dataclasses import dataclass

import numpy as np

from .._linalg import BLOCK, block_rows
from .._threads import ordered_map, usable_cpus

__all__ = ["ImpostorSet", "SubsampleNote", "impostor_budget", "search_threads"]

# Candidate impostors are searched within ``SLACK`` times the margin radius,
# so that small changes of L do not require a new search (see ImpostorSet).
SLACK = 1.5
# Peak memory per stored impostor pair, all arrays alive at once included:
# the int32 pair (8 bytes) twice during a search or a refresh (old and new
# store) plus the sorted int64 keys of the old store, or the pair, its
# distance and its weight (float64) during an objective evaluation.
PAIR_BYTES = 32
# max_impostors='auto' with impostor_memory='auto': the budget is this many
# times the memory of X, and at least MIN_IMPOSTOR_MEMORY bytes (1,000,000
# pairs: PyLMNN's memory at its default of 500,000 sampled impostors).  A
# lower floor samples the pairs on mid-sized data and costs accuracy, a
# higher one costs time for no accuracy: the trade-off of impostor_memory
# is in benchmarks/results/lmnn_ablation.md.
AUTO_MEMORY_FACTOR = 4
MIN_IMPOSTOR_MEMORY = 32 * 10**6
# Sampled searches with a sampling fraction at most this test the pair's
# fixed number before its distance (no BLAS block; see _search_hashed).
HASHED_SCAN_FRACTION = 0.05
# Hashed searches of at least this many points run on ImpostorSet.threads
# threads; below it a search is too short for threads to pay for themselves.
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


@dataclass(frozen=True)
class SubsampleNote:
    """What sampling the impostor pairs costs, for the estimator's warning.

    Left by the search that first had to sample (:attr:`ImpostorSet.subsample`);
    :meth:`message` is the text of the warning.

    Attributes
    ----------
    cap : int
        ``max_impostors``, the most pairs stored.
    budget : int or None
        The memory budget in bytes behind ``cap`` (None for a given cap).
    fraction : float
        The sampling fraction of impostor pairs after that search.
    near_active : float
        Estimated number of near-active pairs of the exact loss.
    n_kept : int
        Pairs the search kept.
    pair_bytes : int
        Peak memory per stored pair (:data:`PAIR_BYTES`).
    seconds_per_pair : float
        Time of one pair distance, timed on the kept pairs.
    search_seconds : float
        Time of that search up to the note.
    """

    cap: int
    budget: object
    fraction: float
    near_active: float
    n_kept: int
    pair_bytes: int
    seconds_per_pair: float
    search_seconds: float

    def message(self):
        """The warning that the push term is sampled, and what the exact loss would cost.

        The exact loss needs its near-active pairs plus 20 % of room; an
        objective evaluation makes about three passes over the pairs
        (distances, weights, gradient).
        """
        full = 1.2 * self.near_active
        budget = "" if self.budget is None else f" (impostor_memory={_size(self.budget)})"
        per_pass = 3.0 * self.seconds_per_pair
        return (
            f"More than max_impostors={self.cap}{budget} impostor pairs are near-"
            f"active (about {self.near_active:.3g}); the push term is estimated on a "
            f"fixed random subset of impostor pairs (fraction {self.fraction:.3g}). "
            f"The exact LMNN loss needs max_impostors >= {full:.3g} (impostor_memory "
            f">= {_size(self.pair_bytes * full)}): about "
            f"{_size(self.pair_bytes * max(full - self.cap, 0.0))} more memory, and "
            f"roughly {per_pass * full:.2g} s instead of {per_pass * self.n_kept:.2g} s "
            f"on impostors per objective evaluation (this search took "
            f"{self.search_seconds:.2g} s)."
        )


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
    fixed hashed subset of all pairs (see :meth:`_search`) and
    :attr:`subsample` holds a :class:`SubsampleNote`; with a sampling
    fraction of at most :data:`HASHED_SCAN_FRACTION` a search tests each
    pair's hash before its distance (:meth:`_search_hashed`), so it needs
    neither BLAS blocks nor a list of candidate pairs.  Large hashed
    searches run on ``threads`` Python threads over a kernel that releases
    the GIL: no spinning thread pool, and the same pairs as a serial
    search.  Blockwise searches stay serial: their time is in BLAS products
    and in one pass over each block, which threads do not shorten on the
    few cores a fit usually has.

    Parameters
    ----------
    y_idx : ndarray of shape (n_samples,), int
        Class index of every point.
    has_targets : ndarray of shape (n_samples,), bool
        Whether a point has target neighbours (only those are anchors).
    max_impostors : int
        Most pairs stored.
    kernels : Kernels
        The fit's kernels; their ``lmnn`` module is used.
    seed : int, default=0
        Seed of the pair hashes (the sampled subset) and of the first
        search's estimate of the number of pairs.
    budget : int or None, default=None
        The memory budget in bytes behind ``max_impostors``, if any
        (:func:`impostor_budget`), reported in :attr:`subsample`.
    log : callable or None, default=None
        ``log(text)`` after every search.
    progress : callable or None, default=None
        ``progress(text)`` during a search (throttled by the caller).
    threads : int, default=1
        Threads of a large hashed search (:func:`search_threads`).
    """

    def __init__(self, y_idx, has_targets, max_impostors, kernels, seed=0, budget=None,
                 log=None, progress=None, threads=1):
        self.y_idx = y_idx
        self.log = log
        self.progress = progress
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
        self.budget = budget  # bytes behind max_impostors, or None
        self.subsample = None  # a SubsampleNote once the pairs are sampled
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
                self.subsample = self._subsample_note(Z, kept_i, kept_l)
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

    def _subsample_note(self, Z, kept_i, kept_l):
        """What the exact loss would cost, once the pairs had to be sampled.

        Memory from :data:`PAIR_BYTES`; time from the distance computation of
        ``2**16`` stored pairs (repeated if fewer), timed here (the estimator
        scales it to the exact number of pairs).
        """
        m = 1 << 16
        sample_i, sample_l = np.resize(kept_i, m), np.resize(kept_l, m)
        start = time.perf_counter()
        self.kernels.lmnn.pair_sqdist(Z, sample_i, sample_l)
        per_pair = (time.perf_counter() - start) / m
        return SubsampleNote(
            cap=self.max_impostors, budget=self.budget, fraction=self.fraction,
            near_active=kept_i.size / self.fraction, n_kept=int(kept_i.size),
            pair_bytes=PAIR_BYTES, seconds_per_pair=per_pair,
            search_seconds=time.perf_counter() - self._search_start)

    def _estimate_pairs(self, Zs, sq, rho, n_anchors=256):
        """Estimated number of (anchor, impostor) pairs within ``rho``.

        From a fixed sample of anchors (every pair counted for its anchor),
        a few anchors at a time (memory within a block).
        """
        n = self.n_samples
        rng = np.random.RandomState(self.seed)
        anchors = np.sort(rng.choice(n, min(n, n_anchors), replace=False))
        step = block_rows(n, BLOCK // 4)  # the block, its mask and the pairs
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
            step = block_rows(self.n_samples - c0, BLOCK)
            for r0 in range(bounds[c], c0, step):
                yield r0, min(r0 + step, c0), c0
