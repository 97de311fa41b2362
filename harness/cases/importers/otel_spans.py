"""Spans from a trace export, in one shape whatever tool exported them.

These documented shapes are read (the shape is recognised from the file, never guessed from its name):

- **OTLP JSON** (OpenTelemetry's JSON encoding, as the collector's file exporter and Phoenix / Langfuse
  OTLP endpoints speak it): ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, each span with
  ``traceId``, ``spanId``, ``parentSpanId``, ``name`` and ``attributes`` as a list of
  ``{"key": ..., "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" | "arrayValue": ...}}``.
  OpenInference attributes say what a span is (``openinference.span.kind``: ``RETRIEVER``, ``LLM``, ...); a
  message's text is ``message.content`` or its text content parts
  (``llm.input_messages.N.message.contents.M.message_content.text``). Spans the Langfuse SDK sends
  (``langfuse.observation.type`` / ``.input`` / ``.output``, ``langfuse.trace.input``) and OpenLLMetry spans
  (``gen_ai.prompt.N.role`` / ``.content``, ``gen_ai.completion.N.*``, ``traceloop.span.kind``,
  ``traceloop.entity.input`` / ``.output``) are read by those attributes.
- **Phoenix** span records (its spans API): ``context.trace_id``,
  ``context.span_id``, ``parent_id``, ``span_kind`` and ``attributes`` as an object, either flat
  (``"retrieval.documents.0.document.content"``) or nested (``{"retrieval": {"documents": [...]}}``).
- **Phoenix** ``get_spans_dataframe()`` rows (``df.to_json(orient="records")``, or a parquet dump that
  :mod:`harness.cases.importers.otel` turns into those records): flat ``context.span_id``, ``parent_id``,
  ``span_kind`` and ``attributes.<name>`` columns, list attributes as lists of objects with dotted keys.
- **MLflow tracing** (``Trace.to_json()``, ``mlflow traces get``): ``{"info": ..., "data": {"spans": [...]}}``;
  each span's ``attributes`` hold JSON-encoded values: ``mlflow.spanType`` (``"RETRIEVER"``, ``"LLM"``,
  ``"CHAT_MODEL"``), ``mlflow.spanInputs``, ``mlflow.spanOutputs`` (a retriever's outputs: a list of
  documents with ``page_content``).
- **Langfuse** observations (its public observations API, ``{"data": [...]}``): ``id``, ``traceId``,
  ``parentObservationId``, ``type`` (``GENERATION``, ``RETRIEVER``, ``SPAN``, ...), ``input`` and ``output``;
  a **Langfuse trace** (``GET /api/public/traces/{id}``): ``id``, ``input``, ``output`` and its ``observations``.
- A non-LLM span of any of these whose output is a list of LangChain ``Document`` objects (a LangChain
  callback's retriever logged as a plain span) is read as a retriever.

A file is one JSON document of any of these (a list of them too), or JSONL with one per line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

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
    """Which exporter shape it came from: ``otlp``, ``phoenix``, ``mlflow``, ``langfuse``, ``phoenix-dataframe``,
    ``langfuse-otel``, ``langfuse-trace``, ``openllmetry``."""
    parent: str | None = None
    """Its parent span's id; None for a root span (one the exporter says has no parent)."""
    input: str | None = None
    """The text of the span's own input (``input.value``, the logged inputs, ``traceloop.entity.input``), None
    when it holds none: a root span's input is the request the app received, the cleanest question."""
    trace_input: str | None = None
    """The trace's own input where the exporter records one beside the spans (Langfuse's trace input)."""


