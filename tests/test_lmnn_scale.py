"""LMNN at scale and its first-hour defaults.

solver='sgd' against the exact objective, warm_start, the callback, the
default stopping rule, progress output and the optional tqdm bar.
"""

import re
import sys
import types
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN, _backend
from metric_estimators._problems.lmnn import (
    LMNNObjective,
    SampledLMNNObjective,
    find_target_neighbors,
    uniform_subset,
)
from metric_estimators._reporting import FitReport, make_progress_bar
from metric_estimators.solvers.impostors import ImpostorSet
from metric_estimators.solvers.lbfgs import relative_change


def _iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _searched(obj, flat):
    """``obj(flat)`` after a first impostor search at ``flat`` (as the solvers do)."""
    imps = obj.impostors
    if imps.n_searches == 0:
        imps.refresh(*obj.search_point(flat))
    return obj(flat)


def _exact(X, y, L):
    """Squared-hinge loss per point with every impostor (L-BFGS's objective)."""
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**9, _backend.choose("lmnn", 1, 1))
    obj = LMNNObjective(X, targets, imps, 0.5, True, L.shape[0])
    return _searched(obj, L.ravel())[0] / X.shape[0]


# --------------------------------------------------------------------- sgd


def test_sampled_objective_is_exact_with_all_references():
    X, y = _iris()
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    L = np.random.RandomState(0).randn(3, 4)
    obj = SampledLMNNObjective(X, targets, y_idx, 0.5, 3, _backend.choose("lmnn", 1, 1))
    assert obj.full_loss(L.ravel()) == pytest.approx(_exact(X, y, L), rel=1e-12)
    # and the batch gradient over all anchors and references is the exact one
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**9, _backend.choose("lmnn", 1, 1))
    _, g = _searched(LMNNObjective(X, targets, imps, 0.5, True, 3), L.ravel())
    _, g_all = obj(L.ravel(), np.arange(150), np.arange(150))
    np.testing.assert_allclose(g_all, g / 150, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_sampled_gradient_finite_differences(seed):
    X, y = _iris()
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    rng = np.random.RandomState(seed)
    L = rng.randn(3, 4)
    obj = SampledLMNNObjective(X, targets, y_idx, 0.5, 3, _backend.choose("lmnn", 1, 1))
    batch = np.sort(rng.choice(150, 20, replace=False))
    refs = np.sort(rng.choice(150, 60, replace=False))
    _, g = obj(L.ravel(), batch, refs)
    eps = 1e-6
    num = np.array([
        (obj(L.ravel() + eps * e, batch, refs)[0]
         - obj(L.ravel() - eps * e, batch, refs)[0]) / (2 * eps)
        for e in np.eye(L.size)])
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-6 * np.abs(num).max())


def _sampled_reference(X, targets, y_idx, mu, L, batch, refs):
    """The sampled loss and gradient by dense numpy, term by term."""
    n = X.shape[0]
    scale = max(n / refs.size, 1.0) * mu
    loss, G = 0.0, np.zeros_like(L)
    for i in batch:
        for j in targets[i][targets[i] >= 0]:
            dij = X[i] - X[j]
            d_ij = np.sum((L @ dij) ** 2)
            loss += (1 - mu) * d_ij
            G += 2 * (1 - mu) * np.outer(L @ dij, dij)
            for l in refs:
                if y_idx[l] == y_idx[i]:
                    continue
                dil = X[i] - X[l]
                h = 1 + d_ij - np.sum((L @ dil) ** 2)
                if h > 0:
                    loss += scale * h * h
                    G += 2 * scale * h * 2 * (np.outer(L @ dij, dij) - np.outer(L @ dil, dil))
    return loss / batch.size, G.ravel() / batch.size


