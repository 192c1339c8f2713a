"""The metric nearness problem on edge vectors: objective and positivity.

Brickell, Dhillon, Sra & Tropp (SIAM J. Matrix Anal. Appl. 2008)::

    minimise    sum_e w_e (x_e - d_e)^2          (or the generalised KL
    subject to  x_uv <= sum_{f in P} x_f          divergence, unweighted)

over the edges of a complete graph (:func:`~metric_estimators._problems.edges.edge_vector`)
or of a sparse graph (:func:`~metric_estimators._problems.edges.sparse_edges`), for every path ``P`` from ``u``
to ``v``.  The cycle inequalities are the active set's
(:class:`~metric_estimators.solvers.active_sets.CycleConstraints`); this
module holds the objective and the projection onto ``x >= 0``
(:class:`NearnessObjective`) that the driver
:func:`metric_estimators.solvers.bregman.bregman_project_forget` runs as its
fixed pass, with the starting point and the final clip.  The edges are
those of :class:`~metric_estimators._problems.edges.CompleteGraphEdges` or
:class:`~metric_estimators._problems.edges.SparseGraphEdges`, one interface
for both.
"""

import numpy as np

__all__ = ["NearnessObjective", "kl_divergence"]


def kl_divergence(x, d):
    """Generalised KL divergence ``sum x log(x / d) - x + d`` (``x, d > 0``)."""
    return float(np.sum(x * np.log(x / d) - x + d))


class NearnessObjective:
    """The objective of metric nearness at ``d`` with weights ``we``.

    Parameters
    ----------
    d : ndarray of shape (m,)
        The dissimilarities, an edge vector.
    we : ndarray of shape (m,)
        Positive weights of the edges.
    kl : bool
        The generalised KL divergence (unweighted) instead of the weighted
        squared L2 distance.
    kernels : Kernels
        The kernels of the fit (:mod:`metric_estimators._backend`) that run
        the ``x >= 0`` pass.

    Attributes
    ----------
    winv : ndarray of shape (m,)
        ``1 / we``, the inverse weights of the Bregman projections.
    """

    def __init__(self, d, we, kl, *, kernels):
        self.d = d
        self.we = we
        self.kl = kl
        self.winv = 1.0 / we
        self._z_nonneg = np.zeros(d.size)
        self.kernels = kernels

    def __call__(self, x):
        """The objective at the edge vector ``x``."""
        if self.kl:
            return kl_divergence(x, self.d)
        return float(np.sum(self.we * (x - self.d) ** 2))

    def start(self):
        """The starting iterate: ``d`` (Hildreth's ``z = 0`` point), a copy.

        For L2, after Hildreth's first step on ``x >= 0``
        (:meth:`nonnegative_pass`): it brings signed data (negative entries)
        to the non-negative lengths the oracles search on, and is the
        identity, bit for bit, on non-negative ``d``.
        """
        x = self.d.copy()
        if not self.kl:
            self.nonnegative_pass(x)
        return x

    @property
    def fixed_pass(self):
        """The driver's fixed pass: :meth:`nonnegative_pass` for L2; None for
        KL, whose iterates stay positive."""
        return None if self.kl else self.nonnegative_pass

    def finish(self, x):
        """Make the final iterate ``x`` non-negative, in place (L2).

        Hildreth's projection onto ``x_e >= 0`` lands within rounding of 0
        (``x - (x / w) w``); the triangles imply ``M >= 0``: it is returned
        exactly.
        """
        if not self.kl:
            np.maximum(x, 0.0, out=x)
        return x

    def nonnegative_pass(self, x):
        """Hildreth pass (in place) over ``x >= 0``; returns its residual.

        ``x >= 0`` is implied by the triangle inequalities of a complete
        graph, but Hildreth's iterates can dip below 0, and the
        shortest-path oracles (which need non-negative lengths) would not
        see why; projecting onto ``x >= 0`` too keeps them honest.
        """
        return self.kernels.cycle_projections.project_nonnegative(
            x, self.winv, self._z_nonneg)
