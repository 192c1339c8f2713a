"""Help when the input is wrong: a clear warning or error for common mistakes."""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris

from metric_estimators import (
    LODML,
    OMDML,
    CorrelationClustering,
    ITML_Supervised,
    MetricNearness,
)
from metric_estimators._validation import (
    check_bounds,
    check_int,
    check_signed_graph_has_negative,
    for_message,
    validate_ordered_points,
)
from metric_estimators.constraints import Constraints

NUMPY_REPR = re.compile(r"np\.(float|int|uint|bool|str)\w*\(")


# -- correlation clustering without repulsive edges ---------------------------

def test_correlation_clustering_warns_without_negative_entries():
    rng = np.random.RandomState(0)
    A = rng.rand(12, 12)
    A = (A + A.T) / 2
    np.fill_diagonal(A, 0)
    with pytest.warns(UserWarning, match="no negative entry.*single cluster"):
        labels = CorrelationClustering(random_state=0).fit_predict(A)
    assert np.unique(labels).size == 1  # what the warning says is optimal


def test_correlation_clustering_silent_on_signed_graph():
    A = np.where(np.equal.outer(np.arange(10) % 2, np.arange(10) % 2), 1.0, -1.0)
    np.fill_diagonal(A, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        check_signed_graph_has_negative(A, CorrelationClustering())


# -- ordinal learners given a continuous y ------------------------------------

@pytest.mark.parametrize("Est", [OMDML, LODML])
def test_ordinal_warns_on_continuous_y(Est):
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120], y[:120]  # still ~100 distinct values: continuous
    est = Est(max_iter=2) if Est is LODML else Est()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence is not the point here
        warnings.filterwarnings("error", message=".*looks continuous")
        with pytest.raises(UserWarning, match=r"distinct values for 120 samples.*"
                           r"Bin it.*KBinsDiscretizer"):
            est.fit(X, y)


def test_ordinal_levels_do_not_warn():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        validate_ordered_points(OMDML(), X, y)
        # 12 levels over 120 samples: 10 per level, a fine ordinal target
        validate_ordered_points(OMDML(), X[:120], np.arange(120) % 12)


# -- ITML_Supervised given index pairs and +-1 labels ------------------------

def test_itml_supervised_points_to_itml_for_index_pairs():
    rng = np.random.RandomState(0)
    pairs = rng.randint(0, 30, (40, 2))
    y = np.where(rng.rand(40) < 0.5, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message="X has two integer columns")
        with pytest.raises(UserWarning, match=r"ITML\(preprocessor=points\)"):
            ITML_Supervised(max_iter=5).fit(pairs, y)


# -- metric nearness given a similarity ---------------------------------------

@pytest.mark.parametrize("sparse_input", [False, True])
def test_metric_nearness_similarity_hints_one_minus_s(sparse_input):
    X, _ = load_iris(return_X_y=True)
    S = np.corrcoef(X[:20])  # a similarity: ones on the diagonal
    if sparse_input:
        from scipy import sparse

        S = sparse.csr_matrix(S)
    with pytest.raises(ValueError, match=r"zero diagonal.*= 1\b.*pass 1 - S") as info:
        MetricNearness().fit(S)
    assert not NUMPY_REPR.search(str(info.value))


# -- no numpy reprs in messages ------------------------------------------------

def test_plain_turns_numpy_scalars_into_python():
    assert repr(for_message(np.float64(0.0))) == "0.0"
    assert repr(for_message((np.int64(1), np.float32(2.5)))) == "(1, 2.5)"
    assert repr(for_message(np.array([1.0, 2.0]))) == "[1.0, 2.0]"
    assert for_message("a") == "a"


@pytest.mark.parametrize("call", [
    lambda: check_bounds((np.float64(1.0), np.float64(np.inf))),
    lambda: check_bounds((np.float64(1.0), np.float64(2.0), np.float64(3.0))),
    lambda: check_int(np.float64(2.0), "n", 1),
    lambda: validate_ordered_points(OMDML(), np.ones((4, 2)), np.full(4, 3.0)),
    lambda: Constraints(np.zeros(5)).generate_knntriplets(np.ones((5, 2)), 2, 2),
])
def test_messages_show_plain_numbers(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except (ValueError, TypeError) as exc:
            messages = [str(exc)]
        else:
            messages = []
    messages += [str(w.message) for w in caught]
    assert messages, "expected an error or a warning"
    for message in messages:
        assert not NUMPY_REPR.search(message), message


# -- the "?" link of the HTML representation ----------------------------------

def test_html_repr_doc_link(monkeypatch, tmp_path):
    from metric_estimators import LMNN, base

    monkeypatch.delenv("METRIC_ESTIMATORS_DOCS_URL", raising=False)
    # no built documentation: no link (never a dead one)
    monkeypatch.setattr(base, "BUILT_DOCS", tmp_path / "html")
    assert LMNN()._get_doc_link() == ""
    assert "metric_estimators.LMNN.html" not in LMNN()._repr_html_()
    # built documentation with LMNN's page: a file:// link to it; ITML's
    # page is missing there, so ITML gets none
    generated = tmp_path / "html" / "generated"
    generated.mkdir(parents=True)
    (generated / "metric_estimators.LMNN.html").write_text("<html></html>")
    url = (generated / "metric_estimators.LMNN.html").as_uri()
    assert LMNN()._get_doc_link() == url
    assert f'href="{url}"' in LMNN()._repr_html_()
    assert ITML_Supervised()._get_doc_link() == ""
    # the environment variable wins
    monkeypatch.setenv("METRIC_ESTIMATORS_DOCS_URL", "https://docs.example/me/")
    for est in (LMNN(), MetricNearness(), CorrelationClustering(), ITML_Supervised()):
        url = f"https://docs.example/me/generated/metric_estimators.{type(est).__name__}.html"
        assert est._get_doc_link() == url
    assert 'href="https://docs.example/me/generated/metric_estimators.LMNN.html"' \
        in LMNN()._repr_html_()
