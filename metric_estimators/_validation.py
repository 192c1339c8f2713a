"""Input validation shared by every estimator.

Points go through scikit-learn's own ``validate_data`` so that
``n_features_in_``, ``feature_names_in_`` and the error messages are the ones
scikit-learn users know.  Pairs (weak supervision) and initial matrices have
their own checks here, written once and used by every learner.
"""

import numbers
import re
import warnings
from typing import NamedTuple

import numpy as np
from scipy import sparse
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _num_samples, validate_data

from .exceptions import NonPSDError, PreprocessorError

__all__ = [
    "ArrayIndexer",
    "apply_preprocessor",
    "check_indices",
    "check_array_2d",
    "check_bounds",
    "check_int",
    "dissimilar_identical_mask",
    "check_signed_graph_has_negative",
    "check_sparse_edge_weights",
    "check_sparse_signed_graph",
    "for_message",
    "check_pd_matrix",
    "check_prior",
    "check_n_components",
    "check_square_matrix",
    "check_symmetric_matrix",
    "renamed_parameter",
    "resolve_preprocessor",
    "power_of_two_scale",
    "ClassLabels",
    "validate_labelled_points",
    "validate_ordered_points",
    "validate_labelled_pairs",
    "validate_pair_labels",
    "validate_pairs",
    "validate_tuples",
    "check_no_tuple_labels",
    "parse_memory",
    "validate_points",
]

# Data whose scale (largest absolute deviation from the mean) lies outside
# this range is rescaled internally by a power of two (an exact operation in
# floating point) by the learners whose loss is invariant under the
# corresponding reparametrisation (see power_of_two_scale).
_SCALE_RANGE = (2.0 ** -20, 2.0 ** 20)

# validate_ordered_points warns when the labels look continuous: more than
# this many levels with fewer than _MIN_PER_LEVEL samples per level on average
_MAX_PLAIN_LEVELS = 10
_MIN_PER_LEVEL = 5


def for_message(value):
    """``value`` with numpy scalars turned into Python numbers, for messages.

    ``repr(np.float64(0.5))`` is ``'np.float64(0.5)'`` under numpy 2; error
    messages show ``0.5``.  Tuples, lists and arrays become lists/tuples of
    plain numbers (arrays: their ``tolist()``).
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(for_message(v) for v in value)
    return value


_MEMORY_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6,
                 "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
                 "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_MEMORY_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_memory(value, name):
    """A memory size in bytes from an int (bytes) or a string with units.

    ``'512MB'``, ``'1 GB'``, ``'1.5GiB'``, ``'64k'``: decimal units (kB, MB,
    GB, TB; case-insensitive, the ``B`` optional) and binary ones (KiB, MiB,
    GiB, TiB).  ``name`` is the parameter's name for the error message.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        size = int(value)
    elif isinstance(value, str):
        match = _MEMORY_RE.match(value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _MEMORY_UNITS:
            raise ValueError(
                f"{name}={value!r} is not a memory size: pass a number of "
                "bytes (int) or a string such as '512MB', '1GB' or '1.5GiB' "
                "(units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)."
            )
        size = int(float(match.group(1)) * _MEMORY_UNITS[unit])
    else:
        raise TypeError(
            f"{name} must be an int (bytes) or a string such as '1GB'; got "
            f"{type(value).__name__}."
        )
    if size < 1:
        raise ValueError(f"{name}={for_message(value)!r} must be at least 1 byte.")
    return size


def validate_points(estimator, X, y="no_validation", *, reset=True, **kwargs):
    """Validate a data matrix (and labels) through scikit-learn's machinery.

    Rejects NaN / inf, complex numbers, strings and arrays that are not 2-D,
    with scikit-learn's messages (including "requires y to be passed" when
    ``y`` is None for an estimator that needs it).  Returns float64 (or
    float32) arrays; ``(X, y)`` when ``y`` is given, else ``X``.
    """
    kwargs.setdefault("dtype", [np.float64, np.float32])
    has_y = not (isinstance(y, str) and y == "no_validation") and y is not None
    if not sparse.issparse(X) and not hasattr(X, "iloc"):
        kind = getattr(getattr(X, "dtype", None), "kind", None)
        if kind is None:
            try:
                kind = np.asarray(X).dtype.kind
            except (TypeError, ValueError):  # ragged: scikit-learn says why
                kind = "O"
        if kind in "US":
            raise TypeError(
                f"X must hold numbers, got an array of strings (dtype kind "
                f"{kind!r}); convert it to a numeric dtype first."
            )
    if has_y:
        try:
            n_x, n_y = _num_samples(X), _num_samples(y)
        except TypeError:
            n_x = n_y = None
        if n_x is not None and n_x != n_y:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: X has {n_x}, "
                f"y has {n_y} (Found input variables with inconsistent "
                f"numbers of samples: [{n_x}, {n_y}])."
            )
    try:
        return validate_data(estimator, X, y, reset=reset, **kwargs)
    except (TypeError, ValueError) as exc:
        # scikit-learn's messages do not always say which argument is wrong
        msg = str(exc)
        if type(exc) not in (TypeError, ValueError) or re.search(
            r"\b(X|y)\b", msg
        ):
            raise
        name = "X"
        if has_y:
            try:
                check_array(X, accept_sparse=kwargs.get("accept_sparse", False),
                            dtype=kwargs["dtype"],
                            ensure_min_samples=kwargs.get("ensure_min_samples", 1))
                name = "y"
            except (TypeError, ValueError):
                name = "X"
        raise type(exc)(f"Invalid {name}: {msg}") from exc


