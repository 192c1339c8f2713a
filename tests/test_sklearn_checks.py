"""scikit-learn's estimator checks on every public estimator and every registered variant.

``test_check_estimator_runs_to_the_end`` runs ``check_estimator(E(...),
on_fail=None)`` on each of the public estimators, built with the parameters
of its first registry entry (``tests/conftest.py``), as a user would: every
check runs, none fails unless it is declared in that entry's
``expected_failed_checks`` with the reason, and every declared one still
fails (a check that starts to pass must be taken off the list).  The
learners of pairs, triplets and quadruplets are tagged with their 3-D input
(``three_d_array``), for which scikit-learn has no checks: only the clone
check runs on them there.

``test_sklearn_compatible`` runs the checks one test each on the other
registry entries: the variants of a class (another solver, ``init`` or
``embedding_type``) and the tuple learners through ``tests/tuple_adapter.py``,
which hands them tuples made of the checks' points, so that every check
exercises their own code.  Listed failures run with ``xfail_strict=True``.
"""

import inspect
import warnings

import pytest
from conftest import REGISTRY, Learner
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, SkipTestWarning
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

import metric_estimators

PUBLIC = sorted(
    (obj for name in metric_estimators.__all__
     if inspect.isclass(obj := getattr(metric_estimators, name))
     and issubclass(obj, BaseEstimator)
     and hasattr(obj, "fit")),  # not the base classes users subclass
    key=lambda cls: cls.__name__)

#: the first registry entry of each public class: its parameters and declared failures
FIRST_ENTRY = {}
for _entry in REGISTRY:
    FIRST_ENTRY.setdefault(_entry.estimator, _entry)


def test_registry_holds_every_public_estimator():
    assert set(PUBLIC) == {entry.estimator for entry in REGISTRY}
    assert len(PUBLIC) == 22


@pytest.mark.parametrize("estimator_class", PUBLIC, ids=lambda cls: cls.__name__)
def test_check_estimator_runs_to_the_end(estimator_class):
    entry = FIRST_ENTRY[estimator_class]
    estimator = entry.make()
    tags = estimator.__sklearn_tags__()
    tuples = tags.input_tags.three_d_array
    expected = {} if tuples else dict(entry.expected_failed_checks)
    with warnings.catch_warnings():
        # small budgets and tiny data: non-convergence, few pairs; the
        # notice that 3-D input has no checks
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", SkipTestWarning)
        results = check_estimator(estimator, on_fail=None, on_skip=None,
                                  expected_failed_checks=expected)
    failed = {r["check_name"]: f"{type(r['exception']).__name__}: {r['exception']}"
              for r in results if r["status"] == "failed"}
    assert failed == {}
    # every declared failure is still one
    assert {r["check_name"] for r in results if r["status"] == "xfail"} == set(expected)
    if tuples:
        assert not tags.input_tags.two_d_array
        assert [r["check_name"] for r in results] == ["check_estimator_cloneable"]
    else:
        assert len(results) > 40  # the whole suite ran


def test_tuple_learners_are_tagged_with_their_input():
    """3-D input, and, for the pairs classifiers, binary ±1 labels."""
    for cls in (metric_estimators.ITML, metric_estimators.MMC, metric_estimators.SDML,
                metric_estimators.SCML, metric_estimators.LSML):
        tags = cls().__sklearn_tags__()
        assert (tags.input_tags.two_d_array, tags.input_tags.three_d_array) == (False, True)
        assert tags.estimator_type == "classifier"
        assert tags.classifier_tags.multi_class is False
    for cls in (metric_estimators.MetricNearness, metric_estimators.CorrelationClustering):
        est = cls()
        assert est.__sklearn_tags__().input_tags.pairwise
        assert est.metric == "precomputed"
        with pytest.raises(AttributeError):
            est.metric = "euclidean"


# -- one test per check: the variants and the tuple learners on points --------

_OTHER_ENTRIES = [entry for entry in REGISTRY
                  if FIRST_ENTRY[entry.estimator] is not entry
                  or entry.check_class is not None]
_ENTRY_OF = {}


def _instances():
    out = []
    for entry in _OTHER_ENTRIES:
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
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)

