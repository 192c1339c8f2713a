"""The one rule that runs a fit on the numba kernels or on their numpy twins, in tiers.

Every loop over constraints, pairs or points runs in a kernel module of
:mod:`metric_estimators._kernels` (numba, compiled on first use and cached on
disk).  Most of them have a *twin* in :mod:`metric_estimators._kernels.numpy`:
a module with the same name, the same function names, the same arguments
and the same outputs, written in vectorised numpy.  A twin needs no
compilation; the compiled kernels are faster once they exist.

Tiers, as in a JIT runtime
--------------------------
The twins are the interpreter and the kernels the compiled tier.  A fit
asks :func:`choose` once, with its *family* (which kernels it calls, see
:data:`FAMILIES`) and its size, and passes the returned :class:`Kernels`
down to every object that calls a kernel; nothing below asks again, so
every part of a fit runs on one path.  In the default mode (``"auto"``):

* **Compiled** (every kernel the fit would call is in numba's on-disk cache
  or loaded in this process; a background compilation writes them kernel
  by kernel, and a fit switches as soon as the ones it needs are there):
  the kernels, except for a *tiny* fit (at most the family's
  :attr:`Family.tiny` size) in a process that has not loaded them yet,
  which runs on the twins: it ends before numba's import and the loading
  of the compiled kernels would.  After :data:`HOT_FITS` tiny fits of a
  family in one process the family is hot and its tiny fits count as any
  other (a loop of them pays the loading back within a few fits).
* **Not compiled, within the family's limits** (:attr:`Family.limits`): the
  twins, at once.  Unless the fit is tiny, the family is *hot*: the fit
  starts compiling it in a low-priority background process
  (:mod:`metric_estimators._background`, once per machine: parallel
  workers share one compilation through a lock file), and the fits that
  come after it switch to the kernels as soon as the cache holds them.
  Tiny fits start nothing: the kernels would not pay off for them.
* **Not compiled, above the limits**: the twins would take longer than the
  compilation, so the fit starts it in the background (or finds it under
  way) and waits for it, then runs on the kernels.  Its own process spends
  no CPU on the compiler.

Which kernels a fit needs depends on its size: the dense oracles run
parallel kernels from :mod:`metric_estimators._kernels._constants`'s sizes
on (:attr:`Family.parallel`), so a warm cache of the serial kernels does not
make a larger fit compile in the foreground.

Why this rule: a compilation costs seconds of CPU per family, far more than
a small fit, and nobody should wait for a compiler they did not ask for;
but fits are repeated (cross-validation, grid searches, notebooks), and
after the first minute every fit should run at the compiled speed.  The
limits are the sizes where a first fit on the twins costs about as much as
compiling the family, the tiny sizes those where a twin fit costs less
than loading numba; the measurements behind both are mapped in
``benchmarks/README.md`` (section "Numpy twins and tiers").

Switches
--------
* :data:`VARIABLE` (``METRIC_ESTIMATORS_BACKEND``) fixes the path of a
  process: ``auto`` (default, the rule above), ``numpy`` (the twins for
  every problem that has them, whatever its size and whatever the cache
  holds; large problems are then slow, and the triangle oracle's twin holds
  ``n^3`` floats) or ``numba`` (the kernels for every problem, compiling
  them in the foreground if needed).  :func:`use` sets it inside a
  ``with`` block.
* ``METRIC_ESTIMATORS_BACKGROUND_COMPILE=0`` switches background
  compilation off (:func:`metric_estimators._background.enable` in a
  process): fits within the limits then stay on the twins until
  ``python -m metric_estimators.warmup`` fills the cache, and larger ones
  compile in the foreground.  For single-core machines and clusters whose
  images are built with the warm-up command.

What the rule costs, stated: the two paths give the same solution to the
solver's tolerance, not the same bits (a twin may sum in another order, or
project a batch of independent constraints at once), so the same fit can
differ below the tolerance before and after its family was compiled.
``tests/test_backends.py`` fits every estimator that asks the backend on
both paths and compares them.  Where the bits matter, fix the path.

With ``verbose``, a fit prints the tier it runs on and why
(:func:`metric_estimators._compilation.announce_tier`).
"""

