"""First fits of the gradient-based learners on an empty numba cache, each path forced.

    python benchmarks/bench_gradient_first_contact.py
    # -> benchmarks/results/gradient_first_contact.{json,md}

For each case (LMNN, SCML_Supervised and LSML_Supervised on breast_cancer,
MLKR on diabetes, LODML on diabetes cut into 5 ordered levels; all
standardised) and each mode of :data:`metric_estimators._backend.VARIABLE`
(``auto``, ``numpy``, ``numba``) one fresh process with its own empty
``NUMBA_CACHE_DIR``: import, build the data, fit once.  Reported: the CPU
time of the whole process at the end of that fit (every thread, from
``getrusage``), the fit's own CPU time, and whether numba was imported.
``numba`` minus ``numpy`` is what a first fit on a cold installation saves
on the twins: together with the warm fits by size of
``bench_numpy_paths.py --threshold --label gradient``
(``results/numpy_paths_threshold_gradient.md``) it sets the limits of the
families ``lmnn``, ``mlkr``, ``scml``, ``ordinal``, ``lsml`` and
``neighbours`` in :data:`metric_estimators._backend.FAMILIES`.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CASES = ("LMNN", "MLKR", "SCML_Supervised", "LODML", "LSML_Supervised")
MODES = ("auto", "numpy", "numba")

_CHILD = r'''
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
from sklearn import datasets
from sklearn.preprocessing import StandardScaler
import metric_estimators as me

def scaled(name):
    X, y = getattr(datasets, name)(return_X_y=True)
    return StandardScaler().fit_transform(X), y

case = sys.argv[1]
if case == "MLKR":
    est, args = me.MLKR(random_state=0), scaled("load_diabetes")
elif case == "LODML":
    X, t = scaled("load_diabetes")
    est, args = me.LODML(random_state=0), (X, np.searchsorted(np.quantile(t, [0.2, 0.4, 0.6, 0.8]), t))
else:
    est, args = getattr(me, case)(random_state=0), scaled("load_breast_cancer")
c0 = time.process_time()
est.fit(*args)
fit = time.process_time() - c0
u = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(dict(process_cpu=u.ru_utime + u.ru_stime, fit_cpu=fit,
                      numba_loaded="numba" in sys.modules)))
'''


def measure(case, mode):
    with tempfile.TemporaryDirectory(prefix="gradient_first_contact_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, METRIC_ESTIMATORS_BACKEND=mode,
                   PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", _CHILD, case], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True, timeout=900)
    return dict(case=case, mode=mode, **json.loads(out.stdout.strip().splitlines()[-1]))


def main():
    load = os.getloadavg()
    rows = []
    for case in CASES:
        for mode in MODES:
            rows.append(measure(case, mode))
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / "gradient_first_contact"
    command = "python benchmarks/bench_gradient_first_contact.py"
    stem.with_suffix(".json").write_text(json.dumps(
        dict(meta=dict(command=command, loadavg_start=load, loadavg_end=os.getloadavg()),
             rows=rows), indent=1))
    lines = ["# First fits of the gradient-based learners on an empty numba cache", "",
             f"`{command}`; load average at start {tuple(round(x, 2) for x in load)}.  "
             "CPU seconds of the whole process at the end of its first fit (every "
             "thread, imports and data included) and of the fit alone, per mode of "
             "`METRIC_ESTIMATORS_BACKEND`; a fresh empty `NUMBA_CACHE_DIR` each.",
             "", "| case | mode | process CPU (s) | fit CPU (s) | numba imported |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['mode']} | {r['process_cpu']:.2f} | "
                     f"{r['fit_cpu']:.2f} | {'yes' if r['numba_loaded'] else 'no'} |")
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
