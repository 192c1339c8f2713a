"""MLKR's defaults against regularised variants: 3-NN R^2 over splits and data sets.

    python benchmarks/bench_mlkr_variants.py                        # about 2 min
    python benchmarks/bench_mlkr_variants.py --impls metric_learn   # metric-learn's MLKR
    python benchmarks/bench_mlkr_variants.py --report               # re-render only

One job per data set, split seed and implementation
(``benchmarks/workers/mlkr_variants.py``, whose docstring gives the protocol
and the variants), through the runner; metric-learn's jobs run in its
environment (``benchmarks/peers.py``).  Accuracies only; no time is
measured, so the benchmark lock is not needed.  Writes
``benchmarks/results/mlkr_variants.{json,md}``.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.mlkr_variants import DATASETS  # noqa: E402

STEM = "mlkr_variants"


def render(rows: list, stem: str = STEM) -> str:
    """Mean 3-NN R^2 per variant and data set."""
    rows = [{**r, "variant": r["params"]["variant"], "seed": r["params"]["seed"]}
            for r in rows if "error" not in r]
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    names = [n for n in DATASETS if any(r["dataset"] == n for r in rows)]
    lines = runner.report_header(
        "MLKR at its defaults against regularised variants (3-NN R^2)", stem, rows,
        [*dict.fromkeys((r.get("run") or {}).get("note") for r in rows
                        if (r.get("run") or {}).get("note"))])
    lines += [
        "The protocol and the variants: `benchmarks/workers/mlkr_variants.py`. "
        "Mean 3-NN R^2 over the split seeds (diabetes "
        "0-5, the synthetic sets 0-2); `diabetes seed 0` is the split of "
        "`benchmarks/bench_defaults.py` (with one BLAS thread here, so the "
        "non-converged default fit ends elsewhere than in `results/defaults.md`); "
        "`converged`: fits that stopped before their iteration budget, without a "
        "warning, per data set in column order (metric-learn's MLKR gave no "
        "warning but does not say whether it reached its budget).",
        "",
        "| variant | diabetes seed 0 | " + " | ".join(f"{n} (mean)" for n in names)
        + " | converged |",
        "|---" * (len(names) + 3) + "|",
    ]
    for v in variants:
        sel = [r for r in rows if r["variant"] == v]
        seed0 = [r["r2"] for r in sel if r["dataset"] == "diabetes" and r["seed"] == 0]
        means = [np.mean([r["r2"] for r in sel if r["dataset"] == n]) for n in names]
        conv = " / ".join(
            f"{sum(r['no_warning'] for r in fits)}/{len(fits)}"
            for fits in ([r for r in sel if r["dataset"] == n and r["n_iter"] is not None
                          and r["no_warning"] is not None] for n in names) if fits) or "–"
        first = f"{seed0[0]:.3f}" if seed0 else "–"
        lines.append(f"| {v} | {first} | " + " | ".join(f"{m:.3f}" for m in means)
                     + f" | {conv} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=600, repeat=False,
                                output=STEM)
    parser.add_argument("--impls", default="ours", help="ours and/or metric_learn")
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help=f"comma-separated (default: {', '.join(DATASETS)})")
    args = parser.parse_args(argv)
    jobs = [runner.Job("mlkr_variants", name, impl, {"seed": seed},
                       python=None if impl in runner.PEER_IMPLS else args.python)
            for impl in runner.csv(args.impls) for name in runner.csv(args.datasets)
            for seed in DATASETS[name]]
    return runner.execute(args.output, jobs, args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
