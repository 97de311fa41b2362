"""Production traces (OpenTelemetry / OpenInference spans) as cases: ``harness import otel FILE``.

Groundedness needs no reference answer, so it can score a sample of live traffic. This importer reads
spans as Phoenix (OTLP JSON, span records, ``get_spans_dataframe()`` rows as JSON or parquet), Langfuse
(observations, a trace with nested observations, the SDK's OTel spans), MLflow tracing and OpenLLMetry export
them (the shapes are in :mod:`harness.cases.importers.otel_spans` and docs/otel.md) and makes one case per
trace:

- contexts: the documents of the trace's retriever spans (a LangChain-callback retriever logged as a plain
  span too), in order (the same text twice is kept once); a document's own id is its context id when every
  id in the trace is distinct, else its position ``1``, ``2``, ...;
- answer: the trace's last LLM span's output (its last output message);
- question: the first clean one of the trace's own input, the root span's input and the LLM span's last user
  message (or its plain-text input); a text holding a retrieved passage (a stuffed prompt) is never taken
  while a clean one exists;
- id ``trace-<trace id>``; tags ``otel`` and the exporter shape (``otlp``, ``phoenix``, ``phoenix-dataframe``,
  ``mlflow``, ``langfuse``, ``langfuse-trace``, ``langfuse-otel``, ``openllmetry``).

Every trace is kept or dropped with a reason (no retriever span, no document text, no LLM span, no
question, no answer, a span that ended in an error), and the summary counts them and names every dropped
trace on a line of its own. ``--sample N`` keeps N of the usable traces, drawn with a seeded generator
(``--seed``, default 0), so the same file and seed give the same sample. The cases carry no annotation:
score them with a real judge (``--judge-url``).
"""
from __future__ import annotations

import random

from harness.cases.importers.labelled import Imported, ImportFileError, _text, validated
from harness.cases.importers.otel_spans import LLM, RETRIEVER, read_spans

FORMAT = "otel"
DESCRIPTION = ("OpenTelemetry / OpenInference spans (Phoenix, Langfuse, MLflow tracing, OpenLLMetry): one case "
               "per trace")
WRITTEN = "no annotations: score them with --judge-url URL --judge-model ID"
"""What the command says after writing the cases."""


def import_files(paths: list[str], sample: int | None = None, seed: int = 0) -> Imported:
    """One case per usable trace of ``paths`` (every file's spans together); ``sample``: keep at most that
    many usable traces, drawn with ``random.Random(seed)`` and kept in file order."""
    out = Imported()
    traces: dict[str, list] = {}
    for path in paths:
        try:
            spans = read_spans(_parquet_json(path) if _is_parquet(path) else _text(path))
        except ValueError as e:
            raise ImportFileError(f"{path}: {e}") from None
        for span in spans:
            traces.setdefault(span.trace_id, []).append((path, span))
    seen: set = set()
    for trace_id, items in traces.items():
        where = f"{items[0][0]} trace {trace_id}"
        case, why = trace_case(trace_id, [s for _, s in items])
        if why:
            out.drop(why, where)
            out.each.append(f"{where}: {why}")
        else:
            validated(case, out, where, seen)
    usable = out.cases
    if sample is not None and sample < len(usable):
        keep = sorted(random.Random(seed).sample(range(len(usable)), sample))
        out.notes[f"usable trace(s) left out by --sample {sample} (seed {seed})"] += len(usable) - sample
        usable = [usable[i] for i in keep]
    out.cases = usable
    return out


def _is_parquet(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError:
        return False   # _text names the problem


def _parquet_json(path: str) -> str:
    """A parquet dump of Phoenix's ``get_spans_dataframe()`` (``df.to_parquet(path)``) as the JSON records its
    ``df.to_json(orient="records")`` would give (the ``context.span_id`` index kept as a column)."""
    try:
        import pandas as pd  # noqa: PLC0415 - lazy: only a parquet dump needs pandas (~0.5 s to import)
        df = pd.read_parquet(path)
    except ImportError as e:
        raise ImportFileError(f"{path}: a parquet file; reading it needs pyarrow (pip install pyarrow): {e}") from None
    except Exception as e:   # noqa: BLE001 - pyarrow's errors for a damaged file: one line, never a traceback
        raise ImportFileError(f"{path}: not a readable parquet file ({type(e).__name__}: "
                              f"{' '.join(str(e).split())[:120]})") from None
    if "context.span_id" not in df.columns and df.index.name == "context.span_id":
        df = df.reset_index()
    return df.to_json(orient="records")


def trace_case(trace_id: str, spans: list) -> tuple[dict | None, str | None]:
    """(case object, None), or (None, the reason the trace is dropped)."""
    if any(s.error for s in spans):
        return None, "a span of the trace ended in an error"
    retrievers = [s for s in spans if s.kind == RETRIEVER]
    llms = sorted((s for s in spans if s.kind == LLM), key=lambda s: s.order)
    if not retrievers:
        return None, "no retriever span (nothing to be grounded in)"
    if not llms:
        return None, "no LLM span (no answer)"
    docs, seen = [], set()
    for s in sorted(retrievers, key=lambda s: s.order):
        for doc_id, text in s.documents:
            if isinstance(text, str) and text.strip() and text not in seen:
                seen.add(text)
                docs.append((doc_id, text))
    if not docs:
        return None, "the retriever spans hold no document text"
    llm = llms[-1]
    users = [t for role, t in llm.messages if role in ("user", "human") and isinstance(t, str) and t.strip()]
    if not users:
        return None, "the LLM span has no user message or input text (no question)"
    if not isinstance(llm.output, str) or not llm.output.strip():
        return None, "the LLM span has no output text (no answer)"
    ids = [str(d) if d is not None else None for d, _ in docs]
    if None in ids or len(set(ids)) != len(ids):
        ids = [str(i) for i in range(1, len(docs) + 1)]
    return {"id": f"trace-{trace_id}", "question": question(spans, users[-1], [t for _, t in docs]),
            "answer": llm.output, "contexts": [{"id": i, "text": t} for i, (_, t) in zip(ids, docs)],
            "tags": ["otel", llm.shape]}, None


def question(spans: list, prompt: str, passages: list[str]) -> str:
    """The trace's question: the first clean one of the trace's own input (Langfuse), the root span's input
    (the request the app received) and the LLM span's user message ``prompt``; a text that holds a passage
    (a prompt stuffed with the retrieved context) is never taken while a clean one exists.

    >>> from harness.cases.importers.otel_spans import Span
    >>> root = Span("t", "1", "CHAIN", 0, input="Who built it?")
    >>> question([root], "Context: Ford built it in 1908.\\nQuestion: Who built it?", ["Ford built it in 1908."])
    'Who built it?'
    """
    roots = [s for s in spans if s.parent is None]
    candidates = [s.trace_input for s in spans if s.trace_input]
    if len(roots) == 1 and roots[0].kind != LLM:
        candidates.append(roots[0].input)
    candidates.append(prompt)
    clean = [c for c in candidates if isinstance(c, str) and c.strip() and not _stuffed(c, passages)]
    return clean[0].strip() if clean else prompt


def _stuffed(text: str, passages: list[str]) -> bool:
    """Does ``text`` hold one of the passages (its first 60 characters, whitespace-normalised)?"""
    flat = " ".join(text.split())
    return any(" ".join(p.split())[:60] in flat for p in passages if p.strip())
