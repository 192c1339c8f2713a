"""Classifier faces of metric learners fitted on tuples.

:class:`PairsClassifierMixin` (pairs similar / dissimilar, with a threshold
on the learned distance and its calibration), and the ordered-tuple
classifiers :class:`TripletsClassifierMixin` and
:class:`QuadrupletsClassifierMixin`.  They complement
:class:`~metric_estimators.base.MahalanobisMixin`, whose ``pair_distance``
they call; :mod:`metric_estimators.base` re-exports them.
"""

import numbers
import warnings

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    check_no_tuple_labels,
    for_message,
    validate_labelled_pairs,
    validate_pair_labels,
    validate_tuples,
)

__all__ = [
    "PairsClassifierMixin",
    "QuadrupletsClassifierMixin",
    "TripletsClassifierMixin",
    "check_calibration_dict",
    "check_calibration_params",
]


_CALIBRATION_STRATEGIES = ("accuracy", "f_beta", "max_tpr", "max_tnr")


def _tuple_tags(tags):
    """The tags of a classifier of tuples: what its input and its labels are.

    Its ``X`` is 3-D, ``(n_tuples, tuple_size, n_features)`` (2-D indices
    ``(n_tuples, tuple_size)`` with a ``preprocessor``, which are not a
    samples x features matrix either), not a 2-D matrix of points: scikit-learn's
    estimator checks, all written for 2-D ``X``, then run the clone check only
    (``tests/tuple_adapter.py`` runs them all on tuples made of the checks'
    points).  Its labels are +1 / -1 only: a binary classifier.
    """
    tags.estimator_type = "classifier"
    tags.input_tags.two_d_array = False
    tags.input_tags.three_d_array = True
    tags.classifier_tags.multi_class = False
    return tags