import importlib
import math
import os
import warnings
from contextlib import contextmanager
from typing import NamedTuple

from ._kernels import _constants as _sizes

__all__ = [
    "FAMILIES",
    "MODES",
    "NUMBA",
    "NUMPY",
    "VARIABLE",
    "Family",
    "Kernels",
    "choose",
    "is_tiny",
    "last_choice",
    "needed_kernels",
    "mode",
    "use",
    "within_limits",
]

#: The environment variable that sets the mode of a process (read at import).
VARIABLE = "METRIC_ESTIMATORS_BACKEND"

#: The modes: the rule, the twins wherever they exist, the kernels everywhere.
MODES = ("auto", "numpy", "numba")

#: Where the measurements behind the sizes of :data:`FAMILIES` are mapped to
#: their commands.
_EVIDENCE = "benchmarks/README.md, section 'Numpy twins and tiers'"


class Family(NamedTuple):
    """A family of kernels that one kind of fit calls, and the sizes that set its tier.

    Attributes
    ----------
    size : str
        What the size of a fit is, in the order :func:`choose` takes it.
    limits : tuple of float
        The largest size, per component, that runs on the twins while the
        kernels are not compiled: beyond it the twins would cost more than
        the compilation.
    kernels : tuple of str
        The numba kernels (``"module.function"`` under
        :mod:`metric_estimators._kernels`, helpers included) that the numba
        path of such a fit calls; the fit is *cold* while one of them is not
        compiled.  ``tests/test_backends.py`` checks each list against what
        a fit compiles.
    evidence : str
        Where the measurements that set the sizes are mapped to their
        commands (a section of ``benchmarks/README.md``).
    tiny : tuple of float, default=()
        The largest size, per component, whose fit runs on the twins even
        when the kernels are compiled, unless this process has loaded them
        already: the twins end before numba's import and the loading of
        the compiled kernels would.  Such a fit never starts a compilation.
        Empty: no size is tiny.
    parallel : tuple, default=()
        ``((first, kernels), ...)``: the parallel kernels that a fit calls
        from ``first`` on, in the first component of its size (below it,
        their serial counterparts in :attr:`kernels`).
    """

    size: str
    limits: tuple
    kernels: tuple
    evidence: str
    tiny: tuple = ()
    parallel: tuple = ()


_TRIANGLES = _sizes.TRIANGLE_PARALLEL_MIN_NODES
_APSP = _sizes.APSP_PARALLEL_MIN_NODES
#: the fewest nodes whose complete graph has the pairs of a parallel pass
_CC_PAIRS = int(math.ceil((1 + math.sqrt(1 + 8 * _sizes.CC_PAIRS_PARALLEL_MIN_PAIRS)) / 2))
#: the pairs of ProjectAndForget's labelled points when its pair oracle goes parallel
_PF_PAIRS = _sizes.PAIR_ORACLE_PARALLEL_MIN_POINTS * (_sizes.PAIR_ORACLE_PARALLEL_MIN_POINTS - 1) // 2
_TRIANGLE_PARALLEL = ("triangle_oracle.triangle_argmin", "triangle_oracle._triangle_hops_parallel")


