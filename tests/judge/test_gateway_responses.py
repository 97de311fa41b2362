"""The gateway serves the OpenAI Responses API (``POST /v1/responses``) beside chat completions: each
request goes to the judge as the vendor sent it, and the judge's answer comes back as it came, a
chat-only server's 404 or 400 included (recorded as a refusal, not a judge failure, so the vendor's own
fallback decides). The reference judge answers it as an OpenAI-like server."""
from __future__ import annotations

from harness.judge.cache import request_key
from harness.judge.gateway import Gateway
from harness.judge.responses_api import chat_view, is_responses
from harness.judge.upstream import HttpUpstream, ReferenceUpstream

import httpx
import pytest

from tests.helpers.judges.realistic import MODEL, serve

PROMPT = ("Based on the given text, please extract a comprehensive list of FACTUAL, undisputed truths, that can "
          "inferred from the provided actual AI output.\n\nAI Output:\nBake at 350 F.\n\nJSON:")
FORMAT = {"format": {"type": "json_schema", "name": "Claims", "strict": True, "schema": {
    "type": "object", "additionalProperties": False, "required": ["claims"],
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}}}}}
BODY = {"model": MODEL, "input": [{"role": "user", "content": PROMPT}], "temperature": 0.0, "text": FORMAT}


def _through_gateway(mode: str):
    with serve(mode=mode) as judge, Gateway(HttpUpstream(judge.url, MODEL, None)) as gw:
        r = httpx.post(f"{gw.cell_url('r', 'c', 'm')}/responses", json=BODY, timeout=30)
        ledger, calls = gw.take("r", "c", "m")
        return r, ledger, calls, judge.stats()


@pytest.mark.parametrize("mode,status,says", [("chat-404", 404, "File Not Found"), ("chat-400", 400, "not supported")])
def test_a_chat_only_judges_refusal_reaches_the_vendor_as_it_came_and_is_no_failure(mode, status, says):
    r, ledger, calls, books = _through_gateway(mode)
    assert r.status_code == status and says in r.json()["error"]["message"]   # the judge's own body
    assert "judge HTTP" not in r.text
    assert books["requests"] == {"responses json_schema": 1}   # forwarded as sent, format included
    assert (ledger.calls, ledger.errors, ledger.retries) == (1, 0, 0) and calls[0].refused and not calls[0].ok


def test_an_openai_like_judges_response_is_handed_on_and_accounted():
    r, ledger, calls, books = _through_gateway("openai")
    assert r.status_code == 200 and r.json()["object"] == "response"
    assert books["requests"] == {"responses json_schema": 1}
    assert ledger.errors == 0 and ledger.billed_prompt_tokens > 0 and calls[0].reply_fit == "fits"
    assert calls[0].step == "Claims"


def test_the_reference_judge_answers_the_responses_api_as_it_answers_chat(canonical):
    case = canonical.by_id("cookie-yield")
    up = ReferenceUpstream({("r", case.id): case})
    chat = {"model": "reference-judge", "temperature": 0.0, "messages": [
        {"role": "system", "content": "You are a ABSTENTION classifier; x"},
        {"role": "user", "content": f"STATEMENT: {case.answer.split('. ')[0]}.\n\nABSTENTION: "}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "BaseFeedbackResponse", "strict": True,
                                                                   "schema": {"type": "object"}}}}
    resp = {"model": "reference-judge", "temperature": 0.0, "input": chat["messages"],
            "text": {"format": {"type": "json_schema", "name": "BaseFeedbackResponse", "strict": True,
                                "schema": {"type": "object"}}}}
    assert is_responses(resp) and chat_view(resp)["response_format"] == chat["response_format"]
    with Gateway(up) as gw:
        url = gw.cell_url("r", case.id, "trulens.groundedness_answerability")
        a = httpx.post(f"{url}/chat/completions", json=chat, timeout=30).json()
        b = httpx.post(f"{url}/responses", json=resp, timeout=30).json()
    assert b["output"][0]["content"][0]["text"] == a["choices"][0]["message"]["content"]


def test_a_responses_request_has_its_own_cache_key_and_chat_keys_are_unchanged():
    chat = {"model": MODEL, "messages": BODY["input"], "temperature": 0.0}
    assert request_key(BODY) != request_key(chat)
    assert request_key(BODY) != request_key({**BODY, "text": {"format": {"type": "text"}}})
    assert request_key(chat) == request_key({**chat, "text": FORMAT})   # a chat request: Responses fields ignored


def test_the_responses_route_needs_an_input():
    with serve(mode="openai") as judge, Gateway(HttpUpstream(judge.url, MODEL, None)) as gw:
        r = httpx.post(f"{gw.cell_url('r', 'c', 'm')}/responses", json={"model": MODEL, "messages": []}, timeout=30)
    assert r.status_code == 400 and "'input'" in r.json()["error"]["message"]


def test_a_refusal_is_recorded_and_replayed_so_a_replayed_run_takes_the_same_fallback(tmp_path):
    from harness.judge.cache import JudgeCache

    cache = JudgeCache(str(tmp_path / "judge-cache.sqlite"))
    with serve(mode="chat-404") as judge, Gateway(HttpUpstream(judge.url, MODEL, None), cache=cache,
                                                   mode="record") as gw:
        url = judge.url
        first = httpx.post(f"{gw.cell_url('r', 'c', 'm')}/responses", json=BODY, timeout=30)
    with Gateway(HttpUpstream(url, MODEL, None), cache=cache, mode="replay") as gw:   # the judge is gone
        again = httpx.post(f"{gw.cell_url('r', 'c', 'm')}/responses", json=BODY, timeout=30)
        ledger, calls = gw.take("r", "c", "m")
    assert first.status_code == again.status_code == 404 and again.json() == first.json()
    assert calls[0].cached and calls[0].refused and ledger.errors == 0