@pytest.mark.parametrize("seed", range(2))
def test_sampled_objective_matches_dense_reference(seed):
    # a reference sample much smaller than n (scale n / m > 1) and anchors
    # with padded (-1) targets
    rng = np.random.RandomState(seed)
    X = rng.randn(120, 5)
    y_idx = rng.randint(0, 3, 120)
    targets = find_target_neighbors(X, y_idx, 3)
    targets[[4, 7], 2] = -1
    L = rng.randn(3, 5)
    batch = np.sort(np.r_[4, 7, rng.choice(np.r_[0:4, 8:120], 14, replace=False)])
    refs = np.sort(rng.choice(120, 25, replace=False))
    obj = SampledLMNNObjective(X, targets, y_idx, 0.4, 3, _backend.choose("lmnn", 1, 1))
    f, g = obj(L.ravel(), batch, refs)
    f_ref, g_ref = _sampled_reference(X, targets, y_idx, 0.4, L, batch, refs)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12 * np.abs(g_ref).max())


@pytest.mark.parametrize("n, m", [(10**6, 4096), (5000, 64), (100, 30), (50, 50), (40, 64)])
def test_uniform_subset_is_sorted_distinct_and_sized(n, m):
    idx = uniform_subset(np.random.RandomState(0), n, m)
    assert idx.size == min(n, m)
    assert np.all(np.diff(idx) > 0) and idx[0] >= 0 and idx[-1] < n


def test_uniform_subset_is_uniform_and_reproducible():
    # the drop-repeats path (4 m <= n): every index equally likely, the
    # sampled sets deterministic in the seed
    n, m, runs = 40, 10, 4000
    rng = np.random.RandomState(1)
    counts = np.zeros(n)
    for _ in range(runs):
        idx = uniform_subset(rng, n, m)
        counts[idx] += 1
    expected = runs * m / n
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))
    np.testing.assert_array_equal(uniform_subset(np.random.RandomState(5), 10**6, 300),
                                  uniform_subset(np.random.RandomState(5), 10**6, 300))


def test_sampled_objective_is_unbiased():
    X, y = _iris()
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    L = np.random.RandomState(1).randn(4, 4)
    obj = SampledLMNNObjective(X, targets, y_idx, 0.5, 4, _backend.choose("lmnn", 1, 1))
    rng = np.random.RandomState(0)
    est = np.mean([obj(L.ravel(), np.arange(150),
                       np.sort(rng.choice(150, 50, replace=False)))[0]
                   for _ in range(400)])
    assert est == pytest.approx(_exact(X, y, L), rel=0.02)


def test_sgd_reaches_lbfgs_objective_within_one_percent():
    X, y = _iris()
    ref = LMNN(random_state=0, tol=1e-7, max_iter=3000).fit(X, y)
    sgd = LMNN(solver="sgd", random_state=0, max_iter=200, batch_size=32,
               learn_rate=0.03, tol=1e-9).fit(X, y)
    f_ref = _exact(X, y, ref.components_)
    f_sgd = _exact(X, y, sgd.components_)
    assert f_sgd <= 1.01 * f_ref
    assert f_sgd < 0.7 * _exact(X, y, np.eye(4))  # it did learn


def test_sgd_is_deterministic_and_stops_on_callback():
    X, y = _iris()
    a = LMNN(solver="sgd", random_state=3, max_iter=5, batch_size=16).fit(X, y)
    b = LMNN(solver="sgd", random_state=3, max_iter=5, batch_size=16).fit(X, y)
    np.testing.assert_array_equal(a.components_, b.components_)
    seen = []

    def cb(est, it):
        seen.append((it, est.components_.copy()))
        return it == 2

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        c = LMNN(solver="sgd", random_state=3, max_iter=50, batch_size=16,
                 callback=cb).fit(X, y)
    assert [s[0] for s in seen] == [1, 2] and c.n_iter_ == 2
    np.testing.assert_array_equal(c.components_, seen[-1][1])


# ------------------------------------------------------ warm start, callback


