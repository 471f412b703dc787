"""``autoeval certify --inspect-log``: the losses of Inspect AI logs, per model.

One command from an Inspect log folder to a certified, gated decision: the logs are read by
:func:`sklearn_riskcontrol.evaluation.read_inspect_log` (Inspect's own reader), one scorer is the
ground-truth label (``--label-scorer``) and one or more are the judge (``--judge-scorer``).

* A sample with a label score is **labeled**; a sample without one (the label scorer absent or
  unscored) is **unlabeled**: only its judge grade is used. Which samples carry a label must not
  depend on their outcome (e.g. a random subset sent to people).
* A judge grade that is missing on a sample that did not fail (the judge gave no grade) counts
  as the judge saying *wrong* (judge loss 1), with a warning: the guarantee holds whatever the
  judge, so this costs power, never validity.
* A sample that ended with an error is an input error (exit status 2, the log, model, sample and
  message named) unless ``--sample-errors drop``: then every epoch of it is left out, with a
  warning naming them, and the guarantee is about the samples that do not fail.
* Epochs: ``--epochs mean`` (default) averages each sample's losses over its epochs (one draw per
  sample); ``--epochs clusters`` keeps one row per epoch with the sample as its cluster.
* Rows are sorted by model and sample id (Inspect writes samples in the order they finish),
  then shuffled with ``--shuffle SEED`` (default 0 for logs).

Every message names the log file, the model and the sample, never a line of a table.
"""

import re
import warnings

import numpy as np

from ..evaluation._tables import _INSPECT_COLUMNS, _mean_epochs

__all__ = ["add_inspect_options", "check_inspect_options", "inspect_losses"]

_LISTED = 5  # samples named in a message
# read_inspect_log's warnings that this module words for the command line itself
_REWORDED = re.compile(r"ended with an error|^scorer '.*' has no score for")


def add_inspect_options(p):
    """The options of ``certify --inspect-log``."""
    g = p.add_argument_group(
        "Inspect AI logs (instead of --labeled; needs pip install "
        "\"sklearn-riskcontrol[inspect]\")")
    g.add_argument(
        "--inspect-log", default=None, action="append", metavar="PATH",
        help="an Inspect log (.eval or .json) or a folder of them (searched recursively); "
             "repeat for several. Each model of the logs is certified on its own samples. A "
             "sample with a --label-scorer score is labeled; one without it is unlabeled (its "
             "--judge-scorer grade is used); which samples carry a label must not depend on their "
             "outcome (e.g. a random subset sent to people). Rows are sorted by model and "
             "sample, then shuffled with --shuffle SEED (default 0)")
    g.add_argument("--label-scorer", default=None, metavar="NAME",
                   help="the scorer holding the ground-truth label (e.g. match, or the scorer "
                        "of your human grades); its values become losses as read_inspect_log "
                        "documents (C -> 0, I -> 1, P -> 0.5, N -> 1; numbers need "
                        "--score-range)")
    g.add_argument("--judge-scorer", default=None, action="append", metavar="NAME",
                   help="the judge's scorer (e.g. model_graded_qa); several judges: repeat. A "
                        "missing judge grade counts as judge loss 1 (valid for any judge, it "
                        "only costs power), with a warning")
    g.add_argument("--epochs", choices=["mean", "clusters"], default="mean",
                   help="samples run for several epochs: mean averages each sample's losses "
                        "over its epochs (default); clusters keeps one row per epoch with the "
                        "sample as its cluster (clusters are the draws)")
    g.add_argument("--sample-errors", choices=["fail", "drop"], default="fail",
                   help="a sample that ended with an error: fail stops with exit status 2 "
                        "naming it (default); drop leaves out every epoch of it, with a "
                        "warning, and the guarantee is then about samples that do not fail")
    g.add_argument("--score-range", default=None, metavar="LOW,HIGH",
                   help="range of numeric scores, higher = better (loss = (HIGH - value) / "
                        "(HIGH - LOW))")
    return p


