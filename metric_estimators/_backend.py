"""The one rule that runs a fit on the numba kernels or on their numpy twins.

Every loop over constraints, pairs or points runs in a kernel module of
:mod:`metric_estimators._kernels` (numba, compiled on first use and cached on
disk).  Most of them have a *twin* in :mod:`metric_estimators._kernels.numpy`:
a module with the same name, the same function names, the same arguments
and the same outputs, written in vectorised numpy.  A twin needs no
compilation, so a first fit on an empty cache that runs on twins starts at
once; the compiled kernels are faster once they exist.

The rule
--------
A fit asks :func:`choose` once, with its *family* (which kernels it calls)
and its size, and passes the returned :class:`Kernels` down to every object
that calls a kernel.  Nothing below asks again, so every part of a fit runs
on the same path.  In the default mode (``"auto"``) the answer is:

* the **numpy twins** when the problem is within its family's limit
  (:data:`FAMILIES`) *and* one of the numba kernels it would call is not
  compiled yet, neither in this process nor in numba's on-disk cache
  (:func:`metric_estimators._compilation.kernels_ready`, one directory
  listing: it imports and compiles nothing);
* the **numba kernels** otherwise.

Why this rule: a compilation costs seconds of CPU per family, far more than
a small fit, and a user's first fit on a fresh installation is the one that
decides whether the library feels fast.  So a first fit within the limits
compiles nothing.  Once the kernels are compiled (by a larger fit, or by
``python -m metric_estimators.warmup``) they are never slower than their
twins, so a warm installation always runs them.  A rule on size alone would
have to give up one of the two: run small fits on the twins forever (slower
when the kernels are compiled) or compile on the first small fit.  The
limits bound the twins to the sizes where they cost less than a
compilation; their measurements are in the files that :data:`FAMILIES`
names.

What the rule costs, stated: the two paths give the same solution to the
solver's tolerance, not the same bits (a twin may sum in another order, or
project a batch of independent constraints at once), so a result computed
before and after the kernels were compiled can differ below the tolerance.
``tests/test_backends.py`` fits every estimator of the test registry on both
paths and compares them.  Where the bits matter, fix the path for the
process with the environment variable :data:`VARIABLE`:

* ``auto`` (default): the rule above;
* ``numpy``: the twins for every problem that has them, whatever its size
  and whatever the cache holds (never compiles what has a twin; large
  problems are then slow, and the triangle oracle's twin holds ``n^3``
  floats);
* ``numba``: the kernels for every problem (compiling them if needed).

:func:`use` sets the mode inside a ``with`` block (tests, benchmarks).
"""

import importlib
import os
import warnings
from contextlib import contextmanager
from typing import NamedTuple

__all__ = [
    "FAMILIES",
    "MODES",
    "NUMBA",
    "NUMPY",
    "VARIABLE",
    "Family",
    "Kernels",
    "choose",
    "given_or_chosen",
    "mode",
    "use",
    "within_limits",
]

#: The environment variable that sets the mode of a process (read at import).
VARIABLE = "METRIC_ESTIMATORS_BACKEND"

#: The modes: the rule, the twins wherever they exist, the kernels everywhere.
MODES = ("auto", "numpy", "numba")

_RESULTS = "benchmarks/results/"


class Family(NamedTuple):
    """A family of kernels that one kind of fit calls, and how large a fit may be to run on twins.

    Attributes
    ----------
    size : str
        What the size of a fit is, in the order :func:`choose` takes it.
    limits : tuple of float
        The largest size, per component, that runs on the twins while the
        kernels are not compiled.
    kernels : tuple of str
        The numba kernels (``"module.function"`` under
        :mod:`metric_estimators._kernels`, helpers included) that the numba
        path of such a fit calls; the fit is *cold* while one of them is not
        compiled.  ``tests/test_backends.py`` checks each list against what
        a fit compiles.
    evidence : str
        The results file whose measurements set the limits.
    """

    size: str
    limits: tuple
    kernels: tuple
    evidence: str


