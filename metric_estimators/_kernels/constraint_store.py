"""numba kernels for the active set of cycle constraints (Project and Forget).

The active set is stored in the CSR form of
:mod:`metric_estimators._kernels.edges`; a 64-bit hash per constraint (its
edge and ordered path) keeps it free of duplicates
(:func:`constraint_hashes`, kept in an open-addressing table by
:func:`table_insert_new` and :func:`table_delete`), and
:func:`compact_in_place` drops the forgotten ones.  Triangles are stored
with a fixed stride instead (two path entries each, no offsets, no stored
hashes): :func:`table_insert_triangles`,
:func:`table_delete_triangles`, :func:`append_triangles` and
:func:`compact_triangles` hash them on the fly, with the same bits as :func:`constraint_hashes`.
"""

import numpy as np
from numba import njit

from . import _setup  # noqa: F401  (numba's cache and notices, before any kernel)
from ._constants import GOLDEN, HASH_STEP_ADD, MIX1
from .cycle_projections import prefetch

#: How many hashes ahead the table operations prefetch their home slot (the
#: table is tens of MB on large problems: each operation is a cache miss,
#: whose address the batch of hashes gives away in advance)
_AHEAD = 16

__all__ = [
    "all_triangles",
    "append_triangles",
    "compact_in_place",
    "compact_triangles",
    "constraint_hashes",
    "table_delete",
    "table_delete_triangles",
    "table_insert_new",
    "table_insert_triangles",
]


@njit(cache=True, nogil=True, inline="always")
def _hash_start(e):
    return np.uint64(e) * GOLDEN + np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _hash_step(h, f):
    h ^= np.uint64(f) + HASH_STEP_ADD
    h *= MIX1
    h ^= h >> np.uint64(29)
    return h


@njit(cache=True, nogil=True, inline="always")
def _triangle_hash(cons_edge, path, c):
    """The hash of :func:`constraint_hashes` for triangle ``c`` (path ``path[2c:2c+2]``)."""
    h = _hash_step(_hash_step(_hash_start(cons_edge[c]), path[2 * c]),
                   path[2 * c + 1])
    if h == np.uint64(0):
        h = np.uint64(1)
    return h


@njit(cache=True, nogil=True)
def constraint_hashes(cons_edge, ptr, path):
    """64-bit hash of each constraint (its edge and ordered path); never 0."""
    k = cons_edge.shape[0]
    out = np.empty(k, dtype=np.uint64)
    for c in range(k):
        h = _hash_start(cons_edge[c])
        for p in range(ptr[c], ptr[c + 1]):
            h = _hash_step(h, path[p])
        if h == np.uint64(0):
            h = np.uint64(1)
        out[c] = h
    return out


@njit(cache=True, nogil=True, inline="always")
def _insert_one(table, h, mask):
    """Insert the non-zero hash ``h`` by linear probing; False if it was there."""
    slot = h & mask
    while True:
        t = table[slot]
        if t == np.uint64(0):
            table[slot] = h
            return True
        if t == h:
            return False
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def table_insert_triangles(table, cons_edge, path):
    """:func:`table_insert_new` for triangles with a fixed stride, hashed on the fly.

    Triangle ``c`` has the path ``path[2c:2c+2]``; its hash is the one of
    :func:`constraint_hashes`.  Returns the mask of the triangles inserted
    (those not yet in ``table``, first occurrences within the batch); also
    rebuilds a table from the stored triangles.
    """
    mask = np.uint64(table.shape[0] - 1)
    k = cons_edge.shape[0]
    keep = np.zeros(k, dtype=np.bool_)
    for c in range(k):
        if c + _AHEAD < k:
            prefetch(table, _triangle_hash(cons_edge, path, c + _AHEAD) & mask)
        h = _triangle_hash(cons_edge, path, c)
        keep[c] = _insert_one(table, h, mask)
    return keep


@njit(cache=True, nogil=True)
def append_triangles(dst_edge, dst_path, dst_z, k0, cons_edge, path, keep):
    """Copy the triangles ``c`` with ``keep[c]`` to ``dst_*[k0:]`` (dual 0), in order.

    The strided store's append without the batch's filtered copies; returns
    the number copied.
    """
    q = k0
    for c in range(keep.shape[0]):
        if keep[c]:
            dst_edge[q] = cons_edge[c]
            dst_path[2 * q] = path[2 * c]
            dst_path[2 * q + 1] = path[2 * c + 1]
            dst_z[q] = 0.0
            q += 1
    return q - k0


