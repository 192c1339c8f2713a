"""Every Python block of README.md and the docs' entry pages runs as written.

Blocks of one file run in order, in one fresh interpreter and one namespace
(later blocks may use names defined by earlier ones, as a reader would), with
warnings shown but not failing.  A block whose first line is ``# slow`` is
skipped here and run only with ``pytest -m slow``.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = ["README.md", "docs/getting_started.rst", "docs/index.rst"]
SLOW_MARK = "# slow"


def python_blocks(path):
    """The Python code blocks of a Markdown or reStructuredText file, in order."""
    text = (ROOT / path).read_text(encoding="utf-8")
    if path.endswith(".md"):
        return [m.group(1) for m in re.finditer(r"^```python\n(.*?)^```", text,
                                                 re.S | re.M)]
    blocks = []
    for m in re.finditer(r"^( *)\.\. code-block:: python\n((?:\1 +\S.*\n|\s*\n)+)",
                         text, re.M):
        lines = m.group(2).splitlines()
        body = [ln for ln in lines if ln.strip()]
        indent = min(len(ln) - len(ln.lstrip()) for ln in body)
        blocks.append("\n".join(ln[indent:] for ln in lines).strip() + "\n")
    return blocks


def test_blocks_are_found():
    # the extraction itself: a regression here would make the test vacuous
    assert len(python_blocks("README.md")) >= 2
    assert len(python_blocks("docs/getting_started.rst")) >= 3
    assert len(python_blocks("docs/index.rst")) == 1


def _run(blocks):
    code = "\n".join(blocks)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, (
        f"--- code ---\n{code}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n"
        f"{proc.stderr}")
    return proc.stdout


@pytest.mark.parametrize("path", FILES)
def test_python_blocks_run(path):
    blocks = [b for b in python_blocks(path) if not b.startswith(SLOW_MARK)]
    assert blocks
    _run(blocks)


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES)
def test_python_blocks_run_including_slow(path):
    _run(python_blocks(path))


def test_undefined_names_fail():
    # the runner fails on the README's former snippet, which used undefined X, y
    with pytest.raises(AssertionError, match="NameError"):
        _run(["from metric_estimators import LMNN\nLMNN().fit(X, y)\n"])


def test_triplets_guide_example_prints_what_it_says_without_warnings():
    (block,) = python_blocks("docs/user_guide/triplets.rst")
    out = _run(["import warnings\nwarnings.simplefilter('error')\n", block]).split("\n")
    out = [line for line in out if line]
    assert len(out) == block.count("print(") == 5
    for line in out:  # each printed line is the comment next to its print
        assert f"# {line}" in block, line
