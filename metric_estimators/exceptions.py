"""Exceptions raised by metric_estimators, for ``except`` clauses.

Both are subclasses of the built-in exceptions that the same failures raised
before they existed, so existing ``except ValueError`` clauses keep working.
"""

from numpy.linalg import LinAlgError

__all__ = ["NonPSDError", "PreprocessorError"]


class NonPSDError(LinAlgError):
    """A matrix that must be positive (semi-)definite is not.

    Raised for a singular or indefinite ``prior`` or ``init``, or a learned
    matrix that is not positive semi-definite.  A subclass of
    :class:`numpy.linalg.LinAlgError` (itself a :class:`ValueError`), as in
    metric-learn.
    """


class PreprocessorError(ValueError):
    """The ``preprocessor`` failed to turn indices into points.

    The original exception is chained as ``__cause__``.
    """
