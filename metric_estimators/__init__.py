"""metric_estimators: fast, scikit-learn compatible classical metric learning."""

from .base import MahalanobisMixin
from .constraints import Constraints, positive_negative_pairs
from .lmnn import LMNN

__version__ = "0.1.0.dev0"

__all__ = [
    "LMNN",
    "MahalanobisMixin",
    "Constraints",
    "positive_negative_pairs",
]

from .ordinal import LODML, OMDML  # noqa: E402

__all__ += ["OMDML", "LODML"]

from .itml import ITML, ITML_Supervised  # noqa: E402

__all__ += ["ITML", "ITML_Supervised"]

from .correlation_clustering import CorrelationClustering  # noqa: E402
from .metric_nearness import MetricNearness  # noqa: E402
from .project_and_forget import ProjectAndForget  # noqa: E402

__all__ += ["MetricNearness", "CorrelationClustering", "ProjectAndForget"]
