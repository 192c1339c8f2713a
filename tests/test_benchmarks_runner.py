"""The benchmark runner keeps results and renders them correctly (no timings, no peers)."""

import json
import sys

import pytest

from benchmarks import runner
from benchmarks._peer_table import render as render_peer_table
from benchmarks.runner import Column
from benchmarks.workers import _protocol


def _row(dataset, impl, params, **values):
    return {"dataset": dataset, "impl": impl, "params": params, **values}


def test_merge_replaces_same_key_in_place_and_keeps_the_rest():
    old = [_row("iris", "ours", {"a": 1, "b": 2}, fit_time=1.0),
           _row("iris", "pylmnn", {}, fit_time=2.0),
           _row("wine", "ours", {"a": 1, "b": 2}, fit_time=3.0)]
    # same key with the params written in another order; one new key
    new = [_row("iris", "ours", {"b": 2, "a": 1}, fit_time=0.5),
           _row("digits", "ours", {}, fit_time=9.0)]
    merged = runner.merge_rows(old, new)
    assert [(r["dataset"], r["impl"], r["fit_time"]) for r in merged] == [
        ("iris", "ours", 0.5), ("iris", "pylmnn", 2.0), ("wine", "ours", 3.0),
        ("digits", "ours", 9.0)]


def test_merge_distinguishes_params_and_keeps_the_later_duplicate():
    old = [_row("iris", "ours", {"algo": "lmnn"}, fit_time=1.0)]
    new = [_row("iris", "ours", {"algo": "itml_supervised"}, fit_time=2.0),
           _row("iris", "ours", {"algo": "lmnn"}, fit_time=3.0),
           _row("iris", "ours", {"algo": "lmnn"}, fit_time=4.0)]
    merged = runner.merge_rows(old, new)
    assert [(r["params"]["algo"], r["fit_time"]) for r in merged] == [
        ("lmnn", 4.0), ("itml_supervised", 2.0)]


def test_save_rows_merges_into_the_json_file(tmp_path):
    runner.save_rows("t", [_row("iris", "ours", {}, fit_time=1.0),
                           _row("wine", "ours", {}, fit_time=2.0)], results_dir=tmp_path)
    rows = runner.save_rows("t", [_row("wine", "ours", {}, fit_time=5.0)],
                            results_dir=tmp_path)
    stored = json.loads((tmp_path / "t.json").read_text())
    assert stored["benchmark"] == "t"
    assert stored["rows"] == rows == runner.load_rows("t", results_dir=tmp_path)
    assert [r["fit_time"] for r in rows] == [1.0, 5.0]
    assert runner.load_rows("missing", results_dir=tmp_path) == []


def test_markdown_table_formats_missing_values_and_escapes_pipes():
    rows = [{"name": "a|b", "t": 1.23456, "n": None},
            {"name": "c", "t": None, "n": 7}]
    table = runner.markdown_table(rows, [
        Column("name", "name"), Column("time (s)", "t", "{:.2f}"),
        Column("n", "n"), Column("twice", lambda r: r["n"] and 2 * r["n"], "{:d}")])
    assert table.splitlines() == [
        "| name | time (s) | n | twice |",
        "|---|---|---|---|",
        "| a\\|b | 1.23 | – | – |",
        "| c | – | 7 | 14 |",
    ]


def test_report_header_lists_each_command_once_oldest_first():
    rows = [_row("a", "x", {}, run={"date": "2026-12-03T10:00", "command": "python b.py --new"}),
            _row("b", "x", {}, run={"date": "2026-12-02T10:00", "command": "python b.py --old"}),
            _row("c", "x", {}, run={"date": "2026-12-03T11:00", "command": "python b.py --new"})]
    text = "\n".join(runner.report_header("T", "stem", rows, ["a note"]))
    assert text.startswith("# T\n")
    assert "benchmarks/results/stem.json" in text
    assert text.index("python b.py --old") < text.index("python b.py --new")
    assert text.count("python b.py --new") == 1
    assert "2026-12-02, 2026-12-03" in text and "a note" in text


