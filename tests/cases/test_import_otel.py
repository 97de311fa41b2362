"""`harness import otel`: production traces in each exporter's documented shape (tests/data/otel_spans/, written by
hand from each exporter's documented attribute names): OTLP JSON with OpenInference attributes, Phoenix span
records, an MLflow trace, a Langfuse observations page, Phoenix get_spans_dataframe rows (JSON records; parquet),
Langfuse SDK OTel spans (langfuse.observation.*), Langfuse traces with nested observations, OpenInference content
parts, a LangChain-callback retriever logged as a plain span, OpenLLMetry (gen_ai.prompt.N / gen_ai.completion.N,
traceloop.entity.*). Each keeps its good trace as a case and drops the rest with a reason, one line per trace."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

DATA = os.path.join(ROOT, "tests", "data", "otel_spans")
Q = "When was the Model T introduced?"
A = "Ford introduced the Model T in 1908."

D1 = "The Model T was introduced by Ford in 1908. It sold over 15 million units."
D2 = "Production of the Model T ended in 1927."

SHAPES = [
    # file, kept id, context ids, drop reasons, shape tag
    ("otlp.json", "trace-" + "a" * 32, ["doc-a", "doc-b"],
     {"a span of the trace ended in an error", "no retriever span (nothing to be grounded in)"}, "otlp"),
    ("phoenix.jsonl", "trace-p1", ["1", "2"], {"the retriever spans hold no document text"}, "phoenix"),
    ("mlflow.json", "trace-tr-123", ["kb/model-t.md", "kb/production.md"], set(), "mlflow"),
    ("langfuse.json", "trace-lf-1", ["1", "2"], {"the LLM span has no output text (no answer)"}, "langfuse"),
    # the shapes below put the passages into the LLM's user message: the question must come from the root
    ("phoenix_dataframe.json", "trace-0f1e2d3c4b5a69788796a5b4c3d2e1f0", ["kb-1", "kb-2"],
     {"no LLM span (no answer)"}, "phoenix-dataframe"),
    ("langfuse_otel.json", "trace-4bf92f3577b34da6a3ce929d0e0e4736", ["kb-1", "kb-2"],
     {"a span of the trace ended in an error"}, "langfuse-otel"),
    ("langfuse_traces.jsonl", "trace-lf-trace-1", ["1", "2"],
     {"no retriever span (nothing to be grounded in)"}, "langfuse-trace"),
    ("openinference_parts.json", "trace-7a1b2c3d4e5f60718293a4b5c6d7e8f9", ["kb-1", "kb-2"],
     {"the LLM span has no user message or input text (no question)"}, "otlp"),
    ("langchain_callback.json", "trace-lc-trace-1", ["kb/model-t.md", "kb/production.md"],
     {"no retriever span (nothing to be grounded in)"}, "langfuse"),
    ("openllmetry.json", "trace-9c1b2c3d4e5f60718293a4b5c6d7e8f9", ["kb/model-t.md", "kb/production.md"],
     {"the LLM span has no output text (no answer)"}, "openllmetry"),
]


@pytest.mark.parametrize("name,case_id,context_ids,drops,shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_exporter_shape(name, case_id, context_ids, drops, shape):
    from harness.cases.importers.otel import import_files

    path = os.path.join(DATA, name)
    r = import_files([path])
    assert [c["id"] for c in r.cases] == [case_id]
    case = r.cases[0]
    assert case["question"] == Q and case["answer"] == A   # never the prompt stuffed with the passages
    assert [c["id"] for c in case["contexts"]] == context_ids
    assert [c["text"] for c in case["contexts"]] == [D1, D2]   # the retriever's documents, in retrieval order
    assert set(r.dropped) == drops and all(n == 1 for n in r.dropped.values())
    assert case["tags"] == ["otel", shape]
    # one line per dropped trace, naming the file, the trace and why
    assert len(r.each) == sum(r.dropped.values())
    assert all(line.startswith(f"{path} trace ") and line.split(": ", 1)[1] in drops for line in r.each)
    assert [line for line in r.summary() if line.startswith("  dropped ")] == [f"  dropped {x}" for x in r.each]


def test_a_phoenix_dataframe_dumped_as_parquet(tmp_path):
    """get_spans_dataframe() saved with df.to_parquet (its context.span_id index kept or not) reads like its JSON."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from harness.cases.importers.otel import import_files

    with open(os.path.join(DATA, "phoenix_dataframe.json")) as fh:
        rows = json.load(fh)
    for drop in (False, True):
        path = tmp_path / f"spans-{drop}.parquet"
        pd.DataFrame(rows).set_index("context.span_id", drop=drop).to_parquet(path)
        r = import_files([str(path)])
        assert [(c["question"], [x["text"] for x in c["contexts"]], c["answer"]) for c in r.cases] == [(Q, [D1, D2], A)]
        assert set(r.dropped) == {"no LLM span (no answer)"}


