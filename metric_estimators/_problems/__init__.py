"""Problems: objectives and constraint sets, the data that the solvers work on.

A problem holds no optimisation loop (every loop is in
:mod:`metric_estimators.solvers`) and validates nothing: the estimators
validate their input (:mod:`metric_estimators._validation`) before they
build a problem.  Problems may import the numba kernels
(:mod:`metric_estimators._kernels`), the leaf
:mod:`metric_estimators._linalg` and scikit-learn's own pieces (nearest
neighbours, k-means, the objective of its NCA); never
:mod:`metric_estimators._validation` nor :mod:`metric_estimators.base`.
"""
