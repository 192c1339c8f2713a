"""Docstring fragments shared by the estimators' methods, and their substitution.

Several ``fit`` methods take the same arguments (labelled pairs, points with
class labels, calibration parameters).  Their descriptions are written once
here and put in place by :func:`fill_doc`, in the spirit of scikit-learn's and
pandas' docstring templates, so that they cannot drift apart.
"""

import textwrap

__all__ = ["fill_doc", "FRAGMENTS"]

#: The shared fragments, by the name a docstring refers to them with
#: (a line ``%(name)s`` on its own).
FRAGMENTS = {
    "labelled_pairs": """\
pairs : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2)
    Pairs of points, or index pairs when a ``preprocessor`` is set.
y : array-like of shape (n_pairs,)
    +1 for similar, -1 for dissimilar pairs.""",
    "calibration_params": """\
calibration_params : dict or None
    Keyword arguments of :meth:`calibrate_threshold`, run on the
    training pairs at the end of ``fit`` (checked before solving).""",
    "default_n_constraints": """\
(:func:`metric_estimators.constraints.default_n_constraints`): as
many as one pass over them costs 10**7 x ``n_features ** -2``, up
to 200,000, at least metric-learn's ``20 * n_classes ** 2``, and on
small data every pair of the rarer kind, so that the metric hardly
depends on ``random_state``.""",
    "default_pairs_all": """\
(:func:`metric_estimators.constraints.default_labelled_pairs`): on
small data (at most 100,000 pairs, and pairs x ``n_features ** 2`` at
most 10**8) every pair of training points, so that the metric does not
depend on ``random_state``; otherwise as many of each kind as one pass
over them costs 10**7 x ``n_features ** -2``, up to 200,000, at least
metric-learn's ``20 * n_classes ** 2``
(:func:`metric_estimators.constraints.default_n_constraints`).""",
    "labelled_points": """\
X : array-like of shape (n_samples, n_features)
y : array-like of shape (n_samples,)
    Class labels.""",
}


def fill_doc(func):
    """Replace every line ``%(name)s`` of ``func.__doc__`` by ``FRAGMENTS[name]``.

    The fragment takes the indentation of the line it replaces; other text
    (including other ``%`` signs) is left alone.  An unknown name is an error
    at import time.

    Parameters
    ----------
    func : callable

    Returns
    -------
    func : callable
        The same function, its docstring filled in.
    """
    lines = []
    for line in func.__doc__.splitlines():
        stripped = line.strip()
        if stripped.startswith("%(") and stripped.endswith(")s"):
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(textwrap.indent(FRAGMENTS[stripped[2:-2]], indent))
        else:
            lines.append(line)
    func.__doc__ = "\n".join(lines)
    return func
