"""Correlation-clustering instances: signed graphs built from real graphs, and
sparse planted-partition signed graphs (:func:`signed_planted`).

The construction of Wang et al. (2013), as used by Veldt, Gleich, Wirth &
Saunderson ("Metric-constrained optimization for graph clustering
algorithms", SIAM J. Math. Data Sci. 2019) and Sonthalia & Gilbert (JMLR
2022), turns an unsigned graph into a complete signed graph from the Jaccard
coefficient of neighbourhoods.

For every pair ``i != j`` with at least one common neighbour::

    J_ij = |N(i) & N(j)| / (deg i + deg j - |N(i) & N(j)|)
    c_ij = log((1 + J_ij - delta) / (1 - J_ij + delta))
    c_ij += eps if c_ij > 0;  c_ij -= eps if c_ij < 0
    c_ij = +eps if c_ij == 0 and i ~ j, -eps if c_ij == 0 and i !~ j

and ``c_ij = log((1 - delta) / (1 + delta))`` for every other pair.  The
signed weight matrix is ``A = c`` (dense, zero diagonal): ``A_ij > 0`` asks
``i, j`` together with weight ``A_ij``, ``A_ij < 0`` apart with ``|A_ij|``.
"""

import numpy as np
from scipy import io, sparse

from benchmarks.workers._protocol import data_file

__all__ = ["wang_instance", "load_power_grid", "collab_like", "signed_planted",
           "instance_stats", "POWER_GRID_ANCHOR"]

# Veldt et al. (2019), Table: power grid, gamma = 1, constraint tolerance
# 1e-2, primal-dual gap 2e-5: LP objective 2154.89 (152 passes, ~6.6 h).
POWER_GRID_ANCHOR = 2154.89


def load_power_grid(path=None):
    """Adjacency (CSR, 0/1, symmetric, zero diagonal) of the US power grid."""
    path = path or data_file("power.mat")
    A = io.loadmat(path)["Problem"][0, 0]["A"]
    A = sparse.csr_matrix(A, dtype=np.float64)
    A = ((A + A.T) != 0).astype(np.float64)
    A.setdiag(0)
    A.eliminate_zeros()
    return A.tocsr()


def collab_like(n, seed=0):
    """Adjacency (CSR, 0/1, symmetric, zero diagonal) of a collaboration-like graph.

    ``networkx.powerlaw_cluster_graph(n, m=3, p=0.8, seed=seed)`` (Holme &
    Kim 2002): preferential attachment of each new node by 3 edges, each
    followed with probability 0.8 by a triangle-closing edge.  A synthetic
    stand-in for the co-authorship networks (ca-GrQc, ca-HepTh) of Veldt et
    al.: power-law degrees, average degree about 6 (3n - 3 edges less the
    repeats), average clustering about 0.46 at n = 3,000 (ca-GrQc: 0.53).
    Not a real network.  Needs networkx.
    """
    import networkx as nx

    G = nx.powerlaw_cluster_graph(int(n), 3, 0.8, seed=seed)
    A = nx.to_scipy_sparse_array(G, nodelist=range(int(n)), format="csr",
                                 dtype=np.float64)
    return sparse.csr_matrix(A)


