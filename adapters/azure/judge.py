"""The reference judge's handler for Azure's groundedness prompty (pure: no vendor import).

Azure sends a system message (its instructions, "### You are an expert in evaluating the quality of
a RESPONSE ...") and a user message: the definition of groundedness, the 1-5 ratings with examples,
then ``# Data`` with ``CONTEXT:``, ``QUERY:`` and ``RESPONSE:`` lines and ``# Tasks`` asking for a
JSON object ``{reason, score, status}`` (``response_format`` ``json_object``). The request is
recognised by the definition's first words and the task's heading; the RESPONSE must be this case's
answer, else it is an :class:`UnrecognisedRequest`.

The rating is read from the annotation as ``AzureGroundedness.label_reading`` says: each judged claim
gets its label's rating (supported and inference 5, not_found and contradicted 2) and the answer gets
the lowest; an answer with no claims (an abstention, a greeting, an empty answer) has nothing to
ground: 3, as the rubric's level 3 describes. The status is always ``completed``.
"""
from __future__ import annotations

import json

from harness.adapters.azure.groundedness import NOTHING_TO_GROUND, AzureGroundedness
from harness.core.errors import UnrecognisedRequest
from harness.core.records import Case
from harness.metric.judge_request import JudgeRequest

DEFINITION = "**Groundedness** refers to how well an answer is anchored in the provided context"
TASKS = "\n# Tasks\n"
RESPONSE = "\nRESPONSE: "


def response_of(prompt: str) -> str | None:
    """The text after the last ``RESPONSE:`` of the data block, up to ``# Tasks``.

    >>> response_of("# Data\\nCONTEXT: c\\nQUERY: q\\nRESPONSE: It is red.\\n\\n\\n# Tasks\\n## Please")
    'It is red.'
    """
    end = prompt.rfind(TASKS)
    start = prompt.rfind(RESPONSE, 0, end)
    if start < 0 or end < 0:
        return None
    return prompt[start + len(RESPONSE):end].strip()


def rating(case: Case) -> tuple[int, str]:
    """(rating, reason) for a case, from its claim labels."""
    reading = AzureGroundedness.label_reading
    claims = case.judged_claims()
    if not claims:
        return NOTHING_TO_GROUND, "Let's think step by step: the response makes no claim to check against the context."
    worst = min(reading[c.label] for c in claims)
    bad = [c.text for c in claims if reading[c.label] == worst]
    if worst >= 5:
        return worst, "Let's think step by step: every statement of the response is supported by the context."
    return worst, f"Let's think step by step: the context does not support: {'; '.join(bad)}"


def reference_reply(req: JudgeRequest) -> str:
    """The JSON object Azure's prompty parses."""
    prompt = req.prompt
    if DEFINITION not in prompt or TASKS not in prompt:
        raise UnrecognisedRequest(req.metric, "not Azure's groundedness prompty", req.prompt)
    response = response_of(prompt)
    if not req.is_case_answer(response):
        raise UnrecognisedRequest(req.metric, "the RESPONSE line is not this case's answer", req.prompt)
    score, why = rating(req.case)
    return json.dumps({"reason": why, "score": score, "status": "completed"})