#: The one table of limits: family -> :class:`Family`.
FAMILIES = {
    # ITML's listed pairs: (number of listed pairs, dimension).  First fits
    # on an empty cache: numpy_paths_logdet_first_fit.md
    "logdet_listed": Family(
        "listed pairs, dimension", (20_000, 64),
        ("bregman._dot", "bregman._rank1", "bregman._rank1_matvec",
         "bregman.logdet_sweep", "bregman.logdet_violations",
         "bregman.sym_matvec"),
        _RESULTS + "numpy_paths_threshold_logdet.md"),
    # ProjectAndForget's labelled pairs: (number of pairs, dimension).  First
    # fits on an empty cache: numpy_paths_logdet_first_fit.md; at the limit
    # with the bulk adds of the active set: penbased_twin_limit.md
    "logdet_all_pairs": Family(
        "labelled pairs, dimension", (20_000, 64),
        ("bregman._dot", "bregman._pair_diff", "bregman._rank1",
         "bregman._rank1_matvec", "bregman.logdet_pair_sweep",
         "bregman.sym_matvec", "pair_oracle._scan_row",
         "pair_oracle._scan_rows_serial",
         "pair_oracle.active_pair_residuals"),
        _RESULTS + "numpy_paths_threshold_logdet.md"),
    # MetricNearness on a dense matrix: (number of nodes,); first fits on an
    # empty cache of both paths: numpy_paths_cycles_first.md
    "cycles": Family(
        "nodes", (200,),
        ("constraint_store.all_triangles", "constraint_store.append_triangles",
         "constraint_store.compact_in_place",
         "constraint_store.compact_triangles",
         "constraint_store.constraint_hashes", "constraint_store.table_delete",
         "constraint_store.table_delete_triangles",
         "constraint_store.table_insert_new",
         "constraint_store.table_insert_triangles",
         "cycle_projections.project_nonnegative",
         "cycle_projections.project_paths_kl",
         "cycle_projections.project_triangles_l2",
         "cycle_projections.project_triangles_unit", "edges.edge_id",
         "edges.edges_to_matrix", "edges.matrix_to_edges",
         "triangle_oracle._collect_triangles", "triangle_oracle._hop_rows",
         "triangle_oracle.triangle_argmin_serial"),
        _RESULTS + "numpy_paths_threshold_cycles.md"),
    # CorrelationClustering on a dense signed matrix: (number of nodes,);
    # first fits: numpy_paths_cycles_first.md
    "correlation_clustering": Family(
        "nodes", (100,),
        ("cc_pair_projections._pairs_serial", "constraint_store.all_triangles",
         "constraint_store.append_triangles",
         "constraint_store.compact_triangles",
         "constraint_store.constraint_hashes",
         "constraint_store.table_delete_triangles",
         "constraint_store.table_insert_new",
         "constraint_store.table_insert_triangles",
         "correlation_clustering.best_one_element_moves",
         "cycle_projections.project_triangles_unit", "edges.edge_id",
         "edges.edges_to_matrix", "edges.matrix_to_edges",
         "shortest_paths._apsp_block_row", "shortest_paths._apsp_diagonal",
         "shortest_paths._apsp_edge_block", "shortest_paths._fw_independent",
         "shortest_paths._fw_kouter", "shortest_paths.apsp_serial",
         "triangle_oracle._collect_triangles", "triangle_oracle._hop_rows",
         "triangle_oracle.triangle_argmin_serial"),
        _RESULTS + "numpy_paths_threshold_cycles.md"),
    # CorrelationClustering on a sparse signed graph: (number of nodes,);
    # first fits: numpy_paths_cycles_first.md
    "sparse_correlation_clustering": Family(
        "nodes", (500,),
        ("cc_pair_projections._pairs_serial", "constraint_store.all_triangles",
         "constraint_store.compact_in_place",
         "constraint_store.constraint_hashes", "constraint_store.table_delete",
         "constraint_store.table_insert_new",
         "correlation_clustering.sparse_cost",
         "correlation_clustering.sparse_one_element_moves",
         "cycle_projections.project_paths_l2",
         "sparse_graph._buffers", "sparse_graph._dijkstra",
         "sparse_graph._reset", "sparse_graph._sort_targets",
         "sparse_graph._walk_back", "sparse_graph.ball_pivot",
         "sparse_graph.component_violated_cycles",
         "sparse_graph.short_edge_forest", "sparse_graph._tree_path"),
        _RESULTS + "numpy_paths_threshold_cycles.md"),
    # The gradient-based learners.  Their warm fits on the twins cost less
    # than, or a second more than, on the kernels up to the limits, where
    # compiling a family costs seconds (numpy_paths_threshold_gradient.md:
    # warm fits by size; gradient_first_contact.md: first fits on an empty
    # cache, each path forced).
    # The exact k-NN search alone (OMDML, knn_triplets): (reference points,)
    "neighbours": Family(
        "points", (5_000,),
        ("neighbours.rank_candidates",),
        _RESULTS + "numpy_paths_threshold_gradient.md"),
    # LMNN (its target neighbours included): (samples, features)
    "lmnn": Family(
        "samples, features", (2_000, 64),
        ("lmnn.laplacian_product", "lmnn.near_pairs", "lmnn.pairs_within",
         "lmnn.point_hashes", "lmnn.target_sqdist", "lmnn.threshold_block",
         "lmnn.triplet_loss_weights", "neighbours.rank_candidates"),
        _RESULTS + "numpy_paths_threshold_gradient.md"),
    # MLKR: (samples,)
    "mlkr": Family(
        "samples", (2_000,),
        ("mlkr.mlkr_block",),
        _RESULTS + "numpy_paths_threshold_gradient.md"),
    # SCML and SCML_Supervised (its k-NN triplets included): (points, features)
    "scml": Family(
        "points, features", (2_000, 64),
        ("neighbours.rank_candidates", "scml._hinge", "scml.triplet_batch_gradient",
         "scml.triplet_hinges", "stochastic.adagrad_rda_update"),
        _RESULTS + "numpy_paths_threshold_gradient.md"),
    # LODML (its k-NN graph included): (samples, features)
    "ordinal": Family(
        "samples, features", (5_000, 64),
        ("neighbours.rank_candidates", "ordinal.triplet_hinge"),
        _RESULTS + "numpy_paths_threshold_gradient.md"),
    # LSML and LSML_Supervised: (quadruplets, features); per evaluation the
    # twins cost about the kernels' from 500 to 10,000 quadruplets and 13 to
    # 64 features (crossovers.md, study lsml)
    "lsml": Family(
        "quadruplets, features", (10_000, 64),
        ("lsml._quad_form", "lsml.quadruplet_gradient", "lsml.quadruplet_residuals"),
        _RESULTS + "numpy_paths_threshold_gradient.md"),
    # NCA's objective and gradient: (samples,).  Every evaluation is one
    # n x n pass; below the limit a cold fit evaluates them with the twin,
    # which costs less than loading numba and compiling the kernel (NCA's
    # first fits on an empty cache: first_contact.md)
    "nca": Family(
        "samples", (2_999,),
        ("nca.softmax_weights",),
        _RESULTS + "first_contact.md"),
}

