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


# ------------------------------------------------- result files and their links

RESULTS = ROOT / "benchmarks" / "results"
#: where numbers are published or choices justified: every results link in
#: these files must resolve, and every current result file must be named here
LINKING = [ROOT / "README.md", ROOT / "benchmarks" / "README.md",
           RESULTS / "archive" / "README.md",
           *sorted((ROOT / "docs").rglob("*.rst")), *sorted((ROOT / "docs").rglob("*.md")),
           *sorted((ROOT / "metric_estimators").rglob("*.py"))]
LINK = re.compile(r"(?<![\w/])(?:benchmarks/)?results/((?:archive/)?[A-Za-z0-9_]+\.(?:md|json))")


def _linking_texts():
    return {path: path.read_text() for path in LINKING
            if path.is_file() and "_build" not in path.parts}


def test_every_results_link_resolves():
    """A link to a file that does not exist is allowed only where its paragraph (or
    table row) says that the command has not been run yet."""
    missing = []
    for path, text in _linking_texts().items():
        for block in re.split(r"\n\s*\n|\n(?=\|)", text):
            pending = re.search(r"not (?:run|measured) yet", block)
            missing += [(str(path.relative_to(ROOT)), name) for name in LINK.findall(block)
                        if not (RESULTS / name).is_file() and not pending]
    assert not missing, missing


def test_every_current_result_file_backs_something():
    """A file of results/ is named by a page, the code or a table of docs/benchmarks.rst;
    superseded runs belong in results/archive/."""
    texts = "\n".join(_linking_texts().values())
    tables = {stem for stem, _, _ in TABLES}
    unused = [path.name for path in sorted(RESULTS.glob("*.md"))
              if path.stem not in tables
              and not re.search(rf"(?<![\w/])(?:benchmarks/)?results/{path.stem}\.(?:md|json)\b",
                                texts)]
    assert not unused, f"not quoted anywhere (archive them?): {unused}"


def test_the_readme_lists_the_workers_that_import_internal_modules():
    internal = re.compile(r"^\s*(?:from|import)\s+metric_estimators(?:\.\w+)*\.(?:_\w+|solvers)\b"
                          r"|^\s*from\s+metric_estimators(?:\.\w+)*\s+import\s+(?:.*,\s*)?_\w+",
                          re.M)
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    listed = set(re.findall(r"^\| `(\w+)` \| [^|]*`_", readme, re.M))
    importing = {path.stem for path in (ROOT / "benchmarks" / "workers").glob("*.py")
                 if internal.search(path.read_text())}
    assert importing, "the pattern finds no worker: it is broken"
    assert importing <= listed, f"not in benchmarks/README.md's table: {importing - listed}"
    assert listed <= {p.stem for p in (ROOT / "benchmarks" / "workers").glob("*.py")}
