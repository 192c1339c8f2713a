"""Runner for this project's ``metric_estimators`` in the project's interpreter.

The repository root goes first on ``sys.path`` so the working tree is what
gets measured, whether or not the package is installed.
"""

import sys
from pathlib import Path

import _common

IMPL = "ours"
REPO_ROOT = Path(__file__).resolve().parents[2]


def load():
    """Import metric_estimators; return its version and the learner factory."""
    sys.path.insert(0, str(REPO_ROOT))
    import metric_estimators
    from metric_estimators import ITML_Supervised, LMNN

    def build(algo, params):
        """Our defaults, with n_neighbors=3 and a fixed seed (as for the peers)."""
        if algo == "lmnn":
            return LMNN(**{"n_neighbors": 3, "random_state": 0, **params})
        if algo == "itml_supervised":
            return ITML_Supervised(**{"random_state": 0, **params})
        raise _common.unsupported(IMPL, algo)

    return getattr(metric_estimators, "__version__", "dev"), build


if __name__ == "__main__":
    sys.exit(_common.main(IMPL, load))