#: Options of a fit that have no twin: ``(family, option) -> why``.  A fit
#: with such an option runs on the numba kernels whatever the mode and the
#: size (:func:`choose_for`); a solver or an oracle given the twins for it
#: refuses them (:func:`check_twin`) rather than mixing the paths.
NO_TWIN = {
    ("cycles", "oracle='shortest_path'"):
        "the dense shortest-path search (shortest_paths.violated_paths, the "
        "next-hop walk of a blocked Floyd-Warshall) has no twin",
    ("cycles", "triangles_per_edge!=1"):
        "several triangles per edge (triangle_oracle.violated_apexes) have no "
        "twin",
    ("cycles", "sparse"):
        "a sparse D has no measured limit: its size is its edges, not the "
        "nodes of the 'cycles' limit",
    ("sparse_correlation_clustering", "search='full'"):
        "the paths from scipy's predecessor matrix "
        "(shortest_paths.paths_from_predecessors) have no twin",
    ("sparse_correlation_clustering", "search='components'"):
        "the searches by short-edge components "
        "(sparse_graph.component_violated_cycles, short_edge_forest) have no "
        "twin",
}

#: Settings whose value depends on the path: ``(family, setting) ->
#: (value on the kernels, value on the twins, why)``.  The one place where
#: a fit runs another algorithm on the twins than on the kernels;
#: :func:`setting` answers for it and ``tests/test_backends.py`` pins every
#: entry.
ON_THE_TWINS = {
    ("sparse_correlation_clustering", "search"): (
        "components", "bounded",
        "the LP's cycle oracle searches by short-edge components on the "
        "kernels, which has no twin (NO_TWIN); the twins search per node "
        "('bounded', the same bits as its kernel). Both find a most violated "
        "inequality per violated edge when uncapped; capped, they stop at "
        "different cycles, so the two paths' LP iterates differ within the "
        "solver's tolerance, as the rounding order of any twin does"),
}

_NUMPY_PACKAGE = "metric_estimators._kernels.numpy"
_NUMBA_PACKAGE = "metric_estimators._kernels"


