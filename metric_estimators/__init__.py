"""metric_estimators: fast, scikit-learn compatible classical metric learning."""

from . import exceptions
from .base import BaseMetricLearner, MahalanobisMixin
from .constraints import Constraints, positive_negative_pairs, wrap_pairs
from .lmnn import LMNN

__version__ = "0.1.0.dev0"

__all__ = [
    "LMNN",
    "BaseMetricLearner",
    "MahalanobisMixin",
    "Constraints",
    "exceptions",
    "positive_negative_pairs",
    "wrap_pairs",
]

from .ordinal import LODML, OMDML  # noqa: E402

__all__ += ["OMDML", "LODML"]

from .itml import ITML, ITML_Supervised  # noqa: E402

__all__ += ["ITML", "ITML_Supervised"]

from .correlation_clustering import CorrelationClustering  # noqa: E402
from .metric_nearness import MetricNearness  # noqa: E402
from .project_and_forget import ProjectAndForget  # noqa: E402

__all__ += ["MetricNearness", "CorrelationClustering", "ProjectAndForget"]

from .lsml import LSML, LSML_Supervised  # noqa: E402
from .scml import SCML, SCML_Supervised  # noqa: E402

__all__ += ["SCML", "SCML_Supervised", "LSML", "LSML_Supervised"]

# metric-learn names that have no learner here yet: a clear ImportError that
# points to the migration page instead of Python's bare "cannot import name"
_NOT_YET = frozenset({
    "NCA", "LFDA", "MLKR", "RCA", "RCA_Supervised", "MMC", "MMC_Supervised",
    "SDML", "SDML_Supervised", "Covariance",
})


def __getattr__(name):
    if name in _NOT_YET:
        raise ImportError(
            f"metric_estimators has no {name} yet (it is a metric-learn "
            "learner that is planned here). See the migration page, "
            "docs/migration.rst ('metric-learn learners not yet here'), for "
            "what to use meanwhile, e.g. sklearn.neighbors."
            "NeighborhoodComponentsAnalysis for NCA."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