@pytest.mark.parametrize("solver", ["lbfgs", "subgradient"])
def test_callback_stops_without_warning(solver):
    X, y = _iris()
    calls = []

    def cb(est, it):
        calls.append(it)
        assert est.components_.shape == (4, 4)
        return it >= 3

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lmnn = LMNN(solver=solver, callback=cb, random_state=0).fit(X, y)
    assert calls == [1, 2, 3] and lmnn.n_iter_ <= 3
    assert len(lmnn.loss_curve_) == 3


def test_warm_start_continues_from_components():
    X, y = _iris()
    full = LMNN(random_state=0, max_iter=1000).fit(X, y)
    warm = LMNN(random_state=0, warm_start=True, max_iter=1000).fit(X, y)
    first = warm.components_.copy()
    warm.fit(X, y)  # from a converged L: little left to do
    assert warm.n_iter_ < full.n_iter_
    assert warm.loss_curve_[0] <= full.loss_curve_[-1] * (1 + 1e-6)
    np.testing.assert_allclose(warm.components_, first, rtol=0.05, atol=0.05)
    # without warm_start a refit starts again from init
    cold = LMNN(random_state=0, max_iter=1000).fit(X, y)
    cold.fit(X, y)
    assert cold.n_iter_ == full.n_iter_


# ------------------------------------------------------------ defaults


@pytest.mark.parametrize("loader", [load_iris, load_wine, load_breast_cancer,
                                    load_digits])
def test_defaults_converge_on_bundled_data(loader):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        lmnn = LMNN(random_state=0).fit(X, y)
    assert lmnn.n_iter_ < LMNN().max_iter


def test_relative_change_rule():
    assert relative_change([110.0, 105.0, 100.0], 2) == pytest.approx(0.05)
    assert relative_change([100.0, 100.0], 1) == 0.0


# ------------------------------------------------------------ progress


def test_progress_lines_are_throttled(capsys):
    rep = FitReport("X", verbose=1, interval=10.0)
    assert rep.progress("inside") is False  # within 10 s of the start
    rep.phase("a phase")
    assert rep.progress("after phase") is False  # within 10 s of a line
    rep.interval = 0.0
    assert rep.progress("now") is True
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "a phase" in out[0] and "now" in out[1]
    assert FitReport("X", verbose=0, interval=0.0).progress("quiet") is False


def test_progress_bar_hook_uses_tqdm_auto(monkeypatch):
    made = []

    class FakeBar:
        def __init__(self, total, desc, **kwargs):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            self.lines = []
            made.append(self)

        def update(self, k):
            self.n += k

        def set_postfix_str(self, text, refresh=True):
            self.postfix = text

        def write(self, text, file=None):
            self.lines.append(text)

        def close(self):
            self.closed = True

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    assert make_progress_bar("auto", 1, 10, "LMNN") is None  # not a notebook
    assert make_progress_bar(False, 1, 10, "LMNN") is None
    monkeypatch.setattr("metric_estimators._reporting._in_notebook", lambda: True)
    X, y = _iris()
    lmnn = LMNN(max_iter=4, verbose=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lmnn.fit(X, y)
    assert len(made) == 1
    bar = made[0]
    assert bar.total == 4 and bar.desc == "LMNN" and bar.n == lmnn.n_iter_
    assert bar.closed and "Objective=" in bar.postfix
    assert any("Iteration" in ln for ln in bar.lines)  # text through the bar


def test_progress_bar_absent_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    assert make_progress_bar(True, 1, 10, "LMNN") is None


# -- the size-aware impostor budget -----------------------------------------

@pytest.mark.parametrize("value, expected", [
    (1000, 1000), ("1GB", 10**9), ("512 mb", 512 * 10**6), ("1.5GiB", 3 * 2**29),
    ("64k", 64000), ("2e6", 2 * 10**6), ("3 KiB", 3072),
])
def test_parse_memory_units(value, expected):
    from metric_estimators._validation import parse_memory

    assert parse_memory(value, "impostor_memory") == expected


@pytest.mark.parametrize("value, error, match", [
    ("lots", ValueError, r"impostor_memory='lots' is not a memory size.*'1GB'"),
    ("1 XB", ValueError, "not a memory size"),
    ("0MB", ValueError, "at least 1 byte"),
    (1.5, TypeError, "int \\(bytes\\) or a string"),
    (True, TypeError, "int \\(bytes\\) or a string"),
])
def test_parse_memory_errors(value, error, match):
    from metric_estimators._validation import parse_memory

    with pytest.raises(error, match=match):
        parse_memory(value, "impostor_memory")


def test_bad_impostor_memory_fails_before_the_fit(monkeypatch):
    import metric_estimators.lmnn as est

    def boom(*args, **kwargs):  # the target search must not even start
        raise AssertionError("fit went on with a bad impostor_memory")

    monkeypatch.setattr(est, "find_target_neighbors", boom)
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="impostor_memory='12 parsecs'"):
        LMNN(impostor_memory="12 parsecs").fit(X, y)
    with pytest.raises(ValueError, match="impostor_memory"):
        LMNN(impostor_memory=0).fit(X, y)


