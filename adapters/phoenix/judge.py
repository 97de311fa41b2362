"""The reference judge's handler for Phoenix's faithfulness template (pure: no vendor import).

Phoenix sends one user message: its instructions, then ``<data>`` with ``<query>``, ``<context>`` and
``<response>`` sections, and asks for a JSON object ``{"explanation", "label"}`` (``json_schema``
named ``extract_structured_data``, or the same schema as a tool when a server refused structured
output). The request is recognised by the template's first sentence and its closing question; the
response section must be this case's answer, else it is an :class:`UnrecognisedRequest`.

The label is read from the annotation as ``PhoenixFaithfulness.label_reading`` says: the answer is
``faithful`` only when every judged claim reads faithful (supported, inference); any not_found or
contradicted claim makes it ``unfaithful``. An answer with no claims (an abstention, an empty
answer) asserts nothing the context lacks: ``faithful``.
"""
from __future__ import annotations

import json

from harness.adapters.phoenix.faithfulness import PhoenixFaithfulness
from harness.core.errors import UnrecognisedRequest
from harness.core.records import Case
from harness.metric.judge_request import JudgeRequest

TEMPLATE_START = "In this task, you will be presented with a query, some context and a response."
TEMPLATE_END = "Is the response above faithful or unfaithful based on the query and context?"


def section(prompt: str, tag: str) -> str | None:
    """The text between ``<tag>\\n`` and ``\\n</tag>`` (the last such section: the case's data
    follows the instructions).

    >>> section("<response>\\nHi.\\n</response>", "response")
    'Hi.'
    """
    start = prompt.rfind(f"<{tag}>\n")
    end = prompt.rfind(f"\n</{tag}>")
    if start < 0 or end < start:
        return None
    return prompt[start + len(tag) + 3:end]


def verdict(case: Case) -> tuple[str, str]:
    """(label, explanation) for a case, from its claim labels."""
    bad = PhoenixFaithfulness.label_reading.claims_read_as(case, "unfaithful")
    if not bad:
        return "faithful", "Every statement of the response is based on the context."
    said = "; ".join(c.text for c in bad)
    return "unfaithful", f"The response states what the context does not support: {said}"


def reference_reply(req: JudgeRequest) -> str:
    """The JSON object Phoenix's classification schema parses."""
    prompt = req.prompt.strip()
    if not prompt.startswith(TEMPLATE_START) or not prompt.endswith(TEMPLATE_END):
        raise UnrecognisedRequest(req.metric, "not Phoenix's faithfulness template", req.prompt)
    response = section(prompt, "response")
    if not req.is_case_answer(response):
        raise UnrecognisedRequest(req.metric, "the <response> section is not this case's answer", req.prompt)
    label, why = verdict(req.case)
    return json.dumps({"explanation": why, "label": label})
