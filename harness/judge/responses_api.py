"""The OpenAI Responses API (``POST /v1/responses``) as the gateway and the reference judge see it.

The gateway serves it beside chat completions and forwards each request as it came: a real judge gets
``POST <url>/responses`` with the vendor's body, and its answer (a 404 or 400 from a chat-only server
included) goes back to the vendor, whose own fallbacks decide what comes next (stock TruLens's OpenAI
provider tries it first for every scored call). A request is a Responses API request by its shape
(:func:`is_responses`), so every upstream, and every wrapper around one, takes it through the same
``complete(cell, body)``.

The in-process reference judge answers it as an OpenAI-like server does: it reads the request as a chat
request (:func:`chat_view`: ``input`` and ``instructions`` as messages, ``text.format`` as
``response_format``), answers that exactly as it answers chat completions, and returns the text as a
``response`` object (:func:`response_of`). The replies are the ones the chat path gives, so the default
run's scores do not depend on which endpoint a vendor uses.
"""
from __future__ import annotations

import json

ROUTE = "responses"
"""The route after ``/v1/``."""


def is_responses(body) -> bool:
    """Is ``body`` a Responses API request (``input``, no ``messages``)?

    >>> is_responses({"input": "hi"}), is_responses({"messages": []}), is_responses(None)
    (True, False, False)
    """
    return isinstance(body, dict) and "input" in body and "messages" not in body


def messages_of(body: dict) -> list[dict] | None:
    """The request's ``instructions`` and ``input`` as chat messages (None: ``input`` is not readable).

    >>> messages_of({"input": [{"role": "user", "content": [{"type": "input_text", "text": "a"}]}]})
    [{'role': 'user', 'content': 'a'}]
    """
    raw = body.get("input")
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
        return None
    out = [{"role": "system", "content": body["instructions"]}] if isinstance(body.get("instructions"), str) else []
    for m in raw:
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append({"role": m.get("role", "user"), "content": c if isinstance(c, str) else ""})
    return out


def chat_view(body: dict) -> dict:
    """The chat-completions request that asks what ``body`` asks (the reference judge answers this).

    >>> v = chat_view({"model": "m", "input": "hi", "temperature": 0.0, "text": {"format": {
    ...     "type": "json_schema", "name": "X", "schema": {"type": "object"}, "strict": True}}})
    >>> v["messages"], v["response_format"]["json_schema"]["name"], v["temperature"]
    ([{'role': 'user', 'content': 'hi'}], 'X', 0.0)
    """
    out = {k: v for k, v in body.items() if k not in ("input", "instructions", "text", "max_output_tokens")}
    out["messages"] = messages_of(body) or []
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        out["response_format"] = {"type": "json_schema", "json_schema": {
            k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        out["response_format"] = {"type": "json_object"}
    if "max_output_tokens" in body:
        out["max_tokens"] = body["max_output_tokens"]
    return out


def response_of(completion: dict) -> dict:
    """A ``response`` object carrying a ``chat.completion``'s text, model and usage.

    >>> r = response_of({"id": "chatcmpl-1", "model": "m", "created": 5, "choices": [{"message": {"content": "{}"}}],
    ...                  "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
    >>> r["object"], r["output"][0]["content"][0]["text"], r["usage"]["input_tokens"]
    ('response', '{}', 3)
    """
    rid = str(completion.get("id", "")).removeprefix("chatcmpl-")
    text = ((completion.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
    out = {"id": f"resp_{rid}", "object": "response", "created_at": completion.get("created", 0),
           "model": completion.get("model"), "status": "completed", "error": None, "incomplete_details": None,
           "instructions": None, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
           "output": [{"type": "message", "id": f"msg_{rid}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]}]}
    usage = completion.get("usage")
    if isinstance(usage, dict):
        pt, ct = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        out["usage"] = {"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct,
                        "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    return out


def completion_view(response: dict) -> dict:
    """A ``response`` object read as a chat completion (its output text and usage), for the gateway's
    observations (format fit, tokens); the vendor always gets the response as it came.

    >>> completion_view({"output": [{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}],
    ...                  "usage": {"input_tokens": 2, "output_tokens": 1}})["choices"][0]["message"]["content"]
    'hi'
    """
    texts = [p.get("text", "") for item in (response.get("output") or []) if isinstance(item, dict)
             for p in (item.get("content") or []) if isinstance(p, dict) and p.get("type") == "output_text"]
    out = {"choices": [{"message": {"content": "".join(texts) if texts else None}}]}
    usage = response.get("usage")
    if isinstance(usage, dict) and "input_tokens" in usage:
        out["usage"] = {"prompt_tokens": usage.get("input_tokens"), "completion_tokens": usage.get("output_tokens")}
    return out


def key_fields(body: dict) -> dict:
    """What a Responses API request adds to its cache key (the chat keys stay as they were).

    >>> key_fields({"input": "hi", "text": {"format": {"type": "text"}}, "model": "m"})
    {'route': 'responses', 'input': 'hi', 'instructions': None, 'text': {'format': {'type': 'text'}}, 'max_output_tokens': None}
    """
    return {"route": ROUTE, "input": body.get("input"), "instructions": body.get("instructions"),
            "text": body.get("text"), "max_output_tokens": body.get("max_output_tokens")}


def is_refusal(status: int, message: str) -> bool:
    """Did the judge refuse the Responses API itself (a chat-only server), rather than fail a request?
    A 404 or 405, or a 400 whose text says the Responses API is not supported, enabled or available
    (the words stock TruLens tests for). Anything else is a failed call like any other.

    >>> is_refusal(404, "File Not Found"), is_refusal(400, "The Responses API is not supported by this server")
    (True, True)
    >>> is_refusal(400, "reference judge: unrecognised request"), is_refusal(500, "not supported")
    (False, False)
    """
    lowered = message.lower()
    return status in (404, 405) or (status == 400 and "response" in lowered and any(
        w in lowered for w in ("not supported", "not enabled", "not available")))


def error_body(text: str) -> dict | None:
    """A judge's error reply as JSON (to hand on as it came), None when it is not a JSON object.

    >>> error_body('{"error": {"code": 404}}'), error_body("Not Found")
    ({'error': {'code': 404}}, None)
    """
    try:
        out = json.loads(text)
    except (ValueError, TypeError):
        return None
    return out if isinstance(out, dict) else None
