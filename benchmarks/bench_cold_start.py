"""Cold start of LMNN: a fresh process's first fit on iris, numba cache warm.

Runs ``--runs`` fresh interpreters (after one warm-up process that populates
the numba cache) and reports the median of: importing scikit-learn (with its
dataset loader), importing metric_estimators, the first LMNN fit on iris, and
the total from interpreter start.  Writes benchmarks/results/cold_start.md.

    python benchmarks/bench_cold_start.py --runs 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import time, json
t0 = time.perf_counter()
from sklearn.datasets import load_iris
t1 = time.perf_counter()
from metric_estimators import LMNN
t2 = time.perf_counter()
X, y = load_iris(return_X_y=True)
import warnings
warnings.simplefilter("ignore")
LMNN(random_state=0).fit(X, y)
t3 = time.perf_counter()
print(json.dumps({"sklearn_import": t1 - t0, "package_import": t2 - t1,
                  "first_fit": t3 - t2, "total_after_start": t3 - t0}))
"""


def run_once(python):
    import time

    start = time.perf_counter()
    out = subprocess.run([python, "-c", CHILD], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["wall_including_interpreter"] = wall
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    default_python = ROOT / ".venv" / "bin" / "python"
    parser.add_argument("--python", default=str(default_python if default_python.exists() else sys.executable))
    args = parser.parse_args()
    run_once(args.python)  # populate the numba cache
    rows = [run_once(args.python) for _ in range(args.runs)]
    keys = list(rows[0])
    med = {k: statistics.median(r[k] for r in rows) for k in keys}
    lines = [
        "# LMNN cold start (fresh process, numba cache populated)",
        "",
        f"- command: `python benchmarks/bench_cold_start.py --runs {args.runs}`",
        f"- load average at end: `{os.getloadavg()}`",
        "",
        "| step | median (s) | min (s) | max (s) |",
        "|---|---|---|---|",
    ]
    for k in keys:
        vals = [r[k] for r in rows]
        lines.append(f"| {k} | {med[k]:.3f} | {min(vals):.3f} | {max(vals):.3f} |")
    out = ROOT / "benchmarks" / "results" / "cold_start.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
