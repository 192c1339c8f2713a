"""Cold start: importing the package does no kernel work; the warm-up covers every kernel."""

import pytest
from fresh_process import assert_no_numba, modules_after

from metric_estimators import warmup


def _modules_after(code):
    return modules_after(code, timeout=300)


def test_import_loads_no_kernel_and_no_estimator_module():
    mods = _modules_after("import metric_estimators")
    assert_no_numba(mods)
    for name in ("lmnn", "itml", "ordinal", "metric_nearness", "correlation_clustering",
                 "project_and_forget"):
        assert f"metric_estimators.{name}" not in mods


def test_lmnn_import_loads_only_lmnn():
    mods = _modules_after("from metric_estimators import LMNN")
    assert "metric_estimators.lmnn" in mods
    for name in ("itml", "ordinal", "metric_nearness", "correlation_clustering",
                 "project_and_forget", "solvers.bregman", "_kernels.bregman",
                 "_kernels.shortest_paths"):
        assert f"metric_estimators.{name}" not in mods


def test_lazy_names_resolve_and_are_listed():
    import metric_estimators

    for name in metric_estimators.__all__:
        assert getattr(metric_estimators, name) is not None
        assert name in dir(metric_estimators)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        metric_estimators.nope  # noqa: B018
    # every name of the lazy table is public, and every public class is lazy
    assert set(metric_estimators._LAZY) <= set(metric_estimators.__all__)


def test_warmup_help(capsys):
    assert warmup.main(["--help"]) == 0
    assert "NUMBA_CACHE_DIR" in capsys.readouterr().out


@pytest.mark.slow
def test_warmup_calls_every_kernel_module():
    # compiles everything on a cold cache: minutes, hence slow
    stats = warmup.warm_up(verbose=False)
    assert stats
    unused = [name for name, (hits, misses) in stats.items() if hits + misses == 0]
    assert not unused, f"kernel modules the warm-up never calls: {unused}"


def test_warmup_rejects_unknown_arguments(capsys):
    assert warmup.main(["--nope"]) == 2
    assert "unrecognized arguments: --nope" in capsys.readouterr().err


def test_warmup_large_switch_is_restored():
    # --large runs the dense oracles' fits with the parallel kernels forced on
    from metric_estimators._kernels import (
        pair_oracle,
        short_edge_triangles,
        shortest_paths,
        triangle_oracle,
    )

    def switches():
        return (shortest_paths.PARALLEL_MIN_NODES, triangle_oracle.PARALLEL_MIN_NODES,
                short_edge_triangles.PARALLEL_MIN_NODES, pair_oracle.PARALLEL_MIN_POINTS)

    before = switches()
    with warmup._parallel_from(0):
        assert switches() == (0, 0, 0, 0)
    assert switches() == before
