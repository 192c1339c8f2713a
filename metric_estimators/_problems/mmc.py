"""The MMC problems (Xing, Ng, Jordan & Russell, NIPS 2002).

Full matrix (the paper's eq. 4)::

    maximise    sum_{(i,j) in D} ||x_i - x_j||_A
    subject to  sum_{(i,j) in S} ||x_i - x_j||_A^2 <= 1,   A PSD,

with ``||v||_A = sqrt(v^T A v)``, ``S`` the similar and ``D`` the dissimilar
pairs.  With ``W = sum_S v v^T`` and ``A = R B R``, ``R = W^{-1/2}``, the
constraint becomes ``trace(B) <= 1``: the problem is the maximisation of the
concave ``f(B) = sum_D sqrt(u^T B u)`` (``u = R v``) over the spectraplex,
whose Euclidean projection is exact
(:func:`metric_estimators.solvers.constrained.spectraplex_ascent`).  When the
similar pairs do not span the feature space, ``W`` is singular and the
problem is unbounded along its null space (dissimilar pairs can be pushed
apart for free): eigenvalues of ``W`` below ``1e-8`` times the largest are
raised to that floor, which makes the problem bounded, and is reported.

Diagonal matrix ``A = diag(w)`` (the paper's eq. 6)::

    minimise    g(w) = sum_{(i,j) in S} ||x_i - x_j||_w^2
                       - c log(sum_{(i,j) in D} ||x_i - x_j||_w),   w >= 0,

a convex problem solved by L-BFGS-B with bounds.  Its solution has
``sum_S ||.||_w^2 = c / 2``.
"""

import numpy as np
from scipy import linalg

__all__ = ["MMCFullProblem", "MMCPathProblem", "MMCDiagonalProblem", "RIDGE",
           "PATH_BOUND_FRACTION"]

#: relative floor of the eigenvalues of the similar-pairs scatter matrix W
RIDGE = 1e-8
#: projected-gradient path: the bound on sum_S d_A^2 is this fraction of the
#: start's (metric-learn's choice), so the start is projected well inside
PATH_BOUND_FRACTION = 1.0


class MMCFullProblem:
    """``f(B)`` and its gradient for the full-matrix MMC problem.

    Parameters
    ----------
    V_sim : ndarray of shape (n_similar, d)
        Differences of the similar pairs.
    V_dis : ndarray of shape (n_dissimilar, d)
        Differences of the dissimilar pairs.
    """

    def __init__(self, V_sim, V_dis):
        W = V_sim.T @ V_sim
        omega, Q = linalg.eigh(W, check_finite=False)
        top = max(omega[-1], np.finfo(float).tiny)
        floor = RIDGE * top
        self.n_raised = int(np.sum(omega < floor))
        omega = np.maximum(omega, floor)
        self._R = (Q / np.sqrt(omega)) @ Q.T          # W_reg^{-1/2}
        self._R_inv = (Q * np.sqrt(omega)) @ Q.T      # W_reg^{1/2}
        self.U = V_dis @ self._R
        q = np.einsum("ij,ij->i", self.U, self.U)
        self._q_floor = 1e-12 * max(float(q.mean()), np.finfo(float).tiny)

    def __call__(self, B):
        """``(f(B), gradient)``."""
        UB = self.U @ B
        q = np.einsum("ij,ij->i", UB, self.U)
        s = np.sqrt(np.maximum(q, self._q_floor))
        G = (self.U.T * (0.5 / s)) @ self.U
        return float(s.sum()), G

    def start(self, A0):
        """The ``B`` of a metric ``A0``: ``W^{1/2} A0 W^{1/2}``, trace 1."""
        B = self._R_inv @ A0 @ self._R_inv
        return B / max(np.trace(B), np.finfo(float).tiny)

    def metric(self, B):
        """The metric ``A = R B R`` of ``B``."""
        A = self._R @ B @ self._R
        return (A + A.T) / 2.0


class MMCPathProblem:
    """The full-matrix problem in ``A`` itself, for Xing et al.'s projected gradient.

    ``g(A) = sum_D ||v||_A`` and its gradient ``sum_D v v^T / (2 ||v||_A)``;
    the constraint ``<W, A> <= bound`` with ``W = sum_S v v^T`` (the sum of
    the squared similar distances is linear in ``A``), and ``A`` PSD.

    Parameters
    ----------
    V_sim, V_dis : ndarray
        Differences of the similar / dissimilar pairs.
    """

    def __init__(self, V_sim, V_dis):
        self.W = V_sim.T @ V_sim
        self.V_dis = V_dis
        q_scale = float(np.einsum("ij,ij->", V_dis, V_dis)) / max(len(V_dis), 1)
        self._q_floor = 1e-12 * max(q_scale, np.finfo(float).tiny)

    def __call__(self, A):
        """``(g(A), gradient)``."""
        q = np.einsum("ij,ij->i", self.V_dis @ A, self.V_dis)
        s = np.sqrt(np.maximum(q, self._q_floor))
        G = (self.V_dis.T * (0.5 / s)) @ self.V_dis
        return float(s.sum()), G

    def similar_sum(self, A):
        """``sum_S ||v||_A^2 = <W, A>``."""
        return float(np.vdot(self.W, A))

    def bound(self, A0):
        """The right-hand side used for a start ``A0``."""
        return PATH_BOUND_FRACTION * self.similar_sum(A0)


class MMCDiagonalProblem:
    """``g(w)`` and its gradient for the diagonal MMC problem.

    Parameters
    ----------
    V_sim, V_dis : ndarray
        Differences of the similar / dissimilar pairs.
    c : float
        Weight of the dissimilar term (``diagonal_c``).
    """

    def __init__(self, V_sim, V_dis, c):
        self.s = np.einsum("ij,ij->j", V_sim, V_sim)
        self.Q = V_dis * V_dis
        self.c = float(c)
        self._floor = 1e-300

    def __call__(self, w):
        """``(g(w), gradient)``."""
        qw = self.Q @ w
        dist = np.sqrt(np.maximum(qw, self._floor))
        total = dist.sum()
        value = float(self.s @ w - self.c * np.log(total))
        grad = self.s - self.c * (self.Q.T @ (0.5 / dist)) / total
        return value, grad
