"""Runner for mlpack's LMNN Python binding in its own venv."""

import sys

import _common

IMPL = "mlpack"

# mlpack's default optimizer is AMSGrad; the project's reference point was
# measured with L-BFGS, so L-BFGS is used here. seed=0 would mean "seed from
# the clock", hence seed=1.
DEFAULTS = {"k": 3, "optimizer": "lbfgs", "seed": 1}


class MlpackLMNN:
    """fit/transform adapter around the functional ``mlpack.lmnn`` binding."""

    def __init__(self, lmnn, **params):
        self._lmnn = lmnn
        self.params = params

    def fit(self, X, y):
        """Learn the linear map L (r x d).

        The binding transposes every matrix it returns (mlpack is
        column-major), so ``output`` holds L.T: ``transformed_data`` equals
        ``X @ output``.
        """
        result = self._lmnn(input_=X, labels=y, **self.params)
        self.components_ = result["output"].T
        return self

    def transform(self, X):
        """Map points with the learned L: ``X @ L.T``."""
        return X @ self.components_.T


def load():
    """Import mlpack; return its version and the learner factory."""
    from importlib.metadata import version

    import mlpack

    def build(algo, params):
        """mlpack defaults, with k=3, L-BFGS and a fixed seed."""
        if algo == "lmnn":
            return MlpackLMNN(mlpack.lmnn, **{**DEFAULTS, **params})
        raise _common.unsupported(IMPL, algo)

    return version("mlpack"), build


if __name__ == "__main__":
    sys.exit(_common.main(IMPL, load))
