"""The sparse shortest-path oracle on a Dask cluster equals the in-process one, bit for bit.

``SparseShortestPathOracle(..., client=client)`` scatters the graph pattern
once, searches per block of sources on the workers and merges the violated
cycles on the client in source order; ``MetricNearness(client=client)`` uses
it on sparse input.  A ``distributed.LocalCluster`` with two worker processes
(one thread each) stands in for a cluster.  Needs the ``dask`` extra (the
``test`` extra includes it).

The cluster tests are marked ``slow``: on the shared 2-core development
machine they took 46 s (load average 12) and 146 s (load 16) -- most of it
starting two worker processes and importing scikit-learn and the package in
each -- over the ~20 s budget of the default run.  Run them with
``pytest -m slow tests/test_dask_oracle.py``.  The default run keeps
:func:`test_dask_executor_with_a_synchronous_client`: the same executor code
path (scatter once, one task per block, gather, merge in order) against an
in-process stand-in for ``distributed.Client`` that pickles everything it
ships, as a real cluster would.
"""


import numpy as np
import pytest
from scipy import sparse

from metric_estimators import MetricNearness, _backend
from metric_estimators.solvers.oracles import (
    DaskExecutor,
    SparseShortestPathOracle,
)

_SLOW = pytest.mark.slow  # reason: module docstring (cluster start-up > 20 s here)