@njit(cache=True, nogil=True)
def table_insert_new(table, hashes):
    """Insert the ``hashes`` not yet in ``table``; return the mask of those inserted.

    ``table`` is an open-addressing (linear probing) set of non-zero 64-bit
    hashes with room for every new one (the caller keeps it at most 70 %
    full);
    within the batch only the first occurrence of a hash is inserted.
    """
    mask = np.uint64(table.shape[0] - 1)
    keep = np.zeros(hashes.shape[0], dtype=np.bool_)
    for c in range(hashes.shape[0]):
        if c + _AHEAD < hashes.shape[0]:
            prefetch(table, hashes[c + _AHEAD] & mask)
        h = hashes[c]
        keep[c] = _insert_one(table, h, mask)
    return keep


@njit(cache=True, nogil=True)
def table_delete(table, hashes, keep):
    """Remove ``hashes[c]`` for every ``c`` with ``keep[c]`` false.

    Backward-shift deletion (linear probing keeps no tombstones): every
    remaining hash stays reachable from its home slot.
    """
    mask = np.uint64(table.shape[0] - 1)
    for c in range(hashes.shape[0]):
        if c + _AHEAD < hashes.shape[0] and not keep[c + _AHEAD]:
            prefetch(table, hashes[c + _AHEAD] & mask)
        if keep[c]:
            continue
        _delete_one(table, hashes[c], mask)


@njit(cache=True, nogil=True)
def table_delete_triangles(table, cons_edge, path, keep):
    """:func:`table_delete` for triangles stored with a fixed stride (hashes on the fly)."""
    mask = np.uint64(table.shape[0] - 1)
    k = keep.shape[0]
    for c in range(k):
        a = c + _AHEAD
        if a < k and not keep[a]:
            prefetch(table, _triangle_hash(cons_edge, path, a) & mask)
        if keep[c]:
            continue
        _delete_one(table, _triangle_hash(cons_edge, path, c), mask)


@njit(cache=True, nogil=True, inline="always")
def _delete_one(table, h, mask):
    """Remove ``h`` from ``table`` (if present) by backward-shift deletion."""
    i = h & mask
    while table[i] != h:
        if table[i] == np.uint64(0):
            break
        i = (i + np.uint64(1)) & mask
    if table[i] != h:
        return
    j = i
    while True:
        j = (j + np.uint64(1)) & mask
        t = table[j]
        if t == np.uint64(0):
            break
        home = t & mask
        # t may move back to the hole at i unless its home lies
        # cyclically in (i, j]
        if i <= j:
            stay = i < home <= j
        else:
            stay = home > i or home <= j
        if not stay:
            table[i] = t
            i = j
    table[i] = np.uint64(0)


@njit(cache=True, nogil=True)
def compact_in_place(cons_edge, ptr, path, z, hashes, keep):
    """Keep the constraints with ``keep[c]`` (the forget step), in order.

    Compacts ``cons_edge``, ``ptr``, ``path``, ``z`` and ``hashes`` into
    their own first entries; returns ``(k, plen)``, the numbers of
    constraints and path entries kept.
    """
    q = 0
    p = 0
    for c in range(keep.shape[0]):
        if keep[c]:
            cons_edge[q] = cons_edge[c]
            z[q] = z[c]
            hashes[q] = hashes[c]
            for r in range(ptr[c], ptr[c + 1]):
                path[p] = path[r]
                p += 1
            q += 1
            ptr[q] = p
    return q, p


@njit(cache=True, nogil=True)
def compact_triangles(cons_edge, path, z, keep):
    """:func:`compact_in_place` for triangles stored with a fixed stride; returns ``k``."""
    q = 0
    for c in range(keep.shape[0]):
        if keep[c]:
            cons_edge[q] = cons_edge[c]
            z[q] = z[c]
            path[2 * q] = path[2 * c]
            path[2 * q + 1] = path[2 * c + 1]
            q += 1
    return q


@njit(cache=True, nogil=True)
def all_triangles(ptr):
    """True when every constraint of a CSR batch has a path of two edges."""
    for c in range(ptr.shape[0] - 1):
        if ptr[c + 1] - ptr[c] != 2:
            return False
    return True
