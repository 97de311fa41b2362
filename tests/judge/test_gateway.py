"""The judge gateway: attribution, ledger, cache keys, record/replay, retries, loopback."""
import asyncio

from harness.judge.cache import JudgeCache, request_key
from harness.judge.gateway import Gateway
from harness.judge.upstream import Cell, RetryPolicy, UpstreamError

import httpx
import pytest

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


class Scripted:
    """An upstream that replies from a script: a dict is a response, an exception is raised."""

    kind, model = "scripted", "m"

    def __init__(self, *script):
        self.script = list(script)
        self.seen = []

    def scope(self, cell):
        return ""

    async def complete(self, cell, body):
        self.seen.append((cell, body))
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(item, Exception):
            raise item
        return item

    async def aclose(self):
        pass


def reply(content="ok", pt=7, ct=3):
    return {"id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}}


def post(url, body=BODY):
    return httpx.post(f"{url}/chat/completions", json=body, timeout=30)


def test_cache_key_is_stable_and_documented():
    # The same request in another key order, with non-output fields added, has the same key.
    reordered = {"temperature": 0, "messages": [{"content": "hi", "role": "user"}], "model": "m",
                 "timeout": 30, "user": "someone", "stream": False}
    assert request_key(BODY) == request_key(reordered)
    # A pinned literal: a change to the key function invalidates every cache, so it must be deliberate.
    assert request_key(BODY) == "a6972d124c2e8d26a17514cce640c03677444404ee09389bb29877af953c7984"
    # A real judge's key is scoped by its identity (normalised base URL + model id): pinned too.
    from harness.judge.cache import judge_identity

    scope = judge_identity("http://127.0.0.1:8000/v1/", "m")
    assert scope == "http|http://127.0.0.1:8000/v1|m"
    assert request_key(BODY, scope=scope) == "5101e82428742c4b4f1e2668837923227be9aa390ea5265c5db57da22a32f894"
    for change in ({"model": "m2"}, {"temperature": 0.2}, {"seed": 1}, {"max_tokens": 5},
                   {"response_format": {"type": "json_object"}},
                   {"messages": [{"role": "user", "content": "hi!"}]}):
        assert request_key({**BODY, **change}) != request_key(BODY), change
    assert request_key(BODY, scope="a") != request_key(BODY, scope="b")
    assert request_key(BODY, repeat=1) != request_key(BODY)


def test_cell_attribution_and_ledger():
    up = Scripted(reply())
    with Gateway(up) as gw:
        url = gw.cell_url("run 1", "case/a", "ragas.faithfulness")
        assert url.startswith("http://127.0.0.1:") and "/cell/run%201/case%2Fa/ragas.faithfulness/v1" in url
        for _ in range(3):
            assert post(url).status_code == 200
        ledger, calls = gw.take("run 1", "case/a", "ragas.faithfulness")
    assert up.seen[0][0] == Cell("run 1", "case/a", "ragas.faithfulness")
    assert (ledger.calls, ledger.prompt_tokens, ledger.completion_tokens, ledger.errors) == (3, 21, 9, 0)
    assert len(calls) == 3 and all(c.ok and not c.cached for c in calls)


def test_record_then_replay_and_replay_miss(tmp_path):
    cache = JudgeCache(str(tmp_path / "c.sqlite"))
    up = Scripted(reply("first"))
    with Gateway(up, cache=cache, mode="record") as gw:
        url = gw.cell_url("r", "c1", "m1")
        assert post(url).json()["choices"][0]["message"]["content"] == "first"
        assert post(url).json()["choices"][0]["message"]["content"] == "first"   # from the cache
        ledger, _ = gw.take("r", "c1", "m1")
    assert len(up.seen) == 1 and ledger.cache_hits == 1 and ledger.calls == 2
    dead = Scripted(UpstreamError("must not be called", retryable=False))
    with Gateway(dead, cache=cache, mode="replay") as gw:
        assert post(gw.cell_url("r", "c1", "m1")).status_code == 200
        miss = post(gw.cell_url("r", "c9", "m1"), {**BODY, "messages": [{"role": "user", "content": "new"}]})
        ledger, calls = gw.take("r", "c9", "m1")
    assert dead.seen == []
    assert miss.status_code == 400
    msg = miss.json()["error"]["message"]
    assert "replay miss" in msg and "cell r/c9/m1" in msg
    assert ledger.errors == 1 and calls[0].error == msg


def test_errors_are_never_cached(tmp_path):
    cache = JudgeCache(str(tmp_path / "c.sqlite"))
    up = Scripted(UpstreamError("boom", status=400, retryable=False))
    with Gateway(up, cache=cache, mode="record") as gw:
        r = post(gw.cell_url("r", "c", "m"))
    assert r.status_code == 400 and "boom" in r.json()["error"]["message"]
    assert len(cache) == 0


def test_sampled_calls_get_a_repeat_index(tmp_path):
    cache = JudgeCache(str(tmp_path / "c.sqlite"))
    sampled = {**BODY, "temperature": 0.7}
    up = Scripted(reply("one"), reply("two"))
    with Gateway(up, cache=cache, mode="record") as gw:
        url = gw.cell_url("r", "c", "m")
        got = [post(url, sampled).json()["choices"][0]["message"]["content"] for _ in range(2)]
    assert got == ["one", "two"] and len(cache) == 2
    with Gateway(Scripted(UpstreamError("no", retryable=False)), cache=cache, mode="replay") as gw:
        url = gw.cell_url("r", "c", "m")
        again = [post(url, sampled).json()["choices"][0]["message"]["content"] for _ in range(2)]
    assert again == ["one", "two"]


def test_retries_5xx_but_hands_a_reply_on_as_it_came_recording_its_fit():
    """Transparent: a 5xx is retried (a transport fault); a 200 whose content is not the JSON asked for
    reaches the vendor unchanged (its own parser, re-asks and fallbacks decide), the misfit recorded."""
    wants_json = {**BODY, "response_format": {"type": "json_object"}}
    up = Scripted(UpstreamError("judge HTTP 500", status=500), reply("```json\n{\"a\": 1}\n```"), reply('{"a": 1}'))
    with Gateway(up, policy=RetryPolicy(max_attempts=4, base_delay_s=0.001)) as gw:
        r = post(gw.cell_url("r", "c", "m"), wants_json)
        r2 = post(gw.cell_url("r", "c", "m"), wants_json)
        ledger, calls = gw.take("r", "c", "m")
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "```json\n{\"a\": 1}\n```"
    assert len(up.seen) == 3 and ledger.retries == 1 and [c.attempts for c in calls] == [2, 1]
    assert [c.reply_fit for c in calls] == ["response_format json_object asked, reply is not JSON", "fits"]
    assert ledger.format_misfits == 1 and r2.status_code == 200


def test_retries_are_bounded_and_the_error_is_recorded():
    up = Scripted(UpstreamError("judge HTTP 503", status=503))
    with Gateway(up, policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
        r = post(gw.cell_url("r", "c", "m"))
        ledger, _ = gw.take("r", "c", "m")
    assert r.status_code == 503 and len(up.seen) == 3
    assert ledger.errors == 1 and "503" in ledger.last_error


def test_retry_after_is_honoured():
    policy = RetryPolicy(base_delay_s=5.0, seed=1)
    assert policy.delay(1, retry_after=0.25) == 0.25
    assert policy.delay(1, retry_after=999) == policy.max_delay_s
    assert 5.0 <= policy.delay(1, None) <= 6.25 and 10.0 <= policy.delay(2, None) <= 12.5


def test_loopback_only():
    with pytest.raises(ValueError, match="loopback only"):
        Gateway(Scripted(reply()), host="0.0.0.0")
    with Gateway(Scripted(reply())) as gw:
        assert gw.host == "127.0.0.1"
        sock_addrs = [s.getsockname()[0] for site in gw._runner.sites for s in site._server.sockets]
        assert sock_addrs == ["127.0.0.1"]


def test_unattributed_and_streaming_requests_are_refused():
    with Gateway(Scripted(reply())) as gw:
        r = httpx.post(f"{gw.base}/v1/chat/completions", json=BODY)
        assert r.status_code == 400 and "X-Harness-Cell" in r.json()["error"]["message"]
        r = post(gw.cell_url("r", "c", "m"), {**BODY, "stream": True})
        assert r.status_code == 400 and "streaming" in r.json()["error"]["message"]


def test_reference_judge_unrecognised_request_names_metric_and_prompt(canonical):
    from harness.judge.upstream import ReferenceUpstream

    case = canonical.by_id("cookie-yield")
    up = ReferenceUpstream({("r", case.id): case})
    body = {"model": "reference-judge", "messages": [{"role": "user", "content": "Write me a poem about cookies"}]}
    with Gateway(up) as gw:
        r = post(gw.cell_url("r", case.id, "inhouse.span"), body)
    msg = r.json()["error"]["message"]
    assert r.status_code == 400
    assert "unrecognised request for metric 'inhouse.span'" in msg and "Write me a poem about cookies" in msg


def test_injected_latency_is_applied_by_the_reference_upstream(canonical):
    from harness.judge.upstream import ReferenceUpstream

    case = canonical.by_id("cookie-yield")
    up = ReferenceUpstream({("r", case.id): case}, latency_ms=30)
    assert up.judge.latency_ms == 30
    seen = []

    async def fake_sleep(s):
        seen.append(s)

    orig = asyncio.sleep
    asyncio.sleep = fake_sleep
    try:
        with pytest.raises(UpstreamError):
            asyncio.run(up.complete(Cell("r", case.id, "inhouse.span"), {"messages": []}))
    finally:
        asyncio.sleep = orig
    assert seen == [0.03]


def test_a_long_lived_server_keeps_no_books():
    with Gateway(Scripted(reply()), keep_ledger=False) as gw:
        for i in range(5):
            assert post(gw.cell_url("r", f"c{i}", "m"), {**BODY, "temperature": 0.5}).status_code == 200
        assert gw._books == {}
