"""Checks of parameter values that ``_parameter_constraints`` cannot express.

An integer with a lower bound given outside an estimator
(:func:`check_int`), ``n_components`` against the number of features
(:func:`check_n_components`) and the bounds ``(low, high)`` on squared
distances of the pairs learners (:func:`check_bounds`).
"""

import numbers

import numpy as np

from .text import for_message

__all__ = [
    "check_bounds",
    "check_int",
    "check_n_components",
]


def check_int(value, name, minimum):
    """Check an integer parameter (used where _parameter_constraints cannot)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {for_message(value)!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)


def check_n_components(n_components, n_features):
    """The embedding dimension: ``n_components``, or ``n_features`` for None.

    Raises a ``ValueError`` if ``n_components`` exceeds ``n_features``.
    """
    if n_components is None:
        return n_features
    if n_components > n_features:
        raise ValueError(
            f"n_components={n_components} must be <= n_features={n_features}."
        )
    return n_components


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
