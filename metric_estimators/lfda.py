"""Local Fisher Discriminant Analysis (LFDA).

Sugiyama, M. (2007). Dimensionality reduction of multimodal labeled data by
local Fisher discriminant analysis. Journal of Machine Learning Research 8,
1027-1061.
"""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ._docstrings import fill_doc
from ._linalg import power_of_two_scale
from ._problems.lfda import lfda_directions, local_scatter
from ._reporting import FitReport
from ._sklearn_private import Interval, StrOptions, _fit_context
from ._validation.parameters import check_n_components
from ._validation.points import validate_labelled_points
from .base import MahalanobisMixin

__all__ = ["LFDA"]


class LFDA(MahalanobisMixin, TransformerMixin, BaseEstimator):
    """Local Fisher Discriminant Analysis: a closed-form supervised embedding.

    LFDA (Sugiyama, JMLR 2007) is Fisher discriminant analysis in which the
    scatter of each same-class pair is weighted by its affinity
    ``A_ij = exp(-||x_i - x_j||^2 / (sigma_i sigma_j))`` (local scaling,
    ``sigma_i`` the distance from ``x_i`` to its ``k``-th nearest neighbour
    in its class).  Far-apart points of one class are not pulled together,
    so classes made of several clusters (multimodal classes) keep their
    structure.  The embedding maximises the local between-class scatter
    ``S_b`` against the local within-class scatter ``S_w``: the leading
    solutions of ``S_b v = lambda S_w v`` (see
    :mod:`metric_estimators._problems.lfda` for the matrices).

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the embedding; None means ``n_features``.
    k : int or None, default=None
        Neighbour used for the local scaling; None means
        ``min(7, n_features - 1)`` (at least 1), as in metric-learn (7 is the
        paper's choice).  A class with at most ``k`` points uses its
        farthest neighbour instead, with a warning.
    embedding_type : {'weighted', 'orthonormalized', 'plain'}, default='weighted'
        'plain': the eigenvectors (``v^T S_w v = 1``); 'weighted': each
        eigenvector times the square root of its eigenvalue (the paper's
        recommendation); 'orthonormalized': an orthonormal basis of their
        span (QR).
    preprocessor : array-like, callable or None, default=None
        If given, ``X`` in ``fit`` / ``transform`` may be 1-D indices that it
        maps to points.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The linear map ``L`` (rows: the embedding directions, by decreasing
        eigenvalue).  When the data span fewer than ``n_components``
        dimensions, the last rows are zero.
    eigenvalues_ : ndarray of shape (n_components,)
        Generalized eigenvalues ``lambda`` of the rows of ``components_``
        (0 for padded rows).
    k_ : int
        The ``k`` used.
    n_iter_ : int
        Always 1 (closed form).
    n_features_in_ : int

    Notes
    -----
    ``S_w`` and ``S_b`` are accumulated class by class over blocks of rows of
    the affinity matrix, so memory is ``O(block + n_features^2)``, never
    ``n x n``; time is ``O(sum_c n_c^2 n_features + n n_features^2 +
    n_features^3)``.  A singular ``S_w`` (a direction in which the classes do
    not spread) is no error: that direction gets a very large eigenvalue.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from metric_estimators import LFDA
    >>> X, y = load_iris(return_X_y=True)
    >>> LFDA(n_components=2, k=5).fit(X, y).transform(X).shape
    (150, 2)
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "embedding_type": [StrOptions({"weighted", "orthonormalized", "plain"})],
        "preprocessor": ["array-like", callable, None],
    }

    def __init__(self, n_components=None, k=None, embedding_type="weighted",
                 preprocessor=None):
        self.n_components = n_components
        self.k = k
        self.embedding_type = embedding_type
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=True)
    @fill_doc
    def fit(self, X, y):
        """Learn the embedding from labelled points.

        Parameters
        ----------
        %(labelled_points)s

        Returns
        -------
        self : LFDA
        """
        report = FitReport(self, verbose=0)
        self._check_preprocessor()
        X, y, (classes, y_idx, counts) = validate_labelled_points(
            self, self._points(X), y)
        n_features = X.shape[1]
        n_components = check_n_components(self.n_components, n_features)
        k = max(1, min(7, n_features - 1)) if self.k is None else int(self.k)
        small = counts <= k
        if small.any():
            warnings.warn(
                f"{int(small.sum())} class(es) have at most k={k} samples (e.g. "
                f"class {classes[small][0]!r} with {counts[small][0]}): their "
                "local scaling uses the farthest point of the class instead of "
                "the k-th neighbour (a class of one point has no within-class "
                "pairs).", UserWarning, stacklevel=3)
        # the eigenvectors of s X are those of X divided by s (exact for a
        # power of two): keeps the scatter matrices away from over/underflow
        s = power_of_two_scale(X)
        report.phase("local scatter matrices")
        S_w, S_b = local_scatter(X / s if s != 1.0 else X, y_idx, k)
        lam, V = lfda_directions(S_w, S_b)
        r = min(n_components, V.shape[1])
        lam, V = lam[:r], V[:, :r]
        if self.embedding_type == "orthonormalized":
            V, _ = np.linalg.qr(V)
        else:
            # the directions of X / s, applied to X: divide by s
            V = V / s
            if self.embedding_type == "weighted":
                V = V * np.sqrt(lam)
        L = np.zeros((n_components, n_features))
        L[:r] = V.T
        self.components_ = L
        self.eigenvalues_ = np.r_[lam, np.zeros(n_components - r)]
        self.k_ = k
        self.n_iter_ = 1
        report.finish("solved")
        return self
