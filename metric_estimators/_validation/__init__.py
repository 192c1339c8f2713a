"""Input validation shared by every estimator, one module per kind of input.

- :mod:`.points`: points and their class or ordered labels (through
  scikit-learn's ``validate_data``);
- :mod:`.preprocessor`: tuples given as indices into data (an array or a
  callable);
- :mod:`.tuples`: pairs, triplets and quadruplets, pair labels;
- :mod:`.matrices`: arrays, initial maps, square and symmetric matrices,
  priors and signed graphs;
- :mod:`.parameters`: parameter values that ``_parameter_constraints``
  cannot check (integers, ``n_components``, distance bounds);
- :mod:`.compat`: metric-learn's parameter names and order;
- :mod:`.text`: memory sizes given as strings and values shown in messages.

The numerical tests these checks rely on (positive definiteness) live in
:mod:`metric_estimators._linalg`, which imports nothing from here.  The names
below are re-exported so that ``from ._validation import name`` works.
"""

from .compat import check_init_not_first, lmnn_metric_learn_parameters, renamed_parameter
from .matrices import (
    check_array_2d,
    check_init,
    check_prior,
    check_signed_graph_has_negative,
    check_sparse_edge_weights,
    check_sparse_signed_graph,
    check_square_matrix,
    check_symmetric_matrix,
)
from .parameters import check_bounds, check_int, check_n_components
from .points import (
    ClassLabels,
    validate_labelled_points,
    validate_ordered_points,
    validate_points,
)
from .preprocessor import (
    ArrayIndexer,
    apply_preprocessor,
    check_indices,
    resolve_preprocessor,
)
from .text import for_message, parse_memory
from .tuples import (
    check_no_tuple_labels,
    dissimilar_identical_mask,
    validate_labelled_pairs,
    validate_pair_labels,
    validate_pairs,
    validate_tuples,
)

__all__ = [
    "ArrayIndexer",
    "ClassLabels",
    "apply_preprocessor",
    "check_array_2d",
    "check_bounds",
    "check_indices",
    "check_init",
    "check_init_not_first",
    "check_int",
    "check_n_components",
    "check_no_tuple_labels",
    "check_prior",
    "check_signed_graph_has_negative",
    "check_sparse_edge_weights",
    "check_sparse_signed_graph",
    "check_square_matrix",
    "check_symmetric_matrix",
    "dissimilar_identical_mask",
    "for_message",
    "lmnn_metric_learn_parameters",
    "parse_memory",
    "renamed_parameter",
    "resolve_preprocessor",
    "validate_labelled_pairs",
    "validate_labelled_points",
    "validate_ordered_points",
    "validate_pair_labels",
    "validate_pairs",
    "validate_points",
    "validate_tuples",
]