class Kernels:
    """The kernel modules of one path, by name: ``kernels.bregman.logdet_sweep``.

    ``kernels.<module>`` imports :mod:`metric_estimators._kernels.<module>`
    (numba) or :mod:`metric_estimators._kernels.numpy.<module>` (its twin)
    on first use, so that a fit on the twins never imports numba.  Use the
    two instances :data:`NUMBA` and :data:`NUMPY`; they pickle as
    themselves (a fitted object sent to a Dask worker keeps its path).

    Parameters
    ----------
    path : {"numba", "numpy"}
    """

    def __init__(self, path):
        if path not in ("numba", "numpy"):
            raise ValueError(f"path must be 'numba' or 'numpy', got {path!r}.")
        self.path = path
        self._package = _NUMPY_PACKAGE if path == "numpy" else _NUMBA_PACKAGE

    @property
    def numpy(self):
        """True for the twins."""
        return self.path == "numpy"

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        module = importlib.import_module(f"{self._package}.{name}")
        self.__dict__[name] = module
        return module

    def __reduce__(self):
        return (_kernels_of, (self.path,))

    def __repr__(self):
        return f"Kernels({self.path!r})"


def _kernels_of(path):
    return NUMPY if path == "numpy" else NUMBA


#: The numba kernels.
NUMBA = Kernels("numba")
#: Their numpy twins.
NUMPY = Kernels("numpy")


def _mode_from_environment():
    value = os.environ.get(VARIABLE, "auto").strip().lower() or "auto"
    if value not in MODES:
        warnings.warn(f"{VARIABLE}={value!r} is not one of {', '.join(MODES)}: "
                      "'auto' is used.", stacklevel=3)
        value = "auto"
    return value


_mode = {"value": _mode_from_environment()}


def mode(value=None):
    """The mode in force (``"auto"``, ``"numpy"`` or ``"numba"``); set it with ``value``.

    Returns the mode in force before the call.  Process-wide, not
    thread-local; the initial mode comes from :data:`VARIABLE`.
    """
    old = _mode["value"]
    if value is not None:
        if value not in MODES:
            raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, "
                             f"got {value!r}.")
        _mode["value"] = value
    return old


@contextmanager
def use(value):
    """:func:`mode` set to ``value`` inside the block, restored on exit."""
    old = mode(value)
    try:
        yield
    finally:
        mode(old)


def within_limits(family, *size):
    """True when a fit of ``family`` and this size is within the family's limits."""
    limits = FAMILIES[family].limits
    if len(size) != len(limits):
        raise ValueError(f"a {family!r} fit has a size of {len(limits)} numbers "
                         f"({FAMILIES[family].size}), got {size!r}.")
    return all(s <= lim for s, lim in zip(size, limits))


def choose(family, *size):
    """The kernels a fit of ``family`` with this ``size`` runs on (:data:`NUMBA` or :data:`NUMPY`).

    Ask once per fit and pass the answer down.  See the module docstring
    for the rule; ``family`` is a key of :data:`FAMILIES` and ``size`` its
    :attr:`Family.size`.
    """
    current = _mode["value"]
    if family not in FAMILIES:
        raise ValueError(f"unknown kernel family {family!r}; one of "
                         f"{', '.join(sorted(FAMILIES))}.")
    if current == "numba":
        return NUMBA
    if current == "numpy":
        return NUMPY
    if not within_limits(family, *size):
        return NUMBA
    from ._compilation import kernels_ready

    return NUMBA if kernels_ready(FAMILIES[family].kernels) else NUMPY


def given_or_chosen(kernels, family, *size):
    """``kernels`` (a fit's own), or when None :func:`choose` for ``family`` and ``size``.

    The default of a function that a fit calls with its kernels and a user
    may call alone.
    """
    return choose(family, *size) if kernels is None else kernels


def choose_for(family, options, *size):
    """:func:`choose`, or :data:`NUMBA` when an option of the fit has no twin.

    ``options`` are the fit's options that :data:`NO_TWIN` may list for
    ``family`` (strings such as ``"oracle='shortest_path'"``); one of them
    listed means the numba kernels, in every mode and at every size.  Ask
    once per fit, as :func:`choose`.
    """
    for option in options:
        if (family, option) in NO_TWIN:
            return NUMBA
    return choose(family, *size)


def check_twin(kernels, family, option):
    """Raise ``ValueError`` when ``kernels`` are the twins and ``option`` has none.

    The guard of a solver or an oracle built with an option of
    :data:`NO_TWIN`: it runs on the kernels it is given, never on others.
    """
    reason = NO_TWIN[(family, option)]
    if kernels.numpy:
        raise ValueError(f"{option} has no numpy twin ({reason}): the fit "
                         "must run on the numba kernels "
                         "(metric_estimators._backend.choose_for).")


def setting(kernels, family, name):
    """The value of the setting ``name`` of a ``family`` fit on ``kernels`` (:data:`ON_THE_TWINS`)."""
    on_kernels, on_twins, _ = ON_THE_TWINS[(family, name)]
    return on_twins if kernels.numpy else on_kernels
