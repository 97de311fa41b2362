"""Contract: the TruLens prompts, schemas and parsing code the adapters and the reference handlers
were written against (``tests/helpers/contracts/trulens.json``). A change fails here, naming the step.

After a deliberate upgrade: re-read the vendor notes, check ``adapters/trulens`` (units, judge)
against the new prompts, then regenerate the fixture (see ``tests/helpers/contracts/trulens_capture.py``).
"""
from __future__ import annotations

import difflib
import json
from pathlib import Path

from harness.cases.load import load_cases
from harness.judge.responses_api import chat_view, is_responses
from harness.judge.upstream import ReferenceUpstream

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.scoring import score_one

FIXTURE = json.loads((Path(ROOT) / "tests" / "helpers" / "contracts" / "trulens.json").read_text())
REGEN = ".venv/bin/python -m harness.adapters.trulens._contract > tests/helpers/contracts/trulens.json"


@pytest.fixture(scope="module")
def live():
    from harness.adapters.trulens.common import load_vendor

    from tests.helpers.contracts import trulens_capture as _contract

    load_vendor()
    return _contract.capture()


def test_pinned_versions(live):
    assert live["versions"] == FIXTURE["versions"], (
        f"TruLens is {live['versions']}, the contract was recorded on {FIXTURE['versions']}; "
        f"re-check the adapters, then: {REGEN}")


@pytest.mark.parametrize("step", sorted(FIXTURE["prompts"]))
def test_prompt_shape(live, step):
    want, got = FIXTURE["prompts"][step], live["prompts"].get(step)
    assert got is not None, f"TruLens step {step!r}: prompt no longer found"
    if got["sha256"] != want["sha256"]:
        diff = "\n".join(difflib.unified_diff(want["text"].splitlines(), got["text"].splitlines(),
                                              "recorded", "installed", lineterm="", n=1))
        pytest.fail(f"TruLens step {step!r}: prompt changed (recorded head {want['head']!r}).\n{diff}\n"
                    f"Re-check adapters/trulens (judge handlers, parsing), then: {REGEN}")


@pytest.mark.parametrize("schema", sorted(FIXTURE["schemas"]))
def test_schema_shape(live, schema):
    assert live["schemas"].get(schema) == FIXTURE["schemas"][schema], (
        f"TruLens response schema {schema!r} changed: {json.dumps(live['schemas'].get(schema))}")


@pytest.mark.parametrize("name", sorted(FIXTURE["code"]))
def test_parsing_code(live, name):
    assert live["code"].get(name) == FIXTURE["code"][name], (
        f"TruLens {name!r} changed (signature or source): the adapters read its return values and "
        f"the reference handlers answer its prompts; re-check them, then: {REGEN}")


def test_step_prefixes_match_the_templates():
    """The reference handlers recognise each step by these prefixes of the recorded system prompts."""
    from harness.adapters.trulens.judge import STEP_PREFIXES

    for step, prefix in STEP_PREFIXES.items():
        text = FIXTURE["prompts"][f"{step}.system"]["text"]
        assert text.startswith(prefix), f"step {step!r}: system prompt no longer starts with {prefix!r}"


class Recording(ReferenceUpstream):
    def __init__(self, case):
        super().__init__({("test", case.id): case})
        self.bodies: list[dict] = []

    async def complete(self, cell, body):
        self.bodies.append(body)
        return await super().complete(cell, body)


def _step_of(system: str) -> str:
    for key, entry in FIXTURE["prompts"].items():
        if key.endswith(".system") and entry["text"] == system:
            return key.split(".")[0]
    raise AssertionError(f"a request's system prompt matches no recorded step: {system[:120]!r}")


@pytest.mark.parametrize("metric,case_id,steps", [
    ("trulens.groundedness", "cookie-yield", {"trivial", "groundedness"}),
    ("trulens.groundedness_answerability", "cookie-yield", {"trivial", "abstention", "groundedness"}),
    ("trulens.groundedness_answerability", "abstain-answerable", {"trivial", "abstention", "answerability"}),
    ("trulens.citation", "citations-correct", {"citation"}),
])
def test_requests_sent_are_the_recorded_steps(metric, case_id, steps):
    """What the adapters really send: every system prompt is a recorded one; scored steps go to the
    Responses API carrying the recorded schema as a strict json_schema ``text.format``, as stock's
    ``OpenAI`` provider sends them to an OpenAI-like server (the reference judge is one); the trivial
    filter goes to chat completions with no format, temperature 0 and seed 123, as stock sends it."""
    case = load_cases(CANONICAL).by_id(case_id)
    up = Recording(case)
    assert score_one(metric, case, upstream=up).result.status == "scored"
    seen = set()
    for body in up.bodies:
        scored = is_responses(body)
        step = _step_of((chat_view(body) if scored else body)["messages"][0]["content"])
        seen.add(step)
        if step == "trivial":
            assert not scored and "response_format" not in body and (body["temperature"], body["seed"]) == (0.0, 123)
            continue
        name = "BaseFeedbackResponse" if step in ("abstention", "answerability") else "ChainOfThoughtResponse"
        fmt = body["text"]["format"]
        assert scored and fmt["type"] == "json_schema" and fmt["name"] == name and fmt["strict"] is True, step
        assert set(fmt["schema"]["properties"]) == set(FIXTURE["schemas"][name]["properties"])
        assert body["temperature"] == 0.0 and "seed" not in body
    assert seen == steps
