"""The numpy twins of the numba kernels: same module names, same functions, no compilation.

``metric_estimators._kernels.numpy.<module>`` stands for
``metric_estimators._kernels.<module>``: each public function takes the same
arguments, updates the same arrays in place and returns the same values, in
vectorised numpy.  A twin computes the same quantity, not always the same
bits (a sum in another order; a batch of constraints that share no variable
projected at once, whose Hildreth fixed point is the same); each module's
docstring says where it differs.  Which path a fit takes is decided once,
by :func:`metric_estimators._backend.choose`.  Nothing here imports numba.
"""
