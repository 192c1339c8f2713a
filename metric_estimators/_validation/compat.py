"""Compatibility with metric-learn's parameter names.
"""

import warnings

from .text import for_message

__all__ = [
    "renamed_parameter",
]


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
