"""Compatibility with metric-learn's parameter names and order.
"""

import warnings

import numpy as np

from .text import for_message

__all__ = [
    "check_init_not_first",
    "lmnn_metric_learn_parameters",
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


def check_init_not_first(estimator, first):
    """Refuse metric-learn's positional order ``Estimator(init, first, ...)``.

    metric-learn's LMNN takes ``init`` as its first positional parameter,
    ours takes ``first``: called in metric-learn's order, ``init`` (a string
    or an array) lands in ``first``.  Checked before the parameter
    constraints, whose type error would not say why.
    """
    value = getattr(estimator, first)
    if isinstance(value, (str, np.ndarray)):
        name = type(estimator).__name__
        raise ValueError(
            f"{name} got {first}={value!r}: metric-learn's {name} takes init "
            f"as its first positional parameter, this one takes {first}; pass "
            f"parameters by keyword, e.g. {name}(init='auto', {first}=3)."
        )


def lmnn_metric_learn_parameters(estimator, *, stacklevel=5):
    """LMNN's ``n_neighbors``, ``tol`` and ``min_iter``, honouring metric-learn's names.

    ``k`` and ``convergence_tol`` stand for ``n_neighbors`` and ``tol``
    (:func:`renamed_parameter`).  ``min_iter``, metric-learn's minimum number
    of iterations, is honoured by ``solver='subgradient'`` with a
    FutureWarning; ``solver='lbfgs'`` stops only at a verified stationary
    point, where more iterations would not change ``L``, and refuses it.
    ``learn_rate``, a parameter of metric-learn's solver, is unused by
    ``solver='lbfgs'``: a warning says so.

    Parameters
    ----------
    estimator : LMNN
    stacklevel : int, default=5
        Of the warnings (5: the caller of ``fit`` when this is called from a
        method that ``fit`` calls).

    Returns
    -------
    params : dict
        ``n_neighbors``, ``tol`` and ``min_iter`` (0 when not set).
    """
    params = {
        "n_neighbors": renamed_parameter(estimator, "k", "n_neighbors", 3,
                                         stacklevel=stacklevel + 1),
        "tol": renamed_parameter(estimator, "convergence_tol", "tol", 1e-4,
                                 stacklevel=stacklevel + 1),
        "min_iter": 0,
    }
    min_iter, lbfgs = estimator.min_iter, estimator.solver == "lbfgs"
    if not (isinstance(min_iter, str) and min_iter == "deprecated"):
        if lbfgs:
            raise ValueError(
                f"LMNN(min_iter={min_iter}) cannot be honoured by solver='lbfgs', "
                "which stops only at a verified stationary point (more iterations "
                "would not change L). Drop min_iter, or use solver='subgradient'."
            )
        warnings.warn(
            "LMNN: min_iter is metric-learn's parameter; it is honoured by "
            "solver='subgradient' (no stop before min_iter iterations) and will "
            "be removed in a future release.", FutureWarning, stacklevel=stacklevel)
        params["min_iter"] = int(min_iter)
    if estimator.learn_rate is not None and lbfgs:
        warnings.warn(
            f"LMNN: learn_rate={estimator.learn_rate} is used by "
            "solver='subgradient' and solver='sgd' only; solver='lbfgs' (the "
            "default) chooses its own steps. Drop learn_rate, or pass "
            "solver='subgradient'.", UserWarning, stacklevel=stacklevel)
    return params
