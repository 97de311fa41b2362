"""Spans from a trace export, in one shape whatever tool exported them.

Four documented shapes are read (the shape is recognised from the file, never guessed from its name):

- **OTLP JSON** (OpenTelemetry's JSON encoding, as the collector's file exporter and Phoenix / Langfuse
  OTLP endpoints speak it): ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, each span with
  ``traceId``, ``spanId``, ``parentSpanId``, ``name`` and ``attributes`` as a list of
  ``{"key": ..., "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" | "arrayValue": ...}}``.
  OpenInference attributes say what a span is (``openinference.span.kind``: ``RETRIEVER``, ``LLM``, ...).
- **Phoenix** span records (its spans API and ``get_spans_dataframe`` rows as JSON): ``context.trace_id``,
  ``context.span_id``, ``parent_id``, ``span_kind`` and ``attributes`` as an object, either flat
  (``"retrieval.documents.0.document.content"``) or nested (``{"retrieval": {"documents": [...]}}``).
- **MLflow tracing** (``Trace.to_json()``, ``mlflow traces get``): ``{"info": ..., "data": {"spans": [...]}}``;
  each span's ``attributes`` hold JSON-encoded values: ``mlflow.spanType`` (``"RETRIEVER"``, ``"LLM"``,
  ``"CHAT_MODEL"``), ``mlflow.spanInputs``, ``mlflow.spanOutputs`` (a retriever's outputs: a list of
  documents with ``page_content``).
- **Langfuse** observations (its public observations API, ``{"data": [...]}``): ``id``, ``traceId``,
  ``parentObservationId``, ``type`` (``GENERATION``, ``RETRIEVER``, ``SPAN``, ...), ``input`` and ``output``.

A file is one JSON document of any of these (a list of them too), or JSONL with one per line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

RETRIEVER, LLM = "RETRIEVER", "LLM"
_LLM_KINDS = {"LLM", "CHAT_MODEL", "GENERATION"}
_RETRIEVER_KINDS = {"RETRIEVER"}


@dataclass(frozen=True)
class Span:
    """One span, reduced to what an importer reads."""

    trace_id: str
    """The trace it belongs to."""
    span_id: str
    """Its own id."""
    kind: str
    """``RETRIEVER``, ``LLM`` or the exporter's own kind (``CHAIN``, ``SPAN``, ...)."""
    order: int
    """Position in the file (spans of a trace are read in this order)."""
    documents: tuple = ()
    """A retriever's documents, in order: ``(id or None, text)``."""
    messages: tuple = ()
    """An LLM span's input messages: ``(role, text)``; a plain-text input is one ``("user", text)``."""
    output: str | None = None
    """An LLM span's output text (the last assistant message), None when it has none."""
    error: bool = False
    """The span ended in an error (its status says so)."""
    shape: str = ""
    """Which exporter shape it came from: ``otlp``, ``phoenix``, ``mlflow``, ``langfuse``."""


def read_spans(text: str) -> list[Span]:
    """Every span of an export's text (ValueError naming the problem when no shape fits)."""
    docs = _documents(text)
    spans: list[Span] = []
    for doc in docs:
        for item in doc if isinstance(doc, list) else [doc]:
            spans.extend(_from_document(item, len(spans)))
    return spans


def _documents(text: str) -> list:
    stripped = text.strip()
    if not stripped:
        raise ValueError("the file is empty")
    try:
        return [json.loads(stripped)]
    except json.JSONDecodeError:
        pass
    out = []
    for n, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"line {n}: not valid JSON (column {e.colno}: {e.msg})") from None
    return out


