"""The sparse shortest-path oracle on a Dask cluster equals the in-process one, bit for bit.

``SparseShortestPathOracle(..., client=client)`` scatters the graph pattern
once, searches per block of sources on the workers and merges the violated
cycles on the client in source order; ``MetricNearness(client=client)`` uses
it on sparse input.  A ``distributed.LocalCluster`` with two worker processes
(one thread each) stands in for a cluster.  Needs the ``dask`` extra (the
``test`` extra includes it).  In the default run: about 10 s on an idle
2-core machine, most of it starting the two workers and importing the
package there (46 s measured at load average 12).
"""

import logging
import os

import numpy as np
import pytest
from scipy import sparse

from metric_estimators import MetricNearness
from metric_estimators.solvers.oracles import (
    DaskExecutor,
    SparseShortestPathOracle,
)

distributed = pytest.importorskip("distributed")

_WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def client():
    old = {k: os.environ.get(k) for k in _WORKER_ENV}
    os.environ.update(_WORKER_ENV)  # the spawned workers inherit it
    try:
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=logging.ERROR)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


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


def test_oracle_blocks_on_workers_equal_in_process(client):
    n = 160
    rows, cols, x = _graph(n, 6, 0)
    local = SparseShortestPathOracle(n, rows, cols, chunk=16)
    remote = SparseShortestPathOracle(n, rows, cols, chunk=16, client=client)
    assert isinstance(remote.executor, DaskExecutor)
    # several blocks per worker, whole chunks each
    blocks = remote._blocks()
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
