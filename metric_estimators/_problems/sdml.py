"""The SDML problem (Qi, Tang, Zha, Chua & Zhang, ICML 2009), on pairs.

Sparse Distance Metric Learning looks for a sparse precision-like matrix
``M`` close to a prior ``M0`` (in LogDet divergence) with small distances
between similar and large distances between dissimilar pairs::

    minimise  tr(M P) - log det M + eta * sum_c y_c d_M(x_c, x'_c)^2
              + lambda * ||M||_1 (off-diagonal)

with ``P = M0^{-1}``, ``eta = balance_param`` and ``lambda =
sparsity_param``.  As ``sum_c y_c d_M^2 = tr(M K)``, ``K = sum_c y_c v_c
v_c^T``, this is the graphical lasso with the "empirical covariance"
``S = P + eta K`` (:func:`sklearn.covariance.graphical_lasso`).

``S`` is not PSD as soon as the dissimilar pairs outweigh the similar ones
(``K`` has negative eigenvalues), which is the usual case for pairs drawn
from labels: then the unpenalised problem is unbounded and the graphical
lasso fails (metric-learn 0.7.0 stops with an error).  :func:`shift_to_pd`
adds ``tau * I`` to ``S`` -- equivalently ``tau * tr(M)`` to the objective, or
``tau * I`` to the prior covariance ``P`` -- with ``tau`` the smallest shift
that makes ``S`` PSD plus a margin of ``SHIFT_MARGIN`` times the spread of
its eigenvalues, so that the smallest eigenvalue of the shifted ``S`` is
``SHIFT_MARGIN * (lambda_max - lambda_min)``.  ``S`` that is already
positive definite is left as it is (``tau = 0``).

``balance_param='auto'`` avoids the shift: :func:`auto_balance` takes
``AUTO_FRACTION`` of the largest ``eta`` for which ``S`` is positive
definite (:func:`largest_pd_balance`), at most ``AUTO_MAX`` (metric-learn's
default 0.5).  With ``eta`` at half that limit, every eigenvalue of the
pencil ``(S, P)`` is at least 1/2, so ``S`` is positive definite with a
margin and the problem is metric-learn's, unshifted.
"""

import numpy as np
from scipy import linalg

__all__ = ["SHIFT_MARGIN", "AUTO_FRACTION", "AUTO_MAX", "sdml_covariance",
           "shift_to_pd", "largest_pd_balance", "auto_balance"]

#: smallest eigenvalue of a shifted S, relative to the spread of S's spectrum
SHIFT_MARGIN = 0.1
#: S is positive definite enough when lambda_min > PD_TOL * lambda_max
PD_TOL = 1e-8
#: balance_param='auto': this fraction of the largest eta keeping S PD ...
AUTO_FRACTION = 0.5
#: ... and at most metric-learn's default balance_param
AUTO_MAX = 0.5


def sdml_covariance(V, y, P, balance_param):
    """``S = P + balance_param * sum_c y_c v_c v_c^T``."""
    K = (V.T * y.astype(np.float64)) @ V
    S = P + balance_param * K
    return (S + S.T) / 2.0


def shift_to_pd(S):
    """``(S + tau I, tau, eigenvalues of S)``: the documented diagonal shift.

    ``tau = 0`` when ``S`` is positive definite (smallest eigenvalue above
    ``PD_TOL`` times the largest); else ``tau = -lambda_min + SHIFT_MARGIN *
    (lambda_max - lambda_min)``.
    """
    w = np.linalg.eigvalsh(S)
    if w[0] > PD_TOL * max(abs(w[-1]), np.finfo(float).tiny):
        return S, 0.0, w
    spread = w[-1] - w[0]
    if spread <= 0:  # S = c I with c <= 0
        spread = max(abs(w[0]), 1.0)
    tau = float(-w[0] + SHIFT_MARGIN * spread)
    return S + tau * np.eye(S.shape[0]), tau, w


def largest_pd_balance(V, y, P):
    """The supremum of ``eta`` for which ``P + eta * K`` is positive definite.

    ``P`` is positive definite; with ``mu`` the eigenvalues of the pencil
    ``(K, P)``, ``P + eta K`` is positive definite exactly when ``1 + eta *
    mu > 0`` for every ``mu``, i.e. for ``eta < -1 / min(mu)`` (infinite when
    ``K`` is positive semidefinite).
    """
    K = (V.T * y.astype(np.float64)) @ V
    mu = linalg.eigh((K + K.T) / 2.0, (P + P.T) / 2.0, eigvals_only=True)
    return np.inf if mu[0] >= 0 else float(-1.0 / mu[0])


def auto_balance(limit):
    """``balance_param='auto'``: ``min(AUTO_MAX, AUTO_FRACTION * limit)``.

    ``limit`` is :func:`largest_pd_balance`'s value (``inf`` when ``K`` is
    positive semidefinite, which gives ``AUTO_MAX``).  Then ``P + eta K``
    has pencil eigenvalues ``1 + eta * mu >= 1 - AUTO_FRACTION`` relative
    to ``P``: positive definite, no shift.
    """
    return float(min(AUTO_MAX, AUTO_FRACTION * limit))
