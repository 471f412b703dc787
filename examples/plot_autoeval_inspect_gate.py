"""
=================================
From an Inspect log to a CI gate
=================================

An LLM evaluation run with `Inspect AI <https://inspect.aisi.org.uk>`_ keeps every sample's
scores in its log. Here we run a small Inspect evaluation offline, in which people grade a random
30% of the answers and an LLM judge grades them all, and then one command reads the log folder,
certifies each model's error rate from **the few human grades and the many judge grades**
(R-AutoEval+) and acts on the result the way a CI pipeline does: a ``--json`` object, a
``--gate`` exit status and an HTML report.

The guarantee, for each model: over the draw of the labeled and unlabeled samples,

.. math:: P(\\text{certified and error} > \\alpha) \\le \\delta ,

whatever the judge's quality (a poor judge only costs power).
"""

# %%
# A tiny Inspect evaluation, offline
# ----------------------------------
# Inspect calls models through providers; a custom provider registered with ``@modelapi``
# answers without any network. Two "models" answer 400 arithmetic questions: ``canned/strong``
# is right on about 96% of them, ``canned/weak`` on about 75%. Two scorers grade the answers:
#
# * ``human``, the ground truth, which is expensive: a person grades the answer (here: compares
#   it with the target) on the samples sent to people, a random 30% chosen by a coin before the
#   run (``metadata["to_people"]``); on the other samples it returns ``Score.unscored()``, no
#   grade;
# * ``model_graded_qa``, a judge, ``canned/judge``, cheap but imperfect: it agrees with the
#   target on about 95% of the answers, and grades every sample.
#
# Requires ``pip install "sklearn-riskcontrol[inspect]"``.
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
from inspect_ai.scorer import Score, accuracy, model_graded_qa, scorer
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


@scorer(metrics=[accuracy()])
def human():
    """A person's grade on the samples sent to people; no grade (unscored) on the others."""

    async def score(state, target):
        if not state.metadata["to_people"]:
            return Score.unscored()
        right = state.output.completion.strip() == target.text
        return Score(value="C" if right else "I")

    return score


rng = np.random.default_rng(0)
pairs = rng.integers(10, 99, size=(N_QUESTIONS, 2))
to_people = rng.uniform(size=N_QUESTIONS) < 0.3  # which samples people grade: a coin
task = Task(
    name="arithmetic",
    dataset=[Sample(id=f"q{i}", input=f"What is {a} + {b}?", target=str(a + b),
                    metadata={"to_people": bool(sent)})
             for i, ((a, b), sent) in enumerate(zip(pairs, to_people))],
    solver=generate(),
    scorer=[human(), model_graded_qa(model="canned/judge")],
)
work = Path(tempfile.mkdtemp())
logs = inspect_eval(task, model=["canned/strong", "canned/weak"], log_dir=str(work / "logs"),
                    display="none", log_model_api=False, max_connections=50)
print([(log.eval.model, log.status, len(log.samples)) for log in logs])

# %%
# One command: certify per model, print JSON, gate, report
# --------------------------------------------------------
# This is the command a CI job runs on the log folder (here called in-process with
# :func:`sklearn_riskcontrol.cli.main`, which returns the exit status)::
#
#     python -m sklearn_riskcontrol autoeval certify --inspect-log logs/ \
#         --label-scorer human --judge-scorer model_graded_qa --alpha 0.15 --delta 0.1 \
#         --ci --json --gate --report report.html
#
# ``--label-scorer`` names the ground truth, ``--judge-scorer`` the judge. A sample with a
# ``human`` grade is a *labeled* sample; a sample without one (unscored) is *unlabeled* and is
# used through its judge grade. Each model of the logs is certified on its own samples; the
# epochs of a sample (one here) are averaged (``--epochs``). ``--json`` prints one JSON object
# (the schema ``sklearn_riskcontrol/cli/schema/v1.json``, version 1) on standard output and
# nothing else; ``--gate`` makes the exit status 0 when every model is certified, 1 when one is
# not, 2 on bad input (a file that is no log, a scorer that is not in the logs, a sample that
# ended with an error, named with its log, model and id).
from sklearn_riskcontrol.cli import main

report = work / "report.html"
argv = ["autoeval", "certify", "--inspect-log", str(work / "logs"), "--label-scorer", "human",
        "--judge-scorer", "model_graded_qa", "--alpha", "0.15", "--delta", "0.1", "--ci",
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
          f"{row['n_labeled']} human grades + {row['n_unlabeled']} judge-only samples, "
          f"{ci['level']:.0%} interval [{ci['low']:.3f}, {ci['high']:.3f}]")
    if "labels_forecast_text" in row:
        print(f"    {row['labels_forecast_text']}")

# %%
# In this run the strong model is certified (its error rate is about 4% by construction) and
# the weak one is not (about 25%, above ``alpha = 0.15``), so the gate fails with status 1: a CI
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
# In Python
# ---------
# :func:`~sklearn_riskcontrol.evaluation.read_inspect_log` gives the table the command reads:
# one row per (model, sample, epoch), one loss column per scorer (``C`` -> 0, ``I`` -> 1; NaN
# where a scorer gave no grade). It warns that ``human`` has no grade on the samples not sent to
# people: here that is by design (the command line reads them as unlabeled samples).
import warnings

from sklearn_riskcontrol.autoeval import rautoeval_test
from sklearn_riskcontrol.evaluation import read_inspect_log

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="scorer 'human' has no score")
    table = read_inspect_log(work / "logs")
table = table.sort_values(["model", "example"], ignore_index=True)
print(table[["model", "example", "human", "model_graded_qa"]].head())
print(table.groupby("model")[["human", "model_graded_qa"]].agg(["mean", "count"]))

# %%
# The result objects give the same data as the JSON object: ``to_dict()`` (strict JSON, for
# experiment trackers), ``to_frame()`` for the tabular ones and ``to_html()``. The strong
# model's test on its samples in the order of their ids (the command shuffles them first, with
# ``--shuffle`` seed 0, so its p-value is another realization):
strong = table[table.model == "canned/strong"]
graded = strong["human"].notna()
res = rautoeval_test(strong.loc[graded, "human"].to_numpy(),
                     strong.loc[graded, "model_graded_qa"].to_numpy(),
                     strong.loc[~graded, "model_graded_qa"].to_numpy(), alpha=0.15, delta=0.1)
d = res.to_dict()
print({k: d[k] for k in ("type", "certified", "pvalue", "method", "block_size")})