def read_spans(text: str) -> list[Span]:
    """Every span of an export's text (ValueError naming the line or field and the problem when no shape fits,
    a value has the wrong type, or the JSON is nested too deeply)."""
    spans: list[Span] = []
    for where, doc in _documents(text):
        items = [(f"{where}[{i}]", d) for i, d in enumerate(doc)] if isinstance(doc, list) else [(where, doc)]
        for at, item in items:
            try:
                spans.extend(_from_document(item, len(spans), at))
            except RecursionError:
                raise ValueError(f"{at.rstrip(', ') or 'line 1'}: not usable JSON: nested too deeply") from None
            except (TypeError, AttributeError, KeyError) as e:   # a shape no check above foresaw: still one line
                raise ValueError(f"{at.rstrip(', ') or 'the document'}: a value of an unexpected type "
                                 f"({type(e).__name__}: {' '.join(str(e).split())[:120]})") from None
    return spans


def _documents(text: str) -> list[tuple[str, object]]:
    """(where, document): the whole text as one JSON document (where ""), else one per line ("line N, ")."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the file is empty")
    try:
        return [("", json.loads(stripped))]
    except (json.JSONDecodeError, RecursionError):
        pass
    out = []
    for n, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                out.append((f"line {n}, ", json.loads(line)))
            except json.JSONDecodeError as e:
                raise ValueError(f"line {n}: not valid JSON (column {e.colno}: {e.msg})") from None
            except RecursionError:
                raise ValueError(f"line {n}: not usable JSON: nested too deeply") from None
            except ValueError as e:   # an integer past Python's digit limit
                raise ValueError(f"line {n}: not usable JSON: {str(e).split(';')[0]}") from None
    return out


_JSON_TYPES = ((bool, "true or false"), (str, "a string"), (int, "a number"), (float, "a number"), (list, "a list"),
               (dict, "an object"), (type(None), "null"))


def _need(value, kind: type, where: str):
    """``value`` when it is a ``kind`` (dict or list or str), else ValueError naming ``where``.

    >>> _need([], list, "spans")
    []
    >>> _need(5, list, "resourceSpans")
    Traceback (most recent call last):
    ...
    ValueError: resourceSpans: expected a list, got a number
    """
    if isinstance(value, kind):
        return value
    want = next(n for t, n in _JSON_TYPES if t is kind)
    got = next((n for t, n in _JSON_TYPES if isinstance(value, t)), type(value).__name__)
    raise ValueError(f"{where}: expected {want}, got {got}")


def _at(where: str, field: str) -> str:
    """The path of ``field`` inside ``where`` ("" the document, "line 3, " a JSONL line, else a field path).

    >>> _at("", "status"), _at("line 2, ", "status"), _at("data.spans[0]", "status")
    ('status', 'line 2, status', 'data.spans[0].status')
    """
    return f"{where}{field}" if not where or where.endswith(", ") else f"{where}.{field}"


def _from_document(doc, start: int, where: str = "") -> list[Span]:
    if not isinstance(doc, dict):
        said = f"{where.rstrip(', ')}: " if where else ""
        raise ValueError(f"{said}expected a JSON object, got {type(doc).__name__}")
    if "resourceSpans" in doc:
        out = []
        for i, rs in enumerate(_need(doc["resourceSpans"] or [], list, f"{where}resourceSpans")):
            at = f"{where}resourceSpans[{i}]"
            _need(rs, dict, at)
            key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
            for j, ss in enumerate(_need(rs.get(key) or [], list, f"{at}.{key}")):
                _need(ss, dict, f"{at}.{key}[{j}]")
                for k, s in enumerate(_need(ss.get("spans") or [], list, f"{at}.{key}[{j}].spans")):
                    out.append(_otlp(_need(s, dict, f"{at}.{key}[{j}].spans[{k}]"), start + len(out),
                                     f"{at}.{key}[{j}].spans[{k}]"))
        return out
    if isinstance(doc.get("data"), dict) and "spans" in doc["data"]:    # an MLflow trace
        spans = _need(doc["data"]["spans"] or [], list, f"{where}data.spans")
        return [_mlflow(_need(s, dict, f"{where}data.spans[{i}]"), start + i, f"{where}data.spans[{i}]")
                for i, s in enumerate(spans)]
    if isinstance(doc.get("data"), list):                                # an API page: Phoenix or Langfuse
        return [sp for i, item in enumerate(doc["data"]) for sp in _from_document(item, start + i, f"{where}data[{i}]")]
    if "observations" in doc and "id" in doc and "type" not in doc:      # a Langfuse trace with its observations
        return _langfuse_trace(doc, start, where)
    if "traceId" in doc and "type" in doc and "spanId" not in doc:       # a Langfuse observation
        return [_langfuse(doc, start)]
    if "context.span_id" in doc:                                         # a Phoenix get_spans_dataframe row
        return [_phoenix_row(doc, start, where)]
    if isinstance(doc.get("context"), dict) and "span_id" in doc["context"]:
        attrs = doc.get("attributes") or {}
        if any(k.startswith("mlflow.") for k in _flat(attrs)):
            return [_mlflow(doc, start)]
        return [_phoenix(doc, start)]
    if "traceId" in doc and "spanId" in doc:                             # one OTLP span on its own line
        return [_otlp(doc, start, where)]
    raise ValueError("not a span export: expected OTLP JSON (resourceSpans), Phoenix spans (context.span_id), an "
                     "MLflow trace (data.spans) or Langfuse observations (traceId, type); got keys "
                     + ", ".join(sorted(doc)[:8]))


def _otlp_value(v, where: str = "value"):
    """An OTLP ``AnyValue`` as a Python value (ValueError naming ``where`` for a value of the wrong type).

    >>> _otlp_value({"intValue": "3"}), _otlp_value({"arrayValue": {"values": [{"stringValue": "a"}]}})
    (3, ['a'])
    """
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        if isinstance(v["intValue"], bool) or not isinstance(v["intValue"], (int, str)):
            raise ValueError(f"{where}.intValue: {v['intValue']!r:.40} is not an integer")
        try:
            return int(v["intValue"])
        except ValueError:
            raise ValueError(f"{where}.intValue: {v['intValue']!r:.40} is not an integer") from None
    for key in ("arrayValue", "kvlistValue"):
        if key in v:
            at = f"{where}.{key}"
            values = _need(_need(v[key] or {}, dict, at).get("values") or [], list, f"{at}.values")
            if key == "arrayValue":
                return [_otlp_value(x, f"{at}.values[{i}]") for i, x in enumerate(values)]
            out = {}
            for i, kv in enumerate(values):
                _need(kv, dict, f"{at}.values[{i}]")
                out[_need(kv.get("key"), str, f"{at}.values[{i}].key")] = _otlp_value(kv.get("value"),
                                                                                     f"{at}.values[{i}].value")
            return out
    return None


def _otlp(s: dict, order: int, where: str = "") -> Span:
    attrs = {}
    at = _at(where, "attributes")
    for i, a in enumerate(_need(s.get("attributes") or [], list, at)):
        _need(a, dict, f"{at}[{i}]")
        if "key" in a:
            attrs[_need(a["key"], str, f"{at}[{i}].key")] = _otlp_value(a.get("value"), f"{at}[{i}].value")
    status = _need(s.get("status") or {}, dict, _at(where, "status"))
    error = status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR")
    trace, span_id = str(s.get("traceId", "")), str(s.get("spanId", ""))
    parent = str(s["parentSpanId"]) if s.get("parentSpanId") else None
    if any(k.startswith(("langfuse.observation.", "langfuse.trace.")) for k in attrs):
        return _langfuse_otel(trace, span_id, parent, attrs, order, error, where)
    if "traceloop.span.kind" in attrs or any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attrs) \
            or "gen_ai.input.messages" in attrs:
        return _openllmetry(trace, span_id, parent, attrs, order, error, where)
    return _openinference(trace, span_id, attrs, order, error, "otlp", parent)


def _phoenix(s: dict, order: int) -> Span:
    ctx = s["context"]
    attrs = _flat(s.get("attributes") or {})
    kind = s.get("span_kind")
    if kind and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = kind
    error = str(s.get("status_code", "")).upper() == "ERROR"
    parent = str(s["parent_id"]) if s.get("parent_id") else None
    return _openinference(str(ctx.get("trace_id", "")), str(ctx["span_id"]), attrs, order, error, "phoenix", parent)


def _phoenix_row(row: dict, order: int, where: str = "") -> Span:
    """A row of Phoenix's ``get_spans_dataframe()`` dumped as JSON (``df.to_json(orient="records")``): flat
    columns ``context.span_id``, ``context.trace_id``, ``parent_id``, ``span_kind``, ``status_code`` and one
    ``attributes.<name>`` column per attribute, list attributes (``attributes.retrieval.documents``,
    ``attributes.llm.input_messages``) as lists of objects with dotted keys (``document.content``)."""
    attrs: dict = {}
    for key, value in row.items():
        if isinstance(key, str) and key.startswith("attributes.") and value is not None:
            name = key[len("attributes."):]
            if isinstance(value, dict):
                attrs.update(_flat(value, name + "."))
            else:
                attrs[name] = value
    kind = row.get("span_kind")
    if kind and not attrs.get("openinference.span.kind"):
        attrs["openinference.span.kind"] = kind
    error = str(row.get("status_code") or "").upper() == "ERROR"
    parent = str(row["parent_id"]) if row.get("parent_id") else None
    return _openinference(str(row.get("context.trace_id") or ""), str(row.get("context.span_id") or ""), attrs,
                          order, error, "phoenix-dataframe", parent)


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


def _openinference(trace: str, span: str, attrs: dict, order: int, error: bool, shape: str,
                   parent: str | None = None) -> Span:
    """A span from OpenInference attributes (flat, dotted keys)."""
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    own_input = _plain(attrs["input.value"], attrs.get("input.mime_type")) \
        if isinstance(attrs.get("input.value"), str) else None
    if kind in _RETRIEVER_KINDS:
        docs = _indexed(attrs, "retrieval.documents")
        return Span(trace, span, RETRIEVER, order, tuple((d.get("document.id"), d.get("document.content"))
                                                         for d in docs), error=error, shape=shape, parent=parent,
                    input=own_input)
    if kind in _LLM_KINDS:
        msgs = _indexed(attrs, "llm.input_messages")
        messages = tuple((m.get("message.role") or "user", _message_text(m)) for m in msgs)
        if not messages and own_input is not None:
            messages = (("user", own_input),)
        outs = _indexed(attrs, "llm.output_messages")
        output = _message_text(outs[-1]) if outs else None
        if output is None and isinstance(attrs.get("output.value"), str):
            output = _plain(attrs["output.value"], attrs.get("output.mime_type"))
        return Span(trace, span, LLM, order, messages=messages, output=output, error=error, shape=shape,
                    parent=parent, input=own_input)
    return Span(trace, span, kind or "UNKNOWN", order, error=error, shape=shape, parent=parent, input=own_input)


def _message_text(m: dict) -> str | None:
    """An OpenInference message's text: ``message.content``, else its text content parts
    (``message.contents.N.message_content.text`` where ``message_content.type`` is ``text``) joined in order.

    >>> _message_text({"message.contents.0.message_content.type": "text",
    ...                "message.contents.0.message_content.text": "Hi"})
    'Hi'
    """
    if isinstance(m.get("message.content"), str):
        return m["message.content"]
    parts = _indexed(m, "message.contents")
    texts = [p.get("message_content.text") for p in parts
             if p.get("message_content.type", "text") == "text" and isinstance(p.get("message_content.text"), str)]
    return "\n".join(texts) if texts else None


def _indexed(attrs: dict, prefix: str) -> list[dict]:
    """``prefix.N.<rest>`` attributes as a list of dicts (``{rest: value}``) in index order; a list-valued
    ``prefix`` too (a Phoenix dataframe cell: objects with dotted keys)."""
    if isinstance(attrs.get(prefix), list):
        return [_flat(x) if isinstance(x, dict) else {} for x in attrs[prefix]]
    found: dict[int, dict] = {}
    for key, value in attrs.items():
        if isinstance(key, str) and key.startswith(prefix + "."):
            idx, _, rest = key[len(prefix) + 1:].partition(".")
            if idx.isdigit() and rest:
                found.setdefault(int(idx), {})[rest] = value
    return [found[i] for i in sorted(found)]


def _plain(value: str, mime) -> str:
    """A JSON-typed input/output value's text: a string kept, an OpenAI-style message list's last content."""
    if mime != "application/json":
        return value
    try:
        obj = json.loads(value)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return value
    text = _text_of(obj)
    return text if text is not None else value


def _text_of(obj) -> str | None:
    """The text of a value an app logged: a string; a message (``content``); a message list (the last
    user-or-assistant content); an OpenAI response (``choices[0].message.content``); a ``{"query"|"question"|
    "input"|"output"|"answer"}`` object; OpenLLMetry's ``{"inputs": ...}`` / ``{"outputs": ...}`` /
    ``{"args": [...], "kwargs": {...}}`` wrappers.

    >>> _text_of({"choices": [{"message": {"role": "assistant", "content": "Hi."}}]})
    'Hi.'
    >>> _text_of({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}]})
    'Why?'
    >>> _text_of({"args": ["Why?"], "kwargs": {}}), _text_of({"inputs": {"question": "How?"}, "tags": []})
    ('Why?', 'How?')
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
    for key in ("query", "question", "input", "output", "answer", "text", "result"):
        if isinstance(obj.get(key), str):
            return obj[key]
    for key in ("inputs", "outputs"):   # OpenLLMetry's LangChain chain spans
        if key in obj:
            return _text_of(obj[key])
    if isinstance(obj.get("args"), list):   # OpenLLMetry's @workflow / @task: the call's arguments
        strings = [a for a in obj["args"] if isinstance(a, str)]
        if strings:
            return strings[0]
        kwargs = obj.get("kwargs") if isinstance(obj.get("kwargs"), dict) else {}
        return _text_of(kwargs)
    return None