def check_n_components(n_components, n_features):
    """Raise if ``n_components`` (None allowed) exceeds ``n_features``."""
    if n_components is not None and n_components > n_features:
        raise ValueError(
            f"n_components={n_components} must be <= n_features={n_features}."
        )


class ClassLabels(NamedTuple):
    """Classes of validated labels, as :func:`validate_labelled_points` returns them."""

    #: the distinct labels, sorted
    classes: np.ndarray
    #: every sample's index in ``classes``
    indices: np.ndarray
    #: the number of samples of every class
    counts: np.ndarray


def validate_labelled_points(estimator, X, y, *, single_sample_reason=None,
                             min_classes=2, minus_one_note=False):
    """Validate points and class labels for a learner fitted on ``(X, y)``.

    The fit prelude of every learner that draws its supervision from class
    labels: ``X`` and ``y`` go through :func:`validate_points` (at least 2
    samples), ``y`` must hold class labels (scikit-learn's
    ``check_classification_targets``) of at least ``min_classes`` classes.

    Parameters
    ----------
    estimator : estimator
        Its class name starts the messages; ``n_features_in_`` is set on it.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    single_sample_reason : str or None, default=None
        When given, a class of at least 2 samples is also required, and the
        error when every class has a single sample ends with this reason.
    min_classes : {1, 2}, default=2
        Fewest classes ``y`` must hold.
    minus_one_note : bool, default=False
        For the learners whose metric-learn counterpart draws its
        constraints with ``Constraints(y)``, where -1 means "unknown": warn
        when ``y`` holds -1 besides at least two other classes (partial
        labels, as ported code passes them), since -1 is a class here.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,)
    labels : ClassLabels
        ``classes``, ``indices`` (into ``classes``) and ``counts``.
    """
    X, y = validate_points(estimator, X, y, dtype=np.float64,
                           ensure_min_samples=2)
    check_classification_targets(y)
    labels = ClassLabels(*np.unique(y, return_inverse=True, return_counts=True))
    if labels.classes.size < min_classes:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least "
            f"{min_classes} classes in y; got {labels.classes.size} class."
        )
    if single_sample_reason is not None and labels.counts.max() < 2:
        raise ValueError(
            f"Every class has a single sample: {single_sample_reason}."
        )
    if (minus_one_note and labels.classes.dtype.kind in "iuf"
            and labels.classes.size >= 3 and np.any(labels.classes == -1)):
        name = type(estimator).__name__
        warnings.warn(
            f"{name}: y holds the label -1 besides {labels.classes.size - 1} "
            "other classes. Here -1 is a class like any other; metric-learn's "
            f"{name} reads it as 'unknown' (no constraints).  For partial "
            "labels, draw the constraints with Constraints(y), where -1 is "
            "unknown, and fit the learner of pairs (triplets, quadruplets, "
            "chunks) on them.", UserWarning, stacklevel=4)
    return X, y, labels