def check_inspect_options(args):
    """Exactly one of ``--labeled`` / ``--inspect-log``, and no CSV option with a log."""
    if args.inspect_log is None:
        given = [o for o, v in (("--label-scorer", args.label_scorer),
                                ("--judge-scorer", args.judge_scorer),
                                ("--score-range", args.score_range)) if v is not None]
        if args.labeled is None:
            raise ValueError("give the losses: --labeled FILE.csv, or --inspect-log PATH (an "
                             "Inspect log or a folder of them).")
        if given:
            raise ValueError(f"{given[0]} applies to --inspect-log; with --labeled name the "
                             "columns with --loss-column / --judge-column.")
        return
    clash = [o for o, v in (("--labeled", args.labeled), ("--unlabeled", args.unlabeled),
                            ("--groups", args.groups), ("--judge-column", args.judge_column))
             if v is not None]
    if clash:
        hint = {"--groups": " (epochs as clusters: --epochs clusters)",
                "--judge-column": " (name the judge's scorer with --judge-scorer)"}
        raise ValueError(f"--inspect-log reads the labels and the judge grades from the logs: "
                         f"drop {clash[0]}{hint.get(clash[0], '')}.")
    if args.label_scorer is None:
        raise ValueError("--inspect-log needs --label-scorer NAME: the scorer holding the "
                         "ground-truth label (e.g. match).")
    if args.judge_scorer is None and args.method != "eval":
        raise ValueError(f"--method {args.method} needs --judge-scorer NAME (the judge's "
                         "scorer, e.g. model_graded_qa); or use --method eval (labels only).")
    if args.shuffle is None:
        args.shuffle = 0


def _score_range(text):
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--score-range must be LOW,HIGH (two numbers); got {text!r}.") from None
    return low, high


def _read(args):
    """``read_inspect_log`` of the logs (one row per epoch), its warnings re-emitted except
    those this module words for the command line."""
    try:
        from ..evaluation import read_inspect_log

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = read_inspect_log(
                args.inspect_log if len(args.inspect_log) > 1 else args.inspect_log[0],
                score_range=None if args.score_range is None else _score_range(args.score_range))
    except ImportError as exc:
        if exc.name != "inspect_ai":
            raise
        raise ValueError(f"--inspect-log: {exc}".replace("read_inspect_log: ", "")) from None
    for w in caught:
        text = str(w.message)
        if not _REWORDED.search(text):  # its Python advice, in the command line's words
            text = text.replace("pass model_from='eval' to pool them",
                                "read_inspect_log(..., model_from='eval') pools them in Python")
            warnings.warn(text, w.category, stacklevel=3)
    return frame


def _who(frame, k):
    """A row of the table as the log names it: model, sample (epoch) and log file."""
    epoch = f" epoch {frame['epoch'].iat[k]}" if "epoch" in frame else ""
    return (f"model {frame['model'].iat[k]!r} sample {frame['example'].iat[k]!r}{epoch} "
            f"({frame['log'].iat[k]})")


def _listed(frame, rows, detail=None):
    """The first rows of ``rows`` named, then '...' when there are more."""
    named = [_who(frame, k) + ("" if detail is None else f": {detail(k)}")
             for k in rows[:_LISTED]]
    return "; ".join(named) + ("; ..." if len(rows) > _LISTED else "")


