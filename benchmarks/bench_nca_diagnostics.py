"""Where NCA fits end: training objective, scale and 3-NN accuracy, ours against pyDML.

    python benchmarks/bench_nca_diagnostics.py                 # wine, vehicle, mcn-360
    python benchmarks/bench_nca_diagnostics.py --report        # re-render only

On the first folds of the accuracy panel (``benchmarks/workers/nca_diagnostics.py``
gives the protocol and the quantities), our NCA at its defaults, ours with
the penalty ``reg='auto', tol=1e-5``, and pyDML's NCA (its own environment,
``benchmarks/peers.py``): the mean leave-one-out objective ``f / n`` the fit
reaches on its training part, the size ``‖L S‖_F`` of the map on
standardised features, and the 3-NN accuracy on the test part.  No time is
measured.  Writes ``benchmarks/results/nca_diagnostics.{json,md}``.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.nca_diagnostics import VARIANTS  # noqa: E402

STEM = "nca_diagnostics"
DATASETS = ("wine", "keel-vehicle", "mcn-360-90-12-15-20-0")


def render(rows: list, stem: str = STEM) -> str:
    """Per data set and variant: means over the folds run."""
    rows = [r for r in rows if "error" not in r]
    lines = runner.report_header(
        "NCA fits: training objective, scale and test accuracy", stem, rows,
        ["Protocol: `benchmarks/workers/nca_diagnostics.py`. Means over the folds "
         "run (the accuracy panel's first folds). `f / n`: NCA's objective on the "
         "training part over its size (1: every soft neighbourhood is pure); "
         "`‖L S‖_F`: the map's size on standardised features; `3-NN`: test "
         "points right over test points of those folds; `iterations`: L-BFGS-B's "
         "(pyDML runs 100 epochs of single-point steps and reports none)."])
    lines += ["| data set | variant | folds | f / n | ‖L S‖_F | 3-NN | iterations |",
              "|---|---|---|---|---|---|---|"]
    names = [d for d in DATASETS if any(r["dataset"] == d for r in rows)]
    names += sorted({r["dataset"] for r in rows} - set(names))
    for name in names:
        for variant in VARIANTS:
            sel = [r for r in rows if r["dataset"] == name
                   and r["params"]["variant"] == variant]
            if not sel:
                continue
            its = [r["n_iter"] for r in sel if r.get("n_iter") is not None]
            accuracy = sum(r["correct"] for r in sel) / sum(r["n_test"] for r in sel)
            lines.append(
                f"| {name} | {variant} | {len(sel)} | "
                f"{np.mean([r['f_over_n'] for r in sel]):.4f} | "
                f"{np.mean([r['scale'] for r in sel]):.1f} | {accuracy:.4f} | "
                f"{f'{np.mean(its):.0f}' if its else '–'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help=f"comma-separated (default: {', '.join(DATASETS)})")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated names of the worker's VARIANTS")
    parser.add_argument("--n-folds-run", type=int, default=3,
                        help="the first N of the panel's 10 folds (default 3)")
    args = parser.parse_args(argv)
    jobs = []
    for variant in runner.csv(args.variants):
        impl = VARIANTS[variant][0]
        for name in runner.csv(args.datasets):
            jobs.append(runner.Job(
                "nca_diagnostics", name, impl,
                {"variant": variant, "folds": 10, "n_folds_run": args.n_folds_run},
                python=None if impl in runner.PEER_IMPLS else args.python))
    return runner.execute(args.output, jobs, args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
