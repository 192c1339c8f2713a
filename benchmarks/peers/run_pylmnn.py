"""Runner for PyLMNN (LMNN only) in its own venv."""

import sys

import _common

IMPL = "pylmnn"


def load():
    """Import PyLMNN; return its version and the learner factory."""
    from importlib.metadata import version

    from pylmnn import LargeMarginNearestNeighbor

    def build(algo, params):
        """PyLMNN's defaults, with n_neighbors=3 and a fixed seed."""
        if algo == "lmnn":
            return LargeMarginNearestNeighbor(**{"n_neighbors": 3, "random_state": 0, **params})
        raise _common.unsupported(IMPL, algo)

    return version("PyLMNN"), build


if __name__ == "__main__":
    sys.exit(_common.main(IMPL, load))
