"""Notebook use: HTML repr, fitted attributes used by the gallery's plots,
readable ``verbose`` output.  All tiny (iris-sized) so the suite stays fast."""

import re
import time
import warnings

import numpy as np
import pytest
from conftest import REGISTRY
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from metric_estimators import LMNN, MetricNearness

# every public estimator class of the registry (tests/conftest.py), once
ALL_ESTIMATORS = list(dict.fromkeys(entry.estimator for entry in REGISTRY))


@pytest.mark.parametrize("Estimator", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_html_repr_unfitted(Estimator):
    html = Estimator()._repr_html_()
    assert Estimator.__name__ in html
    assert "<style" in html  # scikit-learn's styled diagram, not a fallback


def test_html_repr_fitted_and_in_pipeline(iris):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipe = make_pipeline(LMNN(max_iter=5, random_state=0),
                             KNeighborsClassifier(3)).fit(X, y)
    html = pipe._repr_html_()
    assert "LMNN" in html and "KNeighborsClassifier" in html
    # the diagram tells fitted from unfitted estimators
    assert "Not fitted" not in pipe[0]._repr_html_()
    assert "Not fitted" in LMNN()._repr_html_()
    # a non-default parameter is shown
    assert "max_iter" in html


def test_html_repr_fitted_non_mahalanobis():
    D = np.abs(np.random.default_rng(0).normal(size=(6, 6)))
    D = D + D.T
    np.fill_diagonal(D, 0)
    html = MetricNearness().fit(D)._repr_html_()
    assert "MetricNearness" in html
    assert "Not fitted" not in html and "Not fitted" in MetricNearness()._repr_html_()


@pytest.mark.parametrize("solver", ["lbfgs", "subgradient"])
def test_lmnn_active_curve_matches_loss_curve(iris, solver):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn = LMNN(solver=solver, max_iter=8, random_state=0).fit(X, y)
    assert len(lmnn.n_active_curve_) == len(lmnn.loss_curve_) > 0
    assert all(isinstance(v, int) and v >= 0 for v in lmnn.n_active_curve_)
    assert not hasattr(lmnn, "_active_curve")  # no scratch state left behind


def test_lmnn_verbose_is_a_readable_table(iris, capsys):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn = LMNN(max_iter=5, verbose=1, random_state=0).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert all(ln.startswith("[LMNN] ") for ln in lines)
    header = [ln for ln in lines if "Iteration" in ln]
    assert len(header) == 1 and "Objective" in header[0] and "Active" in header[0]
    rows = [ln for ln in lines if re.match(r"\[LMNN\]\s+\d+\s", ln)]
    assert len(rows) == len(lmnn.loss_curve_)
    # every row has the same width (fixed-width columns line up in a cell),
    # the width of the header
    assert {len(r) for r in rows} == {len(header[0])}
    # the printed objectives and active counts are the stored ones
    assert [r.split()[2] for r in rows] == [f"{v:.6e}" for v in lmnn.loss_curve_]
    printed = [int(r.split()[3]) for r in rows]
    assert printed == lmnn.n_active_curve_


@pytest.mark.parametrize("solver", ["lbfgs", "subgradient"])
def test_lmnn_verbose_2_prints_every_row_verbose_1_throttles(iris, capsys, solver):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn = LMNN(solver=solver, max_iter=40, verbose=2, random_state=0).fit(X, y)
        rows = [ln for ln in capsys.readouterr().out.splitlines()
                if re.match(r"\[LMNN\]\s+\d+\s", ln)]
        assert len(rows) == len(lmnn.loss_curve_) > 5
        assert [int(r.split()[1]) for r in rows] == list(range(1, len(rows) + 1))
        assert [r.split()[2] for r in rows] == [f"{v:.6e}" for v in lmnn.loss_curve_]
        assert [int(r.split()[3]) for r in rows] == lmnn.n_active_curve_
        start = time.perf_counter()
        quiet = LMNN(solver=solver, max_iter=40, verbose=1, random_state=0).fit(X, y)
        elapsed = time.perf_counter() - start
        throttled = [ln.split()[:4] for ln in capsys.readouterr().out.splitlines()
                     if re.match(r"\[LMNN\]\s+\d+\s", ln)]
    # verbose=1: the first five rows, then at most one a second, and the
    # last one; each is a row of the full table (the time column aside)
    full = [r.split()[:4] for r in rows]
    assert throttled[:5] == full[:5]
    assert throttled[-1] == full[-1]
    assert all(r in full for r in throttled)
    # a phase line (an impostor search) first prints the row the throttle
    # held back, so that lines keep the order of events
    assert len(throttled) <= min(len(full),
                                 5 + int(elapsed) + 2 + quiet.n_impostor_searches_)
