"""Parsing parameter values and showing values in messages.

:func:`for_message` prints numpy scalars and arrays as plain Python numbers
in error messages; :func:`parse_memory` reads a memory size given as bytes or
as a string with units.
"""

import numbers
import re

import numpy as np

__all__ = [
    "for_message",
    "parse_memory",
]


def for_message(value):
    """``value`` with numpy scalars turned into Python numbers, for messages.

    ``repr(np.float64(0.5))`` is ``'np.float64(0.5)'`` under numpy 2; error
    messages show ``0.5``.  Tuples, lists and arrays become lists/tuples of
    plain numbers (arrays: their ``tolist()``).
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(for_message(v) for v in value)
    return value


_MEMORY_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6,
                 "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
                 "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_MEMORY_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_memory(value, name):
    """A memory size in bytes from an int (bytes) or a string with units.

    ``'512MB'``, ``'1 GB'``, ``'1.5GiB'``, ``'64k'``: decimal units (kB, MB,
    GB, TB; case-insensitive, the ``B`` optional) and binary ones (KiB, MiB,
    GiB, TiB).  ``name`` is the parameter's name for the error message.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        size = int(value)
    elif isinstance(value, str):
        match = _MEMORY_RE.match(value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _MEMORY_UNITS:
            raise ValueError(
                f"{name}={value!r} is not a memory size: pass a number of "
                "bytes (int) or a string such as '512MB', '1GB' or '1.5GiB' "
                "(units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)."
            )
        size = int(float(match.group(1)) * _MEMORY_UNITS[unit])
    else:
        raise TypeError(
            f"{name} must be an int (bytes) or a string such as '1GB'; got "
            f"{type(value).__name__}."
        )
    if size < 1:
        raise ValueError(f"{name}={for_message(value)!r} must be at least 1 byte.")
    return size
