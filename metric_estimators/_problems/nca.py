"""NCA's objective, through scikit-learn's implementation.

Goldberger, J., Roweis, S., Hinton, G. and Salakhutdinov, R. (2004).
Neighbourhood components analysis. NIPS 17.

NCA maximises the expected number of points classified correctly by a
stochastic nearest-neighbour rule in the space of ``L``::

    f(L) = sum_i sum_{j in class(i), j != i} p_ij,
    p_ij = exp(-||L x_i - L x_j||^2) / sum_{k != i} exp(-||L x_i - L x_k||^2)

scikit-learn's :class:`~sklearn.neighbors.NeighborhoodComponentsAnalysis`
computes ``f`` and its gradient in ``O(n^2 (d + r))`` and minimises ``-f``
with L-BFGS-B.  :class:`RecordingNCA` (built by :func:`nca_model`) is that
estimator (same start, same solver call) with ``f`` and its gradient
evaluated by :func:`nca_loss_grad` (same values up to round-off, faster)
on the kernels of the fit (the numba kernel or its numpy twin, chosen once
per fit by :func:`metric_estimators._backend.choose`), remembering the last
evaluation;
:func:`metric_estimators.solvers.nca.solve_nca` runs it and records the
objective of every iteration.
"""

import numpy as np
from sklearn.neighbors import NeighborhoodComponentsAnalysis

__all__ = ["RecordingNCA", "nca_loss_grad", "nca_model", "nca_objective"]

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


def nca_loss_grad(L, X, y_idx, *, kernels):
    """``f(L)`` and its gradient, as scikit-learn's NCA computes them, faster.

    The same quantities (``gradient = 2 Z^T (W + W^T - diag(1^T W)) X`` with
    ``Z = X L^T`` and the weights ``W`` of :func:`metric_estimators._kernels.nca.softmax_weights`), with one
    ``n x n`` array instead of scikit-learn's several temporaries: the Gram
    matrix ``Z Z^T`` (BLAS) is turned into ``W`` in place by one pass of
    ``kernels.nca.softmax_weights`` (softmax, class sums, weights; the
    numba kernel or its twin), and the gradient is
    ``2 (W Z + W^T Z - diag(1^T W) Z)^T X``: two ``n x n x r`` products;
    fewer passes over ``n x n`` memory than scikit-learn's evaluation.
    """
    Z = X @ L.T
    G = Z @ Z.T
    sq = np.einsum("ij,ij->i", Z, Z)
    p = kernels.nca.softmax_weights(G, sq, y_idx)
    colsum = G.sum(axis=0)
    M = G @ Z
    M += G.T @ Z
    M -= colsum[:, None] * Z
    return float(p.sum()), 2.0 * (M.T @ X)


class RecordingNCA(NeighborhoodComponentsAnalysis):
    """scikit-learn's NCA with :func:`nca_loss_grad`, recording the objective.

    The initialisation, the validation and the L-BFGS-B call are
    scikit-learn's; the evaluation of the objective and gradient is
    :func:`nca_loss_grad` on the fit's kernels (same values up to
    round-off).  The last
    evaluation of an L-BFGS-B iteration is at the accepted point, so the
    callback finds the objective there for free.
    """

    def _loss_grad_lbfgs(self, transformation, X, same_class_mask, sign=1.0):
        L = transformation.reshape(-1, X.shape[1])
        loss, grad = nca_loss_grad(L, X, self._y_idx, kernels=self._kernels)
        loss, grad = sign * loss, sign * grad.ravel()
        self._last_eval = (transformation.copy(), float(sign * loss))
        self._n_evals = getattr(self, "_n_evals", 0) + 1
        return loss, grad


def nca_model(X, y_idx, *, n_components, init, max_iter, tol, random_state,
              kernels):
    """A :class:`RecordingNCA` for the labels ``y_idx``, ready for the solver.

    ``n_components``, ``init``, ``max_iter``, ``tol`` and ``random_state`` are
    as in scikit-learn's NeighborhoodComponentsAnalysis; the solve is
    :func:`metric_estimators.solvers.nca.solve_nca`; ``kernels`` (those
    of the fit) evaluate the objective.
    """
    model = RecordingNCA(n_components=n_components, init=init,
                         max_iter=max_iter, tol=tol, random_state=random_state,
                         verbose=0)
    model._y_idx = np.ascontiguousarray(y_idx, dtype=np.int64)
    model._kernels = kernels
    return model