def test_peer_table_ratio_is_against_the_fastest_successful_peer():
    lmnn = {"algo": "lmnn"}
    rows = [_row("digits", "ours", lmnn, fit_time=1.0, accuracy=0.9),
            _row("digits", "pylmnn", lmnn, fit_time=2.0, accuracy=0.9),
            _row("digits", "mlpack", lmnn, fit_time=4.0, accuracy=0.9),
            _row("digits", "metric_learn", lmnn, error="timeout (10 s)"),
            _row("digits", "euclidean", lmnn, accuracy=0.8)]
    lines = render_peer_table("T", "stem", rows).splitlines()
    cells = {line.split(" | ")[2]: line.split(" | ") for line in lines
             if line.startswith("| digits")}
    assert cells["ours"][6] == "0.50" and cells["pylmnn"][6] == "1.00"
    assert cells["mlpack"][6] == "2.00" and cells["euclidean"][6] == "–"
    assert cells["metric_learn"][-1].startswith("timeout (10 s)")


def test_parse_result_takes_the_last_marked_line_only():
    out = "\n".join(['{"not": "this"}', runner.RESULT_MARK + '{"a": 1}', "noise",
                     runner.RESULT_MARK + '[{"b": 2}]', "more noise"])
    assert runner.parse_result(out) == [{"b": 2}]
    assert runner.parse_result('{"a": 1}') is None
    assert runner.RESULT_MARK == _protocol.RESULT_MARK


