"""metric_estimators: fast, scikit-learn compatible classical metric learning.

The estimators are imported on first access (PEP 562 module ``__getattr__``):
``import metric_estimators`` loads neither numba nor any kernel, and
``from metric_estimators import LMNN`` loads only LMNN's module, whose numba
kernels load from the cache when a problem first needs them.  Fits run on
the kernels' numpy twins while the kernels they need are not compiled, and
start compiling them in a background process; later fits run on the
compiled kernels (:func:`metric_estimators._backend.choose`).  ``python -m
metric_estimators.warmup`` compiles every kernel into numba's on-disk cache
at once.
"""

import importlib

from . import exceptions
from .base import BaseMetricLearner, MahalanobisMixin
from .constraints import Constraints, positive_negative_pairs, wrap_pairs

__version__ = "0.1.0.dev0"

# public name -> module that defines it (imported when the name is first used)
_LAZY = {
    "Covariance": ".covariance",
    "ITML": ".itml",
    "ITML_Supervised": ".itml",
    "LFDA": ".lfda",
    "LMNN": ".lmnn",
    "LSML": ".lsml",
    "LSML_Supervised": ".lsml",
    "MLKR": ".mlkr",
    "MMC": ".mmc",
    "MMC_Supervised": ".mmc",
    "NCA": ".nca",
    "RCA": ".rca",
    "RCA_Supervised": ".rca",
    "SCML": ".scml",
    "SCML_Supervised": ".scml",
    "SDML": ".sdml",
    "SDML_Supervised": ".sdml",
    "LODML": ".ordinal",
    "OMDML": ".ordinal",
    "ProjectAndForget": ".project_and_forget",
    "MetricNearness": ".metric_nearness",
    "CorrelationClustering": ".correlation_clustering",
}

__all__ = [
    # Mahalanobis learners (metric-learn's names)
    "Covariance", "ITML", "ITML_Supervised", "LFDA", "LMNN", "LSML",
    "LSML_Supervised", "MLKR", "MMC", "MMC_Supervised", "NCA", "RCA",
    "RCA_Supervised", "SCML", "SCML_Supervised", "SDML", "SDML_Supervised",
    # ordered labels, Project-and-Forget
    "LODML", "OMDML", "ProjectAndForget", "MetricNearness",
    "CorrelationClustering",
    # for users' own learners and weak supervision
    "BaseMetricLearner", "MahalanobisMixin", "Constraints",
    "positive_negative_pairs", "wrap_pairs", "exceptions",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
