"""The numpy path of the Bregman engine: the kernels of small problems, without numba.

On a small problem, compiling the numba kernels of
:mod:`metric_estimators._kernels` costs far more than the whole fit (seconds
of CPU per estimator on an empty cache, against milliseconds of work), so
:func:`~metric_estimators.solvers.bregman.bregman_project_forget` runs small
problems on the functions of this module instead: the same arguments and
in-place outputs as the kernels they stand for, in vectorised numpy.  The
driver picks the path once per run, from the problem's size alone
(:func:`use_numpy`; never from a clock or from what is loaded), and tells the
active set and the oracle (their ``numpy`` attribute).

LogDet pair constraints (ITML, ProjectAndForget)
------------------------------------------------
:func:`logdet_sweep` is the exact sequential sweep of
:func:`metric_estimators._kernels.bregman.logdet_sweep` -- rank-one updates
of one matrix do not commute -- as a Python loop over numpy products,
``O(d^2)`` per projection plus a few microseconds of interpreter.  The rank-one
increment of entry (i, j) is ``beta * (w_i * w_j)`` as in the kernel, so the
iterate stays exactly symmetric; ``A v`` is BLAS's, so values agree with the
kernel's to rounding, not bit for bit.

Cycle constraints (MetricNearness, CorrelationClustering)
---------------------------------------------------------
Hildreth's projections onto half-spaces that share no variable commute: a
*batch* of variable-disjoint constraints projected at once in numpy gives
exactly what projecting them one after the other gives.  :class:`Batches`
colours an active set greedily into such batches (a constraint joins the
first batch none of whose constraints touches one of its edges), and a pass
projects batch after batch (:func:`project_cycles`).  The order of the
projections differs from the kernels' (constraint by constraint, in
storage order), so iterates differ along the way; the fixed point, and so
the solution to the solver's tolerance, is the same.
"""

import importlib
from contextlib import contextmanager

import numpy as np

__all__ = ["LOGDET_NUMPY_MAX_LISTED", "LOGDET_NUMPY_MAX_PAIRS",
           "LOGDET_NUMPY_MAX_DIM", "CYCLE_NUMPY_MAX_NODES", "use_numpy",
           "numpy_limits", "logdet_sweep", "logdet_violations",
           "scan_label_pairs", "lazy_kernel"]

#: ITML problems with at most this many listed pair constraints (in at most
#: :data:`LOGDET_NUMPY_MAX_DIM` dimensions) run on the numpy path.  Compiling
#: the LogDet kernels costs 2.9 s of CPU (numba's import included) in a fresh
#: process with an empty cache; the numpy sweep costs a few microseconds of
#: interpreter per projection more than the kernel, which made warm
#: ITML_Supervised fits slower by 0.02-0.03 s on iris, wine and 200-300
#: points of breast cancer (30 features, 200-250 constraints) and by 0.1-0.17 s
#: on 100-300 digits (64 features, 1000-1200 constraints).  Below 2000
#: constraints a fit runs at most a few thousand passes' worth of numpy
#: surcharge before it pays for one compilation
#: (``benchmarks/bench_numpy_paths.py``,
#: ``benchmarks/results/numpy_paths_threshold.md``).
LOGDET_NUMPY_MAX_LISTED = 2_000

#: ProjectAndForget problems with at most this many labelled pairs (the
#: oracle's candidates, ``n (n - 1) / 2``) run on the numpy path.  Its
#: oracle kernel and the LogDet kernels cost 3.5-4 s of CPU to compile; the
#: numpy path made warm fits slower by 1.0 s on iris (11,175 pairs), 1.2 s
#: on wine (15,753), 0.8 s on 200 digits (19,900) but 3.5 s on 200 points
#: of breast cancer (19,900) and 13 s on 300 (44,850): the surcharge grows
#: with the number of projections, which the size of the problem bounds only
#: loosely.  12,000 pairs (about 155 points) keeps it near 1 s at most.
LOGDET_NUMPY_MAX_PAIRS = 12_000

#: Largest dimension ``d`` of the LogDet numpy path (the rank-one updates and
#: products cost ``O(d^2)`` per projection in numpy as in the kernel, plus a
#: fixed interpreter cost that dominates up to about this size).
LOGDET_NUMPY_MAX_DIM = 64

#: Cycle-constraint problems (MetricNearness, CorrelationClustering) on at
#: most this many nodes run on the numpy path.  MEASURED_BELOW
CYCLE_NUMPY_MAX_NODES = 100

_P_TINY = 1e-300


def use_numpy(oracle):
    """True when the problem behind ``oracle`` is small enough for the numpy path.

    An oracle that has a numpy path says how large its problem is with
    ``oracle.numpy_size()``, a tuple ``(kind, size...)`` compared with this
    module's limits; any other oracle runs on the numba kernels.
    """
    size = getattr(oracle, "numpy_size", None)
    if size is None:
        return False
    kind, *values = size()
    if kind == "logdet_listed":
        n_listed, dim = values
        return (n_listed <= LOGDET_NUMPY_MAX_LISTED
                and dim <= LOGDET_NUMPY_MAX_DIM)
    if kind == "logdet_all_pairs":
        n_pairs, dim = values
        return n_pairs <= LOGDET_NUMPY_MAX_PAIRS and dim <= LOGDET_NUMPY_MAX_DIM
    if kind == "cycles":
        (n_nodes,) = values
        return n_nodes <= CYCLE_NUMPY_MAX_NODES
    return False