def _from_document(doc, start: int) -> list[Span]:
    if not isinstance(doc, dict):
        raise ValueError(f"expected a JSON object, got {type(doc).__name__}")
    if "resourceSpans" in doc:
        return [_otlp(s, start + i) for i, s in enumerate(
            s for rs in doc["resourceSpans"] or [] for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")
            or [] for s in ss.get("spans") or [])]
    if isinstance(doc.get("data"), dict) and "spans" in doc["data"]:    # an MLflow trace
        return [_mlflow(s, start + i) for i, s in enumerate(doc["data"]["spans"] or [])]
    if isinstance(doc.get("data"), list):                                # an API page: Phoenix or Langfuse
        return [sp for i, item in enumerate(doc["data"]) for sp in _from_document(item, start + i)]
    if "traceId" in doc and "type" in doc and "spanId" not in doc:       # a Langfuse observation
        return [_langfuse(doc, start)]
    if isinstance(doc.get("context"), dict) and "span_id" in doc["context"]:
        attrs = doc.get("attributes") or {}
        if any(k.startswith("mlflow.") for k in _flat(attrs)):
            return [_mlflow(doc, start)]
        return [_phoenix(doc, start)]
    if "traceId" in doc and "spanId" in doc:                             # one OTLP span on its own line
        return [_otlp(doc, start)]
    raise ValueError("not a span export: expected OTLP JSON (resourceSpans), Phoenix spans (context.span_id), an "
                     "MLflow trace (data.spans) or Langfuse observations (traceId, type); got keys "
                     + ", ".join(sorted(doc)[:8]))


