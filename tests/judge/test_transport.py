"""The in-process transport into the gateway: the same answers and ledger as the loopback server, for
sync and async clients, with no socket; a caller's cancellation or timeout never loses a call."""
import asyncio
import socket
import threading

from harness.judge.gateway import Gateway
from harness.judge.transport import GatewayTransport, route_of
from harness.judge.upstream import Cell

import httpx
import openai
import pytest

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


class Echo:
    """An upstream that answers with the request's last message, after ``delay_s``."""

    kind, model = "echo", "m"

    def __init__(self, delay_s=0.0):
        self.delay_s = delay_s
        self.calls = 0

    def scope(self, cell):
        return ""

    async def complete(self, cell, body):
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        text = f"{cell.metric}: {body['messages'][-1]['content']}"
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}

    async def aclose(self):
        pass


@pytest.fixture
def no_sockets(monkeypatch):
    """Any TCP connect fails the test (the in-process path must not open one)."""
    def refuse(self, *a, **k):
        raise AssertionError("a socket connect was made")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def test_async_and_sync_clients_get_what_the_loopback_server_answers(no_sockets):
    gw = Gateway(Echo())

    async def main():
        gw.attach()
        transport = GatewayTransport(gw)
        url = gw.cell_url("r", "case/1", "inhouse.span")
        a = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0,
                               http_client=httpx.AsyncClient(transport=transport))
        s = openai.OpenAI(base_url=url, api_key="x", max_retries=0, http_client=httpx.Client(transport=transport))
        got_async = await a.chat.completions.create(**BODY)
        # a sync client (TruLens) calls from a worker thread while the loop runs
        got_sync = await asyncio.to_thread(s.chat.completions.create, **BODY)
        models = await asyncio.to_thread(s.models.list)
        await gw.settle("r", "case/1", "inhouse.span", 5)
        ledger, calls = gw.take("r", "case/1", "inhouse.span")
        await gw.aclose()
        return got_async, got_sync, models, ledger, calls

    got_async, got_sync, models, ledger, calls = asyncio.run(main())
    assert got_async.choices[0].message.content == got_sync.choices[0].message.content == "inhouse.span: hi"
    assert [m.id for m in models.data] == ["m"]
    assert (ledger.calls, ledger.prompt_tokens, ledger.completion_tokens) == (2, 10, 4)
    assert [c.cell for c in calls] == [Cell("r", "case/1", "inhouse.span")] * 2


def test_the_in_process_reply_is_the_servers_reply_byte_for_byte():
    with Gateway(Echo()) as gw:
        url = gw.cell_url("r", "c", "m") + "/chat/completions"
        over_socket = httpx.post(url, json=BODY, timeout=10)
        in_process = httpx.Client(transport=GatewayTransport(gw)).post(url, json=BODY)
        bad = httpx.Client(transport=GatewayTransport(gw)).post(url, content=b"{not json")
        bad_socket = httpx.post(url, content=b"{not json", timeout=10)
    assert over_socket.status_code == in_process.status_code == 200
    assert over_socket.json() == in_process.json()
    assert bad.status_code == bad_socket.status_code == 400 and bad.json() == bad_socket.json()


def test_routes_headers_and_unknown_paths():
    with Gateway(Echo()) as gw:
        client = httpx.Client(transport=GatewayTransport(gw), base_url="http://anything")
        by_header = client.post("/v1/chat/completions", json=BODY, headers={"X-Harness-Cell": "r/c%2Fx/m"})
        no_header = client.post("/v1/chat/completions", json=BODY)
        unknown = client.post("/v1/completions", json=BODY)   # the legacy completions API: not served
        ledger, _ = gw.take("r", "c/x", "m")
    assert by_header.json()["choices"][0]["message"]["content"] == "m: hi" and ledger.calls == 1
    assert no_header.status_code == 400 and "X-Harness-Cell" in no_header.json()["error"]["message"]
    assert unknown.status_code == 404
    assert route_of(b"/cell/a/b/c/v1/embeddings", None) == (Cell("a", "b", "c"), "embeddings")


def test_a_cancelled_caller_still_leaves_its_call_in_the_ledger():
    up = Echo(delay_s=0.2)
    gw = Gateway(up)

    async def main():
        gw.attach()
        client = httpx.AsyncClient(transport=GatewayTransport(gw))
        url = gw.cell_url("r", "c", "m") + "/chat/completions"
        task = asyncio.create_task(client.post(url, json=BODY))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert gw.inflight("r", "c", "m") == 1       # still being answered, as a server would
        await gw.settle("r", "c", "m", 5)
        ledger, calls = gw.take("r", "c", "m")
        await gw.aclose()
        return ledger, calls

    ledger, calls = asyncio.run(main())
    assert up.calls == 1 and ledger.calls == 1 and calls[0].ok


