"""Run scikit-learn's estimator checks on the learners of pairs, triplets and
quadruplets (ITML, MMC, SDML, SCML, LSML).

scikit-learn's checks call ``fit(X, y)`` with a 2-D ``X`` of points and class
labels ``y``, and call ``transform`` / ``predict`` / ``decision_function`` on
2-D ``X``.  A tuple learner fits tuples, so on that input it rejects ``X``
before any of its code runs.  :func:`on_points` makes a subclass of a tuple
learner that takes the checks' input and hands the learner tuples made of the
rows of ``X``:

* ``fit(X, y)``: for every row ``i``, ``j`` is the next row (cyclically) of
  the same label and ``k`` the next row of another label (rows without such
  a partner are left out).  Pairs: ``(i, j)`` labelled +1 and ``(i, k)``
  labelled -1; triplets: ``(i, j, k)``; quadruplets: ``(i, j, i, k)``.  The
  tuples are built from the raw ``X`` (``np.asarray``, no validation), so the
  learner's own tuple validation sees NaN, infinity, complex numbers,
  objects and empty input.  The learner's ``fit`` is then called on them, so
  every line of its fit (validation, solver, calibration) runs.
* ``transform(X)``: the learner's own (the learned map applies to points).
* ``decision_function(X)`` / ``predict(X)``: the learner's own, on one tuple
  per row, ``(x_i, a_1, ...)`` with fixed anchors ``a`` (training rows kept
  at fit in ``anchors_``), so that a row's output depends on that row only
  (what the subset and order invariance checks require).
* ``score(X, y)``: the learner's own score of the tuples built from ``(X, y)``
  as in ``fit``.

The subclass is tagged a transformer (it fits points and transforms them),
not a classifier: its ``predict`` classifies row tuples, not rows into the
classes of ``y``, so scikit-learn's classifier checks (accuracy on the
training labels, one label, ...) do not apply.  Every other check runs the
learner's own code: idempotence, read-only memmaps, an unchanged ``__dict__``,
pickling, dtypes, subset and sample-order invariance, ``n_features_in_``,
parameters untouched by ``fit``, and so on.
"""

import numpy as np
from scipy import sparse
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from metric_estimators import ITML, LSML, MMC, SCML, SDML
from metric_estimators._validation import validate_points

__all__ = ["on_points", "tuples_from_labels", "ITMLOnPoints", "MMCOnPoints",
           "SDMLOnPoints", "SCMLOnPoints", "LSMLOnPoints"]


def _next_partners(y):
    """For each row, the next row (cyclically) with the same label and the
    next one with another label; -1 where there is none."""
    n = y.shape[0]
    same = np.full(n, -1)
    other = np.full(n, -1)
    for i in range(n):
        for step in range(1, n):
            j = (i + step) % n
            if same[i] < 0 and y[j] == y[i]:
                same[i] = j
            if other[i] < 0 and y[j] != y[i]:
                other[i] = j
            if same[i] >= 0 and other[i] >= 0:
                break
    return same, other


def tuples_from_labels(X, y, size):
    """Tuples of rows of ``X`` (and pair labels for ``size == 2``) from ``y``.

    Returns ``(tuples, labels)``: ``tuples`` of shape (n_tuples, size,
    n_features); ``labels`` +1 / -1 for pairs, None otherwise.
    """
    if sparse.issparse(X):  # the learner says it takes no sparse input
        return X, (y if size == 2 else None)
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or y.shape[0] != X.shape[0]:
        # no tuple can be built: the learner rejects the input as it is
        return X, (y if size == 2 else None)
    n = X.shape[0]
    same, other = _next_partners(y)
    rows = np.arange(n)
    if size == 2:
        sim = rows[same >= 0]
        dis = rows[other >= 0]
        index = np.concatenate([np.stack([sim, same[sim]], axis=1),
                                np.stack([dis, other[dis]], axis=1)])
        labels = np.r_[np.ones(sim.size, int), -np.ones(dis.size, int)]
        return X[index.reshape(-1, 2)], labels
    both = rows[(same >= 0) & (other >= 0)]
    if size == 3:
        index = np.stack([both, same[both], other[both]], axis=1)
    else:
        index = np.stack([both, same[both], both, other[both]], axis=1)
    return X[index.reshape(-1, size)], None


def on_points(learner_class):
    """A subclass of the tuple learner ``learner_class`` that fits ``(X, y)``.

    See the module docstring.  The subclass takes the learner's parameters
    unchanged and adds no parameter.
    """
    size = 2 if hasattr(learner_class, "calibrate_threshold") else (
        learner_class._tuple_size)

    bases = ((learner_class,) if issubclass(learner_class, TransformerMixin)
             else (TransformerMixin, learner_class))

    class OnPoints(*bases):
        __doc__ = (f"{learner_class.__name__} fitted on tuples of the rows of "
                   "X (tests/tuple_adapter.py).")

        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.estimator_type = None
            tags.target_tags.required = True
            # the checks' 2-D X of points, not the learner's 3-D tuples
            tags.input_tags.two_d_array = True
            tags.input_tags.three_d_array = False
            tags.classifier_tags = None
            return tags

        def _labelled_tuples(self, X, y):
            if y is None:
                raise ValueError(
                    f"{type(self).__name__} requires y to be passed, but the "
                    "target y is None.")
            return tuples_from_labels(X, y, size)

        def fit(self, X, y=None):
            tuples, labels = self._labelled_tuples(X, y)
            if size == 2:
                super().fit(tuples, labels)
            else:
                super().fit(tuples)
            # pairs: the partner; triplets: (same, other); quadruplets too
            self.anchors_ = np.array(tuples[:1, [1, 3] if size == 4 else
                                            slice(1, None)], dtype=np.float64)
            return self

        def _row_tuples(self, X):
            check_is_fitted(self, "anchors_")
            X = validate_points(self, X, reset=False)
            anchors = np.broadcast_to(self.anchors_.astype(X.dtype),
                                      (X.shape[0],) + self.anchors_.shape[1:])
            # pairs (x, a); triplets (x, a, b); quadruplets (x, a, x, b)
            tuples = np.concatenate([X[:, None], anchors], axis=1)
            if size == 4:
                tuples = tuples[:, [0, 1, 0, 2]]
            return tuples

        # 3-D input: tuples, as the learner's own score passes them on
        def decision_function(self, X):
            if np.ndim(X) == 3:
                return super().decision_function(X)
            return super().decision_function(self._row_tuples(X))

        def predict(self, X):
            if np.ndim(X) == 3:
                return super().predict(X)
            return super().predict(self._row_tuples(X))

        def score(self, X, y=None, sample_weight=None):
            check_is_fitted(self, "anchors_")
            validate_points(self, X, reset=False)
            tuples, labels = self._labelled_tuples(X, y)
            return super().score(tuples, labels)

    OnPoints.__name__ = OnPoints.__qualname__ = f"{learner_class.__name__}OnPoints"
    return OnPoints


# module-level names, so that the checks can pickle the fitted estimators
ITMLOnPoints = on_points(ITML)
MMCOnPoints = on_points(MMC)
SDMLOnPoints = on_points(SDML)
SCMLOnPoints = on_points(SCML)
LSMLOnPoints = on_points(LSML)
