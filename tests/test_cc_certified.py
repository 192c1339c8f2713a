"""CorrelationClustering's certified_ and verbose table say what a user reads in them.

``certified_`` is True whenever the returned clustering is proven within
``1 + certify_tol`` of the optimum (``certify_tol=None``: proven optimal),
however the fit ended; the table's gap column shows ``-`` until the gap is
measured, and its rows come before the phase lines that follow them.
"""

import sys
from io import StringIO

import numpy as np
import pytest
from conftest import signed_graph
from scipy import sparse

from metric_estimators import CorrelationClustering
from metric_estimators._reporting import ITERATION, FitReport


def _planted(n=24, groups=3):
    """A graph with no conflict: +1 inside the groups, -1 across; its LP is
    tight, so the best clustering's cost (0) equals the lower bound."""
    g = np.arange(n) % groups
    A = np.where(g[:, None] == g[None, :], 1.0, -1.0)
    np.fill_diagonal(A, 0.0)
    return A


@pytest.mark.parametrize("to_sparse", [False, True])
def test_a_clustering_at_the_lower_bound_is_certified(to_sparse):
    A = _planted()
    est = CorrelationClustering(random_state=0).fit(
        sparse.csr_matrix(A) if to_sparse else A)
    assert est.converged_ and est.n_certificate_checks_ == 0
    assert est.cost_ == pytest.approx(est.lower_bound_, abs=1e-9)
    assert est.certified_


def test_certified_is_the_ratio_it_names():
    A = signed_graph(30, seed=1)
    for certify_tol in (None, 0.0, 0.5, 10.0):
        est = CorrelationClustering(certify_tol=certify_tol,
                                    random_state=0).fit(A)
        ratio = 0.0 if certify_tol is None else certify_tol
        assert est.certified_ == (est.cost_ <= (1 + ratio) * est.lower_bound_)
    # a generous certify_tol is met on this graph, whatever stopped the fit
    assert est.certified_


def test_table_shows_a_dash_until_the_gap_is_measured_and_says_what_it_searched(capsys):
    CorrelationClustering(random_state=0, verbose=2).fit(signed_graph(30))
    lines = [line.split()[1:] for line in capsys.readouterr().out.splitlines()]
    start = next(i for i, line in enumerate(lines) if line[:1] == ["Iteration"])
    header = lines[start]
    rows = [line for line in lines[start + 2:]
            if len(line) == len(header) and line[0].isdigit()]
    assert len(rows) >= 2
    gap, search = header.index("Gap"), header.index("Search")
    assert rows[0][gap] == "-" and "nan" not in {r[gap] for r in rows}
    assert {r[search] for r in rows} <= {"short-edges", "all-triangles"}


def test_a_phase_line_follows_the_row_held_back_before_it():
    out = StringIO()
    report = FitReport("X", [ITERATION], verbose=1, head=1, interval=1e9,
                       stream=out)
    report.row(1)
    report.row(2)  # throttled
    report.phase("next step")
    report.finish("done")
    first_words = [line.split()[1] for line in out.getvalue().splitlines()]
    # the held-back row 2, then the phase line; row 2 printed once
    assert first_words.index("2") < first_words.index("next")
    assert first_words.count("2") == 1


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