def test_client_read_timeouts_apply_and_the_call_still_completes():
    gw = Gateway(Echo(delay_s=0.3))

    async def main():
        gw.attach()
        transport = GatewayTransport(gw)
        url = gw.cell_url("r", "c", "m") + "/chat/completions"
        with pytest.raises(httpx.ReadTimeout):
            await httpx.AsyncClient(transport=transport, timeout=0.05).post(url, json=BODY)
        with pytest.raises(httpx.ReadTimeout):
            await asyncio.to_thread(httpx.Client(transport=transport, timeout=0.05).post, url, json=BODY)
        await gw.settle("r", "c", "m", 5)
        ledger, _ = gw.take("r", "c", "m")
        await gw.aclose()
        return ledger

    assert asyncio.run(main()).calls == 2


def test_a_sync_call_from_the_gateway_loop_raises_instead_of_hanging():
    gw = Gateway(Echo())

    async def main():
        gw.attach()
        client = httpx.Client(transport=GatewayTransport(gw))
        with pytest.raises(RuntimeError, match="worker thread"):
            client.post(gw.cell_url("r", "c", "m") + "/chat/completions", json=BODY)
        await gw.aclose()

    asyncio.run(main())


def test_a_stopped_gateway_is_a_connection_error():
    gw = Gateway(Echo())
    with pytest.raises(httpx.ConnectError):
        httpx.Client(transport=GatewayTransport(gw)).post(gw.cell_url("r", "c", "m") + "/chat/completions",
                                                          json=BODY)


def test_a_run_opens_no_socket_and_starts_no_server(no_sockets, canonical, tmp_path, monkeypatch):
    """inhouse.span (async client) and trulens.groundedness (sync client, worker threads) through a run."""
    from harness.cases.load import CaseSet
    from harness.run.runner import RunOptions, run
    from harness.store.runstore import RunStore

    started = []
    monkeypatch.setattr(Gateway, "start", lambda self: started.append(self) or self)
    cases = CaseSet(canonical.path, canonical.cases[:6], canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span", "trulens.groundedness"], out_dir=str(tmp_path),
                         run_id="t", progress=False, concurrency=4))
    store = RunStore.open(out.store_path)
    try:
        rows = store.rows("SELECT metric, status, calls FROM cells")
    finally:
        store.close()
    assert not started and threading.active_count() < 50
    assert len(rows) == 12 and all(status != "error" for _, status, _ in rows), rows
    assert sum(calls for m, _, calls in rows if m == "trulens.groundedness") > 6


def test_post_json_in_process_is_the_loopback_servers_answer_with_the_same_ledger(no_sockets, monkeypatch):
    """``Endpoint.post_json`` (the harness's own scorers' path): in a run, the request dict reaches the
    gateway with no HTTP model; its reply and ledger are those of a plain JSON POST to the server."""
    from harness.metric.endpoint import Endpoint
    from harness.metric.http import Pools

    gw = Gateway(Echo())

    async def main():
        gw.attach()
        ep = Endpoint(gw.cell_url("r", "case/1", "inhouse.span"), "m", pool=Pools(transport=GatewayTransport(gw)))
        got = await ep.post_json("chat/completions", BODY)
        await gw.settle("r", "case/1", "inhouse.span", 5)
        ledger, calls = gw.take("r", "case/1", "inhouse.span")
        await gw.aclose()
        return got, ledger, calls

    got, ledger, calls = asyncio.run(main())
    monkeypatch.undo()     # sockets again: the loopback server, for the comparison
    with Gateway(Echo()) as server:
        over_http = asyncio.run(Endpoint(server.cell_url("r", "case/1", "inhouse.span"), "m")
                                .post_json("chat/completions", BODY))
        server_ledger, server_calls = server.take("r", "case/1", "inhouse.span")
    assert got == over_http and got["choices"][0]["message"]["content"] == "inhouse.span: hi"
    assert (ledger.calls, ledger.prompt_tokens) == (server_ledger.calls, server_ledger.prompt_tokens) == (1, 5)
    assert calls[0].key == server_calls[0].key     # the same request, so the same cache key


def test_post_json_errors_and_timeouts_name_the_status_and_the_call_still_completes():
    from harness.metric.endpoint import Endpoint, JudgeHTTPError
    from harness.metric.http import Pools

    gw = Gateway(Echo(delay_s=0.3))

    async def main():
        gw.attach()
        pool = Pools(transport=GatewayTransport(gw))
        ep = Endpoint(gw.cell_url("r", "c", "m"), "m", timeout_s=0.05, pool=pool)
        with pytest.raises(JudgeHTTPError, match="no answer") as slow:
            await ep.post_json("chat/completions", BODY)
        with pytest.raises(JudgeHTTPError, match="judge HTTP 400: request body needs a 'messages' list") as bad:
            await ep.post_json("chat/completions", {"model": "m"})
        with pytest.raises(JudgeHTTPError, match="judge HTTP 404"):
            await ep.post_json("completions", BODY)
        await gw.settle("r", "c", "m", 5)
        ledger, _ = gw.take("r", "c", "m")
        with pytest.raises(JudgeHTTPError, match="judge HTTP 409: cell r/c/m is finished"):
            await Endpoint(gw.cell_url("r", "c", "m"), "m", pool=pool).post_json("chat/completions", BODY)
        await gw.aclose()
        return slow.value.status, bad.value.status, ledger

    slow, bad, ledger = asyncio.run(main())
    assert (slow, bad) == (0, 400)
    assert ledger.calls == 1      # the slow call was answered after its caller gave up, and counted
