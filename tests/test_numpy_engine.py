"""The numpy path of the Bregman engine against its numba kernels.

Small problems run the Bregman engine's projections and oracles
(:mod:`metric_estimators._kernels.numpy`) in numpy, so that their first fit
never compiles a numba kernel (MLKR's and LODML's twins: ``test_twins_gradient.py``).  Each numpy
function must give the kernel's results (to rounding), each estimator the
same solution on both paths (to its tolerance), and a small fit must not
load numba at all.
"""

import warnings

from fresh_process import assert_no_numba, modules_after
from sklearn.preprocessing import StandardScaler

from metric_estimators import (
    _backend,
)


def _both_paths(make, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _backend.use("numpy"):
            a = make().fit(*args)
        with _backend.use("numba"):
            b = make().fit(*args)
    return a, b


def _standardised(load, scale=1.0):
    X, y = load(return_X_y=True)
    return StandardScaler().fit_transform(X) * scale, y


def test_small_fits_do_not_load_numba():
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from sklearn.datasets import load_iris\n"
        "import metric_estimators as me\n"
        "from metric_estimators.ranking import make_ordinal\n"
        "X, y = load_iris(return_X_y=True)\n"
        "me.ITML_Supervised(random_state=0).fit(X, y)\n"
        "me.ProjectAndForget(random_state=0).fit(X[::2], y[::2])\n"
        "me.MLKR(random_state=0, max_iter=20).fit(X, y + 0.5)\n"
        "Xo, yo = make_ordinal(n_samples=100, n_informative=3, n_noise=2,"
        " n_levels=4, random_state=0)\n"
        "me.LODML(random_state=0).fit(Xo, yo)\n"
    )
    mods = modules_after(code)
    assert {"metric_estimators.itml", "metric_estimators.project_and_forget",
            "metric_estimators.mlkr", "metric_estimators.ordinal"} <= mods
    assert_no_numba(mods)
