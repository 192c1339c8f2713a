"""Runner for this project's ``metric_estimators`` in the project's interpreter.

The repository root goes first on ``sys.path`` so the working tree is what
gets measured, whether or not the package is installed.
"""

import subprocess
import sys
from pathlib import Path

import _common

IMPL = "ours"
REPO_ROOT = Path(__file__).resolve().parents[2]


def _git_revision() -> str:
    """Short commit of the working tree ('+dirty' if modified), or '' without git."""
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def load():
    """Import metric_estimators; return its version and the learner factory."""
    sys.path.insert(0, str(REPO_ROOT))
    import metric_estimators

    def build(algo, params):
        """Our defaults, with n_neighbors=3 and a fixed seed (as for the peers)."""
        if algo == "lmnn":
            from metric_estimators import LMNN

            return LMNN(**{"n_neighbors": 3, "random_state": 0, **params})
        if algo == "itml_supervised":
            from metric_estimators import ITML_Supervised

            return ITML_Supervised(**{"random_state": 0, **params})
        raise _common.unsupported(IMPL, algo)

    version = getattr(metric_estimators, "__version__", "dev")
    revision = _git_revision()
    return f"{version} ({revision})" if revision else version, build


if __name__ == "__main__":
    sys.exit(_common.main(IMPL, load))