def _json_attr(v, where: str = "attribute"):
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return v
        except RecursionError:
            raise ValueError(f"{where}: not usable JSON: nested too deeply") from None
        except ValueError as e:   # an integer past Python's digit limit
            raise ValueError(f"{where}: not usable JSON: {str(e).split(';')[0]}") from None
    return v


def _mlflow(s: dict, order: int, where: str = "") -> Span:
    attrs = _need(s.get("attributes") or {}, dict, _at(where, "attributes"))
    ctx = _need(s.get("context") or {}, dict, _at(where, "context"))
    trace = str(_json_attr(attrs.get("mlflow.traceRequestId")) or s.get("trace_id") or ctx.get("trace_id") or "")
    span_id = str(s.get("span_id") or ctx.get("span_id") or "")
    kind = str(_json_attr(attrs.get("mlflow.spanType")) or "").upper()
    status = _need(s.get("status") or {}, dict, _at(where, "status"))
    error = (status.get("status_code") or status.get("code") or s.get("status_code")) in (
        "ERROR", "STATUS_CODE_ERROR", 2)
    inputs = _json_attr(attrs.get("mlflow.spanInputs"), _at(where, "attributes.mlflow.spanInputs"))
    outputs = _json_attr(attrs.get("mlflow.spanOutputs"), _at(where, "attributes.mlflow.spanOutputs"))
    parent = str(s["parent_id"]) if s.get("parent_id") else None
    return _generic(trace, span_id, kind, order, inputs, outputs, error, "mlflow", parent)


