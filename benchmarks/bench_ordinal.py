"""Ordinal metric learning: OMDML against LODML, NCA, LMNN and Euclidean k-NN.

    python benchmarks/bench_ordinal.py --splits 5    # -> results/ordinal.{json,md}, ordinal_ablation.{json,md}
    python benchmarks/bench_ordinal.py --report

One fresh process per (data set, learner) over all splits, one per data set
for OMDML's ablation (selection splits, seeds 100..), and one for the cold
start; ``benchmarks/workers/ordinal.py`` says what each measures.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.ordinal import ABLATION, DATASETS, LEARNERS  # noqa: E402

STEM = "ordinal"
ABLATION_STEM = "ordinal_ablation"
ABLATION_SEED = 100
NAMES = {"euclidean": "Euclidean", "OMDML": "OMDML", "LODML": "LODML",
         "NCA": "NCA (sklearn)", "LMNN": "LMNN (ours)"}
NOTES = (
    "Stratified 70/30 splits (seeds 0..splits-1), StandardScaler on the training "
    "part, default parameters for every learner. MAE: 5-NN median vote; tau: "
    "Kendall's tau-b of predicted against true rank; NDCG@10 with graded relevance "
    "1 - |gap|/range; P@10: exact-label precision of the 10 nearest training "
    "points. Means over splits. Fit time: numba kernels loaded before timing; one "
    "process per (data set, learner). n_iter per split; negative = max_iter was "
    "hit (ConvergenceWarning).",
)


def jobs(args) -> list:
    py = args.python
    out = [runner.Job("ordinal", "synth-200", "cold_start", {}, python=py)]
    for dataset in runner.csv(args.datasets):
        out += [runner.Job("ordinal", dataset, learner,
                           {"splits": args.splits, "first_seed": 0}, python=py)
                for learner in runner.csv(args.learners)]
    return out


def ablation_jobs(args) -> list:
    return [runner.Job("ordinal", dataset, "OMDML-ablation",
                       {"splits": args.splits, "first_seed": ABLATION_SEED}, python=args.python)
            for dataset in runner.csv(args.datasets)]


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header("Ordinal metric learning benchmark", stem, rows, NOTES)
    for cold in (r for r in rows if r["impl"] == "cold_start" and "error" not in r):
        lines += [f"Cold start in a fresh process: import {cold['import_s']:.2f} s, first "
                  f"OMDML fit {cold['omdml_first_fit_s']:.3f} s, first LODML fit (5 "
                  f"iterations, loads the numba cache) {cold['lodml_first_fit_s']:.3f} s.", ""]
    for dataset, title in DATASETS.items():
        here = [r for r in rows if r["dataset"] == dataset and r["impl"] in NAMES]
        if not here:
            continue
        lodml = next((r.get("fit_time") for r in here if r["impl"] == "LODML"), None)
        lines += [f"## {title}", "",
                  "| learner | splits | MAE | tau | NDCG@10 | P@10 | fit time (s) "
                  "| LODML time / time | n_iter | load 1m | note |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sorted(here, key=lambda r: LEARNERS.index(r["impl"])):
            if "error" in r:
                lines.append(f"| {NAMES[r['impl']]} | {r['params'].get('splits')} "
                             f"| | | | | | | | | {r['error'][:80]} |")
                continue
            ratio = f"{lodml / r['fit_time']:.3g}x" if lodml and r["fit_time"] > 0 else "–"
            load = runner.load_1m(r)
            lines.append(
                f"| {NAMES[r['impl']]} | {r['params'].get('splits')} | {r['mae']:.3f} "
                f"| {r['kendall_tau']:.3f} | {r['ndcg@10']:.3f} | {r['precision@10']:.3f} "
                f"| {r['fit_time']:.3f} | {ratio} | {r['n_iter']} "
                f"| {'–' if load is None else f'{load:.2f}'} | |")
        lines.append("")
    return "\n".join(lines)


def render_ablation(rows: list, stem: str = ABLATION_STEM) -> str:
    lines = runner.report_header(
        "OMDML ablation: the choices the paper's abstract leaves open", stem, rows,
        [f"Selection splits (seeds {ABLATION_SEED}.., disjoint from the seeds 0.. that "
         "results/ordinal.md reports on), same measures. Cells: MAE / NDCG@10 (means). "
         "The defaults of OMDML were chosen from this table."])
    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in rows)]
    lines += ["| variant | " + " | ".join(datasets) + " |", "|---|" + "---|" * len(datasets)]
    cell = {(r["dataset"], r["params"].get("variant")): r for r in rows}
    for variant in ABLATION:
        cells = []
        for d in datasets:
            r = cell.get((d, variant))
            cells.append("–" if r is None or "error" in r
                         else f"{r['mae']:.3f} / {r['ndcg@10']:.3f}")
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    errors = [r for r in rows if "error" in r]
    lines += [""] + [f"error ({r['dataset']}): {r['error']}" for r in errors]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--ablation", choices=["yes", "no", "only"], default="yes",
                        help="run OMDML's ablation too (default), not, or only it")
    args = parser.parse_args(argv)
    ablation_stem = args.output + "_ablation"
    code = 0
    if args.ablation != "no":  # with --report: only re-render
        code = runner.execute(ablation_stem, ablation_jobs(args), args, render_ablation,
                              skip_after_failure=False)
    if args.ablation != "only":
        code = runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)
    return code

if __name__ == "__main__":
    sys.exit(main())
