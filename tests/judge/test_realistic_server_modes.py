"""The realistic test judge behaves as real servers do (``tests.helpers.judges.realistic`` server modes): a
json_schema constrains the reply, json_object gives JSON, no format lets fences and prose through;
chat-only modes refuse the Responses API (404 or 400), the OpenAI-like mode serves it; ``legacy`` keeps
the judge's earlier behaviour for the tests that pin it."""
from __future__ import annotations

import json

import httpx
import pytest

from tests.helpers.judges.realistic import MODEL, Noise, RealisticJudge, serve

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


def _ask(url: str, **extra) -> dict:
    body = {"model": MODEL, "messages": [{"role": "user", "content": CLAIMS}], **extra}
    return httpx.post(f"{url}/chat/completions", json=body, timeout=60).json()


def test_a_reply_cut_once_at_the_token_limit_then_the_repeat_in_full():
    """truncate="once": the first time a request is seen the reply stops at the limit (finish_reason
    "length", the reply's start: not JSON any more); the same request again is answered in full."""
    with serve(mode="chat-404", noise=Noise.none(), truncate="once") as s:
        first = _ask(s.url, max_tokens=1024, response_format={"type": "json_object"})["choices"][0]
        again = _ask(s.url, max_tokens=1024, response_format={"type": "json_object"})["choices"][0]
        assert first["finish_reason"] == "length" and again["finish_reason"] == "stop"
        assert again["message"]["content"].startswith(first["message"]["content"])
        assert json.loads(again["message"]["content"])["claims"]
        with pytest.raises(ValueError):
            json.loads(first["message"]["content"])
        tight = _ask(s.url, max_tokens=3)["choices"][0]   # another request (no format): cut at its limit
        assert tight["finish_reason"] == "length" and len(tight["message"]["content"].split()) <= 3
        assert s.stats()["truncated"] == 2


def test_a_reply_cut_every_time_and_the_responses_api_says_incomplete():
    with serve(mode="openai", noise=Noise.none(), truncate="always") as s:
        assert {_ask(s.url)["choices"][0]["finish_reason"] for _ in range(3)} == {"length"}
        r = httpx.post(f"{s.url}/responses", json={"model": MODEL, "input": CLAIMS, "max_output_tokens": 50}).json()
        assert r["status"] == "incomplete" and r["incomplete_details"] == {"reason": "max_output_tokens"}


@pytest.mark.parametrize("mode,structured", [("openai", True), ("chat-404", False)])
def test_a_refusal_is_written_as_the_server_writes_it(mode, structured):
    """OpenAI's structured outputs refuse in ``message.refusal`` with no content; elsewhere the text refuses."""
    schema = {"type": "json_schema", "json_schema": {"name": "Claims", "schema": SCHEMA, "strict": True}}
    with serve(mode=mode, noise=Noise.none(), refuse_rate=1.0) as s:
        msg = _ask(s.url, response_format=schema)["choices"][0]["message"]
        assert (msg["content"] is None and "can't help" in msg["refusal"]) if structured else \
            ("can't help" in msg["content"] and msg["refusal"] is None)
        assert s.stats()["refusals"] == 1


def test_a_slow_reply_waits_for_the_test_to_release_it():
    """hold: the reply waits until the event is set; the test waits for the state (one request held)."""
    import threading

    gate = threading.Event()
    got = []
    with serve(mode="chat-404", noise=Noise.none(), hold=gate) as s:
        t = threading.Thread(target=lambda: got.append(_ask(s.url)))
        t.start()
        assert s.judge.wait_held(1)
        assert not got and s.stats()["held"] == 1
        gate.set()
        t.join()
        assert got[0]["choices"][0]["finish_reason"] == "stop" and s.stats()["held"] == 0


def test_a_secret_path_server_ignores_other_traffic_and_books_bodies_per_vendor():
    """Only requests under its secret path are served and counted; the bodies are kept per vendor."""
    with serve(mode="chat-404", noise=Noise.none(), secret=True) as s:
        root = s.url.split("/")[:3]
        stray = httpx.post("/".join(root) + "/v1/chat/completions",
                           json={"model": MODEL, "messages": [{"role": "user", "content": CLAIMS}]})
        assert stray.status_code == 404
        _ask(s.url)
        _ask(s.url)
        _ask(s.url, temperature=0)
        books = s.stats()
        assert books["calls"] == 3 and books["foreign"] == 1 and books["unrecognised"] == 0
        assert sorted(books["bodies"]["deepeval"].values()) == [1, 2]
        assert set(books["body_steps"]) == set(books["bodies"]["deepeval"])      # each body named by what it asked
        assert {v.split(".")[0] for v in books["body_steps"].values()} == {"chat deepeval"}


def test_lanes_are_judges_of_their_own():
    """Two lanes of one server: each cuts its own first sight of a request and keeps its own books."""
    with serve(mode="chat-404", noise=Noise.none(), truncate="once", secret=True, lanes=True) as s:
        a, b = s.lane("a"), s.lane("b")
        assert [_ask(u)["choices"][0]["finish_reason"] for u in (a, b, a, b)] == ["length", "length", "stop", "stop"]
        assert s.lane_stats("a")["calls"] == 2 and s.lane_stats("b")["truncated"] == 1
        assert httpx.get(a.removesuffix("/v1") + "/stats").json()["calls"] == 2
