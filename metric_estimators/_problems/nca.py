"""NCA's objective and its L-BFGS solve, through scikit-learn's implementation.

Goldberger, J., Roweis, S., Hinton, G. and Salakhutdinov, R. (2004).
Neighbourhood components analysis. NIPS 17.

NCA maximises the expected number of points classified correctly by a
stochastic nearest-neighbour rule in the space of ``L``::

    f(L) = sum_i sum_{j in class(i), j != i} p_ij,
    p_ij = exp(-||L x_i - L x_j||^2) / sum_{k != i} exp(-||L x_i - L x_k||^2)

scikit-learn's :class:`~sklearn.neighbors.NeighborhoodComponentsAnalysis`
computes ``f`` and its gradient in ``O(n^2 (d + r))`` and minimises ``-f``
with L-BFGS-B; :func:`solve_nca` runs it unchanged (same start, same
iterates) and records the objective of every iteration.
"""

import os
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
from sklearn.neighbors import NeighborhoodComponentsAnalysis
from threadpoolctl import threadpool_limits

__all__ = ["NCAResult", "nca_objective", "solve_nca"]

#: Between these values of ``n_samples^2 * (n_features + n_components)``,
#: BLAS runs single-threaded: the products of an evaluation are small, and
#: spinning BLAS threads made the fit 2-3 times slower on a busy 2-core
#: machine (digits: 4.2 s against 10.3 s; breast_cancer: 0.54 s against
#: 1.47 s).  Below the lower one the fit is too short to pay for
#: threadpoolctl's first call (about 0.1 s).
SMALL_BLAS = (5e6, 1e9)


def nca_objective(L, X, y_idx):
    """``f(L)`` above (plain numpy, O(n^2) memory; for fallbacks and checks)."""
    Z = X @ L.T
    sq = np.einsum("ij,ij->i", Z, Z)
    D = sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T)
    np.fill_diagonal(D, np.inf)
    D = -D
    D -= D.max(axis=1, keepdims=True)
    P = np.exp(D)
    P /= P.sum(axis=1, keepdims=True)
    return float(np.sum(P * (y_idx[:, None] == y_idx[None, :])))


class _RecordingNCA(NeighborhoodComponentsAnalysis):
    """scikit-learn's NCA that remembers the objective of its last evaluation.

    Only a record is added: the loss, the gradient and the optimiser are
    scikit-learn's (the last evaluation of an L-BFGS-B iteration is at the
    accepted point, so the callback finds the objective there for free).
    """

    def _loss_grad_lbfgs(self, transformation, X, same_class_mask, sign=1.0):
        loss, grad = super()._loss_grad_lbfgs(transformation, X,
                                              same_class_mask, sign)
        self._last_eval = (transformation.copy(), float(sign * loss))
        self._n_evals = getattr(self, "_n_evals", 0) + 1
        return loss, grad


@dataclass
class NCAResult:
    """Outcome of :func:`solve_nca`."""

    components: np.ndarray
    n_iter: int
    converged: bool
    n_evals: int
    history: dict = field(default_factory=dict)


def solve_nca(X, y_idx, *, n_components, init, max_iter, tol, random_state,
              report=None):
    """Maximise NCA's objective with scikit-learn's L-BFGS-B solve.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
    n_components, init, max_iter, tol, random_state
        As in scikit-learn's NeighborhoodComponentsAnalysis.
    report : FitReport or None
        Receives a row ``(iteration, objective)`` per iteration.

    Returns
    -------
    NCAResult
        ``history`` holds the per-iteration ``objective`` (``f``, to be
        maximised) and ``time``.  ``converged`` is False when the budget
        ``max_iter`` was used up.
    """
    history = {"objective": [], "time": []}
    nca = _RecordingNCA(n_components=n_components, init=init,
                        max_iter=max_iter, tol=tol, random_state=random_state,
                        verbose=0)

    def callback(transformation, n_iter):
        last = getattr(nca, "_last_eval", None)
        if last is not None and np.array_equal(last[0], transformation):
            value = last[1]
        else:  # not the last evaluated point: compute it (rare)
            L = transformation.reshape(-1, X.shape[1])
            value = nca_objective(L, X, y_idx)
        history["objective"].append(value)
        history["time"].append(report.elapsed() if report is not None else None)
        if report is not None:
            report.row(len(history["objective"]), value)

    nca.callback = callback
    n, d = X.shape
    r = d if n_components is None else n_components
    work = float(n) * n * (d + r)
    capped = os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    small = SMALL_BLAS[0] <= work < SMALL_BLAS[1] and not capped
    with threadpool_limits(limits=1, user_api="blas") if small else nullcontext():
        nca.fit(X, y_idx)
    n_iter = len(history["objective"])
    return NCAResult(components=nca.components_, n_iter=n_iter,
                     converged=n_iter < max_iter,
                     n_evals=getattr(nca, "_n_evals", 0), history=history)