def test_auto_budget_scales_with_the_data():
    import metric_estimators.solvers.impostors as mod

    small = np.zeros((100, 4))
    big = np.zeros((100_000, 100))  # 80 MB: 4 x that is above the minimum
    cap, budget = mod.impostor_budget("auto", "auto", small)
    assert budget == mod.MIN_IMPOSTOR_MEMORY and cap == budget // mod.PAIR_BYTES
    cap, budget = mod.impostor_budget("auto", "auto", big)
    assert budget == mod.AUTO_MEMORY_FACTOR * big.nbytes
    assert cap == budget // mod.PAIR_BYTES
    assert mod.impostor_budget("auto", 10**9, small) == (10**9 // mod.PAIR_BYTES, 10**9)
    # an int max_impostors is the cap itself (PyLMNN's meaning)
    assert mod.impostor_budget(1234, 10**9, small) == (1234, None)


def test_impostor_memory_sets_the_cap_and_the_warning_prices_the_exact_loss():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=400, n_features=5, n_classes=4,
                               n_informative=3, random_state=0)
    lmnn = LMNN(impostor_memory="3kB", max_iter=15, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lmnn.fit(X, y)
    texts = [str(w.message) for w in caught if "max_impostors" in str(w.message)]
    assert len(texts) == 1, texts
    text = texts[0]
    assert "max_impostors=93 (impostor_memory=3 kB)" in text  # 3000 // 32
    assert re.search(r"impostor_memory >= [0-9.]+ [kMG]?B\): about [0-9.]+ [kMG]?B "
                     r"more memory", text), text
    assert re.search(r"roughly [0-9.e+-]+ s instead of [0-9.e+-]+ s on impostors per "
                     r"objective evaluation \(this search took", text), text
    # the same cap given directly gives the same fit
    same = LMNN(max_impostors=93, max_iter=15, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same.fit(X, y)
    np.testing.assert_array_equal(same.components_, lmnn.components_)


def test_impostor_store_is_int32():
    X, y = load_iris(return_X_y=True)
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**6, _backend.choose("lmnn", 1, 1))
    objective = LMNNObjective(X, targets, imps, 0.5, True, 4)
    _searched(objective, np.eye(4).ravel())
    assert imps.imp_i.dtype == np.int32 and imps.imp_l.dtype == np.int32
    assert imps.imp_i.size > 0


def test_hashed_scan_shrinks_on_overflow_and_matches_brute_force(monkeypatch):
    """The hashed sampled scan, when its budget overflows mid-scan, returns
    exactly the brute-force pairs of the final (smaller) fraction."""
    from sklearn.datasets import make_classification

    import metric_estimators.solvers.impostors as mod
    from metric_estimators._kernels.lmnn import pair_uniform, point_hashes

    monkeypatch.setattr(mod, "HASHED_SCAN_FRACTION", 1.0)
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3,
                               n_classes=3, random_state=1)
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 400, _backend.choose("lmnn", 1, 1), seed=5)
    imps.hashes = point_hashes(300, 5)
    imps.fraction = 0.9  # far too many pairs for a cap of 400: it must shrink
    imps.since_search = 0
    Z = X @ np.eye(5)
    D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    R = D[np.arange(300)[:, None], targets].max(1) + 1
    a, b = imps._search(Z, R)
    assert imps.fraction < 0.9 and a.size <= 400
    assert a.dtype == np.int32
    ii, ll = np.nonzero((y[:, None] != y[None]) & (D < mod.SLACK * R[:, None]))
    keep = pair_uniform(ii, ll, imps.hashes) < imps.fraction
    assert set(zip(a.tolist(), b.tolist())) == set(zip(ii[keep].tolist(), ll[keep].tolist()))
    # ordered by anchor, then impostor
    order = np.lexsort((b, a))
    assert np.array_equal(order, np.arange(a.size))


