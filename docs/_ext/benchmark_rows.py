"""The rows behind a ``benchmark-table``: reading, selecting and formatting them.

Sphinx-free, so that the test suite checks the benchmarks page's tables with
the same code the directive (:mod:`benchmark_tables`) renders them with.
"""

from __future__ import annotations

import json
from pathlib import Path

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
    """``[(key, values)]`` from ``"key = v1, v2; key2 = v3"``."""
    out = []
    for cond in (text or "").split(";"):
        if cond.strip():
            key, _, values = cond.partition("=")
            out.append((key.strip(), {v.strip() for v in values.split(",")}))
    return out


def keep_rows(rows: list[dict], where: str | None) -> list[dict]:
    """The rows whose fields equal one of the listed values (compared as text)."""
    for key, values in parse_where(where):
        rows = [r for r in rows if str(field(r, key)) in values]
    return rows


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
