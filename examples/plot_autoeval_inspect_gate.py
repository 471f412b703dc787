"""
=================================
From an Inspect log to a CI gate
=================================

An LLM evaluation run with `Inspect AI <https://inspect.aisi.org.uk>`_ keeps every sample's
scores in its log. Here we run a small Inspect evaluation offline, read its logs with
:func:`~sklearn_riskcontrol.evaluation.read_inspect_log`, certify each model's error rate from
**a few exact labels and many LLM-judge grades** (R-AutoEval+), and act on the result the way a
CI pipeline does: the command line's ``--json`` object, its ``--gate`` exit status and an HTML
report.

The guarantee, for each model: over the draw of the labeled and unlabeled samples,

.. math:: P(\\text{certified and error} > \\alpha) \\le \\delta ,

whatever the judge's quality (a poor judge only costs power).
"""

# %%
# A tiny Inspect evaluation, offline
# ----------------------------------
# Inspect calls models through providers; a custom provider registered with ``@modelapi``
# answers without any network. Two "models" answer 600 arithmetic questions: ``canned/strong``
# is right on about 96% of them, ``canned/weak`` on about 75%. The ``match`` scorer compares
# the answer with the target (the exact label, which we will pretend is expensive); the
# ``model_graded_qa`` scorer asks a judge, ``canned/judge``, which agrees with the target on
# about 95% of the answers (a cheap, imperfect label). Requires ``pip install
# "sklearn-riskcontrol[inspect]"``.
import contextlib
import io
import json
import tempfile
import zlib
from pathlib import Path

import numpy as np

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import match, model_graded_qa
from inspect_ai.solver import generate

N_QUESTIONS = 400
ACCURACY = {"strong": 0.96, "weak": 0.75}
JUDGE_AGREES = 0.95


def _coin(*key):
    """A fixed pseudo-random number in [0, 1) for ``key`` (the same on every run)."""
    return zlib.crc32(repr(key).encode()) / 2**32


class CannedAPI(ModelAPI):
    """Canned answers (models ``strong`` and ``weak``) and grades (model ``judge``)."""

    def __init__(self, model_name, base_url=None, api_key=None, config=None, **model_args):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        prompt = "\n".join(m.text for m in input)
        if self.model_name == "judge":
            answer = prompt.split("[Submission]:", 1)[-1].split("***", 1)[0].strip()
            target = prompt.split("[Criterion]:", 1)[-1].split("***", 1)[0].strip()
            right = answer == target
            if _coin("judge", answer, target) > JUDGE_AGREES:
                right = not right  # the judge errs on about 5% of the answers
            text = "GRADE: C" if right else "GRADE: I"
        else:
            question = prompt.strip().splitlines()[-1]
            a, b = (int(x) for x in question.removeprefix("What is ").rstrip("?").split(" + "))
            correct = _coin(self.model_name, question) < ACCURACY[self.model_name]
            text = str(a + b if correct else a + b + 1)
        return ModelOutput.from_content(model=self.model_name, content=text)


@modelapi(name="canned")
def canned():
    return CannedAPI


rng = np.random.default_rng(0)
pairs = rng.integers(10, 99, size=(N_QUESTIONS, 2))
task = Task(
    name="arithmetic",
    dataset=[Sample(id=f"q{i}", input=f"What is {a} + {b}?", target=str(a + b))
             for i, (a, b) in enumerate(pairs)],
    solver=generate(),
    scorer=[match(), model_graded_qa(model="canned/judge")],
)
work = Path(tempfile.mkdtemp())
logs = inspect_eval(task, model=["canned/strong", "canned/weak"], log_dir=str(work / "logs"),
                    display="none", log_model_api=False, max_connections=50)
print([(log.eval.model, log.status, len(log.samples)) for log in logs])

# %%
# Read the logs: one row per (model, sample), one loss column per scorer
# ----------------------------------------------------------------------
# ``read_inspect_log`` turns Inspect's ``C``/``I`` grades into losses (0 = correct, 1 = wrong).
# ``match`` is the exact label, ``model_graded_qa`` the judge's.
from sklearn_riskcontrol.evaluation import read_inspect_log

table = read_inspect_log(work / "logs")
# Inspect runs samples concurrently, so the order of a log's samples varies between runs: sort
# the rows, so that the random choice of labeled rows below is the same on every run.
table = table.sort_values(["model", "example"], ignore_index=True)
print(table[["model", "example", "match", "model_graded_qa"]].head())
print(table.groupby("model")[["match", "model_graded_qa"]].mean())