def test_protocol_reports_results_and_errors_as_one_line(capsys):
    job = json.dumps({"dataset": "d", "impl": "i"})
    assert _protocol.main(lambda j: {"seen": j["dataset"], "params": j["params"]},
                          ["w", job]) == 0
    assert runner.parse_result(capsys.readouterr().out) == {"seen": "d", "params": {}}

    def fail(job):
        raise ValueError("bad input")

    assert _protocol.main(fail, ["w", job]) == 1
    assert runner.parse_result(capsys.readouterr().out) == {"error": "ValueError: bad input"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.wait4 / RUSAGE on Linux")
def test_run_job_turns_a_failing_worker_into_an_error_row():
    job = runner.Job("no_such_worker", "iris", "ours", {"k": 1}, python=sys.executable)
    (row,) = runner.run_job(job, timeout=60, run_info={"command": "test"})
    assert (row["dataset"], row["impl"], row["params"]) == ("iris", "ours", {"k": 1})
    assert row["error"].startswith("exit 1")
    assert "no_such_worker" in " ".join(row["stderr_tail"])
    assert row["run"] == {"command": "test"}
    assert row["child_maxrss_mb"] > 0 and len(row["loadavg_start"]) == 3


def test_ml_family_table_and_report():
    """bench_ml_family: every learner entry is complete, a job of ours runs in
    process, and the report's ratio / delta / summary are against metric-learn."""
    sys.path.insert(0, str(runner.BENCH_DIR))
    import bench_ml_family

    from benchmarks.workers import ml_family

    for name, entry in ml_family.LEARNERS.items():
        assert entry["task"] in ("classification", "regression"), name
        assert "ours" in entry, name
        # every learner metric-learn has runs there too (baselines and
        # learners of ours only: Euclidean, ProjectAndForget, solver='exact')
        assert "metric_learn" in entry or name in (
            "Euclidean", "Euclidean-regression", "ProjectAndForget",
            "MMC_Supervised-exact"), name
    out = ml_family.run({"dataset": "iris", "impl": "ours",
                         "params": {"learner": "Covariance"}})
    assert out["n_train"] == 105 and 0.8 < out["accuracy"] <= 1.0
    # RCA_Supervised's n_chunks is capped at what the classes allow
    _, used, _ = ml_family.build("RCA_Supervised", "ours", {},
                                 [0] * 7 + [1] * 5)
    assert used["n_chunks"] == 3 + 2
    rows = [
        _row("iris", "ours", {"learner": "NCA"}, fit_time=1.0, accuracy=0.95),
        _row("iris", "metric_learn", {"learner": "NCA"}, fit_time=4.0, accuracy=0.96),
        _row("wine", "ours", {"learner": "NCA"}, fit_time=1.0, accuracy=0.9),
        _row("wine", "metric_learn", {"learner": "NCA"}, error="timeout (9 s)"),
    ]
    text = bench_ml_family.render(rows, "x")
    line = next(l for l in text.splitlines() if "| iris |" in l and "| ours |" in l)
    assert "| 0.250 |" in line and "| -0.0100 |" in line
    assert "| NCA | iris | 1.000 | 4.000 | 0.250 |" in text  # wine not summed
def test_triplets_worker_draws_valid_label_triplets_and_renders():
    import numpy as np

    from benchmarks import bench_triplets
    from benchmarks.workers.triplets import label_triplets, triplet_accuracy

    y = np.repeat([0, 1, 2], [2, 5, 9])
    T = label_triplets(y, 500, 0)
    assert T.shape == (500, 3)
    assert np.all(y[T[:, 0]] == y[T[:, 1]]) and np.all(T[:, 0] != T[:, 1])
    assert np.all(y[T[:, 0]] != y[T[:, 2]])
    np.testing.assert_array_equal(label_triplets(y, 500, 0), T)
    Z = np.c_[y, np.zeros_like(y)].astype(float)  # classes perfectly apart
    assert triplet_accuracy(Z, T) == 1.0
    rows = [{"dataset": "wine", "impl": impl, "params": {"algo": "scml_supervised"},
             "fit_time": t, "accuracy": 1.0, "triplet_accuracy": 0.9}
            for impl, t in (("ours", 1.0), ("metric_learn", 4.0))]
    text = bench_triplets.render(rows, "triplets")
    assert "| wine | scml_supervised | ours |" in text and "0.250" in text


def test_classification_worker_scores_a_fixed_test_subset():
    from benchmarks.workers import classification

    job = {"dataset": "iris", "impl": "euclidean", "params": {"algo": "lmnn", "max_test": 20}}
    a, b = classification.run(job), classification.run(job)
    assert a["n_test_scored"] == 20 and a["accuracy"] == b["accuracy"]
    assert round(a["accuracy"] * 20, 9) == int(round(a["accuracy"] * 20))
    full = classification.run({**job, "params": {"algo": "lmnn"}})
    assert "n_test_scored" not in full
    assert round(full["accuracy"] * 45, 9) == int(round(full["accuracy"] * 45))


def test_classification_worker_averages_the_accuracy_over_splits():
    """``splits``: the mean of independent splits, each checked against its own fit."""
    import numpy as np
    from sklearn.neighbors import KNeighborsClassifier

    from benchmarks.workers import classification

    job = {"dataset": "iris", "impl": "euclidean", "params": {"algo": "lmnn", "splits": 3}}
    out = classification.run(job)
    X, y = classification.load_dataset("iris")
    want = []
    for seed in range(3):
        Xtr, Xte, ytr, yte = classification.split_scaled(X, y, seed)
        want.append(KNeighborsClassifier(3).fit(Xtr, ytr).score(Xte, yte))
    assert out["n_splits"] == 3 and np.allclose(out["accuracy_splits"], want)
    assert np.isclose(out["accuracy"], np.mean(want))
    assert out["accuracy_split0"] == want[0]
    # above splits_below training points, split 0 alone
    big = classification.run({**job, "params": {"algo": "lmnn", "splits": 3,
                                                "splits_below": 50}})
    assert "n_splits" not in big and big["accuracy"] == want[0]


def _panel_cells(text, dataset):
    section = text[text.index("## Per data set"):]
    line = next(ln for ln in section.splitlines() if ln.startswith(f"| {dataset} | "))
    return [c.strip() for c in line.strip("|").split("|")]


def test_panel_line_ratios_and_targets():
    from benchmarks.bench_lmnn import render_panel

    lmnn = {"algo": "lmnn", "warmup": True}
    common = {"n_train": 700, "n_features": 20, "n_classes": 10}
    rows = [_row("digits", "ours", lmnn, fit_time=1.0, fit_cpu=0.5, accuracy=0.90,
                 fit_added_mb=30.0, n_iter=10, regularization=0.25, **common),
            _row("digits", "ours", {**lmnn, "regularization": 0.5}, fit_time=0.8,
                 fit_cpu=0.4, accuracy=0.91, fit_added_mb=30.0, n_iter=12,
                 regularization=0.5, **common),
            _row("digits", "pylmnn", lmnn, fit_time=4.0, fit_cpu=2.0, accuracy=0.91,
                 fit_added_mb=10.0, n_iter=5, **common)]
    text = render_panel(rows, "stem")
    cells = _panel_cells(text, "digits")
    assert cells[3] == "1"  # splits behind the accuracy
    assert cells[4] == "0.25" and cells[7] == "-0.0100"  # push weight, accuracy vs 0.5
    assert cells[10] == "+25.0 %"  # time change against 0.5
    assert cells[12] == "0.250" and cells[13] == "0.250"  # wall and CPU ratios
    assert cells[15] == "-0.0100" and cells[16] == "3.00"  # accuracy, memory vs PyLMNN
    assert cells[-2] == "no: accuracy, time"
    assert cells[-1] == "missed: accuracy -0.0100, memory 3.00"
    summary = text[text.index("## Summary"):]
    assert "lower on 1 (digits (-0.0100); target: at most 2)" in summary
    assert "more than 10 % slower: 1" in summary and "all three targets met on 0 of 1" in summary
    # the default at 0.5: the same computation twice, judged as noise
    same = [dict(r, regularization=0.5) if r["impl"] == "ours" else r for r in rows]
    same[0]["accuracy"] = 0.91
    cells = _panel_cells(render_panel(same, "stem"), "digits")
    assert cells[-2] == "same fit"


def test_panel_keel_and_noise_families():
    pytest.importorskip("sklearn")
    from benchmarks.workers.classification import load_dataset

    X, y = load_dataset("mcn-300-40-4-5-15-3")
    assert X.shape == (300, 40) and sorted(set(y)) == list(range(5))
    try:
        X, y = load_dataset("keel-cleveland")
    except FileNotFoundError:
        pytest.skip("the KEEL files are not here")
    assert X.shape == (297, 13) and sorted(set(y)) == list(range(5))  # 6 rows with <null>
    X, y = load_dataset("keel-ecoli")  # class names, not numbers
    assert X.shape == (336, 7) and len(set(y)) == 8


def test_job_lock_serialises_and_sees_an_ancestor(tmp_path):
    import fcntl

    from benchmarks import runner

    path = str(tmp_path / "lock")
    with runner.job_lock(path) as held:
        assert held["lock"] == path and held["lock_wait_s"] >= 0
        with open(path) as fh:  # another open file: the lock is taken
            with pytest.raises(BlockingIOError):
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with runner.job_lock(None) as held:
        assert held == {}
    # held by this process (an ancestor of itself): no second flock, no deadlock
    with open(path) as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with runner.job_lock(path) as held:
            assert held["lock_wait_s"] == 0.0


def test_panel_generator_family_and_penbased_names():
    pytest.importorskip("sklearn")
    from benchmarks.workers.classification import load_dataset

    X, y = load_dataset("mcf-300-12-2-1-15-3")
    assert X.shape == (300, 12) and sorted(set(y)) == list(range(10))
    from sklearn.datasets import make_classification

    X_ref, _ = make_classification(n_samples=300, n_features=12, n_informative=8,
                                   n_redundant=2, n_classes=10, n_clusters_per_class=1,
                                   class_sep=1.5, random_state=3)
    assert (X == X_ref).all()
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("mcf-300-12-2-1-15")


def test_lmnn_diagnostics_worker_profiles_and_stops_where_asked():
    from benchmarks import bench_lmnn_diagnostics as bench
    from benchmarks.workers import lmnn_diagnostics as worker

    prof = worker.run({"dataset": "wine", "impl": "ours", "params": {}, "study": "profile"})
    assert prof["n_train"] == 124 and prof["n_iter"] >= 1
    assert prof["evaluation_calls"] >= prof["n_iter"] and prof["search_calls"] >= 1
    assert prof["target_neighbours_calls"] == 1
    assert 0 < prof["search_cpu_s"] + prof["evaluation_cpu_s"] <= prof["fit_cpu"] + 1e-6
    base = {"dataset": "wine", "impl": "ours", "study": "equal_objective", "stage": "ours"}
    full = worker.run({**base, "params": {}})
    same = worker.run({**base, "params": {"stop": "equal_iterations"}, "peer_n_iter": 2})
    assert same["max_iter"] == 2 and same["n_iter"] <= 2
    assert same["exact_objective"] >= full["exact_objective"] - 1e-9 * full["exact_objective"]
    # the objective after 2 iterations is reached at the latest after 2 iterations
    eq = worker.run({**base, "params": {"stop": "equal_objective"},
                     "peer_objective": same["exact_objective"], "max_k": 2})
    assert eq["max_iter"] <= 2 and eq["exact_objective"] <= same["exact_objective"]
    never = worker.run({**base, "params": {"stop": "equal_objective"},
                        "peer_objective": -1.0, "max_k": 1})
    assert "never reached" in never["note"] and "exact_objective" not in never
    with pytest.raises(ValueError, match="unknown study"):
        worker.run({"dataset": "wine", "impl": "ours", "params": {}})
    rows = [_row("wine", "ours", {}, **prof), _row("wine", "ours", {"stop": "equal_objective"},
                                                   **never)]
    assert "| wine | 124 × 13 | ours | – | " in bench.render_profile(rows[:1], "p")
    text = bench.render_equal_objective(rows[1:], "e")
    assert "| equal_objective |" in text and "never reached" in text


def test_panel_summarises_the_push_weight_ablation():
    from benchmarks.bench_lmnn import ABLATION_MU, render_panel

    lmnn = {"algo": "lmnn", "warmup": True}
    common = {"n_train": 3000, "n_features": 20, "n_classes": 10, "fit_added_mb": 5.0}
    rows = [_row("digits", "ours", lmnn, fit_time=1.0, accuracy=0.90, regularization=0.25,
                 **common),
            _row("digits", "ours", {**lmnn, "regularization": 0.5}, fit_time=1.0,
                 accuracy=0.89, regularization=0.5, **common),
            _row("digits", "ours", {**lmnn, "regularization": ABLATION_MU}, fit_time=1.2,
                 accuracy=0.92, regularization=ABLATION_MU, **common),
            _row("digits", "pylmnn", lmnn, fit_time=4.0, accuracy=0.91, **common)]
    summary = render_panel(rows, "stem").split("## Summary")[1]
    line = next(ln for ln in summary.splitlines() if "Ablation" in ln)
    assert "from 2,000 training points on (1 sets)" in line
    assert "higher than the default's on 1, lower on 0 (mean +0.0200)" in line
    assert "median +20.0 %, more than 10 % slower on 1 (digits)" in line
    assert "below PyLMNN's on 0 of 1 (the default: 1)" in line


def test_first_contact_cliff_cases_follow_the_families_limits():
    from benchmarks import bench_first_contact as bench
    from benchmarks.workers.first_contact import CLIFF_FAMILIES, cliff_sizes
    from metric_estimators._backend import FAMILIES

    # every family whose cliff is measured exists, with as many size components
    for family in CLIFF_FAMILIES:
        sizes = dict(cliff_sizes(family, FAMILIES[family].limits))
        assert len(sizes["above"]) == len(FAMILIES[family].limits)
    # the first component scaled, the others capped at their limits
    assert cliff_sizes("lmnn", (100, 20)) == [("above", [101, 20]), ("2x", [200, 20]),
                                              ("4x", [400, 20])]
    limits = {family: (10,) + (8,) * len(CLIFF_FAMILIES[family][2])
              for family in CLIFF_FAMILIES}
    cases = bench.select_cases("cliff", limits=limits)
    assert len(cases) == 3 * len(CLIFF_FAMILIES)
    assert all(p["size"][0] in (11, 20, 40) and p["limit"][0] == 10 for _, p in cases)
    assert bench.select_cases("cliff-cycles", scales={"2x"}, limits=limits) == [
        ("cliff-cycles", {"family": "cycles", "scale": "2x", "size": [20], "limit": [10]})]
    assert [c for c, _ in bench.select_cases("classic")] == list(bench.CASES)
    row = _row("cliff-cycles", "ours", {"cache": "empty", **cases[6][1]}, process_cpu=5.5,
               process_wall=7.0, fit_size=[11], cache_misses=4)
    text = bench.render([row, {**row, "params": {**row["params"], "cache": "warm"},
                               "process_cpu": 1.0}], "s")
    assert "| cycles | MetricNearness | above | 11 | 10 | 5.50 | 7.0 | **not met** | 4 | 1.00" \
        in text


def test_the_converted_result_files_render_their_published_rows():
    """cc_memory, mlkr_variants and the twins' limits were measured before their
    commands used the runner; their files render the rows the pages quote."""
    from benchmarks import bench_cc_memory, bench_mlkr_variants, bench_numpy_paths

    cc = bench_cc_memory.render(runner.load_rows("cc_memory"))
    assert "| collab | 11000 | default | 132 | 153 | 9023 | 10 |" in cc
    mlkr = bench_mlkr_variants.render(runner.load_rows("mlkr_variants"))
    assert "| MLKR (defaults) | -0.093 | 0.194 | 0.837 | 0.760 | 0/6 / 3/3 / 1/3 |" in mlkr
    limits = bench_numpy_paths.render(runner.load_rows("numpy_paths_threshold_gradient"))
    assert "| LMNN | digits | 1.595 | 0.314 | +1.281 | 71 / 71 |" in limits


def test_cold_start_and_coldwarm_files_render_their_published_rows():
    """Their rows, measured by the workers the first-fit worker replaced, carry its
    keys and render the numbers the pages quote."""
    from benchmarks import bench_cold_start, bench_coldwarm

    cold = bench_cold_start.render(runner.load_rows("cold_start"))
    assert "| cpu_after_start | 1.769 | 1.728 | 1.995 |" in cold
    assert "| package_import | 0.094 | 0.086 | 0.101 |" in cold
    assert "cpu_after_start +0.048 s" in cold
    assert "## Numba cache: the environment's, as it was" in cold
    lmnn = bench_coldwarm.render(runner.load_rows("lmnn_coldwarm"), "lmnn_coldwarm")
    assert "## LMNN on digits" in lmnn and "## LMNN on iris" in lmnn
    assert "| numba start-up alone (first call of a trivial njit function) | 0.542 |" in lmnn
    assert "| warm fit (best of up to 5 later fits) | 0.365 |" in lmnn
    assert "numba import" not in lmnn  # not timed apart then
    itml = bench_coldwarm.render(runner.load_rows("itml_coldwarm"), "itml_coldwarm")
    assert "| first fit after numba start-up (kernel cache load + fit) | 0.507 |" in itml


def test_first_contact_cold_start_case_gives_the_cold_start_steps():
    from benchmarks import bench_cold_start
    from benchmarks.workers import first_contact

    job = {"dataset": "sklearn-NCA-iris", "impl": "nca",
           "params": {"cache": "as-is", "warm": 0}}
    runs = [{**first_contact.run(job), **job, "wall_time": 2.0 + i, "loadavg_start": [i]}
            for i in range(3)]
    assert set(runs[0]["import_steps"]) == {"sklearn_import", "package_import"}
    assert runs[0]["warm_fit_wall"] is None and runs[0]["n_iter"] >= 1
    s = bench_cold_start.steps(runs[0])
    assert s["first_fit"] >= runs[0]["first_fit_wall"] > 0
    assert s["sklearn_import"] + s["package_import"] + s["first_fit"] == \
        pytest.approx(s["total_after_start"])
    assert s["total_after_start"] <= runs[0]["process_wall"]
    row = bench_cold_start.summarise(runs)
    assert row["wall_including_interpreter"] == 3.0 and row["loadavg_start"] == [0]
    assert len(row["runs"]) == 3 and "import_wall" not in row
    assert "**nca**: 3 runs" in bench_cold_start.render([row])


def test_first_contact_classification_case_times_numba_apart():
    from benchmarks import bench_coldwarm
    from benchmarks.workers import first_contact

    job = {"dataset": "classification-itml_supervised", "impl": "ours",
           "params": {"cache": "as-is", "data": "iris", "numba_first": True, "warm": 2}}
    out = {**first_contact.run(job), **job, "loadavg_start": [1.0]}
    assert out["numba_import_wall"] > 0 and out["numba_startup_wall"] > 0
    assert 0.5 < out["accuracy"] <= 1.0 and out["warm_fit_wall"] > 0
    row = bench_coldwarm.summarise([out])
    assert row["numba_startup"] == out["numba_startup_wall"]
    assert row["first_fit"] == out["first_fit_wall"] and row["accuracy"] == out["accuracy"]
    cold = {**row, "params": {**row["params"], "numba_first": False}}
    text = bench_coldwarm.render([cold, row], "s")
    assert "## ITML_Supervised on iris" in text and "| numba import (before its start-up) |" in text
