"""Relevant Component Analysis: RCA and RCA_Supervised.

Shental, N., Hertz, T., Weinshall, D. and Pavel, M. (2002). Adjustment
learning and relevant component analysis. ECCV 2002, 776-790.
"""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from ._docstrings import fill_doc
from ._linalg import power_of_two_scale
from ._problems.rca import chunklet_covariances, rca_components
from ._reporting import FitReport
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._validation import (
    check_n_components,
    renamed_parameter,
    validate_labelled_points,
    validate_points,
)
from .base import MahalanobisMixin
from .constraints import Constraints

__all__ = ["RCA", "RCA_Supervised"]


class RCA(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Relevant Component Analysis: whiten the within-chunklet covariance.

    RCA (Shental et al., ECCV 2002) learns from *chunklets*, small groups of
    points known to belong to one (unnamed) class.  The within-chunklet
    covariance ``C`` measures the variability that is irrelevant to the
    classes; the learned map ``L = C^{-1/2}`` whitens it, so that directions
    of large within-chunklet spread are shrunk and the rest (relevant
    directions) are stretched.  The metric is ``M = C^{-1}``.  With
    ``n_components < n_features`` the data are first reduced to the
    directions of smallest within-chunklet relative to total variance (the
    paper's Fisher-like step), then whitened there.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the embedding; None means ``n_features``.
    preprocessor : array-like, callable or None, default=None
        If given, ``X`` may be 1-D indices that it maps to points.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The linear map (``C^{-1/2}``, symmetric, when no reduction applies).
    n_iter_ : int
        Always 1 (closed form).
    n_features_in_ : int

    Notes
    -----
    Cost ``O(p n_features^2 + n_features^3)`` for ``p`` chunklet points.
    Rank deficiency: directions in which the points of ``X`` do not vary at
    all (e.g. constant or linearly dependent features) get weight 0,
    silently: all points have the same coordinate there, so no distance
    between them changes and no information is discarded.  A direction in
    which the points vary but no chunklet does has no finite RCA weight
    (``C`` is singular); it gets weight 0 (the pseudo-inverse), which
    discards that variation, with a UserWarning that says what to do: give
    more or larger chunklets, or reduce the dimension (``n_components`` or
    a PCA).  metric-learn 0.7.0 warns and returns NaN in both cases.

    Examples
    --------
    >>> import numpy as np
    >>> from metric_estimators import RCA
    >>> X = np.array([[-0.05, 3.0], [0.05, -3.0], [0.1, -3.55], [-0.1, 3.55],
    ...               [-0.95, -0.05], [0.95, 0.05], [0.4, 0.05], [-0.4, -0.05]])
    >>> chunks = [0, 0, 1, 1, 2, 2, 3, 3]
    >>> RCA().fit(X, chunks).components_.shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "preprocessor": ["array-like", callable, None],
    }

    def __init__(self, n_components=None, preprocessor=None):
        self.n_components = n_components
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, chunks):
        """Learn the metric from chunklets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        chunks : array-like of shape (n_samples,), int
            ``chunks[i] = j >= 0``: point ``i`` is in chunklet ``j``;
            ``-1``: in no chunklet.

        Returns
        -------
        self : RCA
        """
        report = FitReport(self, verbose=0)
        self._check_preprocessor()
        X, chunks = validate_points(self, self._points(X), chunks,
                                    ensure_min_samples=2)
        chunks = _check_chunks(chunks)
        self._solve(X, chunks, report)
        return self

    def _solve(self, X, chunks, report):
        """Covariances -> map; set the fitted attributes; warn."""
        X = X.astype(np.float64, copy=False)
        n_components = check_n_components(self.n_components, X.shape[1])
        s = power_of_two_scale(X)
        C, S_t, _ = chunklet_covariances(X / s if s != 1.0 else X, chunks)
        L, n_deficient, rank = rca_components(C, S_t, n_components)
        if rank == 0:
            raise ValueError("The points are all identical: RCA has "
                             "nothing to learn from.")
        # directions outside the range of S_t (rank < n_features: constant or
        # linearly dependent features) get weight 0 silently: every point has
        # the same coordinate there, so nothing is discarded
        if n_deficient:
            warnings.warn(
                f"[{type(self).__name__}] the within-chunklet covariance is "
                f"singular: {n_deficient} direction(s) in which the data vary "
                "have no within-chunklet variance, and get weight 0 (pseudo-"
                "inverse) instead of an infinite one. Use more or larger "
                "chunklets (n_chunks, chunk_size for RCA_Supervised), or reduce "
                "the dimension first (n_components, or sklearn.decomposition."
                "PCA).", UserWarning, stacklevel=4)
        self.components_ = L / s
        self.n_iter_ = 1
        report.finish("solved")
        return self


def _check_chunks(chunks):
    """Chunk labels as int64: integers >= -1 with at least one chunklet."""
    chunks = np.asarray(chunks)
    if chunks.dtype.kind == "O":  # numbers in an object array are fine
        try:
            chunks = chunks.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if chunks.dtype.kind == "f":
        if not np.all(np.isfinite(chunks)) or np.any(chunks != np.round(chunks)):
            raise ValueError("chunks must hold integer chunk indices (or -1), "
                             "got non-integer values.")
    elif chunks.dtype.kind not in "iub":
        raise ValueError(f"Unknown label type: chunks must hold integer chunk "
                         f"indices (or -1), got dtype {chunks.dtype}.")
    chunks = chunks.astype(np.int64)
    if np.any(chunks < -1):
        raise ValueError("chunks must be >= -1 (-1: the point is in no chunklet).")
    ids, counts = np.unique(chunks[chunks >= 0], return_counts=True)
    if not np.any(counts >= 2):
        raise ValueError("RCA needs at least one chunklet of 2 or more points; "
                         "chunks has none.")
    return chunks