def _langfuse(o: dict, order: int, trace: str | None = None, shape: str = "langfuse") -> Span:
    error = str(o.get("level", "")).upper() == "ERROR"
    parent = str(o["parentObservationId"]) if o.get("parentObservationId") else None
    return _generic(str(o.get("traceId") or trace or ""), str(o.get("id", "")), str(o.get("type", "")).upper(),
                    order, o.get("input"), o.get("output"), error, shape, parent)


def _langfuse_trace(doc: dict, start: int, where: str = "") -> list[Span]:
    """A Langfuse trace as its API returns it (``GET /api/public/traces/{id}``, ``langfuse.api.trace.get``):
    ``id``, ``input``, ``output`` and ``observations`` (each an observation as the observations API gives it,
    nested by ``parentObservationId``)."""
    trace = str(doc.get("id") or "")
    observations = _need(doc.get("observations") or [], list, _at(where, "observations"))
    question = _text_of(doc.get("input"))
    spans = []
    for i, o in enumerate(observations):
        span = _langfuse(_need(o, dict, f"{_at(where, 'observations')}[{i}]"), start + i, trace, "langfuse-trace")
        spans.append(_with(span, trace_input=question, trace_id=trace))
    return spans


def _with(span: Span, **changes) -> Span:
    return replace(span, **changes)