def test_genai_semconv_json_messages(tmp_path):
    """OpenTelemetry GenAI conventions' gen_ai.input.messages / gen_ai.output.messages (JSON, text parts) read
    like OpenLLMetry's indexed gen_ai.prompt.N / gen_ai.completion.N."""
    from harness.cases.importers.otel import import_files

    def kv(k, v):
        return {"key": k, "value": {"stringValue": v}}

    msgs_in = [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
               {"role": "user", "parts": [{"type": "text", "content": f"Context: {D1}"},
                                          {"type": "text", "content": Q}]}]
    msgs_out = [{"role": "assistant", "parts": [{"type": "text", "content": A}], "finish_reason": "stop"}]
    spans = [{"traceId": "t1", "spanId": "s1", "name": "answer", "attributes": [
                 kv("traceloop.span.kind", "workflow"), kv("traceloop.entity.input", json.dumps({"args": [Q]}))]},
             {"traceId": "t1", "spanId": "s2", "parentSpanId": "s1", "name": "retrieve", "attributes": [
                 kv("traceloop.span.kind", "task"), kv("traceloop.entity.output", json.dumps(
                     [{"page_content": D1, "metadata": {}}, {"page_content": D2, "metadata": {}}]))]},
             {"traceId": "t1", "spanId": "s3", "parentSpanId": "s1", "name": "chat gpt-4o", "attributes": [
                 kv("gen_ai.operation.name", "chat"), kv("gen_ai.input.messages", json.dumps(msgs_in)),
                 kv("gen_ai.output.messages", json.dumps(msgs_out))]}]
    path = tmp_path / "genai.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    r = import_files([str(path)])
    assert [(c["question"], [x["text"] for x in c["contexts"]], c["answer"]) for c in r.cases] == [(Q, [D1, D2], A)]


def test_the_question_is_the_cleanest_input_and_a_stuffed_prompt_only_the_last_resort():
    from harness.cases.importers.otel import trace_case
    from harness.cases.importers.otel_spans import LLM, RETRIEVER, Span

    stuffed = f"Context:\n{D1}\n\nQuestion: {Q}"
    docs = (("a", D1),)
    retriever = Span("t", "r", RETRIEVER, 1, documents=docs, parent="root")

    def ask(root_input, prompt, trace_input=None, root_parent=None):
        spans = [Span("t", "root", "CHAIN", 0, input=root_input, parent=root_parent, trace_input=trace_input),
                 retriever, Span("t", "l", LLM, 2, messages=(("user", prompt),), output=A, parent="root")]
        case, why = trace_case("t", spans)
        assert why is None
        return case["question"]

    assert ask(Q, stuffed) == Q                              # the root's clean input over the stuffed prompt
    assert ask(f"{D1} {Q}", stuffed) == stuffed              # every candidate stuffed: the LLM's own message
    assert ask(f"{D1} {Q}", "Why 1908?") == "Why 1908?"      # a stuffed root loses to a clean prompt
    assert ask("Root?", stuffed, trace_input="Trace?") == "Trace?"   # the trace's own input comes first
    assert ask("Root?", "Prompt?") == "Root?"                # the root span holds the request the app received
    assert ask("Orphan?", "Prompt?", root_parent="gone") == "Prompt?"   # no root in the file: the prompt


def test_sample_is_seeded_and_kept_in_file_order(tmp_path):
    from harness.cases.importers.otel import import_files

    spans = []
    for i in range(12):
        spans.append({"traceId": f"t{i:02d}", "type": "RETRIEVER", "id": f"r{i}", "output": [f"Fact number {i}."]})
        spans.append({"traceId": f"t{i:02d}", "type": "GENERATION", "id": f"g{i}",
                      "input": [{"role": "user", "content": f"Question {i}?"}], "output": f"Fact number {i}."})
    path = tmp_path / "lf.json"
    path.write_text(json.dumps({"data": spans}))
    one, same, other = (import_files([str(path)], sample=4, seed=s) for s in (7, 7, 8))
    ids = [c["id"] for c in one.cases]
    assert len(ids) == 4 and ids == [c["id"] for c in same.cases] and ids != [c["id"] for c in other.cases]
    assert ids == sorted(ids)
    assert sum(one.notes.values()) == 8
    assert len(import_files([str(path)], sample=50).cases) == 12


def test_cli_writes_loadable_cases_and_refuses_a_file_of_another_kind(tmp_path):
    out = tmp_path / "cases.jsonl"
    r = subprocess.run([sys.executable, "-m", "harness", "import", "otel", os.path.join(DATA, "otlp.json"),
                        os.path.join(DATA, "mlflow.json"), "--sample", "1", "--seed", "3", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "kept 1 case(s); dropped 2 row(s)" in r.stdout and "--sample 1" in r.stdout
    assert f"dropped {os.path.join(DATA, 'otlp.json')} trace {'c' * 32}: a span of the trace ended in an error" \
        in r.stdout   # every dropped trace on its own line
    from harness.cases.load import load_cases

    assert len(load_cases(str(out))) == 1
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"rows": []}))
    r = subprocess.run([sys.executable, "-m", "harness", "import", "otel", str(bad), "--out", str(tmp_path / "y")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a span export" in r.stderr
    assert not (tmp_path / "y").exists()
