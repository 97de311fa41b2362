"""`harness import otel`: production traces in each exporter's documented shape (tests/otel_spans/, written by
hand from each exporter's documented format): OTLP JSON with OpenInference attributes, Phoenix span records, an
MLflow trace and a Langfuse observations page. Each keeps its good trace as a case and drops the rest with a reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

DATA = os.path.join(ROOT, "tests", "otel_spans")
Q = "When was the Model T introduced?"
A = "Ford introduced the Model T in 1908."

SHAPES = [
    # file, kept id, context ids, drop reasons
    ("otlp.json", "trace-" + "a" * 32, ["doc-a", "doc-b"],
     {"a span of the trace ended in an error", "no retriever span (nothing to be grounded in)"}),
    ("phoenix.jsonl", "trace-p1", ["1", "2"], {"the retriever spans hold no document text"}),
    ("mlflow.json", "trace-tr-123", ["kb/model-t.md", "kb/production.md"], set()),
    ("langfuse.json", "trace-lf-1", ["1", "2"], {"the LLM span has no output text (no answer)"}),
]


@pytest.mark.parametrize("name,case_id,context_ids,drops", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_exporter_shape(name, case_id, context_ids, drops):
    from harness.cases.importers.otel import import_files

    r = import_files([os.path.join(DATA, name)])
    assert [c["id"] for c in r.cases] == [case_id]
    case = r.cases[0]
    assert case["question"] == Q and case["answer"] == A   # the LLM span's last user message and its output
    assert [c["id"] for c in case["contexts"]] == context_ids
    assert case["contexts"][0]["text"].startswith("The Model T was introduced by Ford in 1908.")
    assert set(r.dropped) == drops and all(n == 1 for n in r.dropped.values())
    assert "otel" in case["tags"]


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
    from harness.cases.load import load_cases

    assert len(load_cases(str(out))) == 1
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"rows": []}))
    r = subprocess.run([sys.executable, "-m", "harness", "import", "otel", str(bad), "--out", str(tmp_path / "y")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a span export" in r.stderr
    assert not (tmp_path / "y").exists()
