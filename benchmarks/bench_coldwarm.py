"""Cold (fresh process) against warm fit time of our LMNN or ITML_Supervised.

    python benchmarks/bench_coldwarm.py --algo itml_supervised --dataset digits --runs 3   # -> results/itml_coldwarm.{json,md}
    python benchmarks/bench_coldwarm.py --algo lmnn --dataset digits --runs 3              # -> results/lmnn_coldwarm.{json,md}

``bench_lmnn.py`` / ``bench_itml.py`` time the first fit in a fresh process,
which includes numba's one-off start-up. This separates the parts
(``benchmarks/workers/coldwarm.py``): ``--runs`` fresh processes time the
first fit directly (row ``numba_first=False``) and ``--runs`` more time
numba's start-up alone first (row ``numba_first=True``); every process then
times 5 more fits (warm). Each row keeps the best value of each measure over
its runs (every run is in the JSON).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402

STEMS = {"itml_supervised": "itml_coldwarm", "lmnn": "lmnn_coldwarm"}
NAMES = {"itml_supervised": "ITML_Supervised", "lmnn": "LMNN"}
MEASURES = ("first_fit", "numba_startup", "warm_fit")


def measure(args) -> list:
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info)
    rows = []
    for numba_first in (False, True):
        job = runner.Job("coldwarm", args.dataset, "ours",
                         {"algo": args.algo, "numba_first": numba_first}, python=args.python)
        runs = [runner.run_job(job, **kw)[0] for _ in range(args.runs)]
        for r in runs:
            print(runner.progress_line(r), file=sys.stderr, flush=True)
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


def _fmt(v):
    return "–" if v is None else f"{v:.3f}"


def render(rows: list, stem: str) -> str:
    lines = runner.report_header("Cold against warm fit (ours)", stem, rows)
    for dataset, algo in dict.fromkeys((r["dataset"], r["params"].get("algo")) for r in rows):
        here = [r for r in rows if r["dataset"] == dataset and r["params"].get("algo") == algo]
        by = {r["params"].get("numba_first"): r for r in here if "error" not in r}
        cold, split = by.get(False, {}), by.get(True, {})
        warm = min((r["warm_fit"] for r in by.values()), default=None)
        runs = [len(r.get("runs", [])) or r.get("n_runs") for r in (cold, split)]
        load = runner.load_1m(cold) if cold else None
        lines += [f"## {NAMES.get(algo, algo)} on {dataset}", "",
                  f"Fresh processes per row: {runs[0]} / {runs[1]}; load 1m at start "
                  f"{'–' if load is None else load}; best value of each measure kept.", "",
                  "| measurement | seconds |", "|---|---:|",
                  f"| first fit in a fresh process (what bench_lmnn.py / bench_itml.py time) "
                  f"| {_fmt(cold.get('first_fit'))} |",
                  f"| numba start-up alone (first call of a trivial njit function) "
                  f"| {_fmt(split.get('numba_startup'))} |",
                  f"| first fit after numba start-up (kernel cache load + fit) "
                  f"| {_fmt(split.get('first_fit'))} |",
                  f"| warm fit (best of 5 later fits) | {_fmt(warm)} |", ""]
        if cold:
            lines += [f"Iterations: {cold.get('n_iter')}; 3-NN test accuracy "
                      f"{cold['accuracy']:.4f}.", ""]
        lines += [f"error ({r['params']}): {r['error']}" for r in here if "error" in r]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=600, repeat=False)
    parser.add_argument("--algo", choices=sorted(STEMS), default="itml_supervised")
    parser.add_argument("--dataset", default="digits",
                        help="a data set of benchmarks/workers/classification.py")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per row")
    parser.add_argument("--output", default=None,
                        help="result stem (default: itml_coldwarm or lmnn_coldwarm)")
    args = parser.parse_args(argv)
    stem = args.output or STEMS[args.algo]
    if not args.report:
        runner.save_rows(stem, measure(args))
    print(runner.write_markdown(stem, render(runner.load_rows(stem), stem)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