class PairsClassifierMixin(ClassifierMixin):
    """Classification of pairs as similar (+1) or dissimilar (-1).

    For learners fitted on pairs (e.g. :class:`~metric_estimators.ITML`).  As
    in metric-learn, ``threshold_`` is a *distance*: a pair is predicted
    similar (+1) when its learned distance is at most ``threshold_``, i.e.
    when ``decision_function(pairs) = -distance >= -threshold_``.  The class is a scikit-learn classifier (its tags say so)
    so that ``cross_val_score`` and ``GridSearchCV`` stratify the folds on the
    pair labels and score with :meth:`score` (ROC AUC).

    The learner's ``fit`` must set ``components_``, ``n_features_in_``,
    ``classes_ = [-1, 1]`` and ``threshold_`` (usually through
    :meth:`calibrate_threshold` on the training pairs).
    """

    _estimator_type = "classifier"

    def __sklearn_tags__(self):
        return _tuple_tags(super().__sklearn_tags__())

    def decision_function(self, pairs):
        """Similarity score of each pair, ``-pair_distance(pairs)``.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        scores : ndarray of shape (n_pairs,)
        """
        return self.pair_score(pairs)

    def predict(self, pairs):
        """Predict +1 (similar) or -1 (dissimilar) for each pair.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        y_pred : ndarray of shape (n_pairs,), values in {-1, +1}
            +1 where ``-decision_function(pairs) <= threshold_``, i.e. where
            ``pair_distance(pairs) <= threshold_``.
        """
        check_is_fitted(self, "threshold_")
        # -decision_function is the learned distance; a subclass that
        # overrides decision_function gets predictions on its own scores
        distances = -self.decision_function(pairs)
        return np.where(distances <= self.threshold_, 1, -1)

    def score(self, pairs, y, sample_weight=None):
        """Area under the ROC curve of ``decision_function`` for labels ``y``.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
        y : array-like of shape (n_pairs,), values in {-1, +1}
        sample_weight : array-like of shape (n_pairs,) or None

        Returns
        -------
        roc_auc : float
        """
        scores = self.decision_function(pairs)
        y = validate_pair_labels(y, scores.shape[0])
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(y, scores, sample_weight=sample_weight))

    def _training_pairs(self, pairs, y, calibration_params):
        """The start of a pairs learner's ``fit``: ``(V, y, points)`` to solve on.

        Checks ``calibration_params`` (before solving, so that a typo fails at
        once), validates the pairs and labels
        (:func:`~metric_estimators._validation.validate_labelled_pairs`) and
        sets ``n_features_in_``.
        """
        check_calibration_dict(calibration_params)
        V, y, points = validate_labelled_pairs(pairs, y, self._check_preprocessor())
        self.n_features_in_ = V.shape[1]
        return V, y, points

    def _calibrate_on_training_pairs(self, pairs, y, calibration_params):
        """The end of a pairs learner's ``fit``: ``classes_`` and ``threshold_``."""
        self.classes_ = np.array([-1, 1])
        return self.calibrate_threshold(pairs, y, **(calibration_params or {}))

    def set_threshold(self, threshold):
        """Set the distance at or below which pairs are predicted similar.

        Parameters
        ----------
        threshold : float
            A learned distance (as in metric-learn): pairs with
            ``pair_distance <= threshold`` are predicted similar.

        Returns
        -------
        self

        Raises
        ------
        NotFittedError
            If the learner is not fitted (the threshold applies to its
            learned distance).
        """
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise ValueError(
                f"threshold must be a real number (a distance), got {for_message(threshold)!r}."
            )
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {float(threshold)}.")
        check_is_fitted(self, "components_")
        self.threshold_ = float(threshold)
        return self

    def calibrate_threshold(self, pairs=None, y=None, strategy="accuracy",
                            min_rate=None, beta=1.0, *, pairs_valid=None,
                            y_valid=None):
        """Choose ``threshold_`` (a distance) on labelled pairs.

        Every distinct distance ``-decision_function`` of ``pairs`` (the
        learned distance, or the negated scores of a subclass that
        overrides :meth:`decision_function`) is a candidate cut (plus
        "predict everything dissimilar"); the threshold is set halfway
        between the chosen distance and the next larger one, so that
        predictions on these pairs are exactly those of the chosen cut.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
            Validation pairs (indices if the estimator has a preprocessor).
        y : array-like of shape (n_pairs,), values in {-1, +1}
            Their labels.
        strategy : {'accuracy', 'f_beta', 'max_tpr', 'max_tnr'}, default='accuracy'
            'accuracy' maximises accuracy; 'f_beta' the F-beta score of the
            similar class; 'max_tpr' the true positive rate subject to a true
            negative rate >= ``min_rate``; 'max_tnr' the true negative rate
            subject to a true positive rate >= ``min_rate``.  Ties are broken
            by accuracy, then by the smaller threshold.
        min_rate : float in [0, 1] or None
            Required for 'max_tpr' and 'max_tnr', ignored otherwise.
        beta : float >= 0, default=1.0
            Weight of recall for 'f_beta' (``beta = 0`` is the precision).
        pairs_valid, y_valid : array-like
            metric-learn's names of ``pairs`` and ``y`` (deprecated here,
            with a FutureWarning).

        Returns
        -------
        self
        """
        pairs, y = _renamed_pair_args(pairs, y, pairs_valid, y_valid)
        check_is_fitted(self, "components_")
        check_calibration_params(strategy=strategy, min_rate=min_rate,
                                 beta=beta)
        distances = -self.decision_function(pairs)
        y = validate_pair_labels(y, distances.shape[0])
        order = np.argsort(distances, kind="stable")
        s = distances[order]
        pos = (y[order] == 1).astype(np.float64)
        # last index of each run of equal distances (ascending order)
        last = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
        tp = np.r_[0.0, np.cumsum(pos)[last]]
        fp = np.r_[0.0, np.cumsum(1.0 - pos)[last]]
        n_pos, n_neg = pos.sum(), pos.size - pos.sum()
        tn = n_neg - fp
        fn = n_pos - tp
        accuracy = (tp + tn) / pos.size
        tpr = tp / n_pos if n_pos else np.ones_like(tp)
        tnr = tn / n_neg if n_neg else np.ones_like(tn)
        if strategy == "accuracy":
            crit = accuracy
        elif strategy == "f_beta":
            b2 = beta * beta
            den = (1 + b2) * tp + b2 * fn + fp
            crit = np.where(den > 0, (1 + b2) * tp / np.where(den > 0, den, 1.0), 0.0)
        else:
            rate, other = (tpr, tnr) if strategy == "max_tpr" else (tnr, tpr)
            feasible = other >= min_rate - 1e-12
            # one extreme cut always has rate 1, so some cut is feasible
            crit = np.where(feasible, rate, -np.inf)
        # lexicographic: criterion, then accuracy; first (smallest threshold) wins
        best = np.flatnonzero(crit == crit.max())
        k = best[np.argmax(accuracy[best])]
        cuts = s[last]
        if k == 0:  # nothing similar: below the smallest distance
            threshold = cuts[0] - max(1.0, abs(cuts[0]))
        elif k == cuts.size:  # everything similar
            threshold = cuts[-1] + max(1.0, abs(cuts[-1]))
        else:
            threshold = (cuts[k - 1] + cuts[k]) / 2
        self.threshold_ = float(threshold)
        return self