class RCA_Supervised(RCA):
    """RCA with chunklets from class labels.

    By default every class is one chunklet: the within-chunklet covariance
    is then the pooled within-class covariance of all the training points,
    and the fit is deterministic.  Full labels are the limiting case of the
    paper's equivalence constraints (each class is a maximal chunklet), and
    using them all removes the seed-to-seed lottery of a few random pairs
    per class on small data.  With ``n_chunks`` or ``chunk_size`` given,
    ``n_chunks`` disjoint chunklets of ``chunk_size`` same-class points are
    drawn instead (:meth:`metric_estimators.Constraints.chunks`,
    reproducible with ``random_state``), as metric-learn does.  The accuracy
    of both rules on the accuracy panel: ``benchmarks/results/accuracy_panel.md``.

    Parameters
    ----------
    n_components : int or None, default=None
        As in :class:`RCA`.
    n_chunks : int or None, default=None
        Number of chunklets to draw.  None: whole classes if ``chunk_size``
        is None too; otherwise every disjoint chunklet of ``chunk_size``
        points the classes can supply (``sum_c floor(n_c / chunk_size)``
        over the class sizes ``n_c``).  An int larger than that supply draws
        as many as the classes allow, with a warning.  (metric-learn 0.7.0
        draws 100 chunklets of 2, which raises on small data sets such as
        wine and on digits leaves the within-chunklet covariance singular;
        pass ``n_chunks=100, chunk_size=2`` to draw as it does.)
    chunk_size : int or None, default=None
        Points per drawn chunklet.  None: whole classes when ``n_chunks`` is
        None, chunklets of 2 (metric-learn's default) when it is given.
    preprocessor : array-like, callable or None, default=None
        As in :class:`RCA`.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of the chunklets (unused with whole classes).
    num_chunks : int, default="deprecated"
        metric-learn's former name of ``n_chunks``: accepted with a
        FutureWarning and used as ``n_chunks``.

    Attributes
    ----------
    components_, n_iter_, n_features_in_
        As in :class:`RCA`.
    chunks_ : ndarray of shape (n_samples,)
        The chunk index of each training point (-1: none); with whole
        classes, the index of its class in ``np.unique(y)``.

    Notes
    -----
    ``C`` has rank at most ``n_chunks * (chunk_size - 1)``; below
    ``n_features`` it is singular (see :class:`RCA` for what happens then).
    Every value of ``y`` is a class, ``-1`` included (as for
    :class:`~metric_estimators.ITML_Supervised`; metric-learn treats ``-1``
    as "unknown": use :class:`RCA` with chunks from
    :class:`~metric_estimators.Constraints` for partial labels).
    """

    _parameter_constraints: dict = {
        **RCA._parameter_constraints,
        "n_chunks": [Interval(Integral, 1, None, closed="left"), None],
        "chunk_size": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
        "num_chunks": [Interval(Integral, 1, None, closed="left"),
                       StrOptions({"deprecated"})],
    }

    def __init__(self, n_components=None, n_chunks=None, chunk_size=None,
                 preprocessor=None, random_state=None, num_chunks="deprecated"):
        super().__init__(n_components=n_components, preprocessor=preprocessor)
        self.n_chunks = n_chunks
        self.chunk_size = chunk_size
        self.random_state = random_state
        self.num_chunks = num_chunks

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y):
        """Form chunklets from the labels and learn the metric.

        Parameters
        ----------
        %(labelled_points)s

        Returns
        -------
        self : RCA_Supervised
        """
        report = FitReport(self, verbose=0)
        n_chunks = renamed_parameter(self, "num_chunks", "n_chunks", None)
        self._check_preprocessor()
        X, y, (_, y_idx, counts) = validate_labelled_points(
            self, self._points(X), y, minus_one_note=True)
        check_n_components(self.n_components, X.shape[1])
        if n_chunks is None and self.chunk_size is None:
            chunks = self._whole_classes(y_idx, counts)
        else:
            chunks = self._drawn_chunklets(y_idx, counts, n_chunks)
        self._solve(X, chunks, report)
        self.chunks_ = chunks
        return self

    @staticmethod
    def _whole_classes(y_idx, counts):
        """Every class one chunklet."""
        if not np.any(counts >= 2):
            raise ValueError("Every class has a single point: no chunklet of 2 "
                             "or more points exists, and RCA has nothing to "
                             "learn from.")
        return np.asarray(y_idx, dtype=np.int64)

    def _drawn_chunklets(self, y_idx, counts, n_chunks):
        """``n_chunks`` disjoint random chunklets of ``chunk_size`` points."""
        chunk_size = 2 if self.chunk_size is None else self.chunk_size
        capacity = int((counts // chunk_size).sum())
        if capacity == 0:
            raise ValueError(f"Every class has fewer than chunk_size="
                             f"{chunk_size} points (e.g. a single sample): no "
                             "chunklet can be drawn. Lower chunk_size.")
        if n_chunks is None:
            n_chunks = capacity
        elif capacity < n_chunks:
            warnings.warn(
                f"The classes allow only {capacity} disjoint chunklets of "
                f"chunk_size={chunk_size} points, fewer than n_chunks="
                f"{n_chunks}; using {capacity}.", UserWarning, stacklevel=4)
            n_chunks = capacity
        rng = check_random_state(self.random_state)
        # class indices: a label -1 is a class here, not "unknown"
        return Constraints(y_idx).chunks(n_chunks=n_chunks, chunk_size=chunk_size,
                                         random_state=rng)