#: The one table of limits: family -> :class:`Family`.
FAMILIES = {
    # ITML's listed pairs: (number of listed pairs, dimension)
    "logdet_listed": Family(
        "listed pairs, dimension", (20_000, 64),
        ("bregman._dot", "bregman._rank1", "bregman._rank1_matvec",
         "bregman.logdet_sweep", "bregman.logdet_violations",
         "bregman.sym_matvec"),
        _EVIDENCE,
        tiny=(1_000, 32)),
    # ProjectAndForget's labelled pairs: (number of pairs, dimension); its
    # pair oracle scans in parallel from a number of points on
    "logdet_all_pairs": Family(
        "labelled pairs, dimension", (20_000, 64),
        ("bregman._dot", "bregman._pair_diff", "bregman._rank1",
         "bregman._rank1_matvec", "bregman.logdet_pair_sweep",
         "bregman.sym_matvec", "pair_oracle._scan_row",
         "pair_oracle._scan_rows_serial",
         "pair_oracle.active_pair_residuals"),
        _EVIDENCE,
        tiny=(3_000, 16),
        parallel=((_PF_PAIRS, ("pair_oracle._scan_rows_parallel",)),)),
    # MetricNearness on a dense matrix: (number of nodes,); the triangle
    # oracle runs its parallel kernels from a number of nodes on
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
        _EVIDENCE,
        tiny=(150,),
        parallel=((_TRIANGLES, _TRIANGLE_PARALLEL),)),
    # CorrelationClustering on a dense signed matrix: (number of nodes,); the
    # triangle oracle, the shortest paths and the pair projections go
    # parallel from their sizes on
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
        _EVIDENCE,
        tiny=(60,),
        parallel=((_TRIANGLES, _TRIANGLE_PARALLEL),
                  (_APSP, ("shortest_paths.apsp_parallel",)),
                  (_CC_PAIRS, ("cc_pair_projections._pairs_parallel",)))),
    # CorrelationClustering on a sparse signed graph: (number of nodes,)
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
        _EVIDENCE,
        tiny=(400,)),
    # The gradient-based learners.  Their warm fits on the twins cost less
    # than, or a second more than, on the kernels up to the limits, where
    # compiling a family costs seconds.  MLKR's, LSML's and NCA's twins are
    # as fast as their kernels up to the limits: all their sizes are tiny.
    # The exact k-NN search alone (OMDML, knn_triplets): (reference points,)
    "neighbours": Family(
        "points", (5_000,),
        ("neighbours.rank_candidates",),
        _EVIDENCE,
        tiny=(2_000,)),
    # LMNN (its target neighbours included): (samples, features)
    "lmnn": Family(
        "samples, features", (2_000, 64),
        ("lmnn.laplacian_product", "lmnn.near_pairs", "lmnn.pairs_within",
         "lmnn.point_hashes", "lmnn.target_sqdist", "lmnn.threshold_block",
         "lmnn.triplet_loss_weights", "neighbours.rank_candidates"),
        _EVIDENCE,
        tiny=(600, 32)),
    # MLKR: (samples,)
    "mlkr": Family(
        "samples", (2_000,),
        ("mlkr.mlkr_block",),
        _EVIDENCE,
        tiny=(2_000,)),
    # SCML and SCML_Supervised (its k-NN triplets included): (points, features)
    "scml": Family(
        "points, features", (2_000, 64),
        ("neighbours.rank_candidates", "scml._hinge", "scml.triplet_batch_gradient",
         "scml.triplet_hinges", "stochastic.adagrad_rda_update"),
        _EVIDENCE,
        tiny=(600, 32)),
    # LODML (its k-NN graph included): (samples, features)
    "ordinal": Family(
        "samples, features", (5_000, 64),
        ("neighbours.rank_candidates", "ordinal.triplet_hinge"),
        _EVIDENCE,
        tiny=(5_000, 16)),
    # LSML and LSML_Supervised: (quadruplets, features); per evaluation the
    # twins cost about the kernels' up to the limits (a fit of 40,000
    # quadruplets of 30 features as fast on both)
    "lsml": Family(
        "quadruplets, features", (40_000, 64),
        ("lsml._quad_form", "lsml.quadruplet_gradient", "lsml.quadruplet_residuals"),
        _EVIDENCE,
        tiny=(40_000, 64)),
    # NCA's objective and gradient: (samples,).  Every evaluation is one
    # n x n pass; below the limit a cold fit evaluates them with the twin,
    # which costs less than loading numba and compiling the kernel (NCA's
    # first fits on an empty cache: first_contact.md)
    "nca": Family(
        "samples", (2_999,),
        ("nca.softmax_weights",),
        _EVIDENCE,
        tiny=(2_999,)),
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


def needed_kernels(family, *size):
    """The numba kernels a fit of ``family`` and this size calls (its parallel ones included)."""
    fam = FAMILIES[family]
    names = list(fam.kernels)
    for first, kernels in fam.parallel:
        if size and size[0] >= first:
            names.extend(kernels)
    return tuple(names)


def is_tiny(family, *size):
    """True when a fit of ``family`` and this size is at most its :attr:`Family.tiny` size."""
    tiny = FAMILIES[family].tiny
    return bool(tiny) and all(s <= t for s, t in zip(size, tiny))


