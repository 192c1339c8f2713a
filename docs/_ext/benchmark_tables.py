"""Sphinx directive ``benchmark-table``: a table rendered from a result file.

Every number on the benchmarks page comes from ``benchmarks/results/<stem>.json``,
read when the documentation is built, never copied by hand::

    .. benchmark-table:: lmnn_small
       :columns: data set | dataset; implementation | impl; fit (s) | fit_time | {:.3f}
       :where: impl = ours, pylmnn; dataset = digits

``:columns:`` lists ``header | key [| format]`` entries separated by ``;``: the
key is a field of the row (``params.solver``, ``loadavg_start.0`` reach into
a mapping or a list), the format a :meth:`str.format` string (default
``{}``); ``note`` is the row's error (``timeout (600 s)``; its first line,
at most 100 characters), and a missing
value prints as an en dash.  ``:where:`` keeps the rows whose fields equal one
of the listed values (compared as text).  Below the table: the commands that
produced its rows, their dates and their load averages.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
MISSING = "\u2013"


def field(row: dict, key: str):
    """``row[key]``, where ``key`` may reach into mappings and lists with dots."""
    value = row
    for part in key.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def cell(row: dict, key: str, fmt: str) -> str:
    if key == "note":  # the row's error, its first line and at most 100 characters
        note = str(row.get("error") or "").splitlines()[0] if row.get("error") else ""
        return note if len(note) <= 100 else note[:99] + "\u2026"
    value = field(row, key)
    if value is None or (isinstance(value, float) and value != value and fmt != "{}"):
        return MISSING if not row.get("error") else ""
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def parse_columns(text: str) -> list[tuple[str, str, str]]:
    columns = []
    for entry in text.split(";"):
        parts = [p.strip() for p in entry.split("|")]
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"column {entry.strip()!r}: expected 'header | key [| format]'")
        columns.append((parts[0], parts[1], parts[2] if len(parts) == 3 else "{}"))
    return columns


def parse_where(text: str | None) -> list[tuple[str, set[str]]]:
    out = []
    for cond in (text or "").split(";"):
        if cond.strip():
            key, _, values = cond.partition("=")
            out.append((key.strip(), {v.strip() for v in values.split(",")}))
    return out


def load_rows(stem: str) -> list[dict]:
    path = RESULTS / f"{stem}.json"
    with open(path) as fh:
        return json.load(fh)["rows"]


def provenance(rows: list[dict], stem: str) -> list[str]:
    """Lines (reStructuredText) naming the result file, commands, dates and loads."""
    commands, dates, loads = [], set(), []
    for row in rows:
        run = row.get("run") or {}
        cmd = run.get("command")
        if cmd and cmd not in commands:
            commands.append(cmd)
        if run.get("date"):
            dates.add(run["date"][:10])
        load = field(row, "loadavg_start.0")
        if isinstance(load, (int, float)):
            loads.append(load)
    lines = [f"From ``benchmarks/results/{stem}.json``"]
    if dates:
        lines[0] += f", measured on {', '.join(sorted(dates))}"
    if loads:
        lines[0] += (f" (1-minute load average at the start of a job: {min(loads):.1f}"
                     + (f"-{max(loads):.1f}" if max(loads) > min(loads) else "") + ")")
    lines[0] += "; produced by:"
    lines.append("")
    for cmd in commands or ["(no command recorded)"]:
        lines += [".. code-block:: bash", "", f"   {cmd}", ""]
    return lines


class BenchmarkTable(SphinxDirective):
    required_arguments = 1
    option_spec = {"columns": directives.unchanged_required,
                   "where": directives.unchanged,
                   "caption": directives.unchanged}

    def run(self):
        stem = self.arguments[0]
        path = RESULTS / f"{stem}.json"
        self.env.note_dependency(str(path))
        try:
            rows = load_rows(stem)
            columns = parse_columns(self.options["columns"])
        except (OSError, ValueError, KeyError) as exc:
            raise self.error(f"benchmark-table {stem}: {exc}") from exc
        for key, values in parse_where(self.options.get("where")):
            rows = [r for r in rows if str(field(r, key)) in values]
        if not rows:
            raise self.error(f"benchmark-table {stem}: no row matches {self.options.get('where')!r}")
        text = [f".. list-table:: {self.options.get('caption', '')}".rstrip(),
                "   :header-rows: 1", ""]
        for i, row in enumerate([None, *rows]):
            for j, (header, key, fmt) in enumerate(columns):
                value = header if row is None else cell(row, key, fmt)
                prefix = "   * - " if j == 0 else "     - "
                text.append(prefix + (value.replace("*", r"\*") if value else ""))
        text.append("")
        text += provenance(rows, stem)
        container = nodes.container(classes=["benchmark-table"])
        self.state.nested_parse(StringList(text, source=str(path)), self.content_offset,
                                container)
        return [container]


def setup(app):
    app.add_directive("benchmark-table", BenchmarkTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