def _reference_sampled_pairs(Z, y_idx, hashes, fraction, rho, start, stop):
    """Plain numpy: every pair tested, in the same (anchor, impostor) order."""
    from metric_estimators._kernels.numpy.lmnn import _uniform

    out_a, out_b = [], []
    for a in range(start, stop):
        if not rho[a] > 0.0:
            continue
        d = ((Z[a] - Z) ** 2).sum(axis=1)
        u = _uniform(np.full(Z.shape[0], hashes[0, a]), hashes[1])
        b = np.flatnonzero((y_idx != y_idx[a]) & (u < fraction) & (d < rho[a]))
        out_a.extend([a] * b.size)
        out_b.extend(b.tolist())
    return np.array(out_a, dtype=np.int32), np.array(out_b, dtype=np.int32)


@pytest.mark.parametrize("n", [1, 7, 9, 64, 133])
@pytest.mark.parametrize("fraction", [1.0, 0.3, 0.01, 0.0])
def test_sampled_pairs_within_matches_numpy_reference(n, fraction):
    """The two-pass kernel (byte mask, eight bytes skipped at a time) against
    a plain per-anchor test of every pair, n not a multiple of 8 included."""
    from metric_estimators._kernels import lmnn as nb

    rng = np.random.RandomState(n)
    Z = rng.randn(n, 5)
    y_idx = rng.randint(0, 3, n)
    H = nb.point_hashes(n, 11)
    rho = np.abs(rng.randn(n)) * 12.0
    rho[::5] = -np.inf  # anchors without targets
    for start, stop in ((0, n), (n // 3, n // 2 + 1)):
        got = nb.sampled_pairs_within(Z, y_idx, H, fraction, rho, start, stop, 1)
        want = _reference_sampled_pairs(Z, y_idx, H, fraction, rho, start, stop)
        assert got[0].dtype == got[1].dtype == np.int32
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    if fraction == 1.0 and n > 9:
        assert want[0].size > 0  # the test compares something


@pytest.mark.parametrize("cap", [10**6, 400])
def test_threaded_hashed_search_equals_the_serial_one(cap, monkeypatch):
    """Chunks scanned on several threads give the serial result: the same
    pairs in the same order and the same final fraction, also when the budget
    overflows and the fraction shrinks mid-search."""
    from sklearn.datasets import make_classification

    import metric_estimators.solvers.impostors as mod
    from metric_estimators._kernels.lmnn import point_hashes

    X, y = make_classification(n_samples=600, n_features=6, n_informative=4,
                               n_classes=4, random_state=2)
    _, y_idx = np.unique(y, return_inverse=True)
    targets = find_target_neighbors(X, y_idx, 3)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    R = D[np.arange(600)[:, None], targets].max(1) + 1
    results = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(mod, "THREADED_SEARCH_SAMPLES", 1)
        imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), cap,
                           _backend.choose("lmnn", 1, 1), seed=4, threads=threads)
        imps.hashes = point_hashes(600, 4)
        imps.fraction = 0.6
        a, b = imps._search_hashed(X, mod.SLACK * R)
        results.append((a, b, imps.fraction))
    for a, b, fraction in results[1:]:
        np.testing.assert_array_equal(a, results[0][0])
        np.testing.assert_array_equal(b, results[0][1])
        assert fraction == results[0][2]
    assert (results[0][2] < 0.6) == (cap == 400)
    assert 0 < results[0][0].size <= cap


