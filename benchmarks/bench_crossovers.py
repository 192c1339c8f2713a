"""Where a path switch of the package pays: numba start-up against kernel costs.

    python benchmarks/bench_crossovers.py --threads 1                # every study
    python benchmarks/bench_crossovers.py --studies lmnn --threads 1
    python benchmarks/bench_crossovers.py --report

Three studies, one fresh process per measurement
(``benchmarks/workers/crossovers.py`` says exactly what each times):

``lmnn``
    numba's start-up for an LMNN fit (3 fresh processes) against the warm fit
    time with the numpy and the numba kernels: the basis of
    the lmnn family's limits (``metric_estimators/_backend.py``).
``lsml``
    the same for LSML's evaluation (the kernels of
    ``metric_estimators/_kernels/lsml.py`` and their numpy twins).
``triangle``
    the short-edge triangle search against the dense oracle on iterates with
    a growing fraction of short pairs (``--triangle-n`` nodes): the basis of
    ``ShortEdgeTriangleOracle``'s ``dense_fraction``.

Results merge into ``benchmarks/results/crossovers.json``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "crossovers"
STUDIES = ("lmnn", "lsml", "triangle")
LMNN_SETS = ("wine", "breast_cancer", "digits", "synth-250-20", "synth-500-20",
             "synth-1000-20", "synth-2500-20")
LSML_SIZES = [f"{n}x{d}" for n in (80, 180, 500, 2000, 10000) for d in (13, 30, 64)]
TRIANGLE_CLUSTERS = (200, 50, 20, 8, 4, 2)
STARTUP_RUNS = 3


def jobs(args) -> list:
    out = []
    py = args.python
    if "lmnn" in args.studies:
        out += [runner.Job("crossovers", "-", "lmnn_startup", {"run": r}, python=py)
                for r in range(STARTUP_RUNS)]
        out += [runner.Job("crossovers", name, "lmnn_kernels", {}, python=py)
                for name in LMNN_SETS]
    if "lsml" in args.studies:
        out += [runner.Job("crossovers", "-", "lsml_startup", {"run": r}, python=py)
                for r in range(STARTUP_RUNS)]
        out += [runner.Job("crossovers", name, "lsml_kernels", {}, python=py)
                for name in LSML_SIZES]
    if "triangle" in args.studies:
        out += [runner.Job("crossovers", f"n{args.triangle_n}-k{k}", "triangle_oracle", {},
                           python=py) for k in TRIANGLE_CLUSTERS]
    return out


def _startups(rows, impl):
    values = [r["startup_cpu_s"] for r in rows if r["impl"] == impl and "startup_cpu_s" in r]
    return ", ".join(f"{v:.3f}" for v in values) or "not measured"


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header(
        "Where a path switch pays: numba start-up against kernel costs", stem, rows,
        ["CPU times (`time.process_time`) unless the column says seconds of wall time; "
         "`benchmarks/workers/crossovers.py` describes every measurement."])
    load = Column("load 1m", runner.load_1m, "{:.2f}")
    note = Column("note", runner.error_note)
    lines += ["## LMNN: numpy against numba kernels", "",
              "numba start-up of an LMNN fit, CPU s (fresh processes): "
              + _startups(rows, "lmnn_startup"), "",
              runner.markdown_table([r for r in rows if r["impl"] == "lmnn_kernels"], [
                  Column("data", "dataset"), Column("points", "n_samples"),
                  Column("numpy (CPU s)", "numpy_cpu_s", "{:.3f}"),
                  Column("numba (CPU s)", "numba_cpu_s", "{:.3f}"),
                  Column("numpy - numba", "numpy_minus_numba_s", "{:.3f}"),
                  Column("threads", "threads"), load, note])]
    lines += ["## LSML: one evaluation, numba against numpy", "",
              "numba start-up of LSML's kernels, CPU s (fresh processes): "
              + _startups(rows, "lsml_startup"), "",
              runner.markdown_table([r for r in rows if r["impl"] == "lsml_kernels"], [
                  Column("quadruplets", "n_quadruplets"), Column("features", "n_features"),
                  Column("numba (CPU ms)", "numba_ms", "{:.3f}"),
                  Column("numpy (CPU ms)", "numpy_ms", "{:.3f}"),
                  Column("threads", "threads"), load, note])]
    lines += ["## Short-edge against dense triangle oracle", "",
              runner.markdown_table([r for r in rows if r["impl"] == "triangle_oracle"], [
                  Column("instance", "dataset"),
                  Column("short fraction", "short_fraction", "{:.3f}"),
                  Column("short-edge (s)", "short_edge_s", "{:.2f}"),
                  Column("dense float32 (s)", "dense_float32_s", "{:.2f}"),
                  Column("dense float64 (s)", "dense_float64_s", "{:.2f}"),
                  Column("threads", "threads"), load, note])]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=900, repeat=False,
                                output=STEM)
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=STUDIES)
    parser.add_argument("--triangle-n", type=int, default=800,
                        help="nodes of the triangle-oracle study (default 800)")
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