# %%
# Keep only a few labels
# ----------------------
# In a real evaluation the exact label costs a human's time; the judge's grade is cheap. We keep
# ``match`` on a random 30% of each model's samples (about 120 labels per model) and blank it on the
# others: a row with an empty label is an *unlabeled* row, which R-AutoEval+ uses through the
# judge's grade. The rows are written in a random order (the test processes them in file order).
labeled = rng.uniform(size=len(table)) < 0.3
table.loc[~labeled, "match"] = np.nan
losses = work / "losses.csv"
table.sample(frac=1, random_state=1).to_csv(losses, index=False)
print(table.assign(labeled=labeled).groupby("model")["labeled"].sum())

# %%
# Certify per model, print JSON, gate
# -----------------------------------
# This is the command a CI job runs (here called in-process with
# :func:`sklearn_riskcontrol.cli.main`, which returns the exit status)::
#
#     python -m sklearn_riskcontrol autoeval certify --labeled losses.csv \
#         --loss-column match --judge-column model_graded_qa --alpha 0.15 --delta 0.1 \
#         --ci --json --gate --report report.html
#
# ``--json`` prints one JSON object (the schema ``sklearn_riskcontrol/cli/schema/v1.json``,
# version 1) on standard output and nothing else; ``--gate`` makes the exit status 0 when every
# model is certified, 1 when one is not (2: bad input).
from sklearn_riskcontrol.cli import main

report = work / "report.html"
argv = ["autoeval", "certify", "--labeled", str(losses), "--loss-column", "match",
        "--judge-column", "model_graded_qa", "--alpha", "0.15", "--delta", "0.1", "--ci",
        "--json", "--gate", "--report", str(report)]
stdout, stderr = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
    status = main(argv)
result = json.loads(stdout.getvalue())
print(f"exit status with --gate: {status}")
print(f"decision: {result['decision']}")
print(f"guarantee: {result['guarantee']}")
for row in result["rows"]:
    ci = row["interval"]
    print(f"  {row['name']}: certified={row['certified']}, p-value {row['pvalue']:.3g}, "
          f"{row['n_labeled']} labels + {row['n_unlabeled']} judge-only rows, "
          f"{ci['level']:.0%} interval [{ci['low']:.3f}, {ci['high']:.3f}]")
    if "labels_forecast_text" in row:
        print(f"    {row['labels_forecast_text']}")

# %%
# In this run the strong model is certified (its error on these questions is about 5%) and the
# weak one is not (about 27%, above ``alpha = 0.15``), so the gate fails with status 1: a CI
# step ``... --gate`` stops the pipeline. Every number above is one realization: another draw
# of the labeled rows gives other p-values; the guarantee is about how often the procedure
# wrongly certifies. The JSON object carries everything a pipeline needs:
print(json.dumps({k: result[k] for k in ("schema_version", "command", "gate", "alpha", "delta",
                                         "labels_used")}, indent=1))

# %%
# The report
# ----------
# ``--report report.html`` (or ``to_html()`` on a result object in Python) writes one
# self-contained page: the decision, the guarantee sentence, the per-model table, the intervals
# drawn as inline SVG, and for a model not certified a forecast of the labels it would need. It
# loads nothing from the network and runs no script; every model name from the log is escaped.
page = report.read_text()
print(f"{report.name}: {len(page)} characters, {page.count('<svg')} drawing, "
      f"{page.count('<script')} scripts")

# %%
# In Python, the result objects give the same data: ``to_dict()`` (strict JSON, for experiment
# trackers), ``to_frame()`` for the tabular ones and ``to_html()``. The strong model's test, on
# the rows of the file in their order, is the one the command ran:
import pandas as pd

from sklearn_riskcontrol.autoeval import rautoeval_test

rows = pd.read_csv(losses)
rows = rows[rows.model == "canned/strong"]
is_labeled = rows["match"].notna()
res = rautoeval_test(rows.loc[is_labeled, "match"].to_numpy(),
                     rows.loc[is_labeled, "model_graded_qa"].to_numpy(),
                     rows.loc[~is_labeled, "model_graded_qa"].to_numpy(), alpha=0.15, delta=0.1)
d = res.to_dict()
print({k: d[k] for k in ("type", "certified", "pvalue", "method", "block_size")})
same = next(r for r in result["rows"] if r["name"] == "canned/strong")["pvalue"]
print(f"same p-value as the command: {np.isclose(d['pvalue'], same)}")
