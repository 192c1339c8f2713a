"""Fingerprints of the determinism cases, on the numpy and the numba path.

Run from the repository root::

    python tests/fingerprint.py            # one line per case and path
    python tests/fingerprint.py --names LMNN SCML_Supervised

Each line is ``<case> <path> <sha256 prefix>``: the hash of the fitted
result of a registry entry of ``tests/conftest.py`` (``components_`` of a
learner, ``metric_`` of :class:`~metric_estimators.MetricNearness`,
``lp_solution_`` and ``labels_`` of
:class:`~metric_estimators.CorrelationClustering`) on the registry's data.
``numpy`` is the default path of these small problems (at most
``NUMPY_MAX_SAMPLES`` points: LMNN's and SCML's kernels and the exact k-NN
ranking run in vectorised numpy); ``numba`` forces the numba kernels for
every size (:func:`metric_estimators._problems.neighbours.numpy_max_samples`
with -1).  Learners without a numpy path print the same hash twice.

A change that should not move any result (a refactoring) must leave every
line unchanged on the same machine; compare the output before and after.
The hashes depend on the platform's floating point (BLAS, CPU), so they
are compared between two runs, never stored in a test.
"""

import argparse
import hashlib
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import BY_NAME, learners  # noqa: E402

from metric_estimators._problems.neighbours import numpy_max_samples  # noqa: E402

#: the learners of a linear map, by name (the cases of test_determinism.py)
LEARNER_NAMES = [e.name for e in learners("supervised", "chunks", "unsupervised", "pairs",
                                          "triplets", "quadruplets")]
#: dissimilarity matrices and signed graphs
GRAPH_NAMES = [e.name for e in learners("matrix", "graph")]
PATHS = {"numpy": None, "numba": -1}


def fitted(name):
    """The registry entry ``name`` fitted on its data, warnings silenced."""
    entry = BY_NAME[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return entry.make().fit(*entry.data())


def result_bytes(est):
    """The bytes a fingerprint hashes: every fitted result the estimator has."""
    parts = [getattr(est, attr).tobytes()
             for attr in ("components_", "metric_", "lp_solution_", "labels_")
             if hasattr(est, attr)]
    return b"".join(parts)


def fingerprint(name, path):
    """SHA-256 prefix of ``name``'s fitted result on ``path`` ('numpy' or 'numba')."""
    threshold = PATHS[path]
    if threshold is None:
        est = fitted(name)
    else:
        with numpy_max_samples(threshold):
            est = fitted(name)
    return hashlib.sha256(result_bytes(est)).hexdigest()[:16]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", nargs="*", default=LEARNER_NAMES + GRAPH_NAMES)
    parser.add_argument("--paths", nargs="*", default=list(PATHS), choices=list(PATHS))
    args = parser.parse_args(argv)
    for name in args.names:
        for path in args.paths:
            print(f"{name} {path} {fingerprint(name, path)}", flush=True)


if __name__ == "__main__":
    main()
