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

from .covariance import Covariance  # noqa: E402
from .lfda import LFDA  # noqa: E402
from .nca import NCA  # noqa: E402
from .rca import RCA, RCA_Supervised  # noqa: E402
from .mlkr import MLKR  # noqa: E402
from .mmc import MMC, MMC_Supervised  # noqa: E402
from .sdml import SDML, SDML_Supervised  # noqa: E402

__all__ += ["NCA", "LFDA", "RCA", "RCA_Supervised", "Covariance", "MLKR",
            "MMC", "MMC_Supervised", "SDML", "SDML_Supervised"]

# metric-learn names that have no learner here yet: a clear ImportError that
# points to the migration page instead of Python's bare "cannot import name"
_NOT_YET = frozenset({
    "LSML", "LSML_Supervised", "SCML", "SCML_Supervised",
})


def __getattr__(name):
    if name in _NOT_YET:
        raise ImportError(
            f"metric_estimators has no {name} yet (it is a metric-learn "
            "learner that is planned here). See the migration page, "
            "docs/migration.rst ('metric-learn learners not yet here'), for "
            "what to use meanwhile."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
