"""Small data sets shared by several test modules."""

import numpy as np


def symmetric_dissimilarity(n, seed=0):
    """Symmetric |N(0, 1)| dissimilarities (mean of A and A.T), zero diagonal."""
    rng = np.random.RandomState(seed)
    D = np.abs(rng.randn(n, n))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0)
    return D
