"""One verbose table and one ConvergenceWarning for every estimator.

Every estimator reports progress the same way, in the format of
scikit-learn's :class:`~sklearn.neighbors.NeighborhoodComponentsAnalysis`::

    [LMNN] target neighbours: 3 per point                       (0.02 s)
    [LMNN]  Iteration      Objective     Active    Time(s)
    [LMNN] -------------------------------------------------
    [LMNN]          1   1.234567e+03       1520       0.05
    ...
    [LMNN] converged after 37 iterations                        (0.61 s)

* every line starts with ``[ClassName]``;
* the columns have fixed formats, declared once per table;
* ``Time(s)`` and the times in phase lines are counted from the start of
  ``fit`` (the moment the :class:`FitReport` was created), set-up included;
* with ``verbose=1`` the table is throttled: the first ``head`` rows, then at
  most one row every ``interval`` seconds, and the last row, so that a fast
  fit prints a handful of lines and a long one a line a second at most;
  ``verbose >= 2`` prints every row.

* a fit that must compile numba kernels first (a cache miss) says so in
  one line, ``compiling numba kernels for <Estimator> (once per
  installation)``, or in a ``logging`` record when silent
  (:meth:`FitReport.compiling`, called by :mod:`metric_estimators._compilation`);
* long phases report from inside with :meth:`FitReport.progress`, printed
  at most once per ``interval`` seconds;
* with ``progress_bar`` (the estimator's choice; ``"auto"`` means: in a
  Jupyter notebook with ``verbose >= 1``) and `tqdm <https://tqdm.github.io>`_
  installed (an optional dependency: ``pip install tqdm``), every table row
  also advances a ``tqdm.auto`` bar (a widget in notebooks, a text bar on
  stderr elsewhere) whose postfix shows the last row's values; text lines
  then go through ``tqdm.write`` so that they do not break the bar.  Any
  estimator gets it by passing ``total`` (its ``max_iter``) to
  :class:`FitReport`.

:func:`convergence_warning` builds the one ConvergenceWarning text, which
says what to change (``max_iter`` and its current value, or ``tol``) and how
far the run was from stopping.
"""

import math
import sys
import time
import warnings

from sklearn.exceptions import ConvergenceWarning

from ._compilation import NOTICE, logger, register_fit

__all__ = ["Column", "FitReport", "convergence_warning", "make_progress_bar"]


