"""numba kernels: plain arrays in, plain arrays out; no estimator or solver logic."""
