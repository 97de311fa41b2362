"""The OpenAI Responses API (``POST /v1/responses``) as the realistic judge serves it in its OpenAI-like
mode: the request's ``input`` (a string or a list of role/content messages) and ``instructions`` read as
chat messages, the reply wrapped as a ``response`` object whose one output message carries the text.
"""
from __future__ import annotations


def messages_of(body: dict) -> list[dict] | None:
    """The request's messages as chat messages (None when ``input`` is neither a string nor a list).

    >>> messages_of({"input": "hi", "instructions": "be brief"})
    [{'role': 'system', 'content': 'be brief'}, {'role': 'user', 'content': 'hi'}]
    >>> messages_of({"input": [{"role": "user", "content": [{"type": "input_text", "text": "a"}]}]})
    [{'role': 'user', 'content': 'a'}]
    """
    raw = body.get("input")
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    if not isinstance(raw, list):
        return None
    out = [{"role": "system", "content": body["instructions"]}] if isinstance(body.get("instructions"), str) else []
    for m in raw:
        if not isinstance(m, dict):
            return None
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append({"role": m.get("role", "user"), "content": c or ""})
    return out


def response_object(rid: str, model: str, text: str, usage: dict | None) -> dict:
    """A completed ``response`` whose one output message is ``text`` (usage in the Responses API's names)."""
    out = {"id": f"resp_{rid}", "object": "response", "created_at": 1764547200, "model": model,
           "status": "completed", "error": None, "incomplete_details": None, "instructions": None,
           "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "temperature": None, "top_p": None,
           "output": [{"type": "message", "id": f"msg_{rid}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]}]}
    if usage is not None:
        pt, ct = usage["prompt_tokens"], usage["completion_tokens"]
        out["usage"] = {"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens_details": {"reasoning_tokens": 0}}
    return out
