"""NCA's objective and its start.

Goldberger, J., Roweis, S., Hinton, G. and Salakhutdinov, R. (2004).
Neighbourhood components analysis. NIPS 17.

NCA maximises the expected number of points classified correctly by a
stochastic nearest-neighbour rule in the space of ``L``::

    f(L) = sum_i sum_{j in class(i), j != i} p_ij,
    p_ij = exp(-||L x_i - L x_j||^2) / sum_{k != i} exp(-||L x_i - L x_k||^2)

With ``reg > 0`` the problem is the regularised NCA of Yang, Wang & Zuo
(2012) (MATLAB's ``fscnca`` solves its diagonal form, with ``reg = 1 / n``
by default), on the full map and measured on standardised features::

    maximise  f(L) / n - reg * ||L S||_F^2,   S = diag(std of each feature)

(:class:`NCAProblem` minimises ``-f + n * reg * ||L S||_F^2``), so that
the penalty does not depend on the units of ``X``: rescaling a feature
rescales the fitted column of ``L`` inversely and leaves the embedding
unchanged.  Unregularised NCA drives ``f`` towards ``n`` on data it can
separate, growing ``L`` until each soft neighbourhood is a single point;
the penalty stops that growth where the gain in ``f`` no longer pays for
it.

:class:`NCAProblem` holds the data and the fit's kernels and evaluates
``-f`` (plus the penalty) and its gradient (:func:`nca_loss_grad`, ``O(n^2 (d + r))`` time, one
``n x n`` array) for L-BFGS-B, counting the evaluations;
:func:`initial_components` is the start, chosen by scikit-learn's
:class:`~sklearn.neighbors.NeighborhoodComponentsAnalysis` rule, so that a
fit here follows scikit-learn's run up to round-off.
:func:`metric_estimators.solvers.nca.solve_nca` runs the solve.
"""

import numpy as np

from .._linalg import initialize_components

__all__ = ["NCAProblem", "initial_components", "nca_loss_grad", "nca_objective"]


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


class NCAProblem:
    """``-f`` and its gradient in the flat ``L``, for a minimiser.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices.
    kernels : Kernels
        The fit's kernels (:func:`metric_estimators._backend.choose`).
    reg : float, default=0.0
        Weight of the penalty ``||L S||_F^2`` against the mean ``f / n``
        (module docstring); 0 is Goldberger et al.'s NCA.

    Attributes
    ----------
    n_evals : int
        Evaluations so far.
    """

    def __init__(self, X, y_idx, kernels, reg=0.0):
        self.X = X
        self.y_idx = np.ascontiguousarray(y_idx, dtype=np.int64)
        self.kernels = kernels
        self.n_evals = 0
        self.reg = float(reg)
        # n * reg * S^2, the penalty's weight on each column of L
        self._column_weights = (X.shape[0] * self.reg * X.var(axis=0)
                                if self.reg > 0 else None)

    def penalty(self, L):
        """``n * reg * ||L S||_F^2``, the term added to ``-f``."""
        if self._column_weights is None:
            return 0.0
        return float(np.sum(L * L * self._column_weights))

    def __call__(self, flat_L):
        """``(-f(L) + penalty, gradient)`` at ``L = flat_L.reshape(-1, n_features)``."""
        L = flat_L.reshape(-1, self.X.shape[1])
        value, grad = nca_loss_grad(L, self.X, self.y_idx, kernels=self.kernels)
        self.n_evals += 1
        if self._column_weights is None:
            return -value, -grad.ravel()
        weighted = L * self._column_weights
        return (-value + float(np.sum(L * weighted)),
                (2.0 * weighted - grad).ravel())

    def objective(self, L):
        """``f(L)`` (no gradient)."""
        return nca_objective(L, self.X, self.y_idx)


def initial_components(init, X, y_idx, n_components, random_state):
    """The starting ``L`` of a fit, as scikit-learn's NCA chooses it.

    ``init='auto'``: ``'lda'`` when ``n_components <= min(n_features,
    n_classes - 1)``, else ``'pca'`` when ``n_components < min(n_features,
    n_samples)``, else ``'identity'``; the maps themselves are
    :func:`~metric_estimators._linalg.initialize_components` (an array
    ``init`` must already be validated).
    """
    n_samples, n_features = X.shape
    r = n_features if n_components is None else n_components
    if isinstance(init, str) and init == "auto":
        n_classes = np.unique(y_idx).size
        if r <= min(n_features, n_classes - 1):
            init = "lda"
        elif r < min(n_features, n_samples):
            init = "pca"
        else:
            init = "identity"
    return initialize_components(init, X, y_idx, r, random_state)
