"""scikit-learn's estimator checks on every registered estimator.

Each check is its own test, so one failing check hides no other.  The checks
an estimator is expected to fail are listed, with the reason, in its registry
entry (``tests/conftest.py``); they run with ``xfail_strict=True``, so a
listed check that starts to pass fails here and must be taken off the list.
"""

import inspect
import warnings

from conftest import REGISTRY, Learner
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import metric_estimators


def test_registry_holds_every_public_estimator():
    public = {
        obj for name in metric_estimators.__all__
        if inspect.isclass(obj := getattr(metric_estimators, name))
        and issubclass(obj, BaseEstimator)
        and hasattr(obj, "fit")  # not the base classes users subclass
    }
    assert public == {entry.estimator for entry in REGISTRY}

_ENTRY_OF = {}


def _instances():
    out = []
    for entry in REGISTRY:
        est = entry.make_for_checks()
        _ENTRY_OF[id(est)] = entry
        out.append(est)
    return out


def _expected_failed_checks(estimator):
    entry: Learner = _ENTRY_OF[id(estimator)]
    return dict(entry.expected_failed_checks)


@parametrize_with_checks(_instances(), expected_failed_checks=_expected_failed_checks,
                         xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # small budgets and tiny data: non-convergence, few pairs / triplets
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
