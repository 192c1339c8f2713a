"""numpy twin of :mod:`metric_estimators._kernels.constraint_store`: the active set's store.

Same functions, arguments, in-place updates and returns.  The hashes
(:func:`constraint_hashes`, and those the triangle functions compute on the
fly) are the kernel's bit for bit, and so are the compactions and appends.

Where it differs: the *table*.  The kernel keeps an open-addressing hash
table (linear probing) in the ``uint64`` array it is given; this twin keeps
its own layout in the same array: the stored hashes packed at its start,
in insertion order, zeros after them, and membership by :func:`numpy.isin`.
Both layouts are sets of the same non-zero hashes, and a caller only ever
hands a table to the functions of one module (one fit runs on one path),
so the two are never mixed.  The capacity rule is the caller's, as for the
kernel (a table is rebuilt larger before it gets 70 % full), so a packed
table always has room.
"""

import numpy as np

from .._constants import GOLDEN, HASH_STEP_ADD, MIX1

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

_SHIFT = np.uint64(29)


def _step(h, f):
    """The kernel's ``_hash_step`` on arrays (``h`` updated in place)."""
    h ^= f.astype(np.uint64) + HASH_STEP_ADD
    h *= MIX1
    h ^= h >> _SHIFT
    return h


def constraint_hashes(cons_edge, ptr, path):
    """64-bit hash of each constraint (its edge and ordered path); never 0."""
    k = cons_edge.shape[0]
    with np.errstate(over="ignore"):
        h = np.asarray(cons_edge).astype(np.uint64) * GOLDEN + np.uint64(1)
        if k:
            lens = np.diff(ptr)
            starts = np.asarray(ptr[:-1])
            for p in range(int(lens.max())):
                on = np.flatnonzero(lens > p)
                h[on] = _step(h[on], path[starts[on] + p])
    h[h == 0] = np.uint64(1)
    return h


def _triangle_hashes(cons_edge, path):
    """:func:`constraint_hashes` of triangles stored with a fixed stride."""
    with np.errstate(over="ignore"):
        h = np.asarray(cons_edge).astype(np.uint64) * GOLDEN + np.uint64(1)
        h = _step(_step(h, path[0::2]), path[1::2])
    h[h == 0] = np.uint64(1)
    return h


def _count(table):
    """Number of hashes held by a packed table."""
    return int(np.count_nonzero(table))


def table_insert_new(table, hashes):
    """Insert the ``hashes`` not yet in ``table``; return the mask of those inserted.

    Within the batch only the first occurrence of a hash is inserted.
    """
    keep = np.zeros(hashes.shape[0], dtype=np.bool_)
    if hashes.size == 0:
        return keep
    _, first = np.unique(hashes, return_index=True)
    keep[first] = True
    k0 = _count(table)
    keep &= ~np.isin(hashes, table[:k0])
    new = hashes[keep]
    table[k0:k0 + new.size] = new
    return keep


def table_insert_triangles(table, cons_edge, path):
    """:func:`table_insert_new` for triangles with a fixed stride, hashed on the fly."""
    return table_insert_new(table, _triangle_hashes(cons_edge, path))


def table_delete(table, hashes, keep):
    """Remove ``hashes[c]`` for every ``c`` with ``keep[c]`` false."""
    gone = hashes[~keep]
    if gone.size == 0:
        return
    k0 = _count(table)
    held = table[:k0]
    rest = held[~np.isin(held, gone)]
    table[:rest.size] = rest
    table[rest.size:k0] = 0


def table_delete_triangles(table, cons_edge, path, keep):
    """:func:`table_delete` for triangles stored with a fixed stride (hashes on the fly)."""
    table_delete(table, _triangle_hashes(cons_edge[:keep.size],
                                         path[:2 * keep.size]), keep)


def append_triangles(dst_edge, dst_path, dst_z, k0, cons_edge, path, keep):
    """Copy the triangles ``c`` with ``keep[c]`` to ``dst_*[k0:]`` (dual 0), in order.

    Returns the number copied.
    """
    sel = np.flatnonzero(keep)
    k = sel.size
    dst_edge[k0:k0 + k] = cons_edge[sel]
    pairs = path.reshape(-1, 2)[sel]
    dst_path[2 * k0:2 * (k0 + k)] = pairs.ravel()
    dst_z[k0:k0 + k] = 0.0
    return k


def compact_in_place(cons_edge, ptr, path, z, hashes, keep):
    """Keep the constraints with ``keep[c]`` (the forget step), in order.

    Returns ``(k, plen)``, the numbers of constraints and path entries kept.
    """
    k_all = keep.shape[0]
    sel = np.flatnonzero(keep)
    k = sel.size
    lens = np.diff(ptr[:k_all + 1])
    on = np.repeat(keep, lens)
    kept_path = path[:on.size][on]
    plen = kept_path.size
    cons_edge[:k] = cons_edge[sel]
    z[:k] = z[sel]
    hashes[:k] = hashes[sel]
    path[:plen] = kept_path
    ptr[0] = 0
    ptr[1:k + 1] = np.cumsum(lens[sel])
    return k, plen


def compact_triangles(cons_edge, path, z, keep):
    """:func:`compact_in_place` for triangles stored with a fixed stride; returns ``k``."""
    k_all = keep.shape[0]
    sel = np.flatnonzero(keep)
    k = sel.size
    cons_edge[:k] = cons_edge[sel]
    z[:k] = z[sel]
    path[:2 * k] = path[:2 * k_all].reshape(-1, 2)[sel].ravel()
    return k


def all_triangles(ptr):
    """True when every constraint of a CSR batch has a path of two edges."""
    return bool(np.all(np.diff(ptr) == 2))