def _in_notebook():
    """True inside a Jupyter (IPython kernel) session."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def make_progress_bar(mode, verbose, total, desc):
    """A ``tqdm.auto`` bar, or None when not wanted or tqdm is not installed.

    Parameters
    ----------
    mode : {"auto", True, False}
        ``"auto"``: a bar in Jupyter notebooks when ``verbose >= 1``; True:
        always (when tqdm is installed); False: never.
    verbose : int
        The estimator's verbosity.
    total : int or None
        Expected number of rows (e.g. ``max_iter``); None: no bar.
    desc : str
        The bar's label.
    """
    if total is None or mode is False or (
            mode == "auto" and not (verbose and _in_notebook())):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=int(total), desc=desc, leave=True, dynamic_ncols=True)


class Column:
    """A column of a verbose table: a header and a format spec for values.

    Parameters
    ----------
    name : str
        Header text.
    fmt : str
        Format spec of the values (``"d"``, ``".6e"``, ``".3e"``, ``".2f"``).
    width : int, default=None
        Column width; default ``max(len(name), 10)``.
    """

    def __init__(self, name, fmt, width=None):
        self.name = name
        self.fmt = fmt
        self.width = max(len(name), 10) if width is None else int(width)

    def format(self, value):
        """Right-aligned text of ``value`` (``-`` for None, ``nan``/``inf`` as is)."""
        if value is None:
            text = "-"
        elif isinstance(value, float) and not math.isfinite(value):
            text = str(value)
        else:
            text = format(value, self.fmt)
        return f"{text:>{self.width}}"


#: Columns that recur across estimators (same header, same format everywhere).
ITERATION = Column("Iteration", "d")
OBJECTIVE = Column("Objective", ".6e", 14)
ACTIVE = Column("Active", "d")  # active constraints / triplets
TIME = Column("Time(s)", ".2f")


class FitReport:
    """Progress output of one ``fit``: phase lines and a throttled table.

    Create it at the very start of ``fit``; every time it prints is counted
    from then.  Nothing is printed when ``verbose`` is 0.

    Parameters
    ----------
    estimator : object or str
        The estimator (its class name is the ``[prefix]``) or the prefix.
    columns : sequence of Column
        The table's columns, *without* the time column, which is appended.
    verbose : int
        0: silent; 1: phase lines and a throttled table; >= 2: every row.
    head : int, default=5
        With ``verbose=1``, the first ``head`` rows are always printed.
    interval : float, default=1.0
        With ``verbose=1``, after the first ``head`` rows, at most one row
        per ``interval`` seconds (plus the last one, see :meth:`finish`).
    stream : file-like, default=None
        Where to print; default ``sys.stdout`` at the time of printing.
    total : int or None, default=None
        Expected number of table rows (``max_iter``): enables the progress
        bar (see ``progress_bar``).
    progress_bar : {"auto", True, False}, default="auto"
        See :func:`make_progress_bar`; the bar is made at the first row.
    """

    def __init__(self, estimator, columns=(), *, verbose=0, head=5,
                 interval=1.0, stream=None, total=None, progress_bar="auto"):
        self.name = (estimator if isinstance(estimator, str)
                     else type(estimator).__name__)
        self.columns = list(columns) + [TIME]
        self.verbose = int(verbose or 0)
        self.head = int(head)
        self.interval = float(interval)
        self.stream = stream
        self.t0 = time.perf_counter()
        self._n_rows = 0
        self._header_done = False
        self._last_printed = -math.inf
        self._pending = None  # the last row, if it was not printed
        self._last_progress = 0.0  # when progress() last printed
        self.total = total
        self.progress_bar = progress_bar
        self._bar = None
        self._bar_done = False
        self._compile_announced = False
        register_fit(self)

    # -- plumbing ------------------------------------------------------------
    def elapsed(self):
        """Seconds since the report (the fit) started."""
        return time.perf_counter() - self.t0

    def _print(self, text):
        stream = sys.stdout if self.stream is None else self.stream
        if self._bar is not None:
            self._bar.write(f"[{self.name}] {text}", file=stream)
            return
        print(f"[{self.name}] {text}", file=stream, flush=True)

    def _header(self):
        header = " ".join(f"{c.name:>{c.width}}" for c in self.columns)
        self._print(header)
        self._print("-" * len(header))
        self._header_done = True

    # -- public --------------------------------------------------------------
    def phase(self, text):
        """Print a phase line (``text``, then the elapsed time).

        A table row held back by the throttle is printed first, so that the
        lines keep the order of the events they report.
        """
        if self.verbose:
            self._flush_pending()
            self._print(f"{text:<56} ({self.elapsed():.2f} s)")
            self._last_progress = self.elapsed()

    def compiling(self):
        """Say once that numba kernels are being compiled (a cache miss).

        Called by :mod:`metric_estimators._compilation` when a kernel starts
        compiling during this fit: a phase line with ``verbose >= 1``, else a
        ``logging`` record (logger ``"metric_estimators"``, INFO).
        """
        if self._compile_announced:
            return
        self._compile_announced = True
        text = NOTICE.format(name=self.name)
        if self.verbose:
            self.phase(text)
        else:
            logger.info("[%s] %s", self.name, text)

    def progress(self, text):
        """A phase line from inside a long phase, throttled.

        Printed only if ``interval`` seconds passed since the last phase or
        progress line; returns True if it was printed.
        """
        if not self.verbose or self.elapsed() - self._last_progress < self.interval:
            return False
        self.phase(text)
        return True

    def _advance(self, values):
        """Advance the progress bar by one row (made at the first row)."""
        if self._bar is None and not self._bar_done:
            self._bar = make_progress_bar(self.progress_bar, self.verbose,
                                          self.total, self.name)
            self._bar_done = True
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(" ".join(
                f"{c.name}={c.format(v).strip()}"
                for c, v in zip(self.columns[1:-1], values[1:])), refresh=False)

    def row(self, *values):
        """Record one table row; print it unless throttled.

        ``values`` are those of the columns given at construction (the time
        is added here).  Returns True if the row was printed.
        """
        self._advance(values)
        if not self.verbose:
            return False
        now = self.elapsed()
        self._n_rows += 1
        line = " ".join(c.format(v) for c, v in
                        zip(self.columns, values + (now,)))
        show = (self.verbose >= 2 or self._n_rows <= self.head
                or now - self._last_printed >= self.interval)
        if not show:
            self._pending = line
            return False
        if not self._header_done:
            self._header()
        self._print(line)
        self._last_printed = now
        self._pending = None
        return True

    def close_bar(self):
        """Close the progress bar, if any (also done by :meth:`finish`)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def finish(self, text):
        """Print the last row if it was throttled, then a closing line."""
        self.close_bar()
        if not self.verbose:
            return
        self.phase(text)

    def _flush_pending(self):
        """Print the last row if the throttle held it back."""
        if self._pending is not None:
            if not self._header_done:
                self._header()
            self._print(self._pending)
            self._pending = None


