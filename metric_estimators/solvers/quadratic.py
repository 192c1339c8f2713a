"""Closed-form minimiser of a convex quadratic: the normal equations.

``J(W) = tr(W^T C W) - 2 tr(W^T B) + const`` with ``C`` symmetric positive
(semi-)definite is minimised by ``C W = B``.  OMDML's ``solver='cholesky'``
uses it; its matrix-free alternative is :func:`metric_estimators.solvers.lbfgs.lbfgs`.
"""

from scipy import linalg

__all__ = ["solve_normal_equations"]


def solve_normal_equations(C, B):
    """Solve ``C W = B`` by Cholesky, or by least squares if ``C`` is singular.

    Parameters
    ----------
    C : ndarray of shape (d, d)
        Symmetric positive semi-definite.
    B : ndarray of shape (d, r)

    Returns
    -------
    W : ndarray of shape (d, r)
        The solution; with a singular ``C``, the minimum-norm least squares one.
    """
    try:
        return linalg.solve(C, B, assume_a="pos", check_finite=False)
    except (linalg.LinAlgError, ValueError):
        return linalg.lstsq(C, B, check_finite=False)[0]
