"""The realistic test judge behaves as real servers do (``tests.judges.realistic`` server modes): a
json_schema constrains the reply, json_object gives JSON, no format lets fences and prose through;
chat-only modes refuse the Responses API (404 or 400), the OpenAI-like mode serves it; ``legacy`` keeps
the judge's earlier behaviour for the tests that pin it."""
from __future__ import annotations

import json

import httpx
import pytest

from tests.judges.realistic import MODEL, Noise, RealisticJudge, serve

CLAIMS = ("Based on the given text, please extract a comprehensive list of FACTUAL, undisputed truths, that can "
          "inferred from the provided actual AI output.\n\nAI Output:\nBake at 350 F. The recipe yields two dozen "
          "cookies.\n\nJSON:")
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["claims"],
          "properties": {"claims": {"type": "array", "items": {"type": "string"}}}}
NOISY = Noise(fence_rate=1.0, prose_rate=0, drop_rate=1.0, bare_rate=1.0, bare_cot_rate=1.0, no_usage_rate=0,
              stray_rate=1.0)
"""Every reply misbehaves in every way its format lets it."""


def _content(judge: RealisticJudge, **fmt) -> str:
    body = {"model": MODEL, "messages": [{"role": "user", "content": CLAIMS}], **fmt}
    return judge.complete(body)["choices"][0]["message"]["content"]


@pytest.mark.parametrize("mode", ["chat-404", "chat-400", "openai"])
def test_a_server_mode_honours_the_requested_format(mode):
    judge = RealisticJudge(NOISY, mode)
    free = _content(judge)
    assert free.startswith("```json")   # no format: the model's fence gets through
    as_object = json.loads(_content(judge, response_format={"type": "json_object"}))
    assert "claims" in as_object and as_object.get("note")   # JSON, but with the model's stray key
    schema = {"type": "json_schema", "json_schema": {"name": "Claims", "schema": SCHEMA, "strict": True}}
    strict = json.loads(_content(judge, response_format=schema))
    assert list(strict) == ["claims"] and strict["claims"] and all(isinstance(c, str) for c in strict["claims"])
    assert _content(judge, response_format=schema) == json.dumps(strict)   # the same request, the same reply


def test_the_legacy_mode_ignores_the_format_as_before():
    judge = RealisticJudge(NOISY)
    assert _content(judge, response_format={"type": "json_object"}).startswith("```json")


@pytest.mark.parametrize("mode,status,says", [("chat-404", 404, "File Not Found"), ("chat-400", 400, "not supported"),
                                              ("legacy", 400, "not supported")])
def test_chat_only_modes_refuse_the_responses_api(mode, status, says):
    with serve(mode=mode) as s:
        r = httpx.post(f"{s.url}/responses", json={"model": MODEL, "input": CLAIMS})
        assert r.status_code == status and says in r.text
        assert s.stats()["refused"] == 1 and s.stats()["requests"] == {"responses none": 1}


def test_the_openai_mode_serves_the_responses_api_to_the_openai_sdk():
    import pydantic
    from openai import OpenAI

    class Claims(pydantic.BaseModel):
        claims: list[str]

    with serve(mode="openai", noise=NOISY) as s:
        client = OpenAI(base_url=s.url, api_key="sk-test", max_retries=0)
        parsed = client.responses.parse(model=MODEL, input=[{"role": "user", "content": CLAIMS}],
                                        text_format=Claims).output_parsed
        assert isinstance(parsed, Claims) and parsed.claims
        assert s.stats()["requests"] == {"responses json_schema": 1}
