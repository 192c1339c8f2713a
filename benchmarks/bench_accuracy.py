"""Accuracy at defaults: every supervised learner, ours against metric-learn, 3-NN.

    python benchmarks/bench_accuracy.py                       # the panel
    python benchmarks/bench_accuracy.py --learners NCA,LFDA --datasets iris,wine --folds 5
    python benchmarks/bench_accuracy.py --report              # re-render only
    python benchmarks/bench_accuracy.py --variants            # the alternatives

The protocol is :mod:`benchmarks.workers.accuracy`'s: stratified 10-fold
cross-validation with a fixed seed, min-max scaling fitted on each training
fold, the learner at its defaults, 3-NN accuracy on the test fold; the
learners that draw random constraints are fitted with 5 seeds (ours) and
their spread over the seeds is reported.  Columns: ours, metric-learn 0.7.0
at its defaults (its own virtual environment, ``benchmarks/peers.py``),
scikit-learn's NCA, pyDML's NCA (the solver of Suarez, Garcia & Herrera's
published KEEL tables; its own environment too), and Euclidean (nothing
learned).

Data: the 13 KEEL sets of ``../shared/data/keel``, scikit-learn's iris, wine,
breast cancer and digits, the pen-based digits and four
``make_classification`` families with fixed seeds (one with more features
than points per class).  Every set above :data:`MAX_POINTS` points is a
stratified subsample of that many (``<name>@<n>``), so that the panel stays a
small-data panel and metric-learn's column can be computed at all.

metric-learn's (and pyDML's) rows are a fixed function of the pinned release,
the data and the protocol: they are reused from the result file when one with the same
key is stored (``--refresh-peers`` runs them again).  Ours, scikit-learn's
and Euclidean's run on every call.  The peers' jobs and the others
run side by side (``--peer-streams`` and ``--local-streams`` of each), each
job in its own process (``benchmarks/runner.py``).

``--variants`` fits, for ours only, the alternatives to some of our defaults
(:data:`benchmarks.workers.accuracy.VARIANTS`: metric-learn's pair count for
ITML_Supervised, chunklets of 2 for RCA_Supervised, scipy's tolerances for
MLKR, 200 iterations for NCA, NCA's penalty ``reg='auto'``); a section of
the report sets each beside
the default it stands in for.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers.accuracy import LEARNERS, RANDOMISED, VARIANTS  # noqa: E402

STEM = "accuracy_panel"
TITLE = "Accuracy at defaults: 3-NN after each supervised learner, ours against metric-learn"
MAX_POINTS = 1000
#: learners compared with metric-learn, in table order
OUR_LEARNERS = ("LMNN", "NCA", "LFDA", "MLKR", "ITML_Supervised", "MMC_Supervised",
                "SDML_Supervised", "LSML_Supervised", "SCML_Supervised",
                "RCA_Supervised", "Covariance")
DATASETS = (
    "iris", "wine", "breast_cancer", f"digits@{MAX_POINTS}",
    "keel-bupa", "keel-cleveland", "keel-ecoli", "keel-glass", "keel-haberman",
    "keel-new-thyroid", f"keel-page-blocks0@{MAX_POINTS}", "keel-pima",
    f"keel-segment0@{MAX_POINTS}", "keel-vehicle", "keel-vowel0", "keel-wisconsin",
    f"keel-yeast1@{MAX_POINTS}", f"penbased@{MAX_POINTS}",
    # 360 points, 90 features, 15 classes: more features than points per class
    "mcn-360-90-12-15-20-0",
    # 50 features of which 5 informative, 4 classes
    "mcn-400-50-5-4-15-0",
    # 10 classes of 2 clusters, 8 informative + 4 redundant of 20 features
    "mcf-500-20-4-2-10-0",
    # 10 classes, 8 informative + 2 redundant of 10 features, well separated
    "mcf-300-10-2-1-15-1",
)
#: no background compilation of numba kernels in the jobs: a panel of many
#: short processes would start compilations in the middle of its measurements
JOB_ENV = {"METRIC_ESTIMATORS_BACKGROUND_COMPILE": "0"}
IMPLS = ("ours", "metric_learn", "pydml", "sklearn", "euclidean")
#: each in its own virtual environment (``benchmarks/peers.py``); their rows
#: are reused from the result file unless ``--refresh-peers``
PEERS = ("metric_learn", "pydml")


def learners_of(impl: str, learners) -> list[str]:
    """The requested learners an implementation has (Euclidean: the baseline)."""
    if impl == "euclidean":
        return ["Euclidean"]
    return [name for name in learners if impl in LEARNERS.get(name, {})
            or (impl == "ours" and name in VARIANTS)]


def cell_key(dataset, impl, learner, folds, seeds, cv_seed):
    """The key (params) of one result row, as the worker writes it."""
    used = seeds if learner in RANDOMISED else seeds[:1]
    return {"learner": learner, "folds": folds, "cv_seed": cv_seed, "seeds": used}


#: metric-learn's learners by cost: its cheap ones run on every set first,
#: then each slow one over the sets, so that a short run still fills most cells
PEER_GROUPS = (("NCA", "LFDA", "MLKR", "Covariance", "LSML_Supervised",
                "RCA_Supervised", "SDML_Supervised"),
               ("ITML_Supervised",), ("SCML_Supervised",), ("MMC_Supervised",),
               ("LMNN",))


def build_jobs(args, stored) -> tuple[list, list]:
    """(peer jobs, local jobs): one job per implementation and data set
    (metric-learn's: per data set and group of :data:`PEER_GROUPS`)."""
    stored_keys = {runner.row_key(r) for r in stored if not str(r.get("error", "")).startswith(
        ("timeout", "exit", "crashed", "setup", "TimeoutError"))}
    peers, local = [], []
    for impl in args.impls:
        groups = PEER_GROUPS if impl in PEERS else (tuple(args.learners),)
        seeds = list(range(args.peer_seeds if impl in PEERS else args.seeds))
        for group in groups:
            for dataset in args.datasets:
                names = learners_of(impl, [n for n in args.learners if n in group])
                if impl in PEERS and not args.refresh_peers:
                    names = [n for n in names if runner.row_key(
                        {"dataset": dataset, "impl": impl,
                         "params": cell_key(dataset, impl, n, args.folds, seeds, 0)})
                        not in stored_keys]
                if not names:
                    continue
                params = {"learners": names, "folds": args.folds, "seeds": seeds,
                          "cv_seed": 0}
                if impl in PEERS:
                    params["budget"] = args.peer_budget
                job = runner.Job("accuracy", dataset, impl, params,
                                 python=None if impl in PEERS else args.python)
                (peers if impl in PEERS else local).append(job)
    return peers, local


def expand_failure(job, rows):
    """A job that failed as a whole (timeout, crash): one error row per learner."""
    if len(rows) == 1 and "learners" in (rows[0].get("params") or {}):
        row = rows[0]
        p = job.params
        return [{**row, "params": cell_key(job.dataset, job.impl, name, p["folds"],
                                           p["seeds"], p["cv_seed"])}
                for name in p["learners"]]
    return rows


def _lock_path(stem: str) -> str:
    """A lock file serialising the result file's updates between processes."""
    import tempfile

    return str(Path(tempfile.gettempdir()) / f"metric_estimators_bench_{stem}.lock")


def run_stream(jobs, args, info, lock, log):
    """Run jobs one after the other, saving each job's rows as they come."""
    for job in jobs:
        rows = runner.run_job(job, timeout=args.timeout, mem_limit_gb=args.mem_limit_gb,
                              threads=args.threads, run_info=info, env=JOB_ENV)
        rows = expand_failure(job, rows)
        with lock, runner.job_lock(_lock_path(args.output)):
            runner.save_rows(args.output, rows)
            for row in rows:
                log(runner.progress_line(row) + "  " + _short(row))


def _short(row) -> str:
    if "error" in row:
        return ""
    return (f"acc {row['accuracy']:.4f} spread {row['spread']:.4f} "
            f"CW {row['convergence_warnings']}")


# ----------------------------------------------------------------------- report


def _cells(rows, folds):
    """(learner, dataset, impl) -> row, for the protocol's fold count."""
    out = {}
    for row in rows:
        p = row.get("params") or {}
        if p.get("folds") != folds or "learner" not in p:
            continue
        out[(p["learner"], row["dataset"], row["impl"])] = row
    return out


def _acc(row):
    return None if row is None or "error" in row else row["accuracy"]


def one_point(row) -> float:
    """One test point per fold, in accuracy: folds / n."""
    return row["params"]["folds"] / row["n_samples"]


def summarise(rows, folds=10):
    """Per learner: means over the sets both ours and metric-learn scored, and the misses."""
    cells = _cells(rows, folds)
    datasets = [d for d in DATASETS if any(k[1] == d for k in cells)]
    datasets += sorted({k[1] for k in cells} - set(datasets))
    out = []
    for learner in OUR_LEARNERS:
        ours = {d: cells.get((learner, d, "ours")) for d in datasets}
        ml = {d: cells.get((learner, d, "metric_learn")) for d in datasets}
        eu = {d: cells.get(("Euclidean", d, "euclidean")) for d in datasets}
        scored = [d for d in datasets if _acc(ours[d]) is not None]
        if not scored:
            continue
        common = [d for d in scored if _acc(ml[d]) is not None]
        below = [d for d in common
                 if _acc(ours[d]) < _acc(ml[d]) - one_point(ours[d]) - 1e-12]
        spreads = [ours[d]["spread"] for d in scored if ours[d]["n_samples"] < 2000]
        entry = {
            "learner": learner, "sets": len(scored), "common": len(common),
            "ours_common": _mean([_acc(ours[d]) for d in common]),
            "ml_common": _mean([_acc(ml[d]) for d in common]),
            "ours_all": _mean([_acc(ours[d]) for d in scored]),
            "euclidean_all": _mean([_acc(eu[d]) for d in scored if _acc(eu[d]) is not None]),
            "below": below,
            "ml_failed": [d for d in scored if ml[d] is not None and "error" in ml[d]],
            "max_spread": max(spreads) if spreads else None,
            "spread_over_001": [d for d in scored if ours[d]["n_samples"] < 2000
                                and ours[d]["spread"] > 0.01 + 1e-12],
            "cw_ours": sum(ours[d]["convergence_warnings"] for d in scored),
            "cw_ml": sum(ml[d].get("convergence_warnings", 0) for d in common),
            "fit_ours": sum(ours[d]["fit_time"] / ours[d]["fits"] for d in scored),
            "fit_ml": sum(ml[d]["fit_time"] / ml[d]["fits"] for d in common),
        }
        if learner == "NCA":
            sk = {d: cells.get(("NCA", d, "sklearn")) for d in datasets}
            entry["sklearn_all"] = _mean([_acc(sk[d]) for d in scored
                                          if _acc(sk[d]) is not None])
            py = {d: cells.get(("NCA", d, "pydml")) for d in datasets}
            both = [d for d in scored if _acc(py[d]) is not None]
            entry["pydml_sets"] = both
            entry["pydml_common"] = _mean([_acc(py[d]) for d in both])
            entry["ours_pydml_common"] = _mean([_acc(ours[d]) for d in both])
            entry["sklearn_pydml_common"] = _mean([_acc(sk[d]) for d in both
                                                   if _acc(sk[d]) is not None])
            entry["below_pydml"] = [d for d in both if _acc(ours[d])
                                    < _acc(py[d]) - one_point(ours[d]) - 1e-12]
        out.append(entry)
    return out, datasets, cells


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _f(value, fmt="{:.4f}"):
    return "–" if value is None else fmt.format(value)


def render(rows, stem, folds=10):
    summary, datasets, cells = summarise(rows, folds)
    lines = runner.report_header(TITLE, stem, rows, notes=(
        "Protocol (`benchmarks/workers/accuracy.py`): stratified "
        f"{folds}-fold cross-validation (`StratifiedKFold(shuffle=True, random_state=0)`), "
        "`MinMaxScaler` fitted on each training fold, each learner at its defaults "
        "(`random_state=seed` where it takes one), `KNeighborsClassifier(3)` on the "
        "transformed folds; accuracy = test points classified correctly over all folds. "
        "The randomised learners (" + ", ".join(RANDOMISED) + ") are fitted with seeds "
        "0-4 (ours; metric-learn: the seeds its rows name) and the cell is their mean; "
        "`spread` = largest minus smallest accuracy over the seeds. Sets above "
        f"{MAX_POINTS} points are stratified subsamples of {MAX_POINTS} (`@{MAX_POINTS}`). "
        "`1 pt/fold` = folds / n, one test point per fold in accuracy. `CW`: "
        "ConvergenceWarnings summed over the cell's fits. Fit time: mean seconds per "
        "fit, one thread per job.",))
    lines += ["## Summary per learner", "",
              "Means over the sets both ours and metric-learn scored (`common`); "
              "`ours (all)` and Euclidean over every set ours scored. `below`: sets where "
              "ours is more than one test point per fold below metric-learn. "
              "`max spread`: largest seed spread of ours over the sets.", ""]
    srows = []
    for s in summary:
        srows.append({
            "learner": s["learner"], "sets": f"{s['common']} / {s['sets']}",
            "ours": _f(s["ours_common"]), "ml": _f(s["ml_common"]),
            "diff": _f(None if s["ml_common"] is None else s["ours_common"] - s["ml_common"],
                       "{:+.4f}"),
            "all": _f(s["ours_all"]), "eu": _f(s["euclidean_all"]),
            "sk": _f(s.get("sklearn_all")),
            "below": ", ".join(s["below"]) or "none",
            "spread": _f(s["max_spread"]) if s["learner"] in RANDOMISED else "(deterministic)",
            "cw": f"{s['cw_ours']} / {s['cw_ml']}",
            "fit": f"{s['fit_ours']:.2f} / {s['fit_ml']:.2f}",
            "mlfail": ", ".join(s["ml_failed"]) or "–",
        })
    lines.append(runner.markdown_table(srows, [
        runner.Column("learner", "learner"),
        runner.Column("sets (common / ours)", "sets"),
        runner.Column("ours (common)", "ours"),
        runner.Column("metric-learn (common)", "ml"),
        runner.Column("ours - ML", "diff"),
        runner.Column("ours (all)", "all"),
        runner.Column("Euclidean (all)", "eu"),
        runner.Column("sklearn NCA (all)", "sk"),
        runner.Column("below ML by > 1 pt/fold", "below"),
        runner.Column("max spread (ours)", "spread"),
        runner.Column("CW ours / ML", "cw"),
        runner.Column("summed fit s per fold, ours / ML", "fit"),
        runner.Column("metric-learn failed on", "mlfail"),
    ]))
    lines += ["## Per learner and data set", ""]
    for s in summary:
        learner = s["learner"]
        lines += [f"### {learner}", ""]
        if s.get("pydml_sets"):
            lines += [f"On the {len(s['pydml_sets'])} sets pyDML's NCA scored: pyDML "
                      f"{s['pydml_common']:.4f}, ours {s['ours_pydml_common']:.4f}, "
                      f"scikit-learn {_f(s['sklearn_pydml_common'])}; ours more than one "
                      "test point per fold below pyDML on: "
                      f"{', '.join(s['below_pydml']) or 'none'}.", ""]
        drows = []
        for d in datasets:
            ours = cells.get((learner, d, "ours"))
            if ours is None:
                continue
            ml = cells.get((learner, d, "metric_learn"))
            eu = cells.get(("Euclidean", d, "euclidean"))
            sk = cells.get(("NCA", d, "sklearn")) if learner == "NCA" else None
            py = cells.get(("NCA", d, "pydml")) if learner == "NCA" else None
            row = {"dataset": d, "ours": ours, "ml": ml, "eu": eu, "sk": sk, "py": py}
            drows.append(row)
        cols = [
            runner.Column("dataset", "dataset"),
            runner.Column("n x d, classes", lambda r: (
                f"{r['ours']['n_samples']} x {r['ours']['n_features']}, "
                f"{r['ours']['n_classes']}") if "n_samples" in r["ours"] else None),
            runner.Column("ours", lambda r: _acc_or_error(r["ours"])),
            runner.Column("spread", lambda r: _f(r["ours"].get("spread"))
                          if learner in RANDOMISED else None),
            runner.Column("metric-learn", lambda r: _acc_or_error(r["ml"])),
            runner.Column("ours - ML", lambda r: _diff(r["ours"], r["ml"])),
            runner.Column("1 pt/fold", lambda r: _f(one_point(r["ours"]))
                          if "n_samples" in r["ours"] else None),
        ]
        if learner == "NCA":
            cols.append(runner.Column("sklearn NCA", lambda r: _acc_or_error(r["sk"])))
            cols.append(runner.Column("pyDML NCA", lambda r: _acc_or_error(r["py"])))
            cols.append(runner.Column("fit s pyDML", lambda r: _per_fit(r["py"])))
        cols += [
            runner.Column("Euclidean", lambda r: _acc_or_error(r["eu"])),
            runner.Column("CW ours / ML", lambda r: (
                f"{r['ours'].get('convergence_warnings', '–')} / "
                f"{(r['ml'] or {}).get('convergence_warnings', '–')}")),
            runner.Column("fit s ours / ML", lambda r: (
                f"{_per_fit(r['ours'])} / {_per_fit(r['ml'])}")),
            runner.Column("other warnings (ours)", lambda r: _other(r["ours"])),
        ]
        lines.append(runner.markdown_table(drows, cols))
    lines += _variant_section(cells, datasets)
    return "\n".join(lines)


def _variant_section(cells, datasets):
    """Each alternative of :data:`VARIANTS` beside our default, on the sets both scored."""
    lines = []
    for name, (learner, params) in VARIANTS.items():
        pairs = [(d, cells.get((learner, d, "ours")), cells.get((name, d, "ours")))
                 for d in datasets]
        pairs = [(d, a, b) for d, a, b in pairs if _acc(a) is not None and _acc(b) is not None]
        if not pairs:
            continue
        if not lines:
            lines += ["## Our defaults against their alternatives", "",
                      "Ours only, same folds and seeds (`--variants`). `default` is the "
                      "learner at its defaults, `alternative` the same learner with the "
                      "parameters the row names.", ""]
        rows = [{"dataset": d, "a": a, "b": b} for d, a, b in pairs]
        lines += [f"### {name}", "",
                  f"Mean accuracy over {len(pairs)} sets: default "
                  f"{_mean([_acc(a) for _, a, _ in pairs]):.4f}, alternative "
                  f"{_mean([_acc(b) for _, _, b in pairs]):.4f}; ConvergenceWarnings "
                  f"{sum(a['convergence_warnings'] for _, a, _ in pairs)} / "
                  f"{sum(b['convergence_warnings'] for _, _, b in pairs)}; summed fit s "
                  f"per fold {sum(a['fit_time'] / a['fits'] for _, a, _ in pairs):.2f} / "
                  f"{sum(b['fit_time'] / b['fits'] for _, _, b in pairs):.2f}.", ""]
        cols = [runner.Column("dataset", "dataset"),
                runner.Column("1 pt/fold", lambda r: _f(one_point(r["a"]))),
                runner.Column("default", lambda r: _acc_or_error(r["a"]))]
        if learner in RANDOMISED:
            cols.append(runner.Column("spread", lambda r: _f(r["a"].get("spread"))))
        cols.append(runner.Column("alternative", lambda r: _acc_or_error(r["b"])))
        if name in RANDOMISED:
            cols.append(runner.Column("spread ", lambda r: _f(r["b"].get("spread"))))
        cols += [runner.Column("CW default / alternative", lambda r: (
                     f"{r['a']['convergence_warnings']} / {r['b']['convergence_warnings']}")),
                 runner.Column("fit s default / alternative", lambda r: (
                     f"{_per_fit(r['a'])} / {_per_fit(r['b'])}"))]
        lines.append(runner.markdown_table(rows, cols))
    return lines


def _acc_or_error(row):
    if row is None:
        return None
    if "error" in row:
        return "error: " + row["error"][:90]
    return f"{row['accuracy']:.4f}"


def _diff(ours, ml):
    if _acc(ours) is None or _acc(ml) is None:
        return None
    return f"{_acc(ours) - _acc(ml):+.4f}"


def _per_fit(row):
    if row is None or "error" in row:
        return "–"
    return f"{row['fit_time'] / row['fits']:.3f}"


def _other(row):
    said = {k: n for k, n in (row.get("warnings") or {}).items()
            if not k.startswith("ConvergenceWarning")}
    return "; ".join(f"{n} x {k[:60]}" for k, n in said.items()) or None


# ---------------------------------------------------------------------- command


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=1800, repeat=False,
                                output=STEM)
    parser.set_defaults(threads=1)
    parser.add_argument("--learners", type=runner.csv, default=list(OUR_LEARNERS),
                        help="comma-separated learners (default: all)")
    parser.add_argument("--datasets", type=runner.csv, default=list(DATASETS),
                        help="comma-separated data sets (default: the panel's)")
    parser.add_argument("--impls", type=runner.csv, default=list(IMPLS),
                        help="comma-separated implementations (default: " + ",".join(IMPLS) + ")")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=5,
                        help="seeds 0..N-1 for ours' randomised learners (default 5)")
    parser.add_argument("--peer-seeds", type=int, default=1,
                        help="seeds for metric-learn's randomised learners (default 1)")
    parser.add_argument("--peer-budget", type=float, default=900,
                        help="seconds of fitting per metric-learn cell before it stops")
    parser.add_argument("--peer-streams", type=int, default=2,
                        help="metric-learn jobs run in this many streams side by side")
    parser.add_argument("--local-streams", type=int, default=2,
                        help="this project's (and scikit-learn's, Euclidean's) jobs run in "
                             "this many streams side by side (default 2, the cores here)")
    parser.add_argument("--variants", action="store_true",
                        help="fit only the alternatives to some of our defaults (ours; the "
                             "defaults' rows are the stored panel's)")
    parser.add_argument("--refresh-peers", action="store_true",
                        help="run metric-learn's cells even when stored")
    args = parser.parse_args(argv)
    if args.variants:  # the alternatives alone; the defaults' rows are the panel's
        args.learners, args.impls = list(VARIANTS), ["ours"]
    if args.report:
        runner.write_markdown(args.output, render(runner.load_rows(args.output),
                                                  args.output, args.folds))
        return 0
    info = runner.run_info()
    peers, local = build_jobs(args, runner.load_rows(args.output))
    lock = threading.Lock()
    start = time.perf_counter()

    def log(text):
        print(f"[{time.perf_counter() - start:7.1f} s] {text}", file=sys.stderr, flush=True)

    groups = ([peers[i::args.peer_streams] for i in range(args.peer_streams)]
              + [local[i::args.local_streams] for i in range(args.local_streams)])
    streams = [threading.Thread(target=run_stream, args=(jobs, args, info, lock, log))
               for jobs in groups if jobs]
    for thread in streams:
        thread.start()
    for thread in streams:
        thread.join()
    log(f"done: {len(peers)} peer jobs, {len(local)} local jobs")
    path = runner.write_markdown(args.output, render(runner.load_rows(args.output),
                                                     args.output, args.folds))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