def convergence_warning(estimator, *, max_iter, unit="iterations",
                        param="max_iter", tol=None, tol_param="tol",
                        history=None, window=10, detail=None, advice=None,
                        stacklevel=3):
    """Emit the one ConvergenceWarning text: what was hit and what to change.

    Parameters
    ----------
    estimator : object or str
        The estimator (its class name prefixes the message) or the prefix.
    max_iter : int
        The iteration budget that was reached.
    unit : str, default="iterations"
        What ``max_iter`` counts ("iterations", "sweeps", "oracle calls").
    param : str, default="max_iter"
        The parameter that sets the budget.
    tol : float or None
        The tolerance the run did not meet.
    tol_param : str, default="tol"
        The parameter that sets it.
    history : sequence of float or None
        The objective per iteration; when it has at least two values, the
        message says by how much (relative) it changed over the last
        ``window`` of them.
    window : int, default=10
        See ``history``.
    detail : str or None
        One more clause, e.g. ``"largest violation 1.2e-03"``.
    advice : str or None
        What to do, when the estimator knows better than the default
        advice ("Increase max_iter (now ...) or tol (now ...)").
    stacklevel : int, default=3
        Passed to :func:`warnings.warn` (3 points at the caller of ``fit``
        when this is called from ``fit`` directly).

    Returns
    -------
    message : str
        The text that was warned.
    """
    name = estimator if isinstance(estimator, str) else type(estimator).__name__
    parts = [f"[{name}] did not converge within {param}={max_iter} {unit}"]
    reasons = []
    if history is not None and len(history) >= 2:
        h = [float(v) for v in history]
        k = min(int(window), len(h) - 1)
        old, new = h[-1 - k], h[-1]
        if math.isfinite(old) and math.isfinite(new):
            rel = abs(new - old) / max(abs(old), abs(new), 1e-300) * 100.0
            reasons.append(f"the objective changed by {rel:.3g} % over the "
                           f"last {k} {unit}")
    if detail:
        reasons.append(str(detail))
    if reasons:
        parts.append(": " + "; ".join(reasons))
    if advice is None:
        advice = f"Increase {param} (now {max_iter})"
        if tol is not None:
            advice += f" or {tol_param} (now {float(tol):.3g})"
        advice += "."
    message = "".join(parts) + ". " + advice
    warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel)
    return message
