"""The accuracy panel's protocol against a plain scikit-learn cross-validation."""

import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler

from benchmarks import bench_accuracy
from benchmarks.workers import accuracy
from metric_estimators import LFDA, MMC_Supervised


def _plain_correct(learner, X, y, folds=10):
    """Correct test points per fold of Pipeline(MinMaxScaler, learner, 3-NN)."""
    cv = StratifiedKFold(folds, shuffle=True, random_state=0)
    pred = cross_val_predict(make_pipeline(MinMaxScaler(), learner,
                                           KNeighborsClassifier(n_neighbors=3)),
                             X, y, cv=cv)
    return [int(np.sum(pred[test] == y[test])) for _, test in cv.split(X, y)]


def test_cells_equal_a_plain_cross_validation(monkeypatch):
    X, y = load_iris(return_X_y=True)
    monkeypatch.setattr(accuracy, "load", lambda name: (X, y))
    rows = {row["params"]["learner"]: row for row in accuracy.run(
        {"dataset": "iris", "impl": "ours",
         "params": {"learners": ["LFDA", "MMC_Supervised"], "folds": 10,
                    "seeds": [0, 1], "cv_seed": 0}})}
    assert rows["LFDA"]["correct"] == [_plain_correct(LFDA(), X, y)]
    # a randomised learner: one list of counts per seed, each its own fit
    mmc = rows["MMC_Supervised"]
    assert mmc["seeds_used"] == [0, 1]
    assert mmc["correct"] == [_plain_correct(MMC_Supervised(random_state=s), X, y)
                              for s in (0, 1)]
    assert np.isclose(mmc["accuracy"], np.mean(mmc["seed_accuracies"]))
    euclid = accuracy.run({"dataset": "iris", "impl": "euclidean",
                           "params": {"learners": ["Euclidean"], "folds": 10}})[0]
    assert euclid["correct"] == [_plain_correct(FunctionTransformer(), X, y)]


def test_subsample_is_stratified_and_fixed():
    X, y = accuracy.load("iris@60")
    again, _ = accuracy.load("iris@60")
    assert X.shape == (60, 4) and np.array_equal(X, again)
    assert np.bincount(y).tolist() == [20, 20, 20]


def test_summary_flags_a_set_more_than_one_point_per_fold_below():
    def row(impl, learner, acc, n=100):
        return {"dataset": "s", "impl": impl, "n_samples": n, "accuracy": acc,
                "spread": 0.0, "convergence_warnings": 0, "fit_time": 1.0, "fits": 10,
                "params": {"learner": learner, "folds": 10, "cv_seed": 0, "seeds": [0]}}

    # one point per fold on 100 points is 0.1: 0.85 vs 0.96 is below, 0.87 is not
    for ours, flagged in ((0.85, True), (0.87, False)):
        rows = [row("ours", "LFDA", ours), row("metric_learn", "LFDA", 0.96),
                row("euclidean", "Euclidean", 0.9)]
        summary, _, _ = bench_accuracy.summarise(rows)
        (lfda,) = [s for s in summary if s["learner"] == "LFDA"]
        assert (lfda["below"] == ["s"]) is flagged


def test_pydml_cells_are_summed_on_the_sets_it_scored():
    def row(impl, learner, acc, dataset, n=100):
        return {"dataset": dataset, "impl": impl, "n_samples": n, "accuracy": acc,
                "n_features": 4, "n_classes": 2,
                "spread": 0.0, "convergence_warnings": 0, "fit_time": 1.0, "fits": 10,
                "params": {"learner": learner, "folds": 10, "cv_seed": 0, "seeds": [0]}}

    rows = [row("ours", "NCA", 0.80, "a"), row("ours", "NCA", 0.90, "b"),
            row("sklearn", "NCA", 0.85, "a"), row("pydml", "NCA", 0.95, "a"),
            row("euclidean", "Euclidean", 0.7, "a")]
    summary, _, _ = bench_accuracy.summarise(rows)
    (nca,) = [s for s in summary if s["learner"] == "NCA"]
    # only set a has a pyDML cell; 0.80 is more than 0.1 below 0.95
    assert nca["pydml_sets"] == ["a"]
    assert (nca["pydml_common"], nca["ours_pydml_common"]) == (0.95, 0.80)
    assert nca["below_pydml"] == ["a"]
    assert "pyDML NCA" in bench_accuracy.render(rows, "x")


def test_variant_parameters_keep_literal_strings():
    """A string that names no rule (``reg='auto'``) is passed as it is."""
    y = np.array([0, 0, 1, 1, 2, 2])
    est = accuracy.build("NCA(reg='auto')", "ours", 0, y)
    assert est.get_params()["reg"] == "auto"
    est = accuracy.build("ITML_Supervised(n_constraints=20*n_classes**2)", "ours", 0, y)
    assert est.get_params()["n_constraints"] == 180


def test_nca_diagnostics_objective_is_ncas():
    from benchmarks.workers.nca_diagnostics import nca_mean_objective
    from metric_estimators._problems.nca import nca_objective

    X, y = load_iris(return_X_y=True)
    L = np.random.RandomState(0).randn(2, 4)
    assert np.isclose(nca_mean_objective(L, X, y), nca_objective(L, X, y) / len(y))
