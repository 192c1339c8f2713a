"""Old home of :class:`MetricNearness` and :class:`CorrelationClustering`.

Kept so that ``from metric_estimators.nearness import ...`` keeps working:
the estimators now live in :mod:`metric_estimators.metric_nearness` and
:mod:`metric_estimators.correlation_clustering`.
"""

from .correlation_clustering import (
    CorrelationClustering,
    correlation_clustering_cost,
    pivot_rounding,
)
from .metric_nearness import MetricNearness

__all__ = ["MetricNearness", "CorrelationClustering",
           "correlation_clustering_cost", "pivot_rounding"]
