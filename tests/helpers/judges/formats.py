"""How the realistic judge honours a request's output format, as real servers do.

llama.cpp's server, vLLM, Ollama and OpenAI all constrain decoding when a request asks for it:

- ``json_schema`` (chat ``response_format``, or the Responses API's ``text.format``): the reply is JSON
  that fits the schema: no code fence, no prose, no bare number, no missing required key, no stray
  key where the schema forbids extra ones;
- ``json_object``: the reply is one JSON object, but its keys are the model's own (a dropped field
  or a stray one gets through);
- no format: the model's text as it came: fences, prose before the JSON, bare numbers, dropped keys
  (:meth:`tests.helpers.judges.realistic.RealisticJudge.render`).

What the judge means (the :class:`tests.helpers.judges.steps.Answer`) never depends on the format, only how it
is written, so two clients that ask the same prompt with different formats get the same verdicts.
"""
from __future__ import annotations

import json
import random

from tests.helpers.judges.steps import Answer

STRAY = ("note", "The answer follows from the passage.")
"""The stray key a model adds to a ``json_object`` reply now and then."""


def format_of(body: dict) -> dict | None:
    """The requested output format as ``{"type": ..., "schema": ..., "name": ...}`` (None: free text),
    from a chat ``response_format`` or a Responses API ``text.format``.

    >>> format_of({"response_format": {"type": "json_object"}})
    {'type': 'json_object', 'schema': None, 'name': None}
    >>> format_of({"text": {"format": {"type": "json_schema", "name": "X", "schema": {"type": "object"}}}})["name"]
    'X'
    >>> format_of({}) is None, format_of({"text": {"format": {"type": "text"}}}) is None
    (True, True)
    """
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") in ("json_object", "json_schema"):
        js = rf.get("json_schema") or {}
        return {"type": rf["type"], "schema": js.get("schema"), "name": js.get("name")}
    tf = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(tf, dict) and tf.get("type") in ("json_object", "json_schema"):
        return {"type": tf["type"], "schema": tf.get("schema"), "name": tf.get("name")}
    return None


def as_object(a: Answer) -> object:
    """The answer as a JSON value: a score becomes ``{"score": n}``, a text stays a string."""
    return {"score": a.value} if a.kind == "score" else a.value


def fit(value, schema: dict | None):
    """``value`` made to fit ``schema`` the way constrained decoding would write it: keys the schema does
    not allow dropped (``additionalProperties: false``), required keys that are missing filled with an
    empty value of their type, a bare string put into the schema's one string property.

    >>> s = {"type": "object", "additionalProperties": False, "required": ["score", "why"],
    ...      "properties": {"score": {"type": "integer"}, "why": {"type": "string"}}}
    >>> fit({"score": 2, "extra": 1}, s)
    {'score': 2, 'why': ''}
    """
    if not isinstance(schema, dict):
        return value
    props = schema.get("properties") or {}
    if not isinstance(value, dict):
        strings = [k for k, p in props.items() if (p or {}).get("type") == "string"]
        value = {strings[0]: value if isinstance(value, str) else json.dumps(value)} if strings else {}
    out = {k: v for k, v in value.items() if k in props or schema.get("additionalProperties", True) is not False}
    for k in schema.get("required") or []:
        if k not in out:
            t = (props.get(k) or {}).get("type")
            out[k] = {"string": "", "integer": 0, "number": 0, "array": [], "boolean": False}.get(t, None)
    return out


def render_formatted(a: Answer, fmt: dict, drop, rng: random.Random, stray_rate: float, drop_rate: float) -> str:
    """The reply text for a request that asked for ``fmt`` (``json_object`` or ``json_schema``).

    ``drop`` removes a key of a list item (:func:`tests.helpers.judges.realistic.drop_key`); ``rng`` is the
    reply's noise generator; under ``json_object`` a key is dropped at ``drop_rate`` and a stray key
    added at ``stray_rate``; under ``json_schema`` nothing of the kind gets through."""
    value = as_object(a)
    if fmt["type"] == "json_schema":
        return json.dumps(fit(value, fmt.get("schema")), ensure_ascii=False)
    if not isinstance(value, dict):
        value = {"result": value}
    draw = [rng.random() for _ in range(2)]
    if not a.clean and draw[0] < drop_rate:
        value = drop(value)
    if not a.clean and draw[1] < stray_rate:
        value = {**value, STRAY[0]: STRAY[1]}
    return json.dumps(value, ensure_ascii=False)
