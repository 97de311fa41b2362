"""Does a judge's reply fit what the request asked for? An observation the gateway records per call.

A request that asks for ``json_object`` should get JSON back; one that asks for a ``json_schema``
JSON that fits the schema's structural subset (types, required keys, enums, items, anyOf, local
``$ref``). The gateway hands every reply on as it came, fitting or not: the vendor's own parser,
re-asks and fallbacks decide, as in stock use (Ragas's instructor re-asks, DeepEval trims to the
outer braces, TruLens reformats or parses a bare number). The fit is kept on the call record
(``calls.reply_fit`` in the store) and counted in the ledger (``format_misfits``), never acted on.
"""
from __future__ import annotations

import json

from harness.judge.responses_api import chat_view, completion_view, is_responses


def reply_fit(body: dict, response: dict) -> str:
    """``fits``, ``not asked`` (a text-mode request) or what does not fit, for the call record.

    >>> reply_fit({}, {"choices": [{"message": {"content": "hi"}}]})
    'not asked'
    >>> reply_fit({"response_format": {"type": "json_object"}}, {"choices": [{"message": {"content": "```json"}}]})
    'response_format json_object asked, reply is not JSON'
    """
    if is_responses(body):   # read as the chat request and reply it amounts to
        body, response = chat_view(body), completion_view(response) if isinstance(response, dict) else response
    problem = content_problem(body, response)
    if problem is not None:
        return problem
    kind = (body.get("response_format") or {}).get("type") if isinstance(body, dict) else None
    return "fits" if kind in ("json_object", "json_schema") else "not asked"


def content_problem(body: dict, response: dict) -> str | None:
    """Why a 200 response cannot be what the request asked for, or None when it looks right.

    >>> req = {"response_format": {"type": "json_object"}}
    >>> ok = {"choices": [{"message": {"content": '{"a": 1}'}}]}
    >>> content_problem(req, ok) is None
    True
    >>> content_problem(req, {"choices": [{"message": {"content": '{"a": '}}]})
    'response_format json_object asked, reply is not JSON'
    >>> schema = {"type": "json_schema", "json_schema": {"name": "X", "schema": {"required": ["b"]}}}
    >>> content_problem({"response_format": schema}, ok)
    "reply lacks required key 'b' of schema X"
    """
    choices = response.get("choices") if isinstance(response, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        return "reply has no choices"
    msg = choices[0].get("message") or {}
    if msg.get("tool_calls"):
        return None
    content = msg.get("content")
    if not isinstance(content, str):
        return "reply has no message content"
    rf = body.get("response_format") or {}
    kind = rf.get("type")
    if kind not in ("json_object", "json_schema"):
        return None
    try:
        parsed = json.loads(content)
    except (ValueError, TypeError):
        return f"response_format {kind} asked, reply is not JSON"
    if kind == "json_schema":
        js = rf.get("json_schema") or {}
        required = (js.get("schema") or {}).get("required") or []
        if not isinstance(parsed, dict):
            return f"reply is not a JSON object (schema {js.get('name')})"
        for k in required:
            if k not in parsed:
                return f"reply lacks required key {k!r} of schema {js.get('name')}"
        bad = schema_mismatch(parsed, js.get("schema") or {})
        if bad:
            return f"reply does not fit schema {js.get('name')}: {bad}"
    return None


_JSON_TYPES = {"object": dict, "array": list, "string": str, "null": type(None)}
_BOOL_WORDS = ("true", "false", "yes", "no", "on", "off", "0", "1")


def _fits(value, t: str) -> bool:
    """Does ``value`` pass as JSON type ``t``? Scalars as leniently as the vendors' pydantic parsing takes
    them (lax mode: 2.0 or "2" for an integer, "0.5" for a number, 1 or "yes" for a boolean), so the
    gateway never rejects a reply the vendor would accept; structure (object, array, string) strictly.

    >>> _fits(2.0, "integer"), _fits("2", "integer"), _fits(2.5, "integer"), _fits(True, "integer")
    (True, True, False, False)
    >>> _fits("yes", "boolean"), _fits(5, "string"), _fits(["a"], "string")
    (True, False, False)
    """
    if t in ("integer", "number"):
        if isinstance(value, bool):
            return False
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                return False
        if not isinstance(value, (int, float)):
            return False
        return t == "number" or float(value).is_integer()
    if t == "boolean":
        return isinstance(value, bool) or (not isinstance(value, (list, dict)) and value in (0, 1)) or \
            (isinstance(value, str) and value.strip().lower() in _BOOL_WORDS)
    return t in _JSON_TYPES and isinstance(value, _JSON_TYPES[t])


def schema_mismatch(value, schema: dict, defs: dict | None = None, path: str = "$", depth: int = 0) -> str | None:
    """Where ``value`` breaks the JSON-schema subset structured outputs use (type, properties, required,
    items, enum, anyOf, local ``$ref``), or None. Anything else in the schema is not checked, and scalar
    types are checked as leniently as pydantic's lax mode (:func:`_fits`).

    >>> s = {"type": "object", "properties": {"v": {"type": "array", "items": {"enum": ["yes", "no"]}}}}
    >>> schema_mismatch({"v": ["yes"]}, s) is None, schema_mismatch({"v": "yes"}, s)
    (True, '$.v is str, expected array')
    >>> schema_mismatch({"v": ["maybe"]}, s)
    "$.v[0] is 'maybe', expected one of ['yes', 'no']"
    """
    if not isinstance(schema, dict) or depth > 32:
        return None
    defs = defs if defs is not None else (schema.get("$defs") or schema.get("definitions") or {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        return schema_mismatch(value, defs.get(ref.rsplit("/", 1)[-1]) or {}, defs, path, depth + 1)
    if isinstance(schema.get("anyOf"), list):
        if all(schema_mismatch(value, s, defs, path, depth + 1) for s in schema["anyOf"]):
            return f"{path} matches none of anyOf"
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    known = [t for t in types if t in _JSON_TYPES or t in ("integer", "number", "boolean")] \
        if isinstance(types, list) else []
    if known and not any(_fits(value, t) for t in known):
        return f"{path} is {type(value).__name__}, expected {'/'.join(known)}"
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return f"{path} is {value!r}, expected one of {schema['enum']}"
    if isinstance(value, dict):
        for k in schema.get("required") or []:
            if k not in value:
                return f"{path} lacks required key {k!r}"
        for k, sub in (schema.get("properties") or {}).items():
            if k in value:
                bad = schema_mismatch(value[k], sub, defs, f"{path}.{k}", depth + 1)
                if bad:
                    return bad
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            bad = schema_mismatch(item, schema["items"], defs, f"{path}[{i}]", depth + 1)
            if bad:
                return bad
    return None
