"""Points and their labels: the fit prelude of learners fitted on ``(X, y)``.

Points go through scikit-learn's own ``validate_data`` so that
``n_features_in_``, ``feature_names_in_`` and the error messages are the ones
scikit-learn users know.  Class labels (:func:`validate_labelled_points`)
and ordered numeric labels (:func:`validate_ordered_points`) are checked
here once for every learner.
"""

import numbers
import re
import warnings
from typing import NamedTuple

import numpy as np
from scipy import sparse
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .text import for_message

__all__ = [
    "ClassLabels",
    "validate_labelled_points",
    "validate_ordered_points",
    "validate_points",
]


# validate_ordered_points warns when the labels look continuous: more than
# this many levels with fewer than _MIN_PER_LEVEL samples per level on average
_MAX_PLAIN_LEVELS = 10
_MIN_PER_LEVEL = 5


def _n_rows(v):
    """Rows of an array, data frame or sequence (TypeError for a scalar or an object)."""
    shape = getattr(v, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            raise TypeError("a scalar has no rows")
        return int(shape[0])
    return len(v)


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
            n_x, n_y = _n_rows(X), _n_rows(y)
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
