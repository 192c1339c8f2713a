"""The shared verbose table and ConvergenceWarning (metric_estimators._reporting)."""

import io
import re
import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning

from metric_estimators._reporting import (
    ITERATION,
    OBJECTIVE,
    Column,
    FitReport,
    convergence_warning,
)


def _lines(stream):
    return stream.getvalue().splitlines()


def test_silent_when_verbose_zero():
    out = io.StringIO()
    rep = FitReport("X", [ITERATION], verbose=0, stream=out)
    rep.phase("start")
    assert rep.row(1) is False
    rep.finish("done")
    assert out.getvalue() == ""


def test_table_format_prefix_and_columns():
    out = io.StringIO()
    rep = FitReport("LMNN", [ITERATION, OBJECTIVE, Column("Active", "d")],
                    verbose=2, stream=out)
    rep.phase("target neighbours")
    for it in range(1, 4):
        rep.row(it, 10.0 / it, 7 * it)
    rep.finish("converged")
    lines = _lines(out)
    assert all(line.startswith("[LMNN] ") for line in lines)
    assert re.search(r"target neighbours\s+\(\d+\.\d\d s\)$", lines[0])
    header = lines[1].split()
    assert header[1:] == ["Iteration", "Objective", "Active", "Time(s)"]
    assert set(lines[2].split()[1]) == {"-"}
    rows = [line.split()[1:] for line in lines[3:6]]
    assert [int(r[0]) for r in rows] == [1, 2, 3]
    assert [float(r[1]) for r in rows] == pytest.approx([10.0, 5.0, 10.0 / 3])
    assert [int(r[2]) for r in rows] == [7, 14, 21]
    times = [float(r[3]) for r in rows]
    assert times == sorted(times)
    assert "converged" in lines[6]
    # fixed widths: every row as long as the header
    assert {len(line) for line in lines[1:6]} == {len(lines[1])}


def test_throttling_keeps_fast_fits_short_and_prints_last_row():
    out = io.StringIO()
    rep = FitReport("LODML", [ITERATION], verbose=1, head=5, interval=60.0,
                    stream=out)
    printed = [rep.row(it) for it in range(1, 228)]
    rep.finish("stopped")
    assert printed[:5] == [True] * 5 and not any(printed[5:])
    lines = _lines(out)
    # header (2) + 5 head rows + the last row + the closing line
    assert len(lines) == 9
    assert lines[-2].split()[1] == "227"


def test_time_counts_from_start_of_fit():
    out = io.StringIO()
    rep = FitReport("X", [ITERATION], verbose=2, stream=out)
    rep.t0 -= 5.0  # as if the set-up before the first row took 5 s
    rep.row(1)
    assert float(_lines(out)[-1].split()[-1]) >= 5.0


def test_nan_and_none_values_are_printed_not_raised():
    out = io.StringIO()
    rep = FitReport("X", [ITERATION, OBJECTIVE], verbose=2, stream=out)
    rep.row(1, float("nan"))
    rep.row(2, None)
    last = _lines(out)[-2:]
    assert "nan" in last[0] and " - " in last[1] + " "


def test_convergence_warning_says_what_to_change():
    with pytest.warns(ConvergenceWarning) as rec:
        msg = convergence_warning("LMNN", max_iter=50, tol=1e-5,
                                  history=[100.0] + [90.0] * 10 + [89.1])
    text = str(rec[0].message)
    assert text == msg
    assert text.startswith("[LMNN] did not converge within max_iter=50 iterations")
    assert "Increase max_iter (now 50) or tol (now 1e-05)" in text
    assert "changed by 1 % over the last 10 iterations" in text


def test_convergence_warning_other_units_and_detail():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        convergence_warning("MetricNearness", max_iter=7, unit="oracle calls",
                            detail="largest violation 1.2e-03")
    text = str(rec[0].message)
    assert rec[0].category is ConvergenceWarning
    assert "max_iter=7 oracle calls: largest violation 1.2e-03." in text
    assert text.endswith("Increase max_iter (now 7).")


def _table(out, name):
    """Header fields and data rows of one estimator's verbose table."""
    lines = [line[len(name) + 3:] for line in out.splitlines()
             if line.startswith(f"[{name}] ")]
    head = next(i for i, line in enumerate(lines)
                if line.split()[:1] == ["Iteration"])
    rows = [line.split() for line in lines[head + 2:]
            if line.split() and line.split()[0].isdigit()]
    return lines[head].split(), rows


@pytest.mark.parametrize("name", ["MetricNearness", "CorrelationClustering"])
def test_project_and_forget_tables_report_oracle_active_violation_residual(
        name, capsys):
    # both estimators on the Project-and-Forget driver print, per
    # oracle call, the active-set size, the largest violation and the duals
    # residual, in the shared FitReport format (one row per oracle call)
    import numpy as np

    from metric_estimators import CorrelationClustering, MetricNearness

    rng = np.random.default_rng(0)
    A = np.triu(rng.standard_normal((12, 12)), 1)
    A = A + A.T
    est = (MetricNearness(verbose=2) if name == "MetricNearness"
           else CorrelationClustering(verbose=2, random_state=0))
    est.fit(np.abs(A) if name == "MetricNearness" else A)
    header, rows = _table(capsys.readouterr().out, name)
    # CorrelationClustering's own words for the driver's columns, and its own
    objective, active, added = (("Objective", "Active", "Added")
                                if name == "MetricNearness"
                                else ("LP-objective", "Constraints", "New"))
    own = () if name == "MetricNearness" else ("Gamma", "Gap", "Search")
    for column in ("Iteration", objective, "Violation", "Residual",
                   active, added, "Passes", *own, "Time(s)"):
        assert column in header
    assert header[-1] == "Time(s)"
    assert all(len(r) == len(header) for r in rows)
    # one row per oracle call (CorrelationClustering: over every stage)
    assert len(rows) == len(est.history_["objective"]) >= 1
    if name == "MetricNearness":
        assert len(rows) == est.n_iter_
    col = {c: header.index(c) for c in header}
    # the printed values are the recorded ones
    hist = est.history_
    assert [int(r[col[active]]) for r in rows] == list(hist["n_active"])
    np.testing.assert_allclose([float(r[col[objective]]) for r in rows],
                               hist["objective"], rtol=1e-6, atol=1e-300)
    np.testing.assert_allclose(
        [float(r[col["Violation"]]) for r in rows], hist["max_violation"],
        rtol=1e-3)
    np.testing.assert_allclose(
        [float(r[col["Residual"]]) for r in rows], hist["residual"],
        rtol=1e-3)
