"""The cold side of the ``logdet_all_pairs`` limit: ProjectAndForget at the limit on both paths.

    python benchmarks/penbased_twin_limit.py

A fit of ProjectAndForget at defaults on 200 points (19,900 pairs, the
family's limit of 20,000) in 13 dimensions, in fresh processes: on the numpy
twins, and on the numba kernels with an empty numba cache (compilation
included).  Process CPU seconds of the first and a second fit.  Writes
``benchmarks/results/penbased_twin_limit.md``.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import time, sys, warnings
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler
from metric_estimators import ProjectAndForget, _backend
X, y = make_classification(200, 13, n_informative=8, n_classes=3, random_state=0)
X = StandardScaler().fit_transform(X)
with _backend.use(sys.argv[1]), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t = time.process_time(); e = ProjectAndForget(random_state=0).fit(X, y)
    t1 = time.process_time() - t
    t = time.process_time(); ProjectAndForget(random_state=0).fit(X, y)
    t2 = time.process_time() - t
print(f"| {sys.argv[1]} | {e.n_pairs_} | {t1:.2f} | {t2:.2f} | {e.n_iter_} | {e.n_active_} | {e.converged_} |")
"""


def main():
    lines = ["# ProjectAndForget at the `logdet_all_pairs` limit, cold", "",
             "    python benchmarks/penbased_twin_limit.py", "",
             __doc__.split("\n\n")[1].replace("\n", " "), "",
             f"Load average at the start: {os.getloadavg()[0]:.1f} (2 cores).", "",
             "| path | pairs | first fit CPU (s) | second fit CPU (s) | oracle calls | "
             "active | converged |", "|---|---|---|---|---|---|---|"]
    for mode in ("numpy", "numba"):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            out = subprocess.run([sys.executable, "-c", CHILD, mode], env=env, cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout
        lines.append(out.strip().splitlines()[-1])
    text = "\n".join(lines) + "\n"
    (ROOT / "benchmarks" / "results" / "penbased_twin_limit.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