@contextmanager
def numpy_limits(value):
    """Every limit of this module set to ``value`` inside the block (tests, benchmarks).

    ``-1``: the numba kernels for every size; a huge value: numpy for every
    size.  Not thread-safe: it sets the module constants and restores them.
    """
    names = ("LOGDET_NUMPY_MAX_LISTED", "LOGDET_NUMPY_MAX_PAIRS",
             "LOGDET_NUMPY_MAX_DIM", "CYCLE_NUMPY_MAX_NODES")
    module = globals()
    saved = [module[name] for name in names]
    for name in names:
        module[name] = value
    try:
        yield
    finally:
        for name, old in zip(names, saved):
            module[name] = old


# ---------------------------------------------------------------------------
# LogDet pair constraints

def logdet_sweep(A, V, delta, xi, lam, idx, gamma, w=None, wn=None):
    """:func:`metric_estimators._kernels.bregman.logdet_sweep` in numpy.

    Same arguments (``w``, ``wn`` unused), same in-place updates of ``A``,
    ``xi``, ``lam`` and the same returns ``(dual_change, max_violation,
    n_updates)``.
    """
    n = idx.shape[0]
    if n == 0:
        return 0.0, 0.0, 0
    if np.isinf(gamma):
        gamma_proj, inv_gamma = 1.0, 0.0
    else:
        gamma_proj, inv_gamma = gamma / (gamma + 1.0), 1.0 / gamma
    Vs = V[idx]
    sign = delta[idx].tolist()
    cons = idx.tolist()
    # Python floats in the loop (numpy scalars are slower); written back
    # below, repeated constraints included
    lam_l, xi_l = lam.tolist(), xi.tolist()
    dual_change = 0.0
    max_violation = 0.0
    n_updates = 0
    w = A @ Vs[0]
    for k in range(n):
        c = cons[k]
        p = float(Vs[k] @ w)
        if p > _P_TINY:
            s, x = sign[k], xi_l[c]
            viol = s * (p - x) / x
            if viol > max_violation:
                max_violation = viol
            theta = s * gamma_proj * (1.0 / p - 1.0 / x)
            z = lam_l[c]
            if theta < z:
                alpha, lam_l[c] = theta, z - theta
            else:
                alpha, lam_l[c] = z, 0.0
            if alpha != 0.0:
                dual_change += abs(alpha)
                sa = s * alpha
                beta = sa / (1.0 - sa * p)
                xi_l[c] = x / (1.0 + sa * x * inv_gamma)
                n_updates += 1
                A += beta * np.outer(w, w)
        if k + 1 < n:
            w = A @ Vs[k + 1]
    lam[:] = lam_l
    xi[:] = xi_l
    return dual_change, max_violation, n_updates


def logdet_violations(A, V, delta, xi, idx, out):
    """:func:`metric_estimators._kernels.bregman.logdet_violations` in numpy."""
    if idx.size == 0:
        return
    Vs = V[idx]
    p = np.einsum("ij,ij->i", Vs @ A, Vs)
    out[:] = delta[idx] * (p - xi[idx]) / xi[idx]


def scan_label_pairs(Z, y, low, high, threshold, skip, cap):
    """All violated label pairs at once: the numpy path of ``LabelPairOracle._scan``.

    The pairs ``i < j`` not keyed (``i * n + j``) in the sorted ``skip``;
    a same-class pair is violated when ``(d - low) / low > threshold``, a
    different-class one when ``(high - d) / high > threshold``, with ``d``
    the squared distance of the rows of ``Z``.  As the kernel's ring
    buffers, at most the last ``cap`` violated pairs of each row are
    returned (in increasing ``j``).

    Returns ``(I, J, violation, max_violation, n_violated)``.
    """
    n = Z.shape[0]
    sq = np.einsum("ij,ij->i", Z, Z)
    I, J = np.triu_indices(n, 1)
    if skip.size:
        keep = ~np.isin(I * n + J, skip)
        I, J = I[keep], J[keep]
    dist = sq[I] + sq[J] - 2.0 * np.einsum("ij,ij->i", Z[I], Z[J])
    viol = np.where(y[I] == y[J], (dist - low) / low, (high - dist) / high)
    maxv = float(max(0.0, viol.max())) if viol.size else 0.0
    hit = viol > threshold
    I, J, viol = I[hit], J[hit], viol[hit]
    total = int(I.size)
    if total:
        # rank of each hit from the end of its row; keep the last cap
        counts = np.bincount(I, minlength=n)
        ends = np.cumsum(counts)
        from_end = ends[I] - np.arange(total) - 1
        last = from_end < cap
        I, J, viol = I[last], J[last], viol[last]
    return (I.astype(np.int64), J.astype(np.int64), viol, maxv, total)


def lazy_kernel(module, name):
    """A stand-in for the numba kernel ``metric_estimators._kernels.<module>.<name>``.

    Calling it imports the kernel module (and numba) on first use, so that
    the modules of the engine can name their kernels at the top without
    loading numba for the problems that run on the numpy path.
    """
    path = f"metric_estimators._kernels.{module}"

    def kernel(*args, **kwargs):
        return getattr(importlib.import_module(path), name)(*args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"Lazily loaded :func:`{path}.{name}`."
    return kernel
