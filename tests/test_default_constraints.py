"""The default number of pairs the _Supervised learners draw from class labels.

metric-learn draws ``20 * n_classes ** 2`` pairs of each kind whatever the
data; MMC_Supervised, SDML_Supervised and LSML_Supervised here draw as many
as one pass over them costs ``PAIR_WORK`` (pairs x n_features ** 2), at
most ``MAX_DEFAULT_PAIRS``, at least metric-learn's number, and never more
than exist of either kind.  On small data (every pair within
``ALL_PAIRS_MAX`` and a work budget) MMC_Supervised, SDML_Supervised and
ITML_Supervised take every pair instead.  The counts are checked against a plain
enumeration of the pairs.
"""

import itertools
import warnings

import numpy as np
import pytest

from metric_estimators import LSML_Supervised, MMC_Supervised, SDML_Supervised
from metric_estimators.constraints import (
    MAX_DEFAULT_PAIRS,
    PAIR_WORK,
    all_labelled_pairs,
    all_pairs_affordable,
    default_n_constraints,
)


def _pair_counts(y):
    """(same-class, different-class) pairs by enumerating every pair."""
    same = diff = 0
    for a, b in itertools.combinations(range(len(y)), 2):
        if y[a] == y[b]:
            same += 1
        else:
            diff += 1
    return same, diff


def test_a_given_number_is_kept():
    y = np.repeat([0, 1], 10)
    assert default_n_constraints(7, y, 3) == 7
    assert default_n_constraints(10 ** 6, y, 3) == 10 ** 6


@pytest.mark.parametrize("sizes", [(30, 12), (5, 40, 9), (20, 20, 20, 3)])
def test_small_data_gets_every_pair_of_the_rarer_kind(sizes):
    y = np.repeat(np.arange(len(sizes)), sizes)
    same, diff = _pair_counts(y)
    assert default_n_constraints(None, y, 4) == min(same, diff)


def test_large_data_follows_the_work_budget_and_the_cap():
    rng = np.random.RandomState(0)
    y = rng.randint(0, 3, size=5000)
    for n_features in (5, 20, 64, 300):
        expected = max(20 * 3 ** 2, min(MAX_DEFAULT_PAIRS, PAIR_WORK // n_features ** 2))
        assert default_n_constraints(None, y, n_features) == expected
    # never fewer than metric-learn's 20 * n_classes ** 2 while enough pairs exist
    assert default_n_constraints(None, y, 10 ** 4) == 20 * 3 ** 2


@pytest.mark.parametrize("Learner", [MMC_Supervised, SDML_Supervised, LSML_Supervised])
def test_supervised_learners_draw_the_default_without_warning(Learner):
    rng = np.random.RandomState(1)
    y = np.repeat([0, 1], [25, 15])
    X = rng.randn(40, 3) + y[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "only N distinct pairs exist" warning
        est = Learner(random_state=0).fit(X, y)
    same, diff = _pair_counts(y)
    drawn = est.quadruplets_.shape[0] if hasattr(est, "quadruplets_") else \
        int(np.sum(est.pair_labels_ == -1))
    assert drawn == min(same, diff) == 375


def test_every_pair_of_the_rarer_kind_makes_mmc_seed_free_there():
    # 40 points, two classes: all 375 different-class pairs are drawn
    # whatever the seed, so the dissimilar half of the problem is the same
    rng = np.random.RandomState(2)
    y = np.repeat([0, 1], [25, 15])
    X = rng.randn(40, 3) + y[:, None]
    a, b = (MMC_Supervised(random_state=s).fit(X, y) for s in (0, 1))
    neg_a = {tuple(sorted(p)) for p in a.pairs_[a.pair_labels_ == -1]}
    neg_b = {tuple(sorted(p)) for p in b.pairs_[b.pair_labels_ == -1]}
    assert neg_a == neg_b and len(neg_a) == 375


def test_all_labelled_pairs_is_every_pair_once_with_its_label():
    y = np.array([2, 0, 2, 1, 0, 2, 1])
    pairs, labels = all_labelled_pairs(y)
    expected = {(i, j): (1 if y[i] == y[j] else -1)
                for i in range(len(y)) for j in range(i + 1, len(y))}
    got = {(int(i), int(j)): int(lab) for (i, j), lab in zip(pairs, labels)}
    assert got == expected and len(pairs) == len(expected)
    # positive pairs first, then negative ones
    assert np.all(np.diff(labels) <= 0)
    with pytest.raises(ValueError, match="single class"):
        all_labelled_pairs(np.zeros(5))
    with pytest.raises(ValueError, match="single sample"):
        all_labelled_pairs(np.arange(5))


def test_all_pairs_budget_counts_pairs_and_work():
    y = np.arange(400) % 2  # 79800 pairs
    assert all_pairs_affordable(y, 8)  # 5.1e6 work
    assert not all_pairs_affordable(y, 120)  # 1.15e9 work
    assert not all_pairs_affordable(y, 8, max_pairs=50_000)
    assert not all_pairs_affordable(np.arange(500) % 2, 2)  # 124750 pairs


@pytest.mark.parametrize("cls", [MMC_Supervised, SDML_Supervised])
def test_small_data_takes_every_pair_and_large_data_draws(cls):
    from metric_estimators.constraints import SMALL_ALL_PAIRS_WORK

    rng = np.random.RandomState(0)
    y = np.arange(60) % 3
    X = rng.randn(60, 4) + y[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = cls(random_state=0).fit(X, y)
    assert len(small.pairs_) == 60 * 59 // 2
    assert len({tuple(p) for p in small.pairs_}) == len(small.pairs_)
    # above the work budget: the drawn default count of each kind
    d = int(np.sqrt(SMALL_ALL_PAIRS_WORK / (60 * 59 // 2))) + 1
    Xw = rng.randn(60, d)
    assert not all_pairs_affordable(y, d, work=SMALL_ALL_PAIRS_WORK)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = cls(random_state=0, max_iter=3).fit(Xw, y)
    n = default_n_constraints(None, y, d)
    assert (wide.pair_labels_ == 1).sum() == n == (wide.pair_labels_ == -1).sum()

