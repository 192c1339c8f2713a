"""Runner for metric-learn (LMNN, ITML_Supervised) in its own venv."""

import sys

import _common

IMPL = "metric_learn"


def load():
    """Import metric-learn; return its version and the learner factory."""
    import metric_learn

    def build(algo, params):
        """metric-learn's defaults, with n_neighbors=3 and a fixed seed."""
        if algo == "lmnn":
            return metric_learn.LMNN(**{"n_neighbors": 3, "random_state": 0, **params})
        if algo == "itml_supervised":
            return metric_learn.ITML_Supervised(**{"random_state": 0, **params})
        raise _common.unsupported(IMPL, algo)

    return metric_learn.__version__, build


if __name__ == "__main__":
    sys.exit(_common.main(IMPL, load))