def _langfuse_otel(trace: str, span: str, parent: str | None, attrs: dict, order: int, error: bool,
                   where: str) -> Span:
    """A span the Langfuse SDK (v3, OpenTelemetry based) sends: ``langfuse.observation.type`` (``span``,
    ``generation``, ``retriever``, ...), ``langfuse.observation.input`` / ``.output`` (JSON text),
    ``langfuse.trace.input`` on the span that sets the trace's input."""
    at = _at(where, "attributes")
    kind = str(attrs.get("langfuse.observation.type") or "span").upper()
    inputs = _json_attr(attrs.get("langfuse.observation.input"), f"{at}.langfuse.observation.input")
    outputs = _json_attr(attrs.get("langfuse.observation.output"), f"{at}.langfuse.observation.output")
    if str(attrs.get("langfuse.observation.level") or "").upper() == "ERROR":
        error = True
    out = _generic(trace, span, kind, order, inputs, outputs, error, "langfuse-otel", parent)
    if "langfuse.trace.input" in attrs:
        out = _with(out, trace_input=_text_of(_json_attr(attrs["langfuse.trace.input"],
                                                          f"{at}.langfuse.trace.input")))
    return out


def _openllmetry(trace: str, span: str, parent: str | None, attrs: dict, order: int, error: bool,
                 where: str) -> Span:
    """A span OpenLLMetry (Traceloop) writes: an LLM call with ``gen_ai.prompt.N.role`` / ``.content`` and
    ``gen_ai.completion.N.role`` / ``.content``; a ``@workflow`` / ``@task`` (or LangChain chain) span with
    ``traceloop.span.kind`` and ``traceloop.entity.input`` / ``.output`` (JSON text)."""
    at = _at(where, "attributes")
    prompts = _indexed(attrs, "gen_ai.prompt")
    completions = _indexed(attrs, "gen_ai.completion")
    if not prompts and "gen_ai.input.messages" in attrs:   # the newer GenAI conventions: JSON messages with parts
        prompts = _genai_messages(_json_attr(attrs["gen_ai.input.messages"], f"{at}.gen_ai.input.messages"))
        completions = _genai_messages(_json_attr(attrs.get("gen_ai.output.messages"), f"{at}.gen_ai.output.messages"))
    if prompts or completions or attrs.get("llm.request.type"):
        messages = tuple((str(p.get("role") or "user"), p.get("content")) for p in prompts)
        answers = [c.get("content") for c in completions if c.get("role", "assistant") == "assistant"]
        return Span(trace, span, LLM, order, messages=messages, output=answers[-1] if answers else None,
                    error=error, shape="openllmetry", parent=parent)
    inputs = _json_attr(attrs.get("traceloop.entity.input"), f"{at}.traceloop.entity.input")
    outputs = _json_attr(attrs.get("traceloop.entity.output"), f"{at}.traceloop.entity.output")
    if isinstance(outputs, dict) and "outputs" in outputs:
        outputs = outputs["outputs"]
    kind = str(attrs.get("traceloop.span.kind") or "").upper()
    return _generic(trace, span, kind, order, inputs, outputs, error, "openllmetry", parent)


