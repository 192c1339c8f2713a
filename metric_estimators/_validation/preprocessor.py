"""The preprocessor: tuples given as indices into data (an array or a callable).

An array becomes a picklable :class:`ArrayIndexer`; indices into it are
checked by :func:`check_indices`; a user's callable is run by
:func:`apply_preprocessor`, which names the argument when it fails.
"""

import numpy as np
from sklearn.utils import check_array

from ..exceptions import PreprocessorError

__all__ = [
    "ArrayIndexer",
    "apply_preprocessor",
    "check_indices",
    "resolve_preprocessor",
]


class ArrayIndexer:
    """A picklable preprocessor over an array: ``indexer(indices) = data[indices]``.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features)
        The points that index tuples refer to.
    """

    def __init__(self, data):
        self.data = check_array(data, dtype=np.float64, input_name="preprocessor")
        self.n_samples = self.data.shape[0]

    def __call__(self, indices):
        return self.data[indices]


def resolve_preprocessor(preprocessor):
    """Return ``preprocessor`` as a callable (an :class:`ArrayIndexer` for an array), or None."""
    if preprocessor is None or callable(preprocessor):
        return preprocessor
    return ArrayIndexer(preprocessor)


def apply_preprocessor(fn, indices, name):
    """Points ``fn(indices)`` as a 2-D float array with one row per index.

    Errors raised inside the user's callable become a
    :class:`~metric_estimators.exceptions.PreprocessorError` naming ``name``.
    """
    try:
        points = fn(indices)
    except Exception as exc:  # the user's code: say where it failed
        raise PreprocessorError(
            f"The preprocessor failed on the indices of {name}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    points = np.asarray(points)
    if points.ndim != 2 or points.shape[0] != len(indices):
        raise PreprocessorError(
            "preprocessor must return a 2-D array with one row per index, "
            f"got shape {points.shape} for {len(indices)} indices."
        )
    if points.dtype.kind not in "iufb":
        raise PreprocessorError(
            f"preprocessor must return numbers, got dtype {points.dtype}."
        )
    return points.astype(np.float64, copy=False)


def check_indices(arr, name, n_samples):
    """Integer row indices in ``[0, n_samples)`` (as intp), or a clear error."""
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr))
        and np.all(arr == np.round(arr))
    ):
        raise TypeError(f"{name} given as indices must hold integers.")
    idx = arr.astype(np.intp)
    if idx.size and (idx.min() < 0 or idx.max() >= n_samples):
        raise ValueError(
            f"{name} holds indices out of range [0, {n_samples}) of the "
            "preprocessor data."
        )
    return idx
