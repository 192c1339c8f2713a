"""L-BFGS (scipy's L-BFGS-B), once or with restarts when the objective changes.

:func:`lbfgs` is one run of scipy's L-BFGS-B with a per-iteration callback
(OMDML's matrix-free path, MLKR, NCA), optionally stopped by the windowed
test below (``window_tol``).  :func:`lbfgs_with_restarts` serves objectives
that are refreshed during the run, such as LMNN's loss on an impostor active
set: L-BFGS goes on through a refresh (restarting it, and losing its
curvature pairs, costs more than the small change of objective), but a run
whose stopping test compared different objectives is restarted from where it
stopped, and the result is only accepted once ``confirm(x)`` says that the
objective at the final ``x`` is the true one.

Besides scipy's own tests, :func:`lbfgs_with_restarts` can stop on the
*relative objective change over a window* (``ftol``, ``window``): when the
objective, since the last change of the objective, decreased by less than
``ftol`` per iteration, relative, over the last ``window`` iterations.  On
losses that sum many hinge terms the projected gradient stays large long
after the objective has settled (each hinge switching on or off changes the
gradient by a finite amount), so a gradient test alone runs many
iterations that change nothing a user sees.
The callback may also ask to stop (return True).
"""

from scipy.optimize import minimize

__all__ = ["lbfgs", "lbfgs_with_restarts"]


def lbfgs(fun, x0, *, max_iter, gtol, ftol=None, callback=None,
          window_tol=None, window=10):
    """One run of scipy's L-BFGS-B on ``fun(x) -> (f, grad)``.

    Parameters
    ----------
    fun : callable
        Objective and gradient, ``x`` flat.
    x0 : ndarray of shape (n,)
        Starting point.
    max_iter : int
        Most iterations (scipy's ``maxiter``).
    gtol : float
        Tolerance on the projected gradient (scipy's ``gtol``).
    ftol : float or None, default=None
        Relative decrease tolerance (scipy's ``ftol``); None keeps scipy's
        default.
    callback : callable or None, default=None
        ``callback(x, f)`` after every iteration; returning True stops the
        run (``status == 99``).
    window_tol : float or None, default=None
        Also stop once the objective decreased by less than ``window_tol``
        per iteration, relative, over the last ``window`` iterations
        (:func:`settled`): a test on the progress of the run rather
        than on one step, which a single short step does not trigger.  The
        run then counts as converged (``status == 0``, ``success`` True).
        None: scipy's tests only.
    window : int, default=10
        See ``window_tol``.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``status == 1`` when ``max_iter`` was reached.
    """
    options = {"maxiter": max_iter, "gtol": gtol}
    if ftol is not None:
        options["ftol"] = ftol
    history = []
    windowed = {"stopped": False}

    def scipy_callback(intermediate_result):
        f = float(intermediate_result.fun)
        if callback is not None and callback(intermediate_result.x, f):
            raise StopIteration
        if window_tol is not None:
            history.append(f)
            if settled(history, window_tol, window):
                windowed["stopped"] = True
                raise StopIteration

    needed = callback is not None or window_tol is not None
    result = minimize(fun, x0, method="L-BFGS-B", jac=True,
                      callback=scipy_callback if needed else None,
                      options=options)
    if windowed["stopped"]:
        result.status, result.success = 0, True
        result.message = (f"relative decrease below {window_tol:g} per "
                          f"iteration over the last {window} iterations")
    return result


def relative_change(history, window):
    """Mean relative decrease per iteration over the last ``window`` values of ``history``."""
    old, new = history[-1 - window], history[-1]
    return (old - new) / (window * max(abs(new), 1e-300))


def settled(history, tol, window):
    """Whether ``history`` spans more than ``window`` iterations and fell by
    less than ``tol`` per iteration, relative, over the last ``window``."""
    return len(history) > window and relative_change(history, window) < tol


def lbfgs_with_restarts(fun, x0, *, max_iter, gtol, callback=None,
                        version=None, confirm=None, ftol=None, window=10):
    """L-BFGS-B on an objective that may change during the run.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (f, grad)`` with ``x`` flat.
    x0 : ndarray of shape (n,)
        Starting point.
    max_iter : int
        Most iterations over all runs (a run that stops at once counts 1).
    gtol : float
        Tolerance on the projected gradient of each run.
    callback : callable or None, default=None
        ``callback(x, f)`` after every iteration; it may refresh ``fun``, and
        returning True stops the whole solve (``converged`` is then False).
    version : callable or None, default=None
        ``version() -> int``, a counter that changes whenever ``fun`` was
        changed (by the callback or by ``fun`` itself).  A run during which
        it changed, or whose line search failed, is restarted.
    confirm : callable or None, default=None
        ``confirm(x) -> bool`` when a run stops on an unchanged objective:
        True accepts ``x``; False says ``fun`` changed at ``x``, and a new run
        starts there.
    ftol : float or None, default=None
        Stop (then ``confirm``) once the objective decreased by less than
        ``ftol`` per iteration, relative, over the last ``window`` iterations
        during which ``version()`` did not change (:func:`relative_change`).
        None: scipy's tests only.
    window : int, default=10
        See ``ftol``.

    Returns
    -------
    x : ndarray of shape (n,)
    n_iter : int
    converged : bool
        False when ``max_iter`` was reached first.
    """
    x = x0
    n_iter = 0
    converged = False
    state = {"history": [], "version": None, "why": None}

    def watch(xk, f):
        if callback is not None and callback(xk, f):
            state["why"] = "callback"
            return True
        now = None if version is None else version()
        if now != state["version"]:  # the objective changed: new window
            state["version"], state["history"] = now, []
        history = state["history"]
        history.append(f)
        if ftol is not None and settled(history, ftol, window):
            state["why"] = "ftol"
            return True
        return False

    while n_iter < max_iter:
        before = None if version is None else version()
        state["why"] = None
        res = lbfgs(fun, x, max_iter=max_iter - n_iter, gtol=gtol,
                    callback=watch)
        x = res.x
        n_iter += max(int(res.nit), 1)
        if state["why"] == "callback":
            break
        if state["why"] == "ftol":
            if confirm is None or confirm(x):
                converged = True
                break
            state["history"] = []  # the objective changed at x
            continue
        if res.status == 1:  # max_iter
            break
        if res.nit > 0 and (
            res.status != 0 or (version is not None and version() != before)
        ):
            # the objective changed during the run, so its stopping test (or
            # failed line search) compared different objectives: restart
            continue
        # converged, or a fresh run cannot decrease the objective: confirm
        if confirm is None or confirm(x):
            converged = True
            break
    return x, n_iter, converged