def validate_ordered_points(estimator, X, y):
    """Validate points with *ordered* numeric labels (ages, grades, ranks).

    Every distinct value of ``y`` is one level, levels sorted by value.
    Strings, categories and complex numbers are rejected (encode ordered
    categories as integers first); booleans are the levels 0 < 1.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
    levels : ndarray of shape (n_levels,)
        The distinct values of ``y``, increasing (at least 2).
    level_idx : ndarray of shape (n_samples,), int
        Index of every sample's level in ``levels``.
    """
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
    X = X.astype(np.float64, copy=False)
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
            f"levels); got only {for_message(levels[0])!r} (1 class)."
        )
    if (levels.size > _MAX_PLAIN_LEVELS
            and n_samples < _MIN_PER_LEVEL * levels.size):
        warnings.warn(
            f"{name}: y has {levels.size} distinct values for {n_samples} "
            f"samples (fewer than {_MIN_PER_LEVEL} per level on average); it "
            "looks continuous, and every distinct value is one ordered level. "
            "Bin it into a few ordered levels first, e.g. "
            "KBinsDiscretizer(n_bins=5, encode='ordinal') or "
            "np.digitize(y, np.quantile(y, [0.2, 0.4, 0.6, 0.8])).",
            UserWarning, stacklevel=3,
        )
    return X, y, levels, level_idx


def _has_non_numbers(y):
    flat = np.ravel(np.asarray(y, dtype=object))
    return any(
        not isinstance(v, (numbers.Real, np.bool_)) or isinstance(v, complex)
        for v in flat[:1000]
    )


