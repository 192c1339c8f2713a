"""LMNN against PyLMNN, diagnostics: where a fit spends its CPU, equal iterations / objective.

    python benchmarks/bench_lmnn_diagnostics.py --study profile --datasets mcf-10000-50-0-1-15-0
    python benchmarks/bench_lmnn_diagnostics.py --study equal_objective \
        --datasets mcf-10000-50-0-1-15-0
    python benchmarks/bench_lmnn_diagnostics.py --study profile --report

Two studies, one fresh process per measurement, PyLMNN in its own virtual
environment (``benchmarks/peers.py``); ``benchmarks/workers/lmnn_diagnostics.py``
says exactly what each measures.

``profile`` -> ``results/lmnn_profile``
    CPU seconds of one warm fit under ``cProfile``, per phase (impostor
    searches, objective evaluations, target neighbours): ours at its
    defaults and with ``loss='squared_hinge'``, PyLMNN at its defaults
    (``--impls`` / ``--params`` narrow or change that).
``equal_objective`` -> ``results/lmnn_equal_objective``
    PyLMNN at its defaults fitted in its environment, its map scored with
    our exact hinge objective and by 3-NN accuracy; then ours at its
    defaults, at PyLMNN's number of iterations and at the first iteration
    whose exact objective is at most PyLMNN's. Five jobs in order, each
    feeding the next. No timing.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

WORKER = "lmnn_diagnostics"
STUDIES = {"profile": "lmnn_profile", "equal_objective": "lmnn_equal_objective"}
PROFILE_JOBS = (("ours", {}), ("ours", {"loss": "squared_hinge"}), ("pylmnn", {}))
PHASES = ("search", "evaluation", "target_neighbours")


# ---------------------------------------------------------------------- profile


def profile_jobs(args) -> list:
    impls = runner.csv(args.impls) if args.impls else None
    specs = [(impl, params) for impl, params in PROFILE_JOBS if impls is None or impl in impls]
    if args.params is not None:
        specs = [(impl, args.params.get(impl, {})) for impl in (impls or ("ours", "pylmnn"))]
    return [runner.Job(WORKER, dataset, impl, params, extra={"study": "profile"},
                       python=args.python if impl == "ours" else None)
            for dataset in runner.csv(args.datasets) for impl, params in specs]


def render_profile(rows: list, stem: str) -> str:
    lines = runner.report_header(
        "Where an LMNN fit spends its CPU time: ours against PyLMNN", stem, rows,
        ["One warm fit (a fit on the first 500 training points first) under `cProfile` "
         "with `time.process_time` as the clock: CPU seconds of all threads, cProfile's "
         "overhead included, so less sensitive to the load of a shared machine than wall "
         "time. Same data, split and scaling as `benchmarks/workers/classification.py`, "
         "`n_neighbors=3`, `random_state=0`. Ours: search = `ImpostorSet.refresh`, "
         "evaluation = `LMNNObjective.__call__` (searches excluded). PyLMNN: evaluation = "
         "`_loss_grad_lbfgs` (an impostor search included in each), search = "
         "`_find_impostors` (inside the evaluations). Total CPU per phase is cProfile's "
         "cumulative time (`benchmarks/workers/lmnn_diagnostics.py`). The warm-up fit does not "
         "compile every numba kernel the full fit uses: with an empty numba cache (a fresh "
         "checkout) run the command twice and keep the second."])
    columns = [Column("dataset", "dataset"),
               Column("n_train × d", lambda r: f"{r['n_train']} × {r['n_features']}"
                      if "n_train" in r else None),
               Column("impl", "impl"), Column("params", runner.params_text),
               Column("fit CPU (s)", "fit_cpu", "{:.2f}"), Column("n_iter", "n_iter")]
    for phase in PHASES:
        name = phase.replace("_", " ")
        columns += [Column(f"{name} calls", f"{phase}_calls"),
                    Column(f"{name} CPU (s)", f"{phase}_cpu_s", "{:.2f}"),
                    Column(f"{name} per call (s)", f"{phase}_cpu_per_call_s", "{:.3f}")]
    columns += [Column("load 1m", runner.load_1m, "{:.2f}"), Column("note", runner.error_note)]
    lines.append(runner.markdown_table(rows, columns))
    return "\n".join(lines)


# -------------------------------------------------------------- equal objective


def _run_one(job, args, stem, info) -> dict:
    """Run one job, merge its row(s) into ``<stem>.json``; the first row."""
    rows = runner.run_jobs([job], timeout=args.timeout, mem_limit_gb=args.mem_limit_gb,
                           threads=args.threads, skip_after_failure=False,
                           on_rows=lambda rows: runner.save_rows(stem, rows), run_info=info)
    return rows[0]


def run_equal_objective(args, stem) -> None:
    """The five jobs per data set, in order; a failed stage stops that data set."""
    info = runner.run_info()
    for dataset in runner.csv(args.datasets):
        def job(impl, params=None, **extra):
            return runner.Job(WORKER, dataset, impl, params or {},
                              extra={"study": "equal_objective", **extra},
                              python=args.python if impl == "ours" else None)

        with tempfile.TemporaryDirectory() as tmp:
            path = str(Path(tmp) / "components.npy")
            fit = _run_one(job("pylmnn", stage="fit", components_file=path), args, stem, info)
            if "error" in fit:
                continue
            fit_info = {"n_iter": fit["n_iter"], "version": fit["version"],
                        "fit_python": fit["python"], "fit_wall_time": fit["wall_time"],
                        "fit_loadavg_start": fit["loadavg_start"]}
            score = job("pylmnn", stage="score", components_file=path, fit=fit_info)
            score.python = args.python  # scored with our objective, in our environment
            peer = _run_one(score, args, stem, info)
        if "error" in peer:
            continue
        ours = _run_one(job("ours", stage="ours"), args, stem, info)
        _run_one(job("ours", {"stop": "equal_iterations"}, stage="ours",
                     peer_n_iter=peer["n_iter"]), args, stem, info)
        if "error" not in ours:
            _run_one(job("ours", {"stop": "equal_objective"}, stage="ours",
                         peer_objective=peer["exact_objective"], max_k=ours["n_iter"]),
                     args, stem, info)


def render_equal_objective(rows: list, stem: str) -> str:
    lines = runner.report_header(
        "LMNN against PyLMNN at equal iterations and at equal (exact) objective", stem, rows,
        ["Same data, split and scaling as `benchmarks/workers/classification.py`, "
         "`n_neighbors=3`, `random_state=0`. PyLMNN at its defaults is fitted in its own "
         "environment (`fit_python`) and its map is scored here. Exact objective: the hinge "
         "objective of `metric_estimators._problems.lmnn.LMNNObjective` with every impostor "
         "pair within the margin (no subset), `mu = 0.5` (PyLMNN's objective is 2 x that). "
         "Ours at its defaults (hinge); `stop=equal_iterations`: `max_iter` = PyLMNN's "
         "number of iterations; `stop=equal_objective`: `max_iter` = the first iteration at "
         "which ours' exact objective is at most PyLMNN's (refitting with growing "
         "`max_iter`). No timing: objectives and accuracies only "
         "(`benchmarks/workers/lmnn_diagnostics.py`)."])
    columns = [Column("dataset", "dataset"),
               Column("n_train × d", lambda r: f"{r['n_train']} × {r['n_features']}"
                      if "n_train" in r else None),
               Column("impl", "impl"), Column("version", "version"),
               Column("stop", lambda r: (r.get("params") or {}).get("stop")),
               Column("max_iter", "max_iter"), Column("n_iter", "n_iter"),
               Column("exact objective", "exact_objective", "{:.6g}"),
               Column("3-NN accuracy", "accuracy", "{:.4f}"),
               Column("load 1m", runner.load_1m, "{:.2f}"),
               Column("note", lambda r: r.get("error") or r.get("note"))]
    lines.append(runner.markdown_table(rows, columns))
    return "\n".join(lines)


# ------------------------------------------------------------------------- main


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=900, repeat=False)
    parser.add_argument("--study", choices=sorted(STUDIES), required=True)
    parser.add_argument("--datasets", default="mcf-10000-50-0-1-15-0",
                        help="comma-separated (default mcf-10000-50-0-1-15-0)")
    parser.add_argument("--impls", default=None,
                        help="profile only: comma-separated subset of ours,pylmnn")
    parser.add_argument("--params", type=json.loads, default=None,
                        help='profile only: per-impl learner overrides replacing the default '
                             'jobs, JSON: {"ours": {"loss": "squared_hinge"}}')
    parser.add_argument("--output", default=None,
                        help="result stem in benchmarks/results/ (default lmnn_profile or "
                             "lmnn_equal_objective)")
    args = parser.parse_args(argv)
    stem = args.output or STUDIES[args.study]
    if args.study == "profile":
        return runner.execute(stem, profile_jobs(args), args, render_profile,
                              skip_after_failure=False)
    if not args.report:
        run_equal_objective(args, stem)
    print(runner.write_markdown(stem, render_equal_objective(runner.load_rows(stem), stem)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