def _otlp_value(v):
    """An OTLP ``AnyValue`` as a Python value.

    >>> _otlp_value({"intValue": "3"}), _otlp_value({"arrayValue": {"values": [{"stringValue": "a"}]}})
    (3, ['a'])
    """
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_otlp_value(x) for x in (v["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in v:
        return {kv["key"]: _otlp_value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values") or []}
    return None


def _otlp(s: dict, order: int) -> Span:
    attrs = {a["key"]: _otlp_value(a.get("value")) for a in s.get("attributes") or [] if "key" in a}
    status = s.get("status") or {}
    error = status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR")
    return _openinference(str(s.get("traceId", "")), str(s.get("spanId", "")), attrs, order, error, "otlp")


def _phoenix(s: dict, order: int) -> Span:
    ctx = s["context"]
    attrs = _flat(s.get("attributes") or {})
    kind = s.get("span_kind")
    if kind and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = kind
    error = str(s.get("status_code", "")).upper() == "ERROR"
    return _openinference(str(ctx.get("trace_id", "")), str(ctx["span_id"]), attrs, order, error, "phoenix")


def _flat(obj, prefix: str = "") -> dict:
    """Nested attribute objects flattened to dotted keys; lists of objects get their index.

    >>> _flat({"retrieval": {"documents": [{"document": {"content": "x"}}]}})
    {'retrieval.documents.0.document.content': 'x'}
    """
    out: dict = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flat(v, f"{prefix}{k}."))
    elif isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        for i, v in enumerate(obj):
            out.update(_flat(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = obj
    return out


def _openinference(trace: str, span: str, attrs: dict, order: int, error: bool, shape: str) -> Span:
    """A span from OpenInference attributes (flat, dotted keys)."""
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    if kind in _RETRIEVER_KINDS:
        docs = _indexed(attrs, "retrieval.documents", ("document.id", "document.content"))
        return Span(trace, span, RETRIEVER, order, tuple((d.get("document.id"), d.get("document.content"))
                                                         for d in docs), error=error, shape=shape)
    if kind in _LLM_KINDS:
        msgs = _indexed(attrs, "llm.input_messages", ("message.role", "message.content"))
        messages = tuple((m.get("message.role") or "user", m.get("message.content")) for m in msgs)
        if not messages and isinstance(attrs.get("input.value"), str):
            messages = (("user", _plain(attrs["input.value"], attrs.get("input.mime_type"))),)
        outs = _indexed(attrs, "llm.output_messages", ("message.role", "message.content"))
        output = outs[-1].get("message.content") if outs else None
        if output is None and isinstance(attrs.get("output.value"), str):
            output = _plain(attrs["output.value"], attrs.get("output.mime_type"))
        return Span(trace, span, LLM, order, messages=messages, output=output, error=error, shape=shape)
    return Span(trace, span, kind or "UNKNOWN", order, error=error, shape=shape)


def _indexed(attrs: dict, prefix: str, fields: tuple) -> list[dict]:
    """``prefix.N.field`` attributes as a list of dicts in index order (a list-valued ``prefix`` too)."""
    if isinstance(attrs.get(prefix), list):
        return [_flat(x) if isinstance(x, dict) else {} for x in attrs[prefix]]
    found: dict[int, dict] = {}
    for key, value in attrs.items():
        if key.startswith(prefix + "."):
            idx, _, rest = key[len(prefix) + 1:].partition(".")
            if idx.isdigit() and rest in fields:
                found.setdefault(int(idx), {})[rest] = value
    return [found[i] for i in sorted(found)]


def _plain(value: str, mime) -> str:
    """A JSON-typed input/output value's text: a string kept, an OpenAI-style message list's last content."""
    if mime != "application/json":
        return value
    try:
        obj = json.loads(value)
    except json.JSONDecodeError:
        return value
    text = _text_of(obj)
    return text if text is not None else value


def _text_of(obj) -> str | None:
    """The text of a value an app logged: a string; a message (``content``); a message list (the last
    user-or-assistant content); an OpenAI response (``choices[0].message.content``); a ``{"query"|"question"|
    "input"|"output"|"answer"}`` object.

    >>> _text_of({"choices": [{"message": {"role": "assistant", "content": "Hi."}}]})
    'Hi.'
    >>> _text_of({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}]})
    'Why?'
    """
    if isinstance(obj, str):
        return obj
    if isinstance(obj, list):
        for item in reversed(obj):
            if isinstance(item, dict) and item.get("role") in ("user", "assistant", "human", "ai", None):
                got = _text_of(item)
                if got is not None:
                    return got
        return None
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("choices"), list) and obj["choices"]:
        return _text_of(obj["choices"][0].get("message") or obj["choices"][0].get("text"))
    if "messages" in obj:
        return _text_of(obj["messages"])
    content = obj.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):   # content parts
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    for key in ("query", "question", "input", "output", "answer", "text"):
        if isinstance(obj.get(key), str):
            return obj[key]
    return None


def _json_attr(v):
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return v
    return v


def _mlflow(s: dict, order: int) -> Span:
    attrs = s.get("attributes") or {}
    ctx = s.get("context") or {}
    trace = str(_json_attr(attrs.get("mlflow.traceRequestId")) or s.get("trace_id") or ctx.get("trace_id") or "")
    span_id = str(s.get("span_id") or ctx.get("span_id") or "")
    kind = str(_json_attr(attrs.get("mlflow.spanType")) or "").upper()
    status = s.get("status") or {}
    error = (status.get("status_code") or status.get("code") or s.get("status_code")) in (
        "ERROR", "STATUS_CODE_ERROR", 2)
    inputs, outputs = _json_attr(attrs.get("mlflow.spanInputs")), _json_attr(attrs.get("mlflow.spanOutputs"))
    return _generic(trace, span_id, kind, order, inputs, outputs, error, "mlflow")


def _langfuse(o: dict, order: int) -> Span:
    error = str(o.get("level", "")).upper() == "ERROR"
    return _generic(str(o.get("traceId", "")), str(o.get("id", "")), str(o.get("type", "")).upper(), order,
                    o.get("input"), o.get("output"), error, "langfuse")


def _generic(trace: str, span: str, kind: str, order: int, inputs, outputs, error: bool, shape: str) -> Span:
    """A span whose inputs and outputs are the values the app logged (MLflow, Langfuse)."""
    if kind in _RETRIEVER_KINDS:
        items = outputs.get("documents") if isinstance(outputs, dict) else outputs
        docs = []
        for d in items if isinstance(items, list) else []:
            if isinstance(d, str):
                docs.append((None, d))
            elif isinstance(d, dict):
                text = d.get("page_content", d.get("content", d.get("text")))
                meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
                docs.append((d.get("id") or meta.get("doc_uri") or meta.get("id"), text))
        return Span(trace, span, RETRIEVER, order, documents=tuple(docs), error=error, shape=shape)
    if kind in _LLM_KINDS:
        question = _text_of(inputs)
        messages = (("user", question),) if question is not None else ()
        return Span(trace, span, LLM, order, messages=messages, output=_text_of(outputs), error=error, shape=shape)
    return Span(trace, span, kind or "UNKNOWN", order, error=error, shape=shape)