def power_of_two_scale(X, *, center=True):
    """The power of two ``s`` that brings ``X / s`` to a moderate scale.

    Returns 1.0 when the largest absolute entry of ``X`` (minus its column
    means if ``center``) lies in ``[2**-20, 2**20]``, or when ``X`` is all
    zeros; otherwise ``2**k`` with ``k`` the rounded base-2 logarithm of that
    entry.  Dividing by a power of two is exact in floating point (barring
    underflow), so learners whose loss is invariant under the rescaling (with
    the matching change of their parameters) give the same metric for data
    scaled by 1e150 or 1e-150 as for data of unit scale, instead of
    overflowing or underflowing.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return 1.0
    if center and X.ndim == 2:
        X = X - X.mean(axis=0)
    m = float(np.max(np.abs(X)))
    if m == 0 or not np.isfinite(m) or _SCALE_RANGE[0] <= m <= _SCALE_RANGE[1]:
        return 1.0
    return float(2.0 ** int(np.round(np.log2(m))))


class ArrayIndexer:
    """A picklable preprocessor over an array: ``indexer(indices) = data[indices]``.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features)
        The points that index tuples refer to.
    """

    def __init__(self, data):
        self.data = check_array(data, dtype=np.float64, input_name="preprocessor")
        self.n_samples = self.data.shape[0]

    def __call__(self, indices):
        return self.data[indices]


def resolve_preprocessor(preprocessor):
    """Return ``preprocessor`` as a callable (an :class:`ArrayIndexer` for an array), or None."""
    if preprocessor is None or callable(preprocessor):
        return preprocessor
    return ArrayIndexer(preprocessor)


def apply_preprocessor(fn, indices, name):
    """Points ``fn(indices)`` as a 2-D float array with one row per index.

    Errors raised inside the user's callable become a
    :class:`~metric_estimators.exceptions.PreprocessorError` naming ``name``.
    """
    try:
        points = fn(indices)
    except Exception as exc:  # the user's code: say where it failed
        raise PreprocessorError(
            f"The preprocessor failed on the indices of {name}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    points = np.asarray(points)
    if points.ndim != 2 or points.shape[0] != len(indices):
        raise PreprocessorError(
            "preprocessor must return a 2-D array with one row per index, "
            f"got shape {points.shape} for {len(indices)} indices."
        )
    if points.dtype.kind not in "iufb":
        raise PreprocessorError(
            f"preprocessor must return numbers, got dtype {points.dtype}."
        )
    return points.astype(np.float64, copy=False)


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


def check_indices(arr, name, n_samples):
    """Integer row indices in ``[0, n_samples)`` (as intp), or a clear error."""
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr))
        and np.all(arr == np.round(arr))
    ):
        raise TypeError(f"{name} given as indices must hold integers.")
    idx = arr.astype(np.intp)
    if idx.size and (idx.min() < 0 or idx.max() >= n_samples):
        raise ValueError(
            f"{name} holds indices out of range [0, {n_samples}) of the "
            "preprocessor data."
        )
    return idx


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


def check_square_matrix(M, name, size=None, *, like=None):
    """Validate a finite real dense square matrix and return it as float64.

    ``size`` fixes the number of rows and columns; ``like`` names the matrix
    whose shape it is, for the error message.
    """
    if sparse.issparse(M):
        raise TypeError(f"{name} must be a dense array, got a sparse matrix.")
    arr = np.asarray(M)
    if arr.dtype == object:  # numbers held as objects (scikit-learn accepts them)
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers: {exc}") from None
    if arr.dtype.kind not in "iufb":
        raise TypeError(
            f"{name} must be a real numeric array, got dtype {arr.dtype}."
        )
    if size is not None and arr.shape != (size, size):
        if like is not None:
            raise ValueError(
                f"{name} must have the same shape as {like} {(size, size)}, "
                f"got {arr.shape}."
            )
        raise ValueError(
            f"{name} must have shape ({size}, {size}), got {arr.shape}."
        )
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {arr.shape}.")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return arr


def check_symmetric_matrix(M, name, size=None, *, like=None,
                           accept_sparse=False, nonnegative=False,
                           zero_diagonal=False, positive_off_diagonal=False,
                           rtol=0.0, diagonal_hint=""):
    """Validate a finite real symmetric matrix, dense or sparse.

    The one validator of square matrices given by users (dissimilarities,
    signed graphs, weights, priors).  Checks, in this order: real numeric
    dtype, shape (square, or ``(size, size)``; ``like`` names the matrix
    whose shape that is), finite entries, then on request non-negative
    entries, a zero diagonal, strictly positive entries off the diagonal,
    and symmetry within ``rtol`` relative and ``1e-10`` times the largest
    absolute entry absolute.  A sparse matrix (``accept_sparse=True``) must
    moreover have a symmetric sparsity pattern.  ``diagonal_hint`` is appended
    to the error about a non-zero diagonal.

    Returns
    -------
    M : ndarray of float64 ``(M + M.T) / 2``, or, for sparse input, the
        validated matrix as CSR float64 with duplicates summed (not
        symmetrised: callers read its upper triangle).
    """
    if sparse.issparse(M):
        if not accept_sparse:
            raise TypeError(
                f"{name} must be a dense array, got a sparse matrix."
            )
        return _check_symmetric_sparse(M, name, nonnegative=nonnegative,
                                       zero_diagonal=zero_diagonal,
                                       diagonal_hint=diagonal_hint)
    arr = check_square_matrix(M, name, size, like=like)
    if zero_diagonal and np.any(np.diag(arr) != 0):
        _raise_nonzero_diagonal(name, np.diag(arr), diagonal_hint)
    if nonnegative and arr.size and arr.min() < 0:
        raise ValueError(f"{name} must be non-negative; its smallest entry is "
                         f"{arr.min():.3g}.")
    if positive_off_diagonal and arr.size and (
        arr[~np.eye(arr.shape[0], dtype=bool)].min(initial=np.inf) <= 0
    ):
        raise ValueError(f"{name} must be strictly positive off the diagonal "
                         "(a zero weight leaves the entry free and the problem "
                         "without a unique solution).")
    scale = max(np.abs(arr).max() if arr.size else 0.0, np.finfo(float).tiny)
    if not np.allclose(arr, arr.T, rtol=rtol, atol=1e-10 * scale):
        raise ValueError(f"{name} must be symmetric.")
    return (arr + arr.T) / 2


def _raise_nonzero_diagonal(name, diagonal, hint):
    bad = np.flatnonzero(diagonal != 0)
    raise ValueError(
        f"{name} must have a zero diagonal; {bad.size} of its {diagonal.size} "
        f"diagonal entries are not zero (e.g. {name}[{bad[0]}, {bad[0]}] = "
        f"{diagonal[bad[0]]:.3g}).{(' ' + hint) if hint else ''}"
    )


def check_signed_graph_has_negative(A, estimator):
    """Warn when a signed graph has no negative (repulsive) entry.

    Without a negative weight, putting every node in one cluster disagrees
    with no edge, so correlation clustering has nothing to decide.
    ``A`` is a validated dense or sparse matrix.
    """
    data = A.data if sparse.issparse(A) else A
    if data.size and data.min() >= 0:
        warnings.warn(
            f"{type(estimator).__name__}: A has no negative entry, so a single "
            "cluster of all nodes is optimal (it violates no edge). Correlation "
            "clustering needs repulsive (negative) weights between nodes that "
            "should be apart; for a similarity matrix S in [0, 1], use e.g. "
            "A = 2 * S - 1, or S - threshold.",
            UserWarning, stacklevel=3,
        )


def _check_symmetric_sparse(M, name, *, nonnegative, zero_diagonal,
                            diagonal_hint=""):
    """The sparse branch of :func:`check_symmetric_matrix`."""
    M = sparse.csr_matrix(M, dtype=np.float64)
    M.sum_duplicates()
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}.")
    if not np.all(np.isfinite(M.data)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if zero_diagonal and np.any(M.diagonal() != 0):
        loops = np.flatnonzero(M.diagonal() != 0)
        raise ValueError(
            f"{name} must have a zero diagonal: a sparse graph has no "
            f"self-loops, but node {loops[0]} has one ({loops.size} in all)."
            f"{(' ' + diagonal_hint) if diagonal_hint else ''}")
    if nonnegative and M.nnz and M.data.min() < 0:
        raise ValueError(f"{name} must be non-negative; its smallest entry is "
                         f"{M.data.min():.3g}.")
    asym = abs(M - M.T)
    scale = max(float(np.abs(M.data).max(initial=0.0)), np.finfo(float).tiny)
    if asym.nnz and asym.max() > 1e-10 * scale:
        A = asym.tocoo()
        k = int(np.argmax(A.data))
        i, j = int(A.row[k]), int(A.col[k])
        raise ValueError(f"{name} must be symmetric: {name}[{i}, {j}] = "
                         f"{M[i, j]:.6g} but {name}[{j}, {i}] = {M[j, i]:.6g}.")
    # the same stored pattern on both sides, explicit zeros included (a
    # stored zero is an entry -- e.g. an edge of length 0 -- not an absence)
    P = sparse.csr_matrix((np.ones(M.nnz, dtype=np.int8), M.indices,
                           M.indptr), shape=M.shape)
    if (P - P.T).nnz:
        D = (P - P.T).tocoo()
        k = int(np.argmax(D.data > 0))
        raise ValueError(
            f"{name} must have a symmetric sparsity pattern: entry "
            f"({D.row[k]}, {D.col[k]}) is stored (value "
            f"{M[D.row[k], D.col[k]]:.3g}; explicit zeros count as entries) "
            f"but ({D.col[k]}, {D.row[k]}) is not.")
    return M


def require_positive_definite(M, name, *, tol=1e-10):
    """Raise NonPSDError unless the symmetric ``M``'s smallest eigenvalue is
    positive and above ``tol`` times its largest."""
    w = np.linalg.eigvalsh(M)
    if w[0] <= tol * max(w[-1], 0.0) or w[0] <= 0:
        raise NonPSDError(
            f"{name} must be positive definite; its smallest eigenvalue is "
            f"{w[0]:.3g}."
        )


def check_pd_matrix(M, name, size=None, *, tol=1e-10):
    """Validate a symmetric positive definite matrix and return it symmetrised."""
    M = check_symmetric_matrix(M, name, size, rtol=1e-8)
    require_positive_definite(M, name, tol=tol)
    return M


def check_int(value, name, minimum):
    """Check an integer parameter (used where _parameter_constraints cannot)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {for_message(value)!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)


