"""Benchmarks of metric_estimators against its peers (see benchmarks/README.md).

``runner`` starts one subprocess per measurement and keeps the results;
``workers`` hold the code those subprocesses run; ``bench_*.py`` are the
command lines. Nothing here is imported by the package.
"""
