"""The requests stock TruLens's OpenAI provider sends, and its fallbacks, reproduced on the cell's client.

Imports no vendor code (the client and the schemas come from the caller). Stock TruLens 2.16.0
(``trulens.providers.openai.OpenAI._create_chat_completion`` and ``_call_with_capability_fallbacks``):

1. every call gets ``model``, ``temperature=0.0`` (reasoning models: no temperature, TruLens's
   ``reasoning_effort`` instead) and ``seed=123``;
2. a scored call (one with a ``response_format``: ``BaseFeedbackResponse`` / ``ChainOfThoughtResponse``)
   first goes to the Responses API, ``responses.parse(input=messages, text_format=schema, model,
   temperature)``: ``POST /v1/responses`` with ``text.format`` a strict json_schema (the SDK refuses
   ``seed`` there, and stock retries without it, so none is sent), and returns the parsed object;
3. when that fails because the server has no Responses API (an error whose text says "not supported",
   "not enabled" or "not available" and "response": a chat-only server's 400), stock remembers it and
   falls back to chat completions **without** ``response_format``; when it fails because structured
   output is not supported, the same fallback, and the Responses API is tried again next time; any
   other error is raised;
4. a call without a ``response_format`` (the trivial filter, the sentence splitter) goes straight to
   chat completions, as does every call once the Responses API is known to be missing.

Where the harness differs (each on the TruLens cards, ``common.CARD_COMMON``):

- a **404** from the Responses API (llama.cpp's server answers so) is read as "no Responses API", like
  the 400; stock re-raises it and every scored call fails (4 attempts, then ``RuntimeError``);
- what was learnt about the server is kept per cell (:class:`Capabilities`, one per provider), not per
  process and model name, and the first scored call of a cell probes while the cell's other calls
  wait, so a cell's requests do not depend on thread timing or on other cells;
- every chat call carries ``seed=123`` (stock drops it from the first fallback call of a process,
  a side effect of the SDK refusing ``seed`` on the Responses call);
- the gpt-5 grammar (CFG) path is not reproduced: for a ``gpt-5*`` judge the harness asks as for any
  other model.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

SEED = 123
"""Stock's ``trulens.providers.openai.provider.SEED``."""
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5", "gpt-6", "deepseek-r1")
"""Stock's ``REASONING_MODEL_PREFIXES``: these models get no temperature."""


def is_reasoning_model(model: str) -> bool:
    """Stock's ``_is_reasoning_model``.

    >>> is_reasoning_model("o3-mini"), is_reasoning_model("snowflake/o1"), is_reasoning_model("qwen2.5")
    (True, True, False)
    """
    raw = (model or "").lower()
    name = raw.split("/", 1)[1] if "/" in raw else raw
    name = name.split("openai.", 1)[-1]
    return any(name.startswith(p) for p in REASONING_PREFIXES) or "reasoning" in name or "thinking" in name


def _text(exc: BaseException) -> str:
    return (str(getattr(exc, "message", "")) or str(exc)).lower()


def responses_unavailable(exc: BaseException) -> bool:
    """Stock's ``_is_responses_api_unavailable``, plus a 404 from the Responses API (the harness's one change).

    >>> responses_unavailable(Exception("Error code: 400 - The Responses API is not supported"))
    True
    >>> responses_unavailable(type("NotFoundError", (Exception,), {"status_code": 404})("File Not Found"))
    True
    >>> responses_unavailable(Exception("Error code: 500 - boom"))
    False
    """
    lowered = _text(exc)
    stock = any(w in lowered for w in ("not enabled", "not supported", "not available")) and "response" in lowered
    return stock or getattr(exc, "status_code", None) == 404


def unsupported_parameter(exc: BaseException, parameter: str) -> bool:
    """Stock's ``_is_unsupported_parameter_error``.

    >>> unsupported_parameter(Exception("Unsupported parameter: 'temperature'"), "temperature")
    True
    """
    lowered = _text(exc)
    return any(w in lowered for w in ("unsupported", "unexpected keyword", "got an unexpected", "does not support",
                                      "is not allowed", "unknown")) and parameter in lowered


def structured_unsupported(exc: BaseException) -> bool:
    """Stock's test for "structured output is not supported" on a Responses call."""
    lowered = _text(exc)
    return unsupported_parameter(exc, "response_format") or "structured" in lowered or "responses.parse" in lowered


@dataclass
class Capabilities:
    """What one cell has learnt about its judge server (stock keeps the same keys per process and model)."""

    known: dict = field(default_factory=dict)
    """``responses_api`` / ``structured_outputs`` / ``temperature``: True, False, or absent (unknown)."""
    probe: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Held by the cell's first scored call while it probes the Responses API."""

    def wants_responses(self) -> bool:
        return self.known.get("responses_api") is not False and self.known.get("structured_outputs") is not False


def prepare(model: str, kwargs: dict, reasoning_effort: str | None) -> dict:
    """Stock's request parameters: ``model``, ``temperature`` 0.0 or ``reasoning_effort``, ``seed``."""
    kwargs = dict(kwargs)
    kwargs.setdefault("model", model)
    if is_reasoning_model(model):
        kwargs.pop("temperature", None)
        if reasoning_effort in ("low", "medium", "high"):
            kwargs["reasoning_effort"] = reasoning_effort
    else:
        kwargs.setdefault("temperature", 0.0)
    kwargs.setdefault("seed", SEED)
    return kwargs


def send(client, caps: Capabilities, messages: list, response_format, kwargs: dict):
    """One TruLens request as stock sends it (module docstring): the parsed object from the Responses API,
    or the chat completion's text."""
    if response_format is not None and caps.wants_responses():
        if "structured_outputs" in caps.known:
            got = _responses(client, caps, messages, response_format, kwargs)
        else:
            with caps.probe:   # the cell's first scored call probes; the others wait for its answer
                got = _responses(client, caps, messages, response_format, kwargs) if caps.wants_responses() \
                    else _FALLBACK
        if got is not _FALLBACK:
            return got
    return _chat(client, caps, messages, kwargs)


_FALLBACK = object()


def _responses(client, caps: Capabilities, messages, response_format, kwargs):
    params = {k: v for k, v in kwargs.items() if k != "seed"}   # the SDK refuses seed here; stock drops it
    for attempt in (1, 2):
        try:
            parsed = client.responses.parse(input=messages, text_format=response_format, **params).output_parsed
            caps.known["structured_outputs"] = True
            return parsed
        except Exception as exc:
            if responses_unavailable(exc):
                caps.known.update(responses_api=False, structured_outputs=False)
                return _FALLBACK
            bad = [p for p in ("temperature", "reasoning_effort") if p in params and unsupported_parameter(exc, p)]
            if bad and attempt == 1:
                for p in bad:
                    params.pop(p)
                continue
            if structured_unsupported(exc):
                caps.known["structured_outputs"] = False
                return _FALLBACK
            raise
    return _FALLBACK


def _chat(client, caps: Capabilities, messages, kwargs):
    params = dict(kwargs)
    if caps.known.get("temperature") is False:
        params.pop("temperature", None)
    try:
        reply = client.chat.completions.create(messages=messages, **params)
    except Exception as exc:
        if "temperature" not in params or not unsupported_parameter(exc, "temperature"):
            raise
        caps.known["temperature"] = False
        params.pop("temperature")
        reply = client.chat.completions.create(messages=messages, **params)
    else:
        if "temperature" in params:
            caps.known["temperature"] = True
    return reply.choices[0].message.content