def check_calibration_dict(calibration_params):
    """Validate ``calibration_params`` of a pairs learner's ``fit`` before solving.

    Parameters
    ----------
    calibration_params : dict or None
        Keyword arguments of :meth:`PairsClassifierMixin.calibrate_threshold`.

    Raises
    ------
    TypeError, ValueError
        Naming the argument or key.
    """
    if calibration_params is None:
        return
    if not isinstance(calibration_params, dict):
        raise TypeError(
            "calibration_params must be a dict or None, got "
            f"{type(calibration_params).__name__}."
        )
    unknown = set(calibration_params) - {"strategy", "min_rate", "beta"}
    if unknown:
        raise ValueError(
            f"calibration_params has unknown key(s) {sorted(unknown)}; the "
            "keys are 'strategy', 'min_rate' and 'beta'."
        )
    check_calibration_params(**calibration_params)


class _OrderedTuplesClassifierMixin(ClassifierMixin):
    """Shared face of the triplets and quadruplets classifiers.

    A tuple is *ordered*: its first pair is meant to be the more similar one.
    ``decision_function`` is positive when the learned metric agrees,
    ``predict`` is +1 exactly then (-1 otherwise, ties included: a tie does
    not satisfy the constraint), and ``score`` is the fraction of tuples
    predicted +1, i.e. the accuracy against the all-+1 labels that the
    order implies.  No ``y`` is needed anywhere (passing one is an error,
    see :func:`~metric_estimators._validation.check_no_tuple_labels`), so
    ``cross_val_score(est, tuples)`` and ``GridSearchCV(est, grid).fit(tuples)``
    work directly (plain, unstratified K-fold on the tuples).
    """

    _estimator_type = "classifier"
    _tuple_size = None  # 3 or 4
    _tuple_word = None  # "triplet" or "quadruplet"

    def __sklearn_tags__(self):
        tags = _tuple_tags(super().__sklearn_tags__())
        tags.target_tags.required = False
        return tags

    def _validate_tuples(self, tuples, *, fitted=True):
        return validate_tuples(
            tuples, self._tuple_size, self._pairs_preprocessor(),
            n_features=self.n_features_in_ if fitted else None,
        )

    def _decision(self, pts):
        # pts: (n, t, d); far pair minus near pair
        near = (pts[:, 0] - pts[:, 1]) @ self.components_.T
        far = (pts[:, -2] - pts[:, -1]) @ self.components_.T
        return (np.sqrt(np.einsum("ij,ij->i", far, far))
                - np.sqrt(np.einsum("ij,ij->i", near, near)))

    def predict(self, tuples):
        """+1 where the first pair is closer than the second, else -1 (ties: -1).

        Parameters
        ----------
        tuples : array-like of shape (n_tuples, t, n_features), or (n_tuples, t)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        y_pred : ndarray of shape (n_tuples,), values in {-1, +1}
        """
        return np.where(self.decision_function(tuples) > 0, 1, -1)

    def score(self, tuples, y=None, sample_weight=None):
        """Fraction of tuples whose order the learned metric satisfies.

        Parameters
        ----------
        tuples : array-like of shape (n_tuples, t, n_features), or (n_tuples, t)
            indices if the estimator has a ``preprocessor``.
        y : None
            Not used (tuples are ordered); must be None.
        sample_weight : array-like of shape (n_tuples,) or None
            Weights of the tuples.

        Returns
        -------
        accuracy : float
            Weighted fraction of tuples with ``decision_function > 0``.
        """
        check_no_tuple_labels(y, self, self._tuple_word)
        ok = (self.decision_function(tuples) > 0).astype(np.float64)
        if sample_weight is None:
            return float(ok.mean())
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != ok.shape:
            raise ValueError(
                f"sample_weight must have shape {ok.shape}, got {w.shape}."
            )
        return float(np.average(ok, weights=w))


