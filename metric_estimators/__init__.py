"""metric_estimators: fast, scikit-learn compatible classical metric learning.

The estimators are imported on first access (PEP 562 module ``__getattr__``):
``import metric_estimators`` loads neither numba nor any kernel, and
``from metric_estimators import LMNN`` loads only LMNN's module, whose numba
kernels load from the cache when it first needs them.  ``python -m
metric_estimators.warmup`` compiles every kernel into numba's on-disk cache.
"""

import importlib

from . import exceptions
from .base import BaseMetricLearner, MahalanobisMixin
from .constraints import Constraints, positive_negative_pairs, wrap_pairs

__version__ = "0.1.0.dev0"

# public name -> module that defines it (imported when the name is first used)
_LAZY = {
    "LMNN": ".lmnn",
    "OMDML": ".ordinal",
    "LODML": ".ordinal",
    "ITML": ".itml",
    "ITML_Supervised": ".itml",
    "MetricNearness": ".metric_nearness",
    "CorrelationClustering": ".correlation_clustering",
    "ProjectAndForget": ".project_and_forget",
}

__all__ = [
    "LMNN",
    "BaseMetricLearner",
    "MahalanobisMixin",
    "Constraints",
    "exceptions",
    "positive_negative_pairs",
    "wrap_pairs",
    "OMDML",
    "LODML",
    "ITML",
    "ITML_Supervised",
    "MetricNearness",
    "CorrelationClustering",
    "ProjectAndForget",
]

# metric-learn names that have no learner here yet: a clear ImportError that
# points to the migration page instead of Python's bare "cannot import name"
_NOT_YET = frozenset({
    "NCA", "LFDA", "MLKR", "RCA", "RCA_Supervised", "MMC", "MMC_Supervised",
    "SDML", "SDML_Supervised", "LSML", "LSML_Supervised", "SCML",
    "SCML_Supervised", "Covariance",
})


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name in _NOT_YET:
        raise ImportError(
            f"metric_estimators has no {name} yet (it is a metric-learn "
            "learner that is planned here). See the migration page, "
            "docs/migration.rst ('metric-learn learners not yet here'), for "
            "what to use meanwhile, e.g. sklearn.neighbors."
            "NeighborhoodComponentsAnalysis for NCA."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
