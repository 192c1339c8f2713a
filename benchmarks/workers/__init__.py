"""Code the benchmark subprocesses run, one module per benchmark.

Each module is started as ``python -m benchmarks.workers.<name> '<job JSON>'``
from the repository root (see :mod:`benchmarks.runner`), reads the job, and
prints one result line through :mod:`benchmarks.workers._protocol`. Modules
run in the peers' virtual environments too (Python 3.11 with numpy 1.24 /
scikit-learn 1.2 at the oldest), so they import only the standard library at
module level unless they are project-only.
"""