def _genai_messages(value) -> list[dict]:
    """OpenTelemetry GenAI ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (a JSON list of
    ``{"role", "parts": [{"type": "text", "content": ...}, ...]}``) as ``{"role", "content"}`` dicts, the text
    parts joined.

    >>> _genai_messages([{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}])
    [{'role': 'user', 'content': 'Hi'}]
    """
    out = []
    for m in value if isinstance(value, list) else []:
        if isinstance(m, dict):
            parts = m.get("parts") if isinstance(m.get("parts"), list) else []
            texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"
                     and isinstance(p.get("content"), str)]
            out.append({"role": m.get("role"), "content": "\n".join(texts) if texts else None})
    return out


def _langchain_documents(outputs) -> list | None:
    """The documents of a retriever logged as a plain span: a list of LangChain ``Document`` objects as the
    callbacks serialise them (``page_content``, ``metadata``, ``type: "Document"``), bare or under a key
    (``documents``, ``context``, ``source_documents``); None when the value is not such a list."""
    if isinstance(outputs, dict):
        for key in ("documents", "context", "source_documents", "docs"):
            if isinstance(outputs.get(key), list):
                return _langchain_documents(outputs[key])
        return None
    if isinstance(outputs, list) and outputs:
        # LangChain's own serialisation (Document.to_json(), as OpenLLMetry's JSON encoder writes it) wraps the
        # fields in {"lc": 1, "type": "constructor", "id": [..., "Document"], "kwargs": {...}}
        docs = [d["kwargs"] if isinstance(d, dict) and d.get("lc") and isinstance(d.get("kwargs"), dict) else d
                for d in outputs]
        if all(isinstance(d, dict) and ("page_content" in d or "pageContent" in d) for d in docs):
            return docs
    return None


