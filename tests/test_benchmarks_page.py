"""The tables of docs/benchmarks.rst read fields that the result files have.

Each ``benchmark-table`` directive (``docs/_ext/benchmark_tables.py``)
names a result file, the rows it keeps and the fields it shows; a field
that no kept row has would print as an empty column, so a renamed field in a
worker or a typo on the page fails here, without building the documentation.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.rst"
RESULTS = ROOT / "benchmarks" / "results"


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


def field(row, key):
    value = row
    for part in key.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


TABLES = directives()


def test_the_page_has_tables():
    assert len(TABLES) >= 20


@pytest.mark.parametrize("stem, columns, where", TABLES,
                         ids=[f"{i}-{t[0]}" for i, t in enumerate(TABLES)])
def test_every_column_has_a_value(stem, columns, where):
    rows = json.loads((RESULTS / f"{stem}.json").read_text())["rows"]
    for cond in filter(str.strip, where.split(";")):
        key, _, values = cond.partition("=")
        wanted = {v.strip() for v in values.split(",")}
        rows = [r for r in rows if str(field(r, key.strip())) in wanted]
    assert rows, f"{stem}: no row matches {where!r}"
    for entry in columns.split(";"):
        parts = [p.strip() for p in entry.split("|")]
        assert len(parts) in (2, 3) and all(parts), entry
        key = parts[1]
        if key == "note":
            continue
        assert any(field(r, key) is not None for r in rows), \
            f"{stem}: no kept row has {key!r}"
