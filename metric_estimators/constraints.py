"""Reproducible weak supervision drawn from class labels.

Pairs are drawn uniformly *without replacement* from the set of all
same-class (positive) or different-class (negative) pairs, by drawing distinct
integers from an enumeration of those pairs and decoding them; no rejection
loop, no O(n^2) memory, and the same ``random_state`` always gives the same
pairs.
"""

import numbers
import warnings

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets

from . import _backend
from ._validation.text import for_message

__all__ = ["positive_negative_pairs", "pairs_from_labels", "knn_triplets",
           "default_n_constraints", "all_labelled_pairs", "all_pairs_affordable",
           "default_labelled_pairs",
           "Constraints", "wrap_pairs"]


def _decode_combination(k, m):
    """Map ``k`` in ``[0, m (m - 1) / 2)`` to the pair ``(i, j)``, ``i < j``.

    Pairs are enumerated row by row: (0, 1), (0, 2), ..., (0, m-1), (1, 2), ...
    """
    k = np.asarray(k, dtype=np.float64)
    i = m - 2 - np.floor(np.sqrt(-8.0 * k + 4.0 * m * (m - 1) - 7.0) / 2.0 - 0.5)
    i = i.astype(np.int64)
    # Guard against round-off at row boundaries.
    row_start = i * (2 * m - i - 1) // 2
    k = k.astype(np.int64)
    too_far = row_start > k
    while np.any(too_far):
        i[too_far] -= 1
        row_start = i * (2 * m - i - 1) // 2
        too_far = row_start > k
    next_start = (i + 1) * (2 * m - i - 2) // 2
    too_near = next_start <= k
    while np.any(too_near):
        i[too_near] += 1
        row_start = i * (2 * m - i - 1) // 2
        next_start = (i + 1) * (2 * m - i - 2) // 2
        too_near = next_start <= k
    j = k - row_start + i + 1
    return i, j


def _sample_distinct(rng, total, size):
    """``size`` distinct integers drawn uniformly from ``range(total)``, sorted.

    ``RandomState.choice(total, size, replace=False)`` permutes the whole
    population (O(total) time and memory, noticeable on the different-class
    pairs of a data set of a few thousand points; measured in
    benchmarks/README.md, *Measurements behind choices in the code*); when
    ``size`` is a small fraction of ``total``,
    draw with replacement and keep the first occurrence of each value until
    ``size`` distinct values are collected (the result is a uniform random
    subset either way).
    """
    if size >= total:
        return np.arange(total, dtype=np.int64)
    if 4 * size > total:
        return np.sort(rng.choice(total, size=size, replace=False)).astype(np.int64)
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < size:
        draw = rng.randint(0, total, size=2 * (size - chosen.size) + 16)
        both = np.concatenate((chosen, draw.astype(np.int64)))
        _, first = np.unique(both, return_index=True)
        keep = np.sort(first)  # first occurrences, in draw order
        chosen = both[keep[: size]] if keep.size >= size else both[keep]
    return np.sort(chosen)


def _members(y):
    classes, y_idx = np.unique(y, return_inverse=True)
    order = np.argsort(y_idx, kind="stable")
    counts = np.bincount(y_idx, minlength=classes.size)
    starts = np.concatenate(([0], np.cumsum(counts)))
    return order, counts, starts


def _positive(rng, y, n):
    order, counts, starts = _members(y)
    per_class = counts * (counts - 1) // 2
    offsets = np.concatenate(([0], np.cumsum(per_class)))
    total = int(offsets[-1])
    if total == 0:
        raise ValueError(
            "No positive pairs can be drawn: every class has a single sample."
        )
    ks = _sample_distinct(rng, total, n)
    cls = np.searchsorted(offsets, ks, side="right") - 1
    a = np.empty(ks.size, dtype=np.int64)
    b = np.empty(ks.size, dtype=np.int64)
    for c in np.unique(cls):
        sel = cls == c
        i, j = _decode_combination(ks[sel] - offsets[c], int(counts[c]))
        a[sel] = order[starts[c] + i]
        b[sel] = order[starts[c] + j]
    return a, b, total


