"""ITML_Supervised on digits: cold (fresh process) against warm fit time of ours.

    python benchmarks/bench_itml_coldwarm.py --runs 3   # -> benchmarks/results/itml_coldwarm.{json,md}

``bench_itml.py`` times the first fit in a fresh process, which includes
numba's one-off start-up. This separates the parts: ``--runs`` fresh processes
time the first fit directly (row ``numba_first=False``) and ``--runs`` more
time numba's start-up alone first (row ``numba_first=True``); every process
then times 5 more fits (warm). Each row keeps the best value of each measure
over its runs (all runs are in the JSON).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402

STEM = "itml_coldwarm"
MEASURES = ("first_fit", "numba_startup", "warm_fit")


def measure(args) -> list:
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info)
    rows = []
    for numba_first in (False, True):
        job = runner.Job("itml_coldwarm", "digits", "ours", {"numba_first": numba_first},
                         python=args.python)
        runs = [runner.run_job(job, **kw)[0] for _ in range(args.runs)]
        bad = [r for r in runs if "error" in r]
        if bad:
            rows.append(bad[0])
            continue
        row = dict(runs[-1])
        row["loadavg_start"] = runs[0]["loadavg_start"]
        row["runs"] = [{k: r[k] for k in MEASURES if k in r} for r in runs]
        row.update({k: min(r[k] for r in runs) for k in MEASURES if k in runs[0]})
        rows.append(row)
    return rows


def render(rows: list, stem: str = STEM) -> str:
    by = {r["params"].get("numba_first"): r for r in rows if "error" not in r}
    cold, split = by.get(False, {}), by.get(True, {})
    warm = min((r["warm_fit"] for r in by.values()), default=None)

    def fmt(v):
        return "–" if v is None else f"{v:.3f}"

    lines = runner.report_header(
        "ITML_Supervised on digits: cold against warm fit (ours)", stem, rows,
        [f"Runs per row: {len(cold.get('runs', []))} / {len(split.get('runs', []))}; "
         f"load 1m at start {runner.load_1m(cold) if cold else '–'}; best value kept."])
    lines += ["| measurement | seconds |", "|---|---:|",
              f"| first fit in a fresh process (what bench_itml.py times) | {fmt(cold.get('first_fit'))} |",
              f"| numba start-up alone (first call of a trivial njit function) | {fmt(split.get('numba_startup'))} |",
              f"| first fit after numba start-up (kernel cache load + fit) | {fmt(split.get('first_fit'))} |",
              f"| warm fit (best of 5 later fits) | {fmt(warm)} |", ""]
    if cold:
        lines.append(f"Sweeps: {cold['n_iter']}; 3-NN test accuracy {cold['accuracy']:.4f}.")
    for r in rows:
        if "error" in r:
            lines.append(f"error ({r['params']}): {r['error']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=600, repeat=False,
                                output=STEM)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.report:
        runner.save_rows(args.output, measure(args))
    print(runner.write_markdown(args.output, render(runner.load_rows(args.output), args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