def _graph(n, degree, seed):
    """A connected random graph (a ring plus random chords) with |N(0,1)| + noise lengths."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    r = np.concatenate((i, rng.integers(0, n, n * (degree - 2) // 2)))
    c = np.concatenate(((i + 1) % n, rng.integers(0, n, n * (degree - 2) // 2)))
    keep = r != c
    r, c = np.minimum(r[keep], c[keep]), np.maximum(r[keep], c[keep])
    rc = np.unique(np.column_stack((r, c)), axis=0)
    # lengths far from a metric: many violated cycles
    w = rng.exponential(1.0, rc.shape[0]) ** 2
    return rc[:, 0].astype(np.int64), rc[:, 1].astype(np.int64), w


@_SLOW
def test_oracle_blocks_on_workers_equal_in_process(client):
    n = 160
    rows, cols, x = _graph(n, 6, 0)
    local = SparseShortestPathOracle(n, rows, cols, chunk=16, kernels=_backend.NUMBA)
    remote = SparseShortestPathOracle(n, rows, cols, chunk=16, client=client, kernels=_backend.NUMBA)
    assert isinstance(remote.executor, DaskExecutor)
    # several blocks per worker, whole chunks each
    blocks = remote._blocks(x)
    assert len(blocks) > 2
    assert blocks[0][0] == 0 and blocks[-1][1] == n
    assert all(b[0] % 16 == 0 for b in blocks)
    for threshold in (0.0, 0.5):
        a = local(x, threshold)
        b = remote(x, threshold)
        assert a[0].size > 0  # the lengths do violate cycle inequalities
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
        assert type(a[3]) is type(b[3])


@_SLOW
def test_metric_nearness_on_cluster_equals_in_process(client):
    n = 300  # more nodes than one chunk (256) of sources: two blocks
    rows, cols, w = _graph(n, 6, 1)
    D = sparse.coo_matrix((np.concatenate((w, w)),
                           (np.concatenate((rows, cols)),
                            np.concatenate((cols, rows)))), shape=(n, n)).tocsr()
    kw = dict(tol=1e-4, max_iter=6)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = MetricNearness(**kw).fit(D)
        b = MetricNearness(client=client, **kw).fit(D)
    assert a.n_iter_ == b.n_iter_ and a.n_active_ == b.n_active_ > 0
    np.testing.assert_array_equal(a.metric_.indptr, b.metric_.indptr)
    np.testing.assert_array_equal(a.metric_.indices, b.metric_.indices)
    np.testing.assert_array_equal(a.metric_.data, b.metric_.data)
    np.testing.assert_array_equal(a.loss_curve_, b.loss_curve_)
    # and the solution moved away from D
    assert np.abs(a.metric_ - D).max() > 0


@_SLOW
def test_clone_shares_the_client_and_pickle_drops_it(client):
    import pickle

    from sklearn.base import clone

    est = MetricNearness(client=client, tol=1e-3)
    assert clone(est).client is client
    assert clone(est).get_params()["tol"] == 1e-3
    n = 40
    rows, cols, w = _graph(n, 4, 2)
    D = sparse.coo_matrix((np.concatenate((w, w)),
                           (np.concatenate((rows, cols)),
                            np.concatenate((cols, rows)))), shape=(n, n)).tocsr()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(D)
    back = pickle.loads(pickle.dumps(est))
    assert back.client is None and est.client is client
    np.testing.assert_array_equal(back.metric_.data, est.metric_.data)


class _Shipped:
    """A 'future' of the synchronous client: a value that went through pickle."""

    def __init__(self, value):
        self.value = value
        self.released = False

    def release(self):
        self.released = True


class _SyncClient:
    """Stand-in for ``distributed.Client``: runs tasks at once, pickling all it ships."""

    def __init__(self, n_workers):
        self.n_workers = n_workers
        self.scattered, self.submitted = [], []

    def scheduler_info(self):
        return {"workers": {f"w{i}": {} for i in range(self.n_workers)}}

    def scatter(self, obj, broadcast=False, hash=True):
        import pickle

        assert broadcast
        f = _Shipped(pickle.loads(pickle.dumps(obj)))
        self.scattered.append(f)
        return f

    def submit(self, fn, *args, pure=True):
        import pickle

        args = [a.value if isinstance(a, _Shipped) else pickle.loads(pickle.dumps(a))
                for a in args]
        f = _Shipped(pickle.loads(pickle.dumps(fn(*args))))
        self.submitted.append(f)
        return f

    def gather(self, futures):
        return [f.value for f in futures]


def test_dask_executor_with_a_synchronous_client():
    n = 150
    rows, cols, x = _graph(n, 6, 3)
    local = SparseShortestPathOracle(n, rows, cols, chunk=8, kernels=_backend.NUMBA)
    fake = _SyncClient(n_workers=2)
    remote = SparseShortestPathOracle(n, rows, cols, chunk=8, client=fake, kernels=_backend.NUMBA)
    assert isinstance(remote.executor, DaskExecutor)
    blocks = remote._blocks(x)
    # 19 chunks of 8 over 2 workers x 4 blocks: whole chunks, in order, covering 0..n
    assert len(blocks) == 7
    assert [b[0] for b in blocks] == sorted(b[0] for b in blocks)
    assert all(b[0] % 8 == 0 for b in blocks) and blocks[-1][1] == n
    assert all(b[1] == c[0] for b, c in zip(blocks, blocks[1:]))
    for call, threshold in enumerate((0.0, 0.3)):
        a = local(x * (1 + call), threshold)
        b = remote(x * (1 + call), threshold)
        assert a[0].size > 0
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    # the graph once, the lengths once per call; every shipped thing released
    # but the graph
    assert len(fake.scattered) == 1 + 2
    assert len(fake.submitted) == 2 * len(blocks)
    assert not fake.scattered[0].released
    assert all(f.released for f in fake.scattered[1:] + fake.submitted)
    # the component search: blocks of components on the workers
    local = SparseShortestPathOracle(n, rows, cols, search="components", cap=4, kernels=_backend.NUMBA)
    remote = SparseShortestPathOracle(n, rows, cols, search="components", cap=4,
                                      client=_SyncClient(n_workers=2), kernels=_backend.NUMBA)
    y = np.where(x < 0.02, 0.0, x)  # small components of zero-length edges
    assert len(remote._blocks(y)) > 2
    for threshold in (1e-3, 0.3):
        a, b = local(y, threshold), remote(y, threshold)
        assert a[0].size > 0
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    # MetricNearness end to end: the same solution
    D = sparse.coo_matrix((np.concatenate((x, x)),
                           (np.concatenate((rows, cols)),
                            np.concatenate((cols, rows)))), shape=(n, n)).tocsr()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m1 = MetricNearness(tol=1e-4, max_iter=5).fit(D)
        m2 = MetricNearness(tol=1e-4, max_iter=5, client=_SyncClient(3)).fit(D)
    np.testing.assert_array_equal(m1.metric_.data, m2.metric_.data)
    assert m1.n_iter_ == m2.n_iter_


def _signed(n, seed):
    """A sparse signed planted-partition graph (4 groups, 15 % sign noise)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 4, n)
    rows, cols, _ = _graph(n, 6, seed)
    sign = np.where(g[rows] == g[cols], 1.0, -1.0)
    sign[rng.random(sign.size) < 0.15] *= -1
    a = sign * rng.lognormal(0.0, 1.0, sign.size)
    return sparse.coo_matrix((np.concatenate((a, a)),
                              (np.concatenate((rows, cols)),
                               np.concatenate((cols, rows)))),
                             shape=(n, n)).tocsr()


@pytest.mark.parametrize("n", [120, 600])
def test_sparse_correlation_clustering_with_a_client_equals_in_process(n):
    """The sparse CC fit through the Dask executor (a synchronous client that
    pickles every value, so no cluster starts): the same LP, bound and labels.
    600 nodes: the numba searches; 120: the Python ones of small graphs."""
    import pickle
    import warnings

    from metric_estimators import CorrelationClustering

    A = _signed(n, 3)
    kw = dict(max_iter=15, random_state=0, n_rounding_trials=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = CorrelationClustering(**kw).fit(A)
        b = CorrelationClustering(client=_SyncClient(2), **kw).fit(A)
    assert a.n_iter_ == b.n_iter_ and a.n_active_ == b.n_active_ > 0
    np.testing.assert_array_equal(a.lp_solution_.data, b.lp_solution_.data)
    assert a.lower_bound_ == b.lower_bound_
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert b.lower_bound_ <= b.cost_
    # pickling drops the client, keeps the result
    back = pickle.loads(pickle.dumps(b))
    assert back.client is None
    np.testing.assert_array_equal(back.labels_, b.labels_)
