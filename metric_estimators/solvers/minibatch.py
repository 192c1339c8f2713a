"""Mini-batch AMSGrad for objectives that are sums over points.

Reddi, S. J., Kale, S. and Kumar, S. (2018). On the convergence of Adam and
beyond. ICLR.  (AMSGrad: Adam whose second-moment estimate never decreases.)

:func:`minibatch_amsgrad` minimises ``(1/n) sum_i f_i(x)`` from unbiased
estimates ``fun(x, batch, rng) -> (f_B, g_B)`` on mini-batches of point
indices.  An *epoch* visits every point once in a random order (a fresh
permutation per epoch from ``random_state``, so a seed fixes the run).  The
step decays as ``learn_rate / sqrt(epoch)``, the usual rate for stochastic
gradients; the run stops after ``max_epochs`` or once the mean batch
objective has not improved on its best by more than ``tol`` (relative) for
``patience`` epochs (a single epoch's mean is too noisy to decide).  The
result is the average of the iterates of the last epoch (Polyak-Ruppert
averaging), which removes most of the noise of the last steps.  Estimators
never hold this loop.
"""

import numpy as np

__all__ = ["MinibatchResult", "minibatch_amsgrad"]

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


class MinibatchResult:
    """Outcome of :func:`minibatch_amsgrad`.

    Attributes
    ----------
    x : ndarray
        The average iterate of the last epoch.
    n_iter : int
        Epochs run.
    converged : bool
        True when the ``tol`` test stopped the run.
    stopped : bool
        True when the callback asked to stop.
    epoch_loss : list of float
        Mean batch objective of each epoch.
    """

    def __init__(self, x, n_iter, converged, stopped, epoch_loss):
        self.x = x
        self.n_iter = n_iter
        self.converged = converged
        self.stopped = stopped
        self.epoch_loss = epoch_loss


def minibatch_amsgrad(fun, x0, n_samples, *, batch_size, max_epochs,
                      learn_rate, tol, random_state, callback=None,
                      patience=5, progress=None):
    """Minimise a mean over points by mini-batch AMSGrad.

    Parameters
    ----------
    fun : callable
        ``fun(x, batch, rng) -> (f, g)``: unbiased estimates of the mean
        objective and its gradient (flat) from the points ``batch``; ``rng``
        (a RandomState) for any further sampling.
    x0 : ndarray of shape (n,)
        Starting point.
    n_samples : int
        Number of points.
    batch_size : int
        Points per batch (the last batch of an epoch may be smaller).
    max_epochs : int
        Most epochs.
    learn_rate : float
        Step of the first epoch.
    tol : float
        Stop when for ``patience`` epochs no epoch's mean objective was below
        ``(1 - tol)`` times the best before them.
    random_state : RandomState
        Order of the points and the ``rng`` passed to ``fun``.
    callback : callable or None, default=None
        ``callback(epoch, x, f_epoch) -> bool`` after every epoch (``x`` the
        epoch's average iterate); True stops.
    patience : int, default=5
        See ``tol``.
    progress : callable or None, default=None
        ``progress(text)`` after every batch (the caller throttles).

    Returns
    -------
    result : MinibatchResult
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    v_hat = np.zeros_like(x)
    t = 0
    losses = []
    converged = stopped = False
    epoch = 0
    batch_size = max(1, min(int(batch_size), n_samples))
    while epoch < max_epochs:
        epoch += 1
        step = learn_rate / np.sqrt(epoch)
        order = random_state.permutation(n_samples)
        total = 0.0
        x_sum = np.zeros_like(x)
        n_batches = 0
        for start in range(0, n_samples, batch_size):
            batch = np.sort(order[start:start + batch_size])
            f, g = fun(x, batch, random_state)
            total += f * batch.size
            t += 1
            m = BETA1 * m + (1 - BETA1) * g
            v = BETA2 * v + (1 - BETA2) * g * g
            np.maximum(v_hat, v, out=v_hat)
            m_hat = m / (1 - BETA1 ** t)
            x -= step * m_hat / (np.sqrt(v_hat / (1 - BETA2 ** t)) + EPS)
            x_sum += x
            n_batches += 1
            if progress is not None:
                progress(f"epoch {epoch}: {start + batch.size} of "
                         f"{n_samples} points, batch objective {f:.6e}")
        x_avg = x_sum / n_batches
        losses.append(total / n_samples)
        if callback is not None and callback(epoch, x_avg, losses[-1]):
            stopped = True
            break
        if len(losses) > patience:
            best_before = min(losses[:-patience])
            if min(losses[-patience:]) > (1.0 - tol) * best_before:
                converged = True
                break
    return MinibatchResult(x_avg if epoch else x, epoch, converged, stopped,
                           losses)