def check_array_2d(A, name):
    """Validate a finite real 2-D array and return it as float64."""
    A = np.asarray(A)
    if A.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {A.dtype}.")
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {A.ndim} dimensions.")
    A = A.astype(np.float64)
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def renamed_parameter(estimator, old, new, default, *, stacklevel=4):
    """Value of parameter ``new``, honouring metric-learn's name ``old`` for it.

    ``old`` is a constructor parameter whose default is the string
    ``"deprecated"``.  If the user set it, a FutureWarning names our
    parameter and its value is used; setting both is a ``ValueError``.

    Parameters
    ----------
    estimator : BaseEstimator
    old, new : str
        metric-learn's name and ours.
    default : object
        The default of ``new`` (to tell whether the user set it).
    stacklevel : int, default=4
        Of the warning (4: the caller of ``fit`` when called from ``fit``
        behind scikit-learn's ``_fit_context``).

    Returns
    -------
    value : object
    """
    value_old = getattr(estimator, old)
    value_new = getattr(estimator, new)
    if isinstance(value_old, str) and value_old == "deprecated":
        return value_new
    name = type(estimator).__name__
    if not (value_new is default or value_new == default):
        raise ValueError(
            f"{name} got both {old}={for_message(value_old)!r} (metric-learn's name) and "
            f"{new}={for_message(value_new)!r}; pass only {new}."
        )
    warnings.warn(
        f"{name}: {old} is metric-learn's name of {new}; use "
        f"{new}={for_message(value_old)!r} (accepted for now, removed in a future "
        "release).", FutureWarning, stacklevel=stacklevel)
    return value_old


