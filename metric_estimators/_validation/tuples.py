"""Weak supervision given as tuples: pairs, triplets and quadruplets.

The one validator of tuples of points or of indices (:func:`validate_tuples`),
pair labels in {-1, +1} and the fit prelude of the pairs learners
(:func:`validate_labelled_pairs`).
"""

import numpy as np
from scipy import sparse

from .preprocessor import ArrayIndexer, apply_preprocessor, check_indices, resolve_preprocessor

__all__ = [
    "check_no_tuple_labels",
    "dissimilar_identical_mask",
    "validate_labelled_pairs",
    "validate_pair_labels",
    "validate_pairs",
    "validate_tuples",
]


_TUPLE_WORDS = {2: "pair", 3: "triplet", 4: "quadruplet"}


def validate_tuples(tuples, n_points_per_tuple, preprocessor=None, *,
                    n_features=None, name=None):
    """Validate tuples of points and return a float array (n_tuples, t, n_features).

    The one validator of weak supervision given as tuples: pairs (``t = 2``),
    triplets (``t = 3``) and quadruplets (``t = 4``).

    Parameters
    ----------
    tuples : array-like of shape (n_tuples, t, n_features) or (n_tuples, t)
        Either the points themselves, or indices into the data given by
        ``preprocessor``.
    n_points_per_tuple : int
        ``t``, the number of points of each tuple.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If an array, tuples of shape (n_tuples, t) are row indices into it.
        If a callable, it is called with a 1-D array of indices and must
        return the corresponding points as a 2-D array.
    n_features : int or None
        Expected number of features (the fitted ``n_features_in_``).
    name : str or None
        The argument's name in messages; default ``"pairs"``, ``"triplets"``
        or ``"quadruplets"``.

    Returns
    -------
    tuples : ndarray of float64, shape (n_tuples, t, n_features)
    """
    t = int(n_points_per_tuple)
    word = _TUPLE_WORDS.get(t, f"{t}-tuple")
    if name is None:
        name = word + "s"
    shape3 = f"(n_{word}s, {t}, n_features)"
    shape2 = f"(n_{word}s, {t})"
    if sparse.issparse(tuples):
        raise TypeError(
            f"{name} must be a dense array of shape {shape3} "
            f"or {shape2}; sparse input is not supported."
        )
    arr = np.asarray(tuples)
    if arr.dtype.kind in "OUS" and not (
        arr.ndim == 2 and callable(preprocessor)
    ):
        raise TypeError(
            f"{name} must be numeric, got an array of dtype {arr.dtype} "
            "(string or object ids need a callable preprocessor)."
        )
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex values.")
    fn = resolve_preprocessor(preprocessor)
    if arr.ndim == 2 and fn is not None:
        if arr.shape[1] != t:
            raise ValueError(
                f"{name} given as indices must have shape {shape2}, "
                f"got {arr.shape}."
            )
        if isinstance(fn, ArrayIndexer):
            arr = check_indices(arr, name, fn.n_samples)
        points = apply_preprocessor(fn, arr.ravel(), name)
        arr = points.reshape(arr.shape[0], t, points.shape[1])
    elif arr.ndim == 2:
        raise ValueError(
            f"{name} of shape {arr.shape} look like index {word}s, but no "
            f"preprocessor was given; pass {word}s of points of shape "
            f"{shape3} or set preprocessor=X."
        )
    elif arr.ndim != 3 or arr.shape[1] != t:
        raise ValueError(
            f"{name} must have shape {shape3}, or {shape2} "
            f"with a preprocessor; got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one {word} is required.")
    if arr.shape[2] == 0:
        raise ValueError(f"{name} has 0 features.")
    arr = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if n_features is not None and arr.shape[2] != n_features:
        raise ValueError(
            f"{name} have {arr.shape[2]} features, but the estimator was "
            f"fitted with {n_features} features."
        )
    return arr


def validate_pairs(pairs, preprocessor=None, *, n_features=None, name="pairs"):
    """Validate pairs of points: :func:`validate_tuples` with ``t = 2``.

    Parameters
    ----------
    pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
        Either the points themselves, or indices into the data given by
        ``preprocessor``.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        See :func:`validate_tuples`.
    n_features : int or None
        Expected number of features (the fitted ``n_features_in_``).
    """
    return validate_tuples(pairs, 2, preprocessor, n_features=n_features,
                           name=name)


def check_no_tuple_labels(y, estimator, word):
    """Reject a ``y`` given to a learner whose tuples carry their own supervision.

    Triplets and quadruplets are ordered: the first pair is the more similar
    one, so there is nothing for labels to say.  ``y=None`` (what
    scikit-learn's model selection passes without labels) is accepted.
    """
    if y is None:
        return
    name = estimator if isinstance(estimator, str) else type(estimator).__name__
    raise ValueError(
        f"{name} learns from {word}s alone and takes no y (got y of type "
        f"{type(y).__name__}): each {word} is ordered, its first pair being "
        f"the more similar one. Reorder a {word} instead of labelling it -1, "
        "or fit the _Supervised variant on (X, y) class labels."
    )


def dissimilar_identical_mask(V, delta):
    """Return the mask of dissimilar pairs (``delta < 0``) with a zero difference ``V``.

    No metric separates identical points: such a pair can never meet its
    bound.  (A *similar* pair of identical points always meets it and is left
    alone: the LogDet projection skips zero vectors, its dual stays 0.)
    """
    V = np.asarray(V)
    return ~np.any(V != 0, axis=1) & (np.asarray(delta) < 0)


def validate_labelled_pairs(pairs, y, preprocessor=None):
    """Validate labelled training pairs: the fit prelude of the pairs learners.

    Pairs go through :func:`validate_pairs`, labels through
    :func:`validate_pair_labels`; a dissimilar pair of identical points is an
    error (no metric separates it, see :func:`dissimilar_identical_mask`).

    Returns
    -------
    V : ndarray of shape (n_pairs, n_features)
        The pair differences ``x - x'``.
    y : ndarray of shape (n_pairs,)
        The labels, +1 or -1.
    points : ndarray of shape (n_points, n_features)
        The distinct points of the pairs (sorted rows), for the priors that
        need the data (e.g. ``'covariance'``).
    """
    pts = validate_pairs(pairs, preprocessor)
    y = validate_pair_labels(y, pts.shape[0])
    V = pts[:, 0] - pts[:, 1]
    bad = dissimilar_identical_mask(V, y)
    if np.any(bad):
        bad = np.flatnonzero(bad)
        raise ValueError(
            f"{bad.size} dissimilar pair(s) (y=-1) join identical points "
            f"(first at index {bad[0]}); no metric can separate them."
        )
    points = np.unique(pts.reshape(-1, pts.shape[2]), axis=0)
    return V, y, points


def validate_pair_labels(y, n_pairs):
    """Validate pair labels: a 1-D array of {-1, +1} of length n_pairs."""
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None: "
            "give the pair labels (-1 dissimilar, +1 similar)."
        )
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D pair labels, got shape {y.shape}.")
    if y.shape[0] != n_pairs:
        raise ValueError(
            f"pairs and y have inconsistent lengths: {n_pairs} pairs, "
            f"{y.shape[0]} labels."
        )
    if y.dtype.kind not in "iufb":
        raise TypeError(f"y must hold the numbers -1 and +1, got dtype {y.dtype}.")
    bad = ~np.isin(y, (-1, 1))
    if np.any(bad):
        raise ValueError(
            "Pair labels y must be -1 (dissimilar) or +1 (similar); got "
            f"{np.unique(y[bad])[:5].tolist()}."
        )
    return y.astype(np.int64)