#: The last answer of :func:`choose` per family: ``(path, why)`` (read by
#: benchmarks and tests that record which tier each fit ran on).
last_choice = {}


def _answer(family, kernels, why):
    from ._compilation import announce_tier

    last_choice[family] = (kernels.path, why)
    path = "numpy twins" if kernels.numpy else "compiled numba kernels"
    announce_tier(f"runs on the {path}: {why}")
    return kernels


def choose(family, *size):
    """The kernels a fit of ``family`` with this ``size`` runs on (:data:`NUMBA` or :data:`NUMPY`).

    Ask once per fit and pass the answer down.  See the module docstring
    for the rule; ``family`` is a key of :data:`FAMILIES` and ``size`` its
    :attr:`Family.size`.  May start a background compilation of the
    family, or wait for one (above the limits), as the rule says.
    """
    current = _mode["value"]
    if family not in FAMILIES:
        raise ValueError(f"unknown kernel family {family!r}; one of "
                         f"{', '.join(sorted(FAMILIES))}.")
    within = within_limits(family, *size)
    if current == "numba":
        return _answer(family, NUMBA, f"{VARIABLE}=numba")
    if current == "numpy":
        return _answer(family, NUMPY, f"{VARIABLE}=numpy")
    return _compiled_or_twins(family, size, within, is_tiny(family, *size))


#: A family's tiny fits in one process after which it is *hot*: its later
#: tiny fits are treated like any other (they load the kernels, or start
#: their compilation), as a JIT runtime counts invocations.  Loading the
#: kernels costs about what a few tiny fits on the twins cost more than on
#: the kernels, so a loop of tiny fits pays it back soon after.
HOT_FITS = 3

_tiny_fits = {}


def _compiled_or_twins(family, size, within, tiny):
    """The tiered rule of the module docstring for one fit (``auto`` mode)."""
    from . import _background
    from ._compilation import announce_tier, kernels_loaded, kernels_ready

    needed = needed_kernels(family, *size)
    # a fit that calls parallel kernels needs another compilation than one
    # of the same family below their sizes
    parallel = len(needed) > len(FAMILIES[family].kernels)
    if tiny:
        count = _tiny_fits.get(family, 0)
        tiny = count < HOT_FITS
        _tiny_fits[family] = count + 1

    if kernels_ready(needed):
        if tiny and not kernels_loaded(needed):
            return _answer(family, NUMPY, "a fit this small ends before numba "
                           "and the compiled kernels would load")
        return _answer(family, NUMBA, "the kernels are compiled")
    if tiny and within:
        return _answer(family, NUMPY, "the kernels are not compiled, and a fit "
                       "this small does not start their compilation")
    started = _background.start(family, parallel)
    if within:
        if started:
            return _answer(family, NUMPY, "the kernels are being compiled in a "
                           "background process; later fits will use them")
        return _answer(family, NUMPY, "the kernels are not compiled and background "
                       "compilation is off (python -m metric_estimators.warmup "
                       "compiles them)")
    if started:
        announce_tier("waiting for the background compilation of the kernels: "
                      "at this size the twins would take longer")
        if _background.wait(family, lambda: kernels_ready(needed), parallel):
            return _answer(family, NUMBA, "the kernels were compiled in the "
                           "background while this fit waited")
    return _answer(family, NUMBA, "the kernels are compiled in this process "
                   "(a fit this large would take longer on the twins)")


def choose_for(family, options, *size):
    """:func:`choose`, or :data:`NUMBA` when an option of the fit has no twin.

    ``options`` are the fit's options that :data:`NO_TWIN` may list for
    ``family`` (strings such as ``"oracle='shortest_path'"``); one of them
    listed means the numba kernels, in every mode and at every size.  In
    the ``auto`` mode, a fit whose family is not compiled then waits for a
    background compilation of it (there is no twin to run meanwhile), as a
    fit above the limits does.  Ask once per fit, as :func:`choose`.
    """
    for option in options:
        if (family, option) in NO_TWIN:
            if _mode["value"] != "auto":
                return _answer(family, NUMBA, f"{option} has no twin")
            # no twin to run meanwhile: wait for a background compilation
            return _compiled_or_twins(family, size, False, False)
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
