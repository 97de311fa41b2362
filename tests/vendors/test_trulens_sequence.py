"""The harness's TruLens provider sends what stock TruLens's OpenAI provider sends, for each kind of
server (``harness.adapters.trulens._sequence``): the Responses API first for a scored call; after a chat-only
server's 400 (or 404, where stock itself fails) chat completions without ``response_format``; the
server probed once per cell. The stock side of the same comparison, on every canonical case, is
``tests/vendors/test_stock_parity.py``."""
from __future__ import annotations

import threading

from harness.adapters.trulens import _sequence

import pytest


class Refusal(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"Error code: {status} - {message}")
        self.status_code = status


class FakeClient:
    """Records what is sent; ``responses`` answers as the ``mode`` server would."""

    def __init__(self, mode: str):
        self.mode, self.sent, self.lock = mode, [], threading.Lock()
        self.responses = self
        self.chat = type("Chat", (), {"completions": type("C", (), {"create": self._chat})()})()

    def parse(self, *, input, text_format, **params):   # noqa: A002 - the SDK's name
        with self.lock:
            self.sent.append(("responses", text_format.__name__, tuple(sorted(params))))
        if self.mode == "chat-404":
            raise Refusal(404, "{'error': {'code': 404, 'message': 'File Not Found'}}")
        if self.mode == "chat-400":
            raise Refusal(400, "The Responses API is not supported by this server")
        return type("Parsed", (), {"output_parsed": text_format(score=2)})()

    def _chat(self, *, messages, **params):
        with self.lock:
            self.sent.append(("chat", params.get("response_format"), tuple(sorted(params))))
        msg = type("M", (), {"content": '{"score": 2}'})()
        return type("R", (), {"choices": [type("Ch", (), {"message": msg})()]})()


class BaseFeedbackResponse:
    """Stands in for TruLens's schema of the same name."""

    def __init__(self, score):
        self.score = score


def _scored(client, caps, n=1):
    params = _sequence.prepare("judge-model", {"temperature": 0.0}, None)
    return [_sequence.send(client, caps, [{"role": "system", "content": "x"}], BaseFeedbackResponse, params) for _ in range(n)]


@pytest.mark.parametrize("mode", ["chat-404", "chat-400"])
def test_a_chat_only_server_is_probed_once_then_asked_chat_completions_without_a_format(mode):
    client, caps = FakeClient(mode), _sequence.Capabilities()
    got = _scored(client, caps, 3)
    assert got == ['{"score": 2}'] * 3
    assert client.sent == [("responses", "BaseFeedbackResponse", ("model", "temperature"))] + \
        [("chat", None, ("model", "seed", "temperature"))] * 3
    assert caps.known == {"responses_api": False, "structured_outputs": False, "temperature": True}


def test_an_openai_like_server_gets_every_scored_call_on_the_responses_api_without_seed():
    client, caps = FakeClient("openai"), _sequence.Capabilities()
    got = _scored(client, caps, 2)
    assert [g.score for g in got] == [2, 2]
    assert client.sent == [("responses", "BaseFeedbackResponse", ("model", "temperature"))] * 2


def test_an_unscored_call_goes_straight_to_chat_completions_with_stocks_parameters():
    client = FakeClient("openai")
    params = _sequence.prepare("judge-model", {}, None)
    assert _sequence.send(client, _sequence.Capabilities(), [{"role": "system", "content": "x"}], None, params)
    assert client.sent == [("chat", None, ("model", "seed", "temperature"))]
    assert params == {"model": "judge-model", "temperature": 0.0, "seed": 123}


def test_concurrent_first_calls_of_a_cell_probe_the_server_once():
    client, caps = FakeClient("chat-400"), _sequence.Capabilities()
    threads = [threading.Thread(target=_scored, args=(client, caps)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [s[0] for s in client.sent].count("responses") == 1 and len(client.sent) == 7


def test_any_other_responses_api_error_is_raised_as_stock_raises_it():
    class Broken(FakeClient):
        def parse(self, **kw):
            raise Refusal(401, "invalid api key")

    with pytest.raises(Refusal):
        _scored(Broken("openai"), _sequence.Capabilities())


def test_a_reasoning_model_gets_no_temperature():
    assert _sequence.prepare("o3-mini", {"temperature": 0.0}, "medium") == {
        "model": "o3-mini", "reasoning_effort": "medium", "seed": 123}