def inspect_losses(args):
    """``[(model, h, g, u, gl, gu)]`` of the logs, as ``_certify_losses`` returns them, and the
    facts of the JSON object (logs, scorers, samples dropped)."""
    frame = _read(args)
    logs = ", ".join(str(p) for p in args.inspect_log)
    scorers = [c for c in frame.columns if c not in _INSPECT_COLUMNS]
    judges = [] if args.method == "eval" else args.judge_columns
    for option, name in [("--label-scorer", args.label_scorer)] + \
            [("--judge-scorer", j) for j in judges]:
        if name not in scorers:
            raise ValueError(f"{option} {name!r}: no sample of {logs} has a score of this "
                             f"scorer; the scorers of these logs are {scorers}.")
    names = list(dict.fromkeys(frame["model"]))
    if args.model is not None:
        if args.model not in names:
            raise ValueError(f"--model {args.model!r}: no sample of {logs} is of this model; "
                             f"their models are {names}.")
        frame = frame[frame["model"] == args.model]
    # sample ids may be numbers or text: sorted as text
    frame = frame.sort_values(["model", "example", "epoch"], kind="stable", ignore_index=True,
                              key=lambda c: c.astype(str) if c.name == "example" else c)
    n_samples = frame.groupby(["model", "example"]).ngroups
    failed = frame["error"].notna().to_numpy()
    dropped = 0
    if failed.any():
        where = np.flatnonzero(failed)
        text = _listed(frame, where, lambda k: frame["error"].iat[k])
        if args.sample_errors == "fail":
            raise ValueError(
                f"{where.size} sample(s) of {logs} ended with an error and have no score: "
                f"{text}. Rerun them (inspect eval-retry), or pass --sample-errors drop to "
                "leave them out (the guarantee is then about the samples that do not fail).")
        bad = frame.loc[failed, ["model", "example"]].drop_duplicates()
        keep = ~frame.set_index(["model", "example"]).index.isin(
            bad.set_index(["model", "example"]).index)
        dropped = len(bad)
        warnings.warn(
            f"--sample-errors drop: left out {dropped} of {n_samples} samples (every epoch of "
            f"them) that ended with an error: {text}. The guarantee is about the samples that "
            "do not fail; a model that fails on hard samples looks better than it is.",
            stacklevel=2)
        frame = frame[keep].reset_index(drop=True)
    label = frame[args.label_scorer].to_numpy(dtype=float)
    samples = frame.groupby(["model", "example"], sort=False)[args.label_scorer]
    scored = samples.transform("count").to_numpy()
    part = (scored > 0) & (scored < samples.transform("size").to_numpy())
    if part.any():
        raise ValueError(
            f"--label-scorer {args.label_scorer!r} scores some epochs of a sample and not the "
            f"others: {_listed(frame, np.flatnonzero(part))} has no label score. A sample is "
            "labeled in every epoch or in none: score the missing epochs, or pass the logs "
            "of one epoch.")
    for j in judges:
        gap = np.flatnonzero(frame[j].isna().to_numpy())
        if gap.size:
            warnings.warn(
                f"--judge-scorer {j!r} gave no grade on {gap.size} of {len(frame)} rows: "
                f"{_listed(frame, gap)}; counted as judge loss 1 (the judge saying wrong: "
                "valid whatever the judge, it costs power).", stacklevel=2)
            frame[j] = frame[j].fillna(1.0)
    if args.epochs == "mean" and "epoch" in frame:
        frame = _mean_epochs(frame, [args.label_scorer] + judges)
        label = frame[args.label_scorer].to_numpy(dtype=float)
    clusters = args.epochs == "clusters"
    out = []
    G = None
    if judges:  # (rows,) or (judges, rows): the rows on the last axis
        G = np.stack([frame[j].to_numpy(dtype=float) for j in judges])
        G = G[0] if len(judges) == 1 else G
    ids = frame["example"].astype(str).to_numpy()
    models = frame["model"].to_numpy()
    for name in dict.fromkeys(models):
        rows = np.flatnonzero(models == name)
        has = ~np.isnan(label[rows])
        lab, unl = rows[has], rows[~has]
        g = u = None
        if G is not None:
            g, u = G[..., lab], (G[..., unl] if unl.size else None)
        out.append((name, label[lab], g, u, ids[lab] if clusters else None,
                    ids[unl] if clusters and u is not None else None))
    facts = {"inspect_logs": [str(p) for p in args.inspect_log],
             "label_scorer": args.label_scorer, "judge_scorers": judges,
             "epochs": args.epochs, "samples_read": n_samples, "samples_dropped": dropped}
    return out, facts
