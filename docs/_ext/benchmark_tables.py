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

from benchmark_rows import RESULTS, cell, keep_rows, load_rows, parse_columns, provenance
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


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
        rows = keep_rows(rows, self.options.get("where"))
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
