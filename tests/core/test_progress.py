"""Progress reports: shown with verbose >= 1, silent with verbose=0, never change results."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_riskcontrol._progress import Progress, progress
from sklearn_riskcontrol.autoeval import RAutoEvalPlus, RiskControlledModelSelector, rautoeval_select
from sklearn_riskcontrol.bandits import PULSE, UCBE, make_score_matrix


def _lines(text, prefix):
    return [ln for ln in text.splitlines() if ln.startswith(prefix)]


@pytest.mark.parametrize("verbose, expected", [(0, 0), (1, 11), (2, 101)])
def test_plain_lines_at_10_or_1_percent_steps(capsys, verbose, expected):
    with Progress(1000, verbose=verbose, desc="job", unit="cells", use_tqdm=False) as bar:
        for done in range(0, 1001, 7):
            bar.update(done)
        bar.update(1000)
    lines = _lines(capsys.readouterr().out, "[job] cells ")
    # one line at 0 and one per crossed 10% (1%) step; the final 1000/1000 always shows
    assert len(lines) == expected
    if expected:
        assert lines[-1].startswith("[job] cells 1000/1000 (100%)")


def test_due_says_when_a_report_is_coming():
    bar = Progress(100, verbose=1, use_tqdm=False)
    assert bar.due(0)
    bar.update(0)
    assert not bar.due(5) and bar.due(10) and bar.due(100)
    assert not Progress(100, verbose=0).due(100)


def test_tqdm_bar_on_stderr_and_pickling(capsys):
    pytest.importorskip("tqdm")
    bar = Progress(50, verbose=1, desc="job", unit="cells", use_tqdm=True)
    bar.update(10, best=3)
    restored = pickle.loads(pickle.dumps(bar))  # a live bar is dropped, the report restarts
    restored.update(50)
    bar.update(50)
    captured = capsys.readouterr()
    assert captured.out == "" and "job" in captured.err and "best 3" in captured.err


def test_non_interactive_sessions_get_plain_lines(capsys):
    # Under pytest standard error is not a terminal: plain lines on stdout, even with tqdm.
    list(progress(range(20), verbose=1, desc="loop"))
    lines = _lines(capsys.readouterr().out, "[loop] it ")
    assert len(lines) == 11 and lines[0].startswith("[loop] it 1/20")  # first item, then 10%s


def test_progress_iterator_yields_everything_and_is_silent_at_0(capsys):
    assert list(progress(range(5), verbose=0)) == list(range(5))
    assert list(progress(iter("abc"), verbose=1, total=3, desc="x")) == ["a", "b", "c"]
    assert len(_lines(capsys.readouterr().out, "[x] it ")) == 3


def test_bandits_report_and_do_not_change_results(capsys):
    data = make_score_matrix(20, 400, n_side_models=20, gap=0.05, random_state=0)
    for cls, params in ((UCBE, {}), (PULSE, {"refit_every": 10, "rank": 2})):
        fits = {}
        for verbose in (0, 1):
            est = cls(budget=0.3, batch_size=8, random_state=0, verbose=verbose, **params)
            fits[verbose] = est.fit(data.scores, side_scores=data.side_scores)
            lines = _lines(capsys.readouterr().out, f"[{cls.__name__}] evaluations ")
            assert (len(lines) > 0) == bool(verbose)
        assert 5 <= len(lines) <= 15
        assert "best model" in lines[-1] and "estimate" in lines[-1] and "step" in lines[-1]
        np.testing.assert_array_equal(fits[0].means_, fits[1].means_)
        for key in fits[0].history_:
            np.testing.assert_array_equal(fits[0].history_[key], fits[1].history_[key])
        pickle.loads(pickle.dumps(fits[1]))


def test_rautoeval_select_reports_and_does_not_change_results(capsys):
    rng = np.random.default_rng(0)
    H = rng.binomial(1, np.array([0.02, 0.05, 0.1, 0.4])[:, None], (4, 300)).astype(float)
    quiet = rautoeval_select(H, alpha=0.2, delta=0.1, method="eval")
    assert capsys.readouterr().out == ""
    loud = rautoeval_select(H, alpha=0.2, delta=0.1, method="eval", verbose=1)
    lines = _lines(capsys.readouterr().out, "[rautoeval_select] candidates ")
    assert len(lines) == 4 and "pvalue" in lines[0]  # FST reached the failing 4th candidate
    np.testing.assert_array_equal(quiet.pvalues, loud.pvalues)
    np.testing.assert_array_equal(quiet.certified, loud.certified)


def test_model_selector_reports_and_does_not_change_results(capsys):
    X, y = make_classification(n_samples=3000, n_informative=6, random_state=0)
    trees = [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X[:1000], y[:1000])
             for d in (8, 4, 2, 1)]
    judge = LogisticRegression().fit(X[:1000], y[:1000])
    y_semi = y[1000:].copy()
    y_semi[300:] = -1
    tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=0.3, random_state=0)
    fits = {}
    for verbose in (0, 1):
        sel = RiskControlledModelSelector(trees, tester=tester, verbose=verbose)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a failing candidate warns; not what is tested
            fits[verbose] = sel.fit(X[1000:], y_semi)
    lines = _lines(capsys.readouterr().out, "[RiskControlledModelSelector] candidates ")
    assert len(lines) == int(fits[1].tested_.sum()) and "pvalue" in lines[0]
    np.testing.assert_array_equal(fits[0].pvalues_, fits[1].pvalues_)
    assert fits[0].selected_index_ == fits[1].selected_index_
