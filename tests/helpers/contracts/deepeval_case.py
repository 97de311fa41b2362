"""Shared by the DeepEval tests: a fixed contract case, a recording upstream, the fixture's prompts.

Kept out of the canonical dataset on purpose: the contract must not move when a case is edited.
Re-record the fixture (after checking a DeepEval upgrade by reading its templates) with
``.venv/bin/python tests/vendors/test_deepeval_contract.py --record`` (from the repo root).
"""
from __future__ import annotations

import copy
import json
import os

from harness.core.records import Annotation, Case, Claim, Context, Evidence
from harness.judge.upstream import ReferenceUpstream

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deepeval.faithfulness.json")
METRICS = ("deepeval.faithfulness", "deepeval.faithfulness_penalized")
STEPS = ("truths", "claims", "verdicts", "reason")

_CTX1 = "Bake at 350 F for 8 to 10 minutes. Cool on a wire rack."
_CTX2 = "Store the cookies in a tin for up to a week."
_ANSWER = "Bake at 350 F. Cool them in the fridge. The recipe makes two dozen cookies."

CASE = Case(
    id="contract-cookies", question="How do I bake the cookies?",
    contexts=(Context("1", _CTX1), Context("2", _CTX2)),
    answer=_ANSWER,
    annotation=Annotation(claims=(
        Claim("The cookies bake at 350 F.", (0, 14), "supported", (Evidence("1", 0, 13),)),
        Claim("The cookies cool in the fridge.", (15, 39), "contradicted", (Evidence("1", 35, 55),)),
        Claim("The recipe makes two dozen cookies.", (40, 75), "not_found"),
    ), answerable=True, abstention=False))


class RecordingUpstream(ReferenceUpstream):
    """The reference judge, keeping (metric, request body, reply content) of every call."""

    def __init__(self, cases, edit=None):
        super().__init__(cases)
        self.log: list[tuple[str, dict, str]] = []
        self.edit = edit

    async def complete(self, cell, body):
        resp = await super().complete(cell, body)
        if self.edit is not None:
            msg = resp["choices"][0]["message"]
            msg["content"] = self.edit(body, msg["content"])
        self.log.append((cell.metric, copy.deepcopy(body), resp["choices"][0]["message"]["content"]))
        return resp


def step_of_body(body: dict) -> str:
    """The DeepEval step of a request: from its json_schema name when DeepEval asked for structured
    output, else from the prompt's first words (the plain-text protocol DeepEval uses for a model id
    its registry does not know)."""
    from harness.adapters.deepeval.judge import step_of
    from harness.metric.judge_request import JudgeRequest

    return step_of(JudgeRequest("deepeval.faithfulness", None, body))


def load_fixture() -> dict:
    with open(FIXTURE, encoding="utf-8") as fh:
        return json.load(fh)


def fill(template: str, **values: str) -> str:
    """A fixture template with its ``{{name}}`` placeholders filled in."""
    for k, v in values.items():
        template = template.replace("{{" + k + "}}", v)
    return template
