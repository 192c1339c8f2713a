"""Write ``numpy-objects.inv``: a small intersphinx inventory of numpy objects.

The documentation build has no network (CI reaches only package registries),
and no package ships numpy's own ``objects.inv``, so the numpy names these
docs refer to are listed here with their pages on numpy.org.  Run it again
after adding a name::

    python docs/_inventories/make_numpy_inventory.py

scikit-learn's and scipy's inventories (``sklearn-objects.inv``,
``scipy-objects.inv``) are the ``objects.inv`` files of Debian's
``python-sklearn-doc`` 1.2.1 and ``python-scipy-doc`` 1.10.1 packages.
"""

import zlib
from pathlib import Path

# name -> (role, page relative to https://numpy.org/doc/stable/)
OBJECTS = {
    "numpy.ndarray": ("py:class", "reference/generated/numpy.ndarray.html"),
    "numpy.float64": ("py:class", "reference/arrays.scalars.html#numpy.float64"),
    "numpy.random.RandomState": ("py:class", "reference/random/legacy.html#numpy.random.RandomState"),
    "numpy.linalg.LinAlgError": ("py:exception", "reference/generated/numpy.linalg.LinAlgError.html"),
    "numpy.digitize": ("py:function", "reference/generated/numpy.digitize.html"),
    "numpy.quantile": ("py:function", "reference/generated/numpy.quantile.html"),
    "numpy.asarray": ("py:function", "reference/generated/numpy.asarray.html"),
    "numpy.memmap": ("py:class", "reference/generated/numpy.memmap.html"),
}


def main(path=Path(__file__).with_name("numpy-objects.inv")):
    header = ("# Sphinx inventory version 2\n# Project: NumPy\n# Version: stable\n"
              "# The remainder of this file is compressed using zlib.\n")
    body = "".join(f"{name} {role} 1 {uri} -\n"
                   for name, (role, uri) in sorted(OBJECTS.items()))
    path.write_bytes(header.encode() + zlib.compress(body.encode()))


if __name__ == "__main__":
    main()
