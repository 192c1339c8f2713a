"""The private parts of scikit-learn this package uses: the only module that imports them.

Every estimator follows scikit-learn's public conventions (``get_params`` /
``set_params``, tags, ``validate_data``, ``check_is_fitted``); the names
below are the parts of those conventions that scikit-learn implements but
does not export publicly, and for which it offers no public route.  They live
here, one import each with the reason, so that a scikit-learn release that
moves or changes one breaks this module only, and ``pyproject.toml`` bounds
scikit-learn above at the next minor release, which has not been tested.
``tests/test_sklearn_private.py`` fails if any other module of the package
imports a private scikit-learn name.

Besides these imports, the estimators set attributes that scikit-learn reads
by convention, all documented for third-party estimators:
``_parameter_constraints`` (read by ``_fit_context``), ``_n_features_out``
(read by ``ClassNamePrefixFeaturesOutMixin``), ``_doc_link_module``,
``_doc_link_template`` and ``_doc_link_url_param_generator`` (the "?" link of
the HTML representation, :class:`metric_estimators.base.DocLinkMixin`) and
``_estimator_type`` (the pre-tags way to say "classifier", kept next to the
tags for tools that still read it).  No module overrides a private method
of a scikit-learn estimator.
"""

# The decorator of every estimator's ``fit``: validates the parameters
# against ``_parameter_constraints`` (the same messages as scikit-learn's
# own estimators) and skips that validation for the scikit-learn estimators
# called inside the fit (PCA, KMeans, NearestNeighbors ...).  scikit-learn's
# own estimators use it; no public decorator or function does the same.
from sklearn.base import _fit_context

# The constraint types of ``_parameter_constraints``, read by
# ``_fit_context``: numeric ranges, sets of strings, sets of values and
# duck-typed objects (a Dask client).  scikit-learn documents the mechanism
# for third-party estimators but exports these classes only from this
# private module.
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions

__all__ = ["HasMethods", "Interval", "Options", "StrOptions", "_fit_context"]