def _generic(trace: str, span: str, kind: str, order: int, inputs, outputs, error: bool, shape: str,
             parent: str | None = None) -> Span:
    """A span whose inputs and outputs are the values the app logged (MLflow, Langfuse, OpenLLMetry tasks)."""
    own_input = _text_of(inputs)
    lc_docs = _langchain_documents(outputs) if kind not in _RETRIEVER_KINDS | _LLM_KINDS else None
    if kind in _RETRIEVER_KINDS or lc_docs is not None:
        items = lc_docs if lc_docs is not None else (outputs.get("documents") if isinstance(outputs, dict)
                                                     else outputs)
        docs = []
        for d in items if isinstance(items, list) else []:
            if isinstance(d, str):
                docs.append((None, d))
            elif isinstance(d, dict):
                text = d.get("page_content", d.get("content", d.get("pageContent", d.get("text"))))
                meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
                docs.append((d.get("id") or meta.get("doc_uri") or meta.get("id") or meta.get("source"), text))
        return Span(trace, span, RETRIEVER, order, documents=tuple(docs), error=error, shape=shape, parent=parent,
                    input=own_input)
    if kind in _LLM_KINDS:
        messages = (("user", own_input),) if own_input is not None else ()
        return Span(trace, span, LLM, order, messages=messages, output=_text_of(outputs), error=error, shape=shape,
                    parent=parent, input=own_input)
    return Span(trace, span, kind or "UNKNOWN", order, error=error, shape=shape, parent=parent, input=own_input)
