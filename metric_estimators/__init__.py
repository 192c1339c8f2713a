"""metric_estimators: fast, scikit-learn compatible classical metric learning."""

from . import exceptions
from .base import BaseMetricLearner, MahalanobisMixin
from .constraints import Constraints, positive_negative_pairs, wrap_pairs
from .correlation_clustering import CorrelationClustering
from .covariance import Covariance
from .itml import ITML, ITML_Supervised
from .lfda import LFDA
from .lmnn import LMNN
from .lsml import LSML, LSML_Supervised
from .metric_nearness import MetricNearness
from .mlkr import MLKR
from .mmc import MMC, MMC_Supervised
from .nca import NCA
from .ordinal import LODML, OMDML
from .project_and_forget import ProjectAndForget
from .rca import RCA, RCA_Supervised
from .scml import SCML, SCML_Supervised
from .sdml import SDML, SDML_Supervised

__version__ = "0.1.0.dev0"

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
