"""Write the Inspect AI logs that ``tests/evaluation/test_inspect_logs.py`` reads.

The logs are written by Inspect itself (``inspect_ai.eval``), offline: the models are a small
custom provider, ``canned/<name>``, registered with ``@modelapi``, that returns a canned answer
per question (no network, no token counting). The grader of ``model_graded_qa`` is
``canned/grader``, which compares the answer with the target the way a lenient judge would.

What the logs hold (tests/evaluation/data/inspect/)::

    qa/alpha.eval    task "capitals_qa", model canned/alpha, 5 samples x 2 epochs, scorers
                     match and model_graded_qa; the grader cannot grade q4 (model_graded_qa
                     unscored: a NaN value), and judges q5 correct where match says incorrect
    qa/beta.eval     the same task, model canned/beta; sample q3 fails in epoch 2 (an error,
                     no score), and q2's answer changes between the epochs
    routed.eval      task "capitals_qa", model canned/router, whose solver
                     sends q1-q2 to canned/alpha and q3-q5 to canned/beta (two models in one
                     file, told apart by each sample's output.model)

Run (needs ``pip install inspect_ai``; about 10 s)::

    python tools/make_inspect_fixtures.py [OUTPUT_DIR]

OUTPUT_DIR defaults to tests/evaluation/data/inspect. Inspect names its logs by date and id;
they are renamed to the stable names above. Sample contents do not depend on timing except the
epoch in which beta's q2 changes its answer (the first call answers "4", the second "5";
samples run one at a time, so epoch 1 gets "4").
"""

import os
import sys
import tempfile
from collections import Counter

QUESTIONS = [
    ("q1", "What is the capital of France?", "Paris"),
    ("q2", "What is 2 + 2?", "4"),
    ("q3", "What colour is a clear daytime sky?", "blue"),
    ("q4", "What is the largest planet of the Solar System?", "Jupiter"),
    ("q5", "Who wrote Hamlet?", "Shakespeare"),
]
# Canned answers per model and question; a list is used in turn (one item per call).
ANSWERS = {
    "alpha": {"q1": "Paris", "q2": "4", "q3": "blue", "q4": "Saturn",
              "q5": "Shakespeare wrote it."},
    "beta": {"q1": "Lyon", "q2": ["4", "5"], "q3": "The sky is blue", "q4": "Jupiter",
             "q5": "Marlowe"},
}
UNGRADABLE = "Saturn"  # the grader returns no grade for this answer (model_graded_qa unscored)
ERROR_AT = ("beta", "q3", 2)  # (model, sample id, epoch) whose solver raises


def main(out_dir):
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelAPI, ModelOutput, get_model, modelapi
    from inspect_ai.scorer import match, model_graded_qa
    from inspect_ai.solver import solver

    calls = Counter()

    class CannedAPI(ModelAPI):
        """Answers from ANSWERS (models alpha, beta) or grades (model grader)."""

        def __init__(self, model_name, base_url=None, api_key=None, config=None, **model_args):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config):
            prompt = "\n".join(m.text for m in input)
            name = self.model_name
            if name == "grader":
                text = _grade(prompt)
            else:
                qid = next(q for q, question, _ in QUESTIONS if question in prompt)
                answer = ANSWERS[name][qid]
                if isinstance(answer, list):
                    calls[name, qid] += 1
                    answer = answer[min(calls[name, qid], len(answer)) - 1]
                text = answer
            return ModelOutput.from_content(model=name, content=text)

    @modelapi(name="canned")
    def canned():
        return CannedAPI

    @solver
    def answer(route=False):
        async def solve(state, generate):
            model = get_model()
            if route:  # a router: q1-q2 to alpha, the others to beta
                model = get_model("canned/alpha" if state.sample_id in ("q1", "q2")
                                  else "canned/beta")
            name = model.name
            if (name, state.sample_id, state.epoch) == ERROR_AT:
                raise RuntimeError(f"canned/{name}: simulated provider failure on "
                                   f"{state.sample_id} (epoch {state.epoch})")
            state.output = await model.generate(state.messages)
            state.messages.append(state.output.message)
            return state

        return solve

    def task(route=False):
        return Task(
            name="capitals_qa",
            dataset=[Sample(id=q, input=text, target=target) for q, text, target in QUESTIONS],
            solver=answer(route=route),
            scorer=[match(), model_graded_qa(model="canned/grader")],
        )

    os.makedirs(os.path.join(out_dir, "qa"), exist_ok=True)
    runs = [("canned/alpha", False, "eval", "qa/alpha.eval"),
            ("canned/beta", False, "eval", "qa/beta.eval"),
            ("canned/router", True, "eval", "routed.eval")]
    for model, route, fmt, name in runs:
        with tempfile.TemporaryDirectory() as tmp:
            (log,) = eval(task(route), model=model, epochs=2, fail_on_error=False,
                          max_samples=1, log_dir=tmp, log_format=fmt, display="none",
                          log_model_api=False)
            # Keep the fixtures small: Inspect reads the log back and writes it again without
            # the transcripts (events, attachments), which the reader does not use.
            log = read_eval_log(log.location)
            for sample in log.samples:
                sample.events, sample.events_data, sample.attachments = [], None, {}
            write_eval_log(log, os.path.join(out_dir, name), format=fmt)
            print(f"{name}: {log.status}, {len(log.samples or [])} samples, "
                  f"{os.path.getsize(os.path.join(out_dir, name))} bytes")


def _grade(prompt):
    """A lenient judge: correct when the target word appears in the answer."""
    answer = prompt.split("[Submission]:", 1)[-1].split("***", 1)[0]
    target = prompt.split("[Criterion]:", 1)[-1].split("***", 1)[0].strip()
    if UNGRADABLE in answer:
        return "I cannot tell."
    return "GRADE: C" if target.lower() in answer.lower() else "GRADE: I"


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, os.pardir, "tests", "evaluation", "data", "inspect")
    main(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else default))
