"""``autoeval label``: the command line runs an ActiveLabelingSession kept in its store."""

import json

import numpy as np
import pandas as pd

from sklearn_riskcontrol.autoeval import ActiveLabelingSession
from sklearn_riskcontrol.cli import main


def _pool(tmp_path, n=300):
    rng = np.random.default_rng(0)
    g = np.where(rng.random(n) < 2 / 3, 0.0, 1.0)
    h = np.where(rng.random(n) < 0.95, g, 1 - g) * (rng.random(n) < 0.3)
    path = tmp_path / "pool.csv"
    pd.DataFrame({"qid": [f"q{i}" for i in range(n)], "judge_loss": g}).to_csv(path, index=False)
    return path, g, h


def _call(pool, store, out, labels=None):
    args = ["autoeval", "label", "--pool", str(pool), "--store", str(store), "--alpha", "0.3",
            "--max-labels", "200", "--k", "20", "--id-column", "qid", "--output", str(out)]
    return main(args + ([] if labels is None else ["--labels", str(labels)]))


def test_label_proposes_reads_labels_and_matches_the_session(tmp_path, capsys):
    pool, g, h = _pool(tmp_path)
    store, out, labels = tmp_path / "s.db", tmp_path / "prop.csv", tmp_path / "labels.csv"
    ref = ActiveLabelingSession(g, alpha=0.3, delta=0.1, max_labels=200, random_state=0)
    seen = set()
    assert _call(pool, store, out) == 0
    for _ in range(10):
        prop = pd.read_csv(out)
        if prop.empty:
            break
        rows = prop["row"].to_numpy() - 1
        np.testing.assert_array_equal(rows, ref.propose(20))  # the same draws as the session
        assert (prop["qid"] == [f"q{i}" for i in rows]).all()
        assert not set(rows) & seen
        seen |= set(rows)
        status = ref.add(rows, h[rows])
        pd.DataFrame({"row": rows + 1, "loss": h[rows]}).to_csv(labels, index=False)
        assert _call(pool, store, out, labels) == 0
    err = capsys.readouterr().err
    assert status.certified and f"certified pool risk < 0.3 after {status.stopping_index + 1}" \
        in err
    # --gate: 0 once certified (1 before: see test_cli_json.py), and the JSON says so
    assert main(["autoeval", "label", "--pool", str(pool), "--store", str(store), "--alpha",
                 "0.3", "--max-labels", "200", "--output", str(out), "--json", "--gate"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "autoeval label" and doc["gate"]["passed"]
    assert doc["labels_used"] == status.n_labels and doc["rows"][0]["certified"]
    assert "if it is at least alpha, the session is ever certified with probability at most " \
           "0.1" in err


def test_label_refuses_rows_never_proposed(tmp_path, capsys):
    pool, _, _ = _pool(tmp_path, n=250)
    store, out, labels = tmp_path / "s.db", tmp_path / "prop.csv", tmp_path / "labels.csv"
    assert _call(pool, store, out) == 0
    proposed = set(pd.read_csv(out)["row"])
    other = next(r for r in range(1, 251) if r not in proposed)
    pd.DataFrame({"row": [other], "loss": [0.0]}).to_csv(labels, index=False)
    assert _call(pool, store, out, labels) == 2
    assert f"Row {other - 1} was never proposed" in capsys.readouterr().err


def test_label_selects_among_candidates_like_the_session(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 300
    g = np.where(rng.random(n) < 2 / 3, 0.0, 1.0)
    G = np.c_[g * (rng.random(n) < 0.3), g]  # candidate a errs less than b
    H = np.where(rng.random((n, 1)) < 0.95, G, 1 - G)
    pool, store, out, labels = (tmp_path / f for f in ("pool.csv", "s.db", "p.csv", "l.csv"))
    pd.DataFrame({"judge_a": G[:, 0], "judge_b": G[:, 1]}).to_csv(pool, index=False)
    args = ["autoeval", "label", "--pool", str(pool), "--store", str(store), "--alpha", "0.2",
            "--max-labels", "150", "--k", "25", "--judge-column", "judge_a,judge_b",
            "--loss-column", "loss_a,loss_b", "--procedure", "bonferroni", "--cost", "2,1",
            "--output", str(out)]
    def ref():  # the session reopened from its own store, as each command does
        return ActiveLabelingSession(G, alpha=0.2, delta=0.1, max_labels=150, random_state=0,
                                     procedure="bonferroni", cost=[2, 1],
                                     store=tmp_path / "ref.db")

    assert main(args) == 0
    for _ in range(8):
        prop = pd.read_csv(out)
        if prop.empty:
            break
        rows = prop["row"].to_numpy() - 1
        with ref() as session:
            np.testing.assert_array_equal(rows, session.propose(rows.size))
        with ref() as session:
            status = session.add(rows, H[rows])
        pd.DataFrame({"row": rows + 1, "loss_a": H[rows, 0], "loss_b": H[rows, 1]}).to_csv(
            labels, index=False)
        assert main(args + ["--labels", str(labels)]) == 0
    capsys.readouterr()
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["rows"]] == ["judge_a", "judge_b"]
    assert [r["certified"] for r in doc["rows"]] == status.certified.tolist()
    assert doc["gate"]["passed"] == (status.selected is not None)
    assert status.final and status.certified[0] and not status.certified[1]
    assert main(args[:-2] + ["--loss-column", "loss_a", "--output", str(out)]) == 2
    assert "one loss column of --labels per candidate" in capsys.readouterr().err
