"""Baseline runner: 3-NN in the standardised input space, nothing learned."""

import sys

import _common

IMPL = "euclidean"


def load():
    """Return scikit-learn's version and a factory that learns nothing."""
    import sklearn

    def build(algo, params):
        """No learner for any algorithm: the untransformed space is the baseline."""
        return None

    return f"scikit-learn {sklearn.__version__}", build


if __name__ == "__main__":
    sys.exit(_common.main(IMPL, load))