def _negative(rng, y, n):
    order, counts, starts = _members(y)
    n_classes = counts.size
    if n_classes < 2:
        raise ValueError("No negative pairs can be drawn: y has a single class.")
    ca, cb = np.triu_indices(n_classes, k=1)
    per_pair = counts[ca] * counts[cb]
    offsets = np.concatenate(([0], np.cumsum(per_pair)))
    total = int(offsets[-1])
    ks = _sample_distinct(rng, total, n)
    which = np.searchsorted(offsets, ks, side="right") - 1
    r = ks - offsets[which]
    nb = counts[cb[which]]
    a = order[starts[ca[which]] + r // nb]
    b = order[starts[cb[which]] + r % nb]
    return a, b, total


#: The work one pass over the default pairs may cost: pairs x n_features ** 2
#: (ITML's projections, MMC's and LSML's gradients, SDML's scatter are each
#: O(n_features ** 2) per pair).
PAIR_WORK = 10_000_000
#: and at most this many pairs of each kind (memory: a few tens of MB)
MAX_DEFAULT_PAIRS = 200_000
#: ITML_Supervised's budget (pairs x n_features ** 2): its Bregman sweeps
#: touch only the violated pairs, so it affords a hundred times more pairs
#: than the gradient learners; within it, and within ALL_PAIRS_MAX pairs,
#: every labelled pair is used.
ALL_PAIRS_WORK = 1_000_000_000
#: at most this many pairs in all (about 450 points): beyond, a fit's time
#: is dominated by checking every pair each iteration
ALL_PAIRS_MAX = 100_000
#: beyond ALL_PAIRS_MAX, ITML_Supervised draws at most this many of each kind
ITML_MAX_DRAWN = 25_000
#: MMC_Supervised's and SDML_Supervised's budget for every pair (pairs x
#: n_features ** 2): their gradients and scatter touch every pair each time
SMALL_ALL_PAIRS_WORK = 100_000_000


def all_pairs_affordable(y, n_features, *, work=ALL_PAIRS_WORK,
                         max_pairs=ALL_PAIRS_MAX):
    """Whether every pair of points fits both budgets: at most ``max_pairs``
    pairs, and ``pairs x n_features ** 2 <= work``.  (The default of
    :func:`default_labelled_pairs`; the pairs' difference vectors then take
    at most 800 kB per feature.)"""
    n = np.asarray(y).shape[0]
    d = max(1, int(n_features))
    n_pairs = n * (n - 1) // 2
    return n_pairs <= max_pairs and n_pairs * d * d <= work


def all_labelled_pairs(y):
    """Every pair of distinct indices, labelled by its classes.

    The deterministic counterpart of :func:`pairs_from_labels`: positive
    (same-class) pairs first, then negative ones, each in row-major order
    of ``(i, j)``, ``i < j``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    pairs : ndarray of shape (n_samples * (n_samples - 1) / 2, 2), int
    labels : ndarray of shape (n_pairs,)
        +1 for same-class pairs, -1 for different-class pairs.
    """
    y = np.asarray(y)
    check_classification_targets(y)
    i, j = np.triu_indices(y.shape[0], k=1)
    same = y[i] == y[j]
    if not np.any(same):
        raise ValueError("No positive pairs can be drawn: every class has a "
                         "single sample.")
    if np.all(same):
        raise ValueError("No negative pairs can be drawn: y has a single class.")
    order = np.concatenate((np.flatnonzero(same), np.flatnonzero(~same)))
    pairs = np.column_stack((i[order], j[order])).astype(np.intp)
    labels = np.where(same[order], 1, -1).astype(np.int64)
    return pairs, labels


def default_labelled_pairs(y, n_features, n_constraints=None, *, all_pairs_work,
                           work=PAIR_WORK, cap=MAX_DEFAULT_PAIRS, random_state=None):
    """The labelled pairs a ``_Supervised`` learner of pairs fits.

    Every pair of points (:func:`all_labelled_pairs`: nothing random) when
    ``n_constraints`` is None and :func:`all_pairs_affordable` within
    ``all_pairs_work``; otherwise ``n_constraints`` pairs of each kind, or
    :func:`default_n_constraints` of them for None, drawn by
    :func:`pairs_from_labels`.

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2), int
    labels : ndarray of shape (n_pairs,)
    """
    if n_constraints is None and all_pairs_affordable(y, n_features, work=all_pairs_work):
        return all_labelled_pairs(y)
    n_constraints = default_n_constraints(n_constraints, y, n_features, work=work, cap=cap)
    return pairs_from_labels(y, n_constraints, random_state=random_state)


def default_n_constraints(n_constraints, y, n_features, *, work=PAIR_WORK,
                          cap=MAX_DEFAULT_PAIRS):
    """``n_constraints``, or the number of pairs of each kind to draw for None.

    The number of constraints the ``_Supervised`` learners (ITML, MMC, SDML,
    LSML) draw from class labels when the user gives none.  metric-learn
    draws ``20 * n_classes ** 2`` pairs whatever the size of the data: 80 on
    a two-class set of any size, so few that which pairs are drawn decides
    the metric, and the result changes with the seed.  Here the default
    grows with the data and the cost of a pair: as many pairs as one pass
    over them costs :data:`PAIR_WORK` (pairs x ``n_features ** 2``) up to
    :data:`MAX_DEFAULT_PAIRS`, at least ``20 * n_classes ** 2``, and never
    more than exist of either kind
    (so that no pair is asked for twice and nothing warns): on small data,
    every pair of the rarer kind.

    Parameters
    ----------
    n_constraints : int or None
        The user's number; returned as it is unless None.
    y : ndarray of shape (n_samples,)
        Class labels.
    n_features : int
    work : int or None, default=PAIR_WORK
        The budget of one pass over the pairs (pairs x ``n_features ** 2``);
        None: metric-learn's ``20 * n_classes ** 2`` and nothing else.
    cap : int, default=MAX_DEFAULT_PAIRS
        At most this many pairs of each kind (unless ``20 * n_classes ** 2``
        is more).

    Returns
    -------
    int
    """
    if n_constraints is not None:
        return n_constraints
    if work is None:
        return 20 * np.unique(np.asarray(y)).size ** 2
    _, counts = np.unique(np.asarray(y), return_counts=True)
    counts = counts.astype(np.int64)
    n = int(counts.sum())
    positive = int(np.sum(counts * (counts - 1) // 2))
    negative = int((n * n - np.sum(counts * counts)) // 2)
    wanted = max(20 * counts.size ** 2,
                 min(cap, work // max(1, int(n_features)) ** 2))
    return max(1, min(wanted, positive, negative))


def positive_negative_pairs(y, n_constraints, *, same_length=False, random_state=None):
    """Draw ``n_constraints`` positive and ``n_constraints`` negative pairs.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n_constraints : int
        Number of pairs of each kind.  If fewer distinct pairs of a kind exist,
        all of them are returned and a ``UserWarning`` says so.
    same_length : bool, default=False
        Truncate both kinds to the shorter one.
    random_state : int, RandomState instance or None

    Returns
    -------
    a, b, c, d : ndarrays of int
        ``(a[i], b[i])`` are same-class pairs, ``(c[i], d[i])`` different-class
        pairs, as indices into ``y``.  Pairs within each kind are distinct.
    """
    y = np.asarray(y)
    check_classification_targets(y)
    if n_constraints < 1:
        raise ValueError(f"n_constraints must be >= 1, got {n_constraints}.")
    rng = check_random_state(random_state)
    a, b, n_pos = _positive(rng, y, n_constraints)
    c, d, n_neg = _negative(rng, y, n_constraints)
    for kind, total in (("positive", n_pos), ("negative", n_neg)):
        if total < n_constraints:
            warnings.warn(
                f"Only {total} distinct {kind} pairs exist; n_constraints="
                f"{n_constraints} was requested, using all {total}.",
                UserWarning,
            )
    if same_length:
        m = min(a.size, c.size)
        a, b, c, d = a[:m], b[:m], c[:m], d[:m]
    return a, b, c, d


def pairs_from_labels(y, n_constraints, *, random_state=None):
    """Index pairs (n_pairs, 2) and labels in {-1, +1} drawn from class labels.

    Positive pairs come first, then negative pairs.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n_constraints : int
        Number of pairs of each kind (see :func:`positive_negative_pairs`).
    random_state : int, RandomState instance or None, default=None
        Seeds the draw.

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2), int
        Indices into ``y``.
    labels : ndarray of shape (n_pairs,)
        +1 for same-class pairs, -1 for different-class pairs.
    """
    a, b, c, d = positive_negative_pairs(y, n_constraints, random_state=random_state)
    pairs = np.concatenate(
        (np.column_stack((a, b)), np.column_stack((c, d)))
    ).astype(np.intp)
    labels = np.concatenate((np.ones(a.size, np.int64), -np.ones(c.size, np.int64)))
    return pairs, labels


def knn_triplets(X, y, k_genuine=3, k_impostor=10):
    """Triplets ``(i, j, l)``: j among i's k_genuine nearest same-class points,
    l among i's k_impostor nearest other-class points (Euclidean).

    Exact Euclidean searches (:mod:`metric_estimators._problems.neighbours`):
    equal distances go to the lower index, and a point is never its own
    genuine neighbour (its duplicates, at distance 0, come first).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points.
    y : array-like of shape (n_samples,)
        Class labels.
    k_genuine : int, default=3
        Same-class neighbours per point (fewer in small classes).
    k_impostor : int, default=10
        Other-class neighbours per point.

    Returns
    -------
    triplets : ndarray of shape (n_triplets, 3), int

    Notes
    -----
    The searches run on the kernels that
    :func:`metric_estimators._backend.choose` gives a search among this
    many points (family ``"neighbours"``); both give the same triplets.
    """
    X = np.asarray(X, dtype=np.float64)
    return _knn_triplets(X, y, k_genuine, k_impostor,
                         kernels=_backend.choose("neighbours", X.shape[0]))


def _knn_triplets(X, y, k_genuine, k_impostor, *, kernels):
    """:func:`knn_triplets` on the kernels of a fit."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    # the numba k-NN kernels load on first use, not when the package is imported
    from ._problems.neighbours import nearest, nearest_in_groups

    genuine = nearest_in_groups(X, y_idx, k_genuine, kernels=kernels)
    out = []
    for c in range(classes.size):
        same = np.flatnonzero(y_idx == c)
        diff = np.flatnonzero(y_idx != c)
        kg = min(k_genuine, same.size - 1)
        ki = min(k_impostor, diff.size)
        if kg < 1 or ki < 1:
            continue
        imp = diff[nearest(X[same], X[diff], ki, kernels=kernels)]
        i = np.repeat(same, kg * ki)
        j = np.repeat(genuine[same, :kg], ki, axis=1).ravel()
        l_ = np.tile(imp, (1, kg)).ravel()
        out.append(np.column_stack((i, j, l_)))
    if not out:
        raise ValueError("No triplets can be formed from these labels.")
    return np.concatenate(out)


def _renamed_argument(old, old_value, new, new_value):
    """``new_value``, or metric-learn's ``old`` argument with a FutureWarning."""
    if isinstance(old_value, str) and old_value == "deprecated":
        if new_value is None:
            raise TypeError(f"missing argument {new}.")
        return new_value
    if new_value is not None:
        raise ValueError(f"got both {old} and {new}; pass only {new}.")
    warnings.warn(f"{old} is metric-learn's former name of {new}; use "
                  f"{new}={for_message(old_value)!r}.", FutureWarning, stacklevel=3)
    return old_value


class Constraints:
    """Weak supervision from (partial) labels, as metric-learn's class.

    Parameters
    ----------
    partial_labels : array-like of shape (n_samples,)
        Class labels; ``-1`` means "unknown" (as in metric-learn): such
        points never appear in generated pairs, triplets or chunks.  All
        indices returned refer to positions in ``partial_labels``.

    Attributes
    ----------
    partial_labels : ndarray of shape (n_samples,)
        The labels as given.
    known_ : ndarray of int
        Positions of the points whose label is known.
    """

    def __init__(self, partial_labels):
        labels = np.asarray(partial_labels)
        if labels.ndim != 1:
            raise ValueError(
                f"partial_labels must be 1-D, got shape {labels.shape}."
            )
        self.partial_labels = labels
        if labels.dtype.kind in "iuf":
            self.known_ = np.flatnonzero(labels != -1)
        else:  # string or object labels: none of them is the number -1
            self.known_ = np.arange(labels.size)

    def _known_labels(self, what):
        y = self.partial_labels[self.known_]
        if y.size == 0:
            raise ValueError(
                f"Cannot generate {what}: every label is -1 (unknown)."
            )
        return y

    def positive_negative_pairs(self, n_constraints=None, same_length=False,
                                random_state=None, num_constraints="deprecated"):
        """Same-class and different-class index pairs among the known points.

        Parameters
        ----------
        n_constraints : int
            Number of pairs of each kind.
        same_length : bool, default=False
            Truncate both kinds to the shorter one.
        random_state : int, RandomState instance or None, default=None
            Seeds the draw.
        num_constraints : int, default="deprecated"
            metric-learn's former name of ``n_constraints`` (FutureWarning).

        Returns
        -------
        a, b, c, d : ndarrays of int
            See :func:`positive_negative_pairs`; indices into
            ``partial_labels``.
        """
        n_constraints = _renamed_argument("num_constraints", num_constraints,
                                          "n_constraints", n_constraints)
        a, b, c, d = positive_negative_pairs(
            self._known_labels("pairs"), n_constraints,
            same_length=same_length, random_state=random_state,
        )
        k = self.known_
        return k[a], k[b], k[c], k[d]

    def chunks(self, n_chunks=100, chunk_size=2, random_state=None,
               num_chunks="deprecated"):
        """Chunklets: disjoint groups of ``chunk_size`` same-class points (for RCA).

        Each chunk is drawn from a class picked uniformly among the classes
        that still have ``chunk_size`` unassigned known points, its members
        uniformly among those points.

        Parameters
        ----------
        n_chunks : int, default=100
            Number of chunks.
        chunk_size : int, default=2
            Points per chunk.
        random_state : int, RandomState instance or None, default=None
            Seeds the draw.
        num_chunks : int, default="deprecated"
            metric-learn's former name of ``n_chunks`` (FutureWarning).

        Returns
        -------
        chunks : ndarray of shape (n_samples,), int
            The chunk index (``0 .. n_chunks - 1``) of each point, ``-1`` for
            points in no chunk (always for unknown labels).

        Raises
        ------
        ValueError
            If the classes cannot supply ``n_chunks`` disjoint chunks.
        """
        if not (isinstance(num_chunks, str) and num_chunks == "deprecated"):
            n_chunks = _renamed_argument("num_chunks", num_chunks, "n_chunks",
                                         None if n_chunks == 100 else n_chunks)
        for name, value in (("n_chunks", n_chunks), ("chunk_size", chunk_size)):
            if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                    or value < 1):
                raise ValueError(f"{name} must be an integer >= 1, got {for_message(value)!r}.")
        y = self._known_labels("chunks")
        rng = check_random_state(random_state)
        classes, y_idx = np.unique(y, return_inverse=True)
        members = [self.known_[y_idx == c] for c in range(classes.size)]
        capacity = np.array([m.size // chunk_size for m in members])
        if capacity.sum() < n_chunks:
            raise ValueError(
                f"Not enough points for {n_chunks} chunks of {chunk_size} "
                f"same-class points: the classes allow at most "
                f"{int(capacity.sum())}. Lower n_chunks or chunk_size."
            )
        members = [rng.permutation(m) for m in members]
        used = np.zeros(classes.size, dtype=np.int64)
        out = np.full(self.partial_labels.shape[0], -1, dtype=np.int64)
        for chunk in range(n_chunks):
            c = rng.choice(np.flatnonzero(used < capacity))
            start = used[c] * chunk_size
            out[members[c][start:start + chunk_size]] = chunk
            used[c] += 1
        return out

    def generate_knntriplets(self, X, k_genuine, k_impostor):
        """Nearest-neighbour triplets among the known points, see :func:`knn_triplets`.

        A class too small for ``k_genuine`` same-class neighbours, or with
        fewer than ``k_impostor`` points of other classes, gets as many as
        it has, with a warning (as in metric-learn).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (all of them, unknown labels included).
        k_genuine : int
            Same-class neighbours per point.
        k_impostor : int
            Other-class neighbours per point.

        Returns
        -------
        triplets : ndarray of shape (n_triplets, 3), int
            Indices into ``X``.
        """
        return self._generate_knntriplets(
            X, k_genuine, k_impostor,
            kernels=_backend.choose("neighbours", self.known_.size))

    def _generate_knntriplets(self, X, k_genuine, k_impostor, *, kernels):
        """:meth:`generate_knntriplets` on the kernels of a fit (``kernels``)."""
        X = np.asarray(X)
        if X.shape[0] != self.partial_labels.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} samples but partial_labels has "
                f"{self.partial_labels.shape[0]}."
            )
        y = self._known_labels("triplets")
        classes, counts = np.unique(y, return_counts=True)
        for c, n_c in zip(classes, counts):
            if n_c - 1 < k_genuine:
                warnings.warn(
                    f"Class {for_message(c)!r} has {n_c} points: too few for k_genuine="
                    f"{k_genuine} same-class neighbours; using {n_c - 1}.",
                    UserWarning, stacklevel=2)
            if y.size - n_c < k_impostor:
                warnings.warn(
                    f"Class {for_message(c)!r} has {y.size - n_c} points of other classes: "
                    f"too few for k_impostor={k_impostor}; using "
                    f"{y.size - n_c}.", UserWarning, stacklevel=2)
        triplets = _knn_triplets(X[self.known_], y, k_genuine, k_impostor, kernels=kernels)
        return self.known_[triplets]


def wrap_pairs(X, constraints):
    """Pairs of points and their labels from ``(a, b, c, d)`` index constraints.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points.
    constraints : tuple of 4 arrays of int
        ``(a, b, c, d)`` as returned by
        :meth:`Constraints.positive_negative_pairs`: ``(a, b)`` similar,
        ``(c, d)`` dissimilar pairs.

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2, n_features)
        The similar pairs, then the dissimilar ones.
    y : ndarray of shape (n_pairs,)
        +1 for similar, -1 for dissimilar pairs.
    """
    X = np.asarray(X)
    try:
        a, b, c, d = (np.asarray(v, dtype=np.intp) for v in constraints)
    except (TypeError, ValueError):
        raise ValueError(
            "constraints must be four index arrays (a, b, c, d)."
        ) from None
    pairs_idx = np.vstack((np.column_stack((a, b)), np.column_stack((c, d))))
    y = np.concatenate((np.ones(a.size, np.int64), -np.ones(c.size, np.int64)))
    return X[pairs_idx], y
