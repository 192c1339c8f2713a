"""Input validation shared by every estimator.

Points go through scikit-learn's own ``validate_data`` so that
``n_features_in_``, ``feature_names_in_`` and the error messages are the ones
scikit-learn users know.  Pairs (weak supervision) and initial matrices have
their own checks here, written once and used by every learner.
"""

import numbers
import re

import numpy as np
from scipy import sparse
from sklearn.utils import check_array
from sklearn.utils.validation import _num_samples, validate_data

__all__ = [
    "check_pd_matrix",
    "check_n_components",
    "check_square_matrix",
    "power_of_two_scale",
    "validate_ordered_points",
    "validate_pair_labels",
    "validate_pairs",
    "validate_points",
]

# Data whose scale (largest absolute deviation from the mean) lies outside
# this range is rescaled internally by a power of two (an exact operation in
# floating point) by the learners whose loss is invariant under the
# corresponding reparametrisation (see power_of_two_scale).
_SCALE_RANGE = (2.0 ** -20, 2.0 ** 20)


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
            f"levels); got only {levels[0]!r} (1 class)."
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


def _resolve_preprocessor(preprocessor):
    """Return a callable mapping an index array to points, or None."""
    if preprocessor is None:
        return None
    if callable(preprocessor):
        return preprocessor
    data = check_array(preprocessor, dtype=np.float64, input_name="preprocessor")

    def lookup(indices):
        return data[indices]

    lookup.n_samples = data.shape[0]
    return lookup


def validate_pairs(pairs, preprocessor=None, *, n_features=None, name="pairs"):
    """Validate pairs of points and return a float array (n_pairs, 2, n_features).

    Parameters
    ----------
    pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
        Either the points themselves, or indices into the data given by
        ``preprocessor``.
    preprocessor : array-like of shape (n_samples, n_features), callable or None
        If an array, ``pairs`` of shape (n_pairs, 2) are row indices into it.
        If a callable, it is called with a 1-D integer array of indices and
        must return the corresponding points as a 2-D array.
    n_features : int or None
        Expected number of features (the fitted ``n_features_in_``).
    """
    arr = np.asarray(pairs)
    if arr.dtype.kind in "OUS":
        raise TypeError(
            f"{name} must be numeric, got an array of dtype {arr.dtype}."
        )
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex values.")
    fn = _resolve_preprocessor(preprocessor)
    if arr.ndim == 2 and fn is not None:
        if arr.shape[1] != 2:
            raise ValueError(
                f"{name} given as indices must have shape (n_pairs, 2), "
                f"got {arr.shape}."
            )
        if arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "f" and np.all(np.isfinite(arr))
            and np.all(arr == np.round(arr))
        ):
            raise TypeError(f"{name} given as indices must hold integers.")
        idx = arr.astype(np.intp)
        n_samples = getattr(fn, "n_samples", None)
        if idx.size and (
            idx.min() < 0 or (n_samples is not None and idx.max() >= n_samples)
        ):
            raise ValueError(
                f"{name} holds indices out of range [0, {n_samples}) of the "
                "preprocessor data."
            )
        points = np.asarray(fn(idx.ravel()), dtype=np.float64)
        if points.ndim != 2 or points.shape[0] != idx.size:
            raise ValueError(
                "preprocessor must return a 2-D array with one row per index, "
                f"got shape {points.shape} for {idx.size} indices."
            )
        arr = points.reshape(idx.shape[0], 2, points.shape[1])
    elif arr.ndim == 2:
        raise ValueError(
            f"{name} of shape {arr.shape} look like index pairs, but no "
            "preprocessor was given; pass pairs of points of shape "
            "(n_pairs, 2, n_features) or set preprocessor=X."
        )
    elif arr.ndim != 3 or arr.shape[1] != 2:
        raise ValueError(
            f"{name} must have shape (n_pairs, 2, n_features), or (n_pairs, 2) "
            f"with a preprocessor; got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one pair is required.")
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


def validate_pair_labels(y, n_pairs):
    """Validate pair labels: a 1-D array of {-1, +1} of length n_pairs."""
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


def check_square_matrix(M, name, size=None):
    """Validate a finite real square matrix (optionally of a given size)."""
    arr = np.asarray(M) if not sparse.issparse(M) else M
    if getattr(arr, "ndim", 2) != 2:
        raise ValueError(
            f"{name} must be a 2-D square matrix, got an array of shape "
            f"{np.shape(arr)}."
        )
    if getattr(arr, "dtype", np.dtype(float)).kind in "USc":
        raise TypeError(
            f"{name} must be a real numeric matrix, got dtype {arr.dtype}."
        )
    M = check_array(M, dtype=np.float64, input_name=name)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}.")
    if size is not None and M.shape[0] != size:
        raise ValueError(
            f"{name} must have shape ({size}, {size}), got {M.shape}."
        )
    return M


def check_pd_matrix(M, name, size=None, *, tol=1e-10):
    """Validate a symmetric positive definite matrix and return it symmetrised."""
    M = check_square_matrix(M, name, size)
    scale = max(np.abs(M).max(), np.finfo(float).tiny)
    if not np.allclose(M, M.T, rtol=1e-8, atol=1e-10 * scale):
        raise ValueError(f"{name} must be symmetric.")
    M = (M + M.T) / 2
    w = np.linalg.eigvalsh(M)
    if w[0] <= tol * max(w[-1], 0.0) or w[0] <= 0:
        raise ValueError(
            f"{name} must be positive definite; its smallest eigenvalue is "
            f"{w[0]:.3g}."
        )
    return M


def check_int(value, name, minimum):
    """Check an integer parameter (used where _parameter_constraints cannot)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)
