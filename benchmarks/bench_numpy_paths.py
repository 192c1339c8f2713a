"""Warm fits on the numpy twins and on the numba kernels, by size: the twins' limits.

    python benchmarks/bench_numpy_paths.py --only ITML_Supervised,ProjectAndForget --output numpy_paths_threshold_logdet
    python benchmarks/bench_numpy_paths.py --only MetricNearness,CorrelationClustering --output numpy_paths_threshold_cycles
    python benchmarks/bench_numpy_paths.py --only LMNN,MLKR,SCML_Supervised,LODML,LSML_Supervised --output numpy_paths_threshold_gradient

One job per estimator (``benchmarks/workers/twin_limits.py``, through the
runner): in one process with one BLAS thread, a warm fit on each path over
a range of sizes, the data behind the limits of
``metric_estimators._backend.FAMILIES``.  The cold side of the limits (first
fits on an empty numba cache, per backend mode) is measured by
``benchmarks/bench_first_contact.py --modes``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.twin_limits import ESTIMATORS  # noqa: E402

STEM = "numpy_paths_threshold"


def render(rows: list, stem: str = STEM) -> str:
    """One line per estimator and problem: CPU of a warm fit on each path."""
    loads = sorted({runner.load_1m(r) for r in rows if runner.load_1m(r) is not None})
    lines = runner.report_header(
        "Warm fits on the numpy and the numba path, by size", stem, rows,
        ["CPU seconds of one warm fit (after an untimed one), one BLAS thread, the path "
         "forced with `metric_estimators._backend.use`; *surcharge*: numpy minus numba. "
         "1-minute load average at the start of the jobs: "
         + (f"{loads[0]:.2f} - {loads[-1]:.2f}." if loads else "–."),
         *dict.fromkeys((r.get("run") or {}).get("note") for r in rows
                        if (r.get("run") or {}).get("note"))])
    lines += ["| estimator | data | numpy (s) | numba (s) | surcharge (s) "
              "| iterations numpy / numba |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['params'].get('estimator', r['dataset'])} | {r['dataset']} "
                         f"| error: {r['error'][:80]} | | | |")
            continue
        lines.append(f"| {r['estimator']} | {r['data']} | {r['numpy']:.3f} | "
                     f"{r['numba']:.3f} | {r['numpy'] - r['numba']:+.3f} | "
                     f"{r['numpy_n_iter']} / {r['numba_n_iter']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.add_argument("--only", default=",".join(ESTIMATORS),
                        help=f"comma-separated estimators (default: {', '.join(ESTIMATORS)})")
    args = parser.parse_args(argv)
    jobs = [runner.Job("twin_limits", name, "ours", {}, python=args.python)
            for name in runner.csv(args.only)]
    return runner.execute(args.output, jobs, args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