class TripletsClassifierMixin(_OrderedTuplesClassifierMixin):
    """Triplets ``(a, b, c)`` meaning "a is closer to b than to c".

    For learners fitted on triplets (e.g. :class:`~metric_estimators.SCML`),
    given as an array of points of shape (n_triplets, 3, n_features), or as
    index triplets (n_triplets, 3) with a ``preprocessor``.

    * ``decision_function(triplets) = d(a, c) - d(a, b)`` with ``d`` the
      learned (not squared) distance;
    * ``predict`` is +1 when ``a`` is strictly closer to ``b`` than to ``c``,
      -1 otherwise (a tie counts as -1; metric-learn's ``np.sign`` would
      return 0 there);
    * ``score`` is the accuracy of ``predict`` against the all-+1 labels that
      the triplets' order implies: the fraction of satisfied triplets.

    The learner's ``fit`` must set ``components_`` and ``n_features_in_``.
    """

    _tuple_size = 3
    _tuple_word = "triplet"

    def decision_function(self, triplets):
        """``d(a, c) - d(a, b)`` for each triplet ``(a, b, c)``.

        Parameters
        ----------
        triplets : array-like of shape (n_triplets, 3, n_features), or (n_triplets, 3)
            indices if the estimator has a ``preprocessor``.

        Returns
        -------
        decision : ndarray of shape (n_triplets,)
            Positive where ``a`` is closer to ``b`` than to ``c``.
        """
        check_is_fitted(self, "components_")
        pts = self._validate_tuples(triplets)
        # (a, b) against (a, c)
        return self._decision(pts[:, [0, 1, 0, 2]])


class QuadrupletsClassifierMixin(_OrderedTuplesClassifierMixin):
    """Quadruplets ``(a, b, c, d)`` meaning "pair (a, b) is more similar than (c, d)".

    For learners fitted on quadruplets (e.g. :class:`~metric_estimators.LSML`),
    given as an array of points of shape (n_quadruplets, 4, n_features), or
    as index quadruplets (n_quadruplets, 4) with a ``preprocessor``.

    * ``decision_function(quadruplets) = d(c, d) - d(a, b)``;
    * ``predict`` is +1 when ``d(a, b) < d(c, d)``, -1 otherwise (ties -1);
    * ``score`` is the fraction of satisfied quadruplets.
    """

    _tuple_size = 4
    _tuple_word = "quadruplet"

    def decision_function(self, quadruplets):
        """``d(c, d) - d(a, b)`` for each quadruplet ``(a, b, c, d)``.

        Parameters
        ----------
        quadruplets : array-like of shape (n_quadruplets, 4, n_features), or \
(n_quadruplets, 4) indices if the estimator has a ``preprocessor``.

        Returns
        -------
        decision : ndarray of shape (n_quadruplets,)
            Positive where ``(a, b)`` is the closer pair.
        """
        check_is_fitted(self, "components_")
        return self._decision(self._validate_tuples(quadruplets))


def _renamed_pair_args(pairs, y, pairs_valid, y_valid):
    """Map metric-learn's ``pairs_valid`` / ``y_valid`` onto ``pairs`` / ``y``."""
    for old, new, value, current in (("pairs_valid", "pairs", pairs_valid, pairs),
                                     ("y_valid", "y", y_valid, y)):
        if value is None:
            continue
        if current is not None:
            raise TypeError(f"calibrate_threshold got both {old} and {new}; "
                            f"pass only {new}.")
        warnings.warn(f"calibrate_threshold: {old} is metric-learn's name of "
                      f"{new}; use {new}=.", FutureWarning, stacklevel=3)
    pairs = pairs_valid if pairs_valid is not None else pairs
    y = y_valid if y_valid is not None else y
    if pairs is None or y is None:
        raise TypeError("calibrate_threshold needs pairs and y.")
    return pairs, y


def check_calibration_params(strategy="accuracy", min_rate=None, beta=1.0):
    """Validate the arguments of :meth:`PairsClassifierMixin.calibrate_threshold`.

    Learners call it in ``fit`` on ``calibration_params`` before solving, so
    that a typo fails at once, not after the solver ran.

    Parameters
    ----------
    strategy : str
    min_rate : float or None
    beta : float

    Raises
    ------
    ValueError
        Naming the argument.
    """
    if strategy not in _CALIBRATION_STRATEGIES:
        raise ValueError(
            f"strategy must be one of {_CALIBRATION_STRATEGIES}, got {strategy!r}."
        )
    if strategy in ("max_tpr", "max_tnr"):
        if min_rate is None:
            raise ValueError(f"strategy={strategy!r} needs min_rate in [0, 1].")
        if (isinstance(min_rate, bool) or not isinstance(min_rate, numbers.Real)
                or not 0 <= min_rate <= 1):
            raise ValueError(f"min_rate must be a number in [0, 1], got {for_message(min_rate)!r}.")
    if strategy == "f_beta":
        if (isinstance(beta, bool) or not isinstance(beta, numbers.Real)
                or not (beta >= 0 and np.isfinite(beta))):
            raise ValueError(f"beta must be a number >= 0, got {for_message(beta)!r}.")