def wang_instance(A_adj, delta=0.05, eps=0.01, eps_all=False):
    """Dense signed weight matrix of Wang et al.'s construction (see module).

    Parameters
    ----------
    A_adj : sparse or dense (n, n) 0/1 symmetric adjacency, zero diagonal.
    delta, eps : float
    eps_all : bool
        Also subtract ``eps`` from the pairs without a common neighbour
        (``log((1 - delta)/(1 + delta)) - eps``), as the construction script
        of Veldt et al.'s public code does (it applies the +-eps rule to every
        pair, including Jaccard 0); the task's text leaves them at
        ``log((1 - delta)/(1 + delta))``.

    Returns
    -------
    C : ndarray (n, n) float64, symmetric, zero diagonal.
    """
    A = sparse.csr_matrix(A_adj, dtype=np.float64)
    A = ((A + A.T) != 0).astype(np.float64).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    n = A.shape[0]
    deg = np.asarray(A.sum(axis=1)).ravel()
    common = (A @ A).tocoo()  # common-neighbour counts (diagonal = degree)
    keep = (common.row != common.col) & (common.data > 0)
    r, c, k = common.row[keep], common.col[keep], common.data[keep]
    J = k / (deg[r] + deg[c] - k)
    val = np.log((1.0 + J - delta) / (1.0 - J + delta))
    adj = np.asarray(A[r, c]).ravel() != 0
    val = np.where(val > 0, val + eps,
                   np.where(val < 0, val - eps,
                            np.where(adj, eps, -eps)))
    base = np.log((1.0 - delta) / (1.0 + delta))
    C = np.full((n, n), base - eps if eps_all else base)
    C[r, c] = val
    np.fill_diagonal(C, 0.0)
    return C


def instance_stats(C):
    """Counts and weight ranges of the positive and negative pairs."""
    iu = np.triu_indices(C.shape[0], 1)
    a = C[iu]
    pos, neg = a[a > 0], a[a < 0]
    return {
        "n": int(C.shape[0]),
        "pairs": int(a.size),
        "positive": int(pos.size),
        "negative": int(neg.size),
        "zero": int(np.sum(a == 0)),
        "pos_min": float(pos.min()) if pos.size else None,
        "pos_max": float(pos.max()) if pos.size else None,
        "neg_min_abs": float(-neg.max()) if neg.size else None,
        "neg_max_abs": float(-neg.min()) if neg.size else None,
        "sum_pos": float(pos.sum()),
        "sum_neg_abs": float(-neg.sum()),
    }


def signed_planted(n: int, seed: int, degree: float = 10.0, intra: float = 0.7,
                   noise: float = 0.1, sigma: float = 1.0):
    """A sparse planted-partition signed graph: ``(A csr, planted labels)``.

    Communities of uniform random sizes in [50, 200] (the last one takes the
    remainder, up to 249); ``n degree / 2`` edge
    draws, each inside the community of a uniform random node with
    probability ``intra``, else between two uniform random nodes; duplicates
    and self-loops dropped.  Sign +1 inside a community, -1 across, each
    flipped with probability ``noise``; weights lognormal(0, ``sigma``).
    Node ids are a random permutation.  ``O(n degree)`` time and memory.
    """
    rng = np.random.default_rng(seed)
    sizes = []
    left = n
    while left > 0:
        s = int(rng.integers(50, 201))
        if left - s < 50:  # the last community takes the remainder (< 250)
            s = left
        sizes.append(s)
        left -= s
    sizes = np.asarray(sizes)
    start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    comm = np.repeat(np.arange(sizes.size), sizes)
    draws = int(round(n * degree / 2))
    u = rng.integers(0, n, draws)
    inside = rng.random(draws) < intra
    cu = comm[u]
    v = np.where(inside, start[cu] + (rng.random(draws) * sizes[cu]).astype(np.int64),
                 rng.integers(0, n, draws))
    keep = u != v
    u, v = u[keep], v[keep]
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    key = np.unique(lo.astype(np.int64) * n + hi)
    lo, hi = key // n, key % n
    sign = np.where(comm[lo] == comm[hi], 1.0, -1.0)
    sign[rng.random(sign.size) < noise] *= -1
    w = sign * rng.lognormal(0.0, sigma, sign.size)
    perm = rng.permutation(n)
    r, c = perm[lo], perm[hi]
    A = sparse.csr_matrix((np.concatenate((w, w)), (np.concatenate((r, c)),
                                                   np.concatenate((c, r)))), shape=(n, n))
    truth = np.empty(n, dtype=np.int64)
    truth[perm] = comm
    return A, truth


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    G = load_power_grid()
    C = wang_instance(G)
    print(f"built in {time.perf_counter() - t:.2f} s; edges {G.nnz // 2}")
    for k, v in instance_stats(C).items():
        print(f"  {k}: {v}")
