"""Cold (fresh process) against warm fit time of our LMNN or ITML_Supervised.

    python benchmarks/bench_coldwarm.py --algo itml_supervised --dataset digits --runs 3   # -> results/itml_coldwarm.{json,md}
    python benchmarks/bench_coldwarm.py --algo lmnn --dataset digits --runs 3              # -> results/lmnn_coldwarm.{json,md}

``bench_lmnn.py`` / ``bench_itml.py`` time the first fit in a fresh process,
which includes numba's one-off start-up. This separates the parts: every job
runs the first-fit worker, ``benchmarks/workers/first_contact.py``, through
the runner, on its case ``classification-<algo>`` (the classification
worker's split, scaling and learner, on the environment's numba cache,
``params.cache = as-is``): ``--runs`` fresh processes time the first fit
directly (row ``numba_first=False``) and ``--runs`` more time numba's
start-up alone first (row ``numba_first=True``: ``import numba``, then the
first call of a trivial compiled function); every process then times up to
5 more fits (warm; fewer once they took 10 s). Each row keeps the best value
of each measure over its runs (every run is in the JSON), the iterations
and the 3-NN test accuracy of its last run.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.first_contact import CLASSIFICATION  # noqa: E402

STEMS = {"itml_supervised": "itml_coldwarm", "lmnn": "lmnn_coldwarm"}
NAMES = {"itml_supervised": "ITML_Supervised", "lmnn": "LMNN"}
MEASURES = ("first_fit", "numba_import", "numba_startup", "warm_fit")
WARM_FITS = 5
#: the runner's fields of the last run that a row keeps beside the measures
KEPT = ("dataset", "impl", "params", "worker", "run", "python", "threads",
        "loadavg_start", "loadavg_end", "wall_time", "child_maxrss_mb", "n_iter", "accuracy")


def measures(row: dict) -> dict:
    """The measures (seconds) of one first-contact row; numba's only where it was timed."""
    out = {"first_fit": row["first_fit_wall"], "warm_fit": row["warm_fit_wall"]}
    if row.get("numba_startup_wall") is not None:
        out.update(numba_import=row["numba_import_wall"],
                   numba_startup=row["numba_startup_wall"])
    return out


def summarise(runs: list) -> dict:
    """One row of a job's runs: every run's measures and the best of each."""
    return runner.summarise_runs(runs, KEPT, measures, min, MEASURES)


def measure(args) -> list:
    info = runner.run_info()
    kw = dict(timeout=args.timeout, mem_limit_gb=args.mem_limit_gb, threads=args.threads,
              run_info=info)
    rows = []
    for numba_first in (False, True):
        job = runner.Job("first_contact", CLASSIFICATION + args.algo, "ours",
                         {"cache": "as-is", "data": args.dataset, "numba_first": numba_first,
                          "warm": WARM_FITS}, python=args.python)
        runs = [runner.run_job(job, **kw)[0] for _ in range(args.runs)]
        for r in runs:
            print(runner.progress_line(r), file=sys.stderr, flush=True)
        rows.append(summarise(runs))
    return rows


def _fmt(v):
    return "–" if v is None else f"{v:.3f}"


def render(rows: list, stem: str) -> str:
    lines = runner.report_header("Cold against warm fit (ours)", stem, rows)
    for case, dataset in dict.fromkeys((r["dataset"], r["params"].get("data")) for r in rows):
        algo = case[len(CLASSIFICATION):]
        here = [r for r in rows if r["dataset"] == case and r["params"].get("data") == dataset]
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
                  *([f"| numba import (before its start-up) "
                     f"| {_fmt(split.get('numba_import'))} |"] if "numba_import" in split else []),
                  f"| numba start-up alone (first call of a trivial njit function) "
                  f"| {_fmt(split.get('numba_startup'))} |",
                  f"| first fit after numba start-up (kernel cache load + fit) "
                  f"| {_fmt(split.get('first_fit'))} |",
                  f"| warm fit (best of up to {WARM_FITS} later fits) | {_fmt(warm)} |", ""]
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
