"""The tables of docs/benchmarks.rst read fields that the result files have.

Each ``benchmark-table`` directive (``docs/_ext/benchmark_tables.py``)
names a result file, the rows it keeps and the fields it shows; a field
that no kept row has would print as an empty column, so a renamed field in a
worker or a typo on the page fails here, without building the documentation.
"""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from benchmark_rows import field, keep_rows, load_rows, parse_columns  # noqa: E402

PAGE = ROOT / "docs" / "benchmarks.rst"


def directives():
    """(stem, columns text, where text) of every benchmark-table on the page."""
    out = []
    lines = PAGE.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\.\. benchmark-table:: (\S+)", line)
        if not m:
            continue
        options, current = {}, None
        for body in lines[i + 1:]:
            if not body.startswith("   "):
                break
            opt = re.match(r"   :(\w+):\s*(.*)", body)
            if opt:
                current = opt.group(1)
                options[current] = opt.group(2)
            elif current:
                options[current] += " " + body.strip()
        out.append((m.group(1), options.get("columns", ""), options.get("where", "")))
    return out


TABLES = directives()


def test_the_page_has_tables():
    assert len(TABLES) >= 20


@pytest.mark.parametrize("stem, columns, where", TABLES,
                         ids=[f"{i}-{t[0]}" for i, t in enumerate(TABLES)])
def test_every_column_has_a_value(stem, columns, where):
    rows = keep_rows(load_rows(stem), where)
    assert rows, f"{stem}: no row matches {where!r}"
    for _, key, _ in parse_columns(columns):  # a malformed column raises
        if key == "note":
            continue
        assert any(field(r, key) is not None for r in rows), \
            f"{stem}: no kept row has {key!r}"
