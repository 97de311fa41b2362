"""The reference judge's handler for MLflow's groundedness prompt (pure: no vendor import).

MLflow sends one user message: its instructions, then ``<claim>`` with ``<question>`` and
``<answer>``, then ``<document>`` (``str(context)``), then the JSON it wants,
``{"rationale", "result": "yes|no"}`` (as a ``json_schema`` response format named
``JudgeEvaluation``, or as text only after a server refused structured output). The request is
recognised by the prompt's first sentence and its closing brace; the ``<answer>`` must be this case's
answer, else it is an :class:`UnrecognisedRequest`.

The result is read from the annotation as ``MlflowGroundedness.label_reading`` says: ``yes`` only
when every judged claim reads yes (supported); an inference is an assumption or an approximation,
which MLflow's prompt forbids, so it reads ``no``, as do not_found and contradicted. An answer with no
claims (an abstention, an empty answer) states nothing unsupported: ``yes``.
"""
from __future__ import annotations

import json

from harness.adapters.mlflow.groundedness import MlflowGroundedness
from harness.core.errors import UnrecognisedRequest
from harness.core.records import Case
from harness.metric.judge_request import JudgeRequest

PROMPT_START = "Consider the following claim and document. You must determine whether claim is supported"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>\n</claim>"


def answer_of(prompt: str) -> str | None:
    """The text between ``<answer>`` and ``</answer>`` closing the claim.

    >>> answer_of("<claim>\\n  <question>q</question>\\n  <answer>Hi.</answer>\\n</claim>")
    'Hi.'
    """
    start, end = prompt.find(ANSWER_OPEN), prompt.rfind(ANSWER_CLOSE)
    if start < 0 or end < start:
        return None
    return prompt[start + len(ANSWER_OPEN):end]


def verdict(case: Case) -> tuple[str, str]:
    """(result, rationale) for a case, from its claim labels."""
    bad = MlflowGroundedness.label_reading.claims_read_as(case, "no")
    if not bad:
        return "yes", "Let's think step by step. Every statement of the answer is supported by the document."
    said = "; ".join(c.text for c in bad)
    return "no", f"Let's think step by step. The document does not support: {said}"


def reference_reply(req: JudgeRequest) -> str:
    """The JSON object MLflow parses (``result`` and ``rationale``)."""
    prompt = req.prompt.strip()
    if not prompt.startswith(PROMPT_START) or not prompt.endswith("}"):
        raise UnrecognisedRequest(req.metric, "not MLflow's groundedness prompt", req.prompt)
    answer = answer_of(prompt)
    if not req.is_case_answer(answer):
        raise UnrecognisedRequest(req.metric, "the <answer> of the claim is not this case's answer", req.prompt)
    result, why = verdict(req.case)
    return json.dumps({"result": result, "rationale": why})
