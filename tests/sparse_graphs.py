"""Random sparse graphs with correlation-clustering-like edge lengths, and their exact distances (shared by the oracle tests)."""

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph


def random_lengths_graph(n, p, seed, values=(0.0, 1.0, 0.5), noisy=1.0,
                         negative=0.1, negative_value=-0.01):
    """Edges ``rows < cols`` of a G(n, p) graph and lengths ``x``.

    Each length is drawn from ``values`` (repeat a value to weight it), a
    share ``noisy`` of them gets N(0, 0.05) noise (exact zeros and ties
    stay common otherwise), and a share ``negative`` is set to
    ``negative_value`` (the LP's iterates have a few).
    """
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].size) < p
    rows, cols = iu[0][keep].astype(np.int64), iu[1][keep].astype(np.int64)
    x = rng.choice(np.asarray(values, dtype=float), rows.size)
    mask = rng.random(rows.size) < noisy
    x[mask] += rng.normal(0, 0.05, mask.sum())
    x[rng.random(rows.size) < negative] = negative_value
    return rows, cols, x


def exact_distances(n, rows, cols, x):
    """All-pairs shortest paths on the lengths ``max(x, 0)`` (scipy's Dijkstra; zero lengths kept as edges)."""
    lengths = np.maximum(np.maximum(x, 0.0), 1e-300)
    G = sparse.csr_matrix((lengths, (rows, cols)), shape=(n, n))
    return csgraph.dijkstra(G, directed=False)