@pytest.mark.parametrize("n_threads", [1, 2, 5])
def test_ordered_map_keeps_order_and_bounds_lookahead(n_threads):
    """Results come back in the items' order, however long each takes, and
    no item starts more than ``ahead`` items before the consumer took it."""
    import threading
    import time

    from metric_estimators._threads import ordered_map

    consumed = []
    lead = []
    lock = threading.Lock()

    def func(i):
        with lock:
            lead.append(i - len(consumed))
        time.sleep(0.002 * ((7 * i) % 5))  # uneven durations
        return i * i

    for value in ordered_map(func, range(40), n_threads, ahead=3):
        consumed.append(value)
    assert consumed == [i * i for i in range(40)]
    assert max(lead) <= max(3, n_threads) if n_threads > 1 else max(lead) == 0


def test_search_threads_is_bounded():
    from metric_estimators.solvers.impostors import MAX_SEARCH_THREADS, search_threads

    assert 1 <= search_threads() <= MAX_SEARCH_THREADS


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("fraction", [1.0, 0.4])
@pytest.mark.parametrize("nb", [1, 8, 13, 70])
def test_threshold_block_matches_numpy_reference(symmetric, fraction, nb):
    """The blockwise radius test (word-skipping second pass, branch-free first
    pass without sampling) against a plain numpy scan of the block."""
    from metric_estimators._kernels import lmnn as nb_kernels
    from metric_estimators._kernels.numpy.lmnn import _uniform

    rng = np.random.RandomState(nb)
    na, d = 11, 4
    rows = rng.permutation(200)[:na]
    cols = np.setdiff1d(np.arange(200), rows)[rng.permutation(200 - na)[:nb]]
    Z = rng.randn(200, d)
    H = nb_kernels.point_hashes(200, 3)
    sq = (Z ** 2).sum(1)
    rho = np.abs(rng.randn(200)) * 10.0
    rho[rows[::4]] = -np.inf
    for dtype in (np.float64, np.float32):
        G = (Z[rows].astype(dtype) @ Z[cols].astype(dtype).T)
        got = nb_kernels.threshold_block(G, sq[rows], sq[cols], rho[rows], rho[cols],
                                         rows, cols, symmetric, H, fraction)
        D = sq[rows][:, None] + sq[cols][None, :] - 2.0 * G.astype(np.float64)
        fwd = (D < rho[rows][:, None]) & (
            _uniform(H[0, rows][:, None], H[1, cols][None, :]) < fraction)
        bwd = (D < rho[cols][None, :]) & (
            _uniform(H[0, cols][None, :], H[1, rows][:, None]) < fraction) & symmetric
        want_a, want_b = [], []
        for a in range(na):  # by row, then column; forward pair first
            for b in range(nb):
                if fwd[a, b]:
                    want_a.append(rows[a])
                    want_b.append(cols[b])
                if bwd[a, b]:
                    want_a.append(cols[b])
                    want_b.append(rows[a])
        np.testing.assert_array_equal(got[0], np.array(want_a, dtype=np.int32))
        np.testing.assert_array_equal(got[1], np.array(want_b, dtype=np.int32))
        if nb > 8:
            assert len(want_a) > 0