def check_bounds(bounds):
    """Validate user bounds ``(low, high)`` on squared distances; return two floats.

    Any array-like of two numbers is accepted, e.g. ``(1, 10)`` or
    ``[[1, 10]]`` (metric-learn accepts the latter too).
    """
    try:
        arr = np.asarray(bounds)
    except ValueError:  # ragged
        arr = np.asarray([], dtype=object)
    if arr.dtype.kind not in "iuf" or arr.size != 2:
        raise ValueError(
            f"bounds must be two numbers (low, high), got {for_message(bounds)!r}."
        )
    # any array-like of two numbers: (low, high), [[low, high]] (metric-learn)
    low, high = (float(b) for b in arr.ravel())
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"bounds must be finite, got {for_message(bounds)!r}.")
    if low <= 0:
        raise ValueError(
            f"bounds must be positive squared distances, got low={low}."
        )
    if low > high:
        raise ValueError(
            f"bounds must satisfy low <= high, got low={low} > high={high}."
        )
    return low, high


def check_prior(prior, n_features):
    """Validate a prior given as a matrix; a string is returned unchanged.

    The matrix must be symmetric positive definite of shape
    ``(n_features, n_features)``; it is returned symmetrised (see
    :func:`check_pd_matrix`).  The string options are checked by the
    estimator's ``_parameter_constraints``.
    """
    if isinstance(prior, str):
        return prior
    return check_pd_matrix(prior, "prior", size=n_features)


def check_sparse_signed_graph(A, name="A"):
    """Validate a sparse signed graph and return it as CSR float64.

    Symmetric (values and pattern), finite, no self-loop (no stored diagonal
    entry other than zero) and no explicit stored zero: in a sparse signed
    graph a stored entry is an edge and needs a non-zero weight.
    ``name`` is the matrix's name in the error messages.
    """
    M = check_symmetric_matrix(A, name, accept_sparse=True,
                               zero_diagonal=True)
    zero = M.data == 0
    if np.any(zero):
        C = M.tocoo()
        k = int(np.flatnonzero(C.data == 0)[0])
        raise ValueError(
            f"{name} has an explicit stored zero at ({C.row[k]}, "
            f"{C.col[k]}) ({int(zero.sum())} stored zeros in all): in a "
            f"sparse signed graph a stored entry is an edge and needs a "
            f"non-zero weight, an absent entry means no information. "
            f"Drop stored zeros with {name}.eliminate_zeros().")
    return M


def check_sparse_edge_weights(W, D):
    """Check sparse ``sample_weight``: finite, symmetric, stored on D's edges only."""
    W = sparse.csr_matrix(W, dtype=np.float64)
    W.sum_duplicates()
    if not np.all(np.isfinite(W.data)):
        raise ValueError("sample_weight contains NaN or infinity.")
    asym = abs(W - W.T)
    if asym.nnz and asym.max() > 1e-10 * max(abs(W).max(), 1e-300):
        raise ValueError("sample_weight must be symmetric.")
    PW = sparse.csr_matrix((np.ones(W.nnz), W.indices, W.indptr),
                           shape=W.shape)
    PW.setdiag(0)
    PW.eliminate_zeros()
    PD = sparse.csr_matrix((np.ones(D.nnz), D.indices, D.indptr),
                           shape=D.shape)
    off = PW - PW.multiply(PD)
    off.eliminate_zeros()
    if off.nnz:
        r, c = off.nonzero()
        raise ValueError(
            f"sample_weight has a stored entry at ({r[0]}, {c[0]}), which is "
            f"not an edge of D ({off.nnz} such entries): weights apply to "
            f"the stored entries of a sparse D only.")
    return W
