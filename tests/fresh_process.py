"""Run code in a fresh interpreter and see which modules it loaded."""

import subprocess
import sys


def modules_after(code, timeout=600):
    """The names in ``sys.modules`` of a fresh process once ``code`` has run."""
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, timeout=timeout).stdout
    return set(out.split())


def assert_no_numba(mods):
    """Neither numba nor any of our numba kernel modules is among ``mods``.

    Their numpy twins may be, and so may the numba-free constants they share.
    """
    assert "numba" not in mods
    assert not any(m.startswith("metric_estimators._kernels.")
                   and not m.startswith("metric_estimators._kernels.numpy")
                   and m != "metric_estimators._kernels._constants"
                   for m in mods)
