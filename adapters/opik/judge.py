"""The reference judge's handler for Opik's Hallucination prompt with context (pure: no vendor import).

Opik sends a system message (its guidelines and the JSON it wants) and a user message with the
question, the context (the passages as a Python list) and the answer between ``<opik_input>``,
``<opik_context>`` and ``<opik_output>`` tags. The request is recognised by the system message's
first sentence and the three tags; the output section must be this case's answer, else it is an
:class:`UnrecognisedRequest`.

The score follows the prompt's scale, 0 entirely faithful and 1 entirely unfaithful, with partial
hallucinations counted as guideline 5 asks: the share of the judged claims that read
``hallucinated`` in ``OpikHallucination.label_reading`` (not_found: new information beyond the
context, guideline 1; contradicted: guideline 2). An inference follows from the context and brings
no new information: faithful. An answer with no claims: 0.0.
"""
from __future__ import annotations

import json

from harness.adapters.opik.hallucination import OpikHallucination
from harness.core.errors import UnrecognisedRequest
from harness.core.records import Case
from harness.metric.judge_request import JudgeRequest

SYSTEM_START = ("You are an expert judge tasked with evaluating the faithfulness of an AI-generated answer "
                "to the given context.")


def output_section(user: str) -> str | None:
    """The text between ``<opik_output>\\n`` and the last ``\\n</opik_output>``.

    >>> output_section("OUTPUT:\\n<opik_output>\\nHi.\\n</opik_output>")
    'Hi.'
    """
    start, end = user.find("<opik_output>\n"), user.rfind("\n</opik_output>")
    if start < 0 or end < start + len("<opik_output>"):
        return None
    return user[start + len("<opik_output>\n"):end]


def verdict(case: Case) -> tuple[float, list[str]]:
    """(hallucination score, reasons) from the case's claim labels."""
    claims = case.judged_claims()
    bad = OpikHallucination.label_reading.claims_read_as(case, "hallucinated")
    if not claims:
        return 0.0, ["The output states nothing beyond the context."]
    if not bad:
        return 0.0, ["Every statement of the output is supported by the context."]
    reasons = [f"Not supported by the context ({c.label.replace('_', ' ')}): {c.text}" for c in bad]
    return len(bad) / len(claims), reasons


def reference_reply(req: JudgeRequest) -> str:
    """The JSON object Opik's parser reads."""
    system, user = req.text_of("system").strip(), req.text_of("user")
    if not system.startswith(SYSTEM_START) or "<opik_context>" not in user:
        raise UnrecognisedRequest(req.metric, "not Opik's hallucination prompt with context", req.prompt)
    out = output_section(user)
    if not req.is_case_answer(out):
        raise UnrecognisedRequest(req.metric, "the <opik_output> section is not this case's answer", req.prompt)
    score, reasons = verdict(req.case)
    return json.dumps({"score": score, "reason": reasons})
