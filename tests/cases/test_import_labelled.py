"""`harness import ragtruth|faithbench` on the project's own samples in each format (tests/data/,
written by tests/data/build_samples.py): what is kept, every drop by reason, offsets, label policy,
and the whole path: import -> run -> agree."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

DATA = os.path.join(ROOT, "tests", "data")
RT = [os.path.join(DATA, "ragtruth_response.jsonl"), os.path.join(DATA, "ragtruth_source_info.jsonl")]
FB = [os.path.join(DATA, "faithbench_batch_1.json")]


def _import(fmt, files, out):
    return subprocess.run([sys.executable, "-m", "harness", "import", fmt, *files, "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_samples_are_what_the_builder_writes(tmp_path):
    import shutil

    shutil.copy(os.path.join(DATA, "build_samples.py"), tmp_path)   # it writes the samples from nothing
    subprocess.run([sys.executable, str(tmp_path / "build_samples.py")], check=True, timeout=60)
    for f in ("ragtruth_response.jsonl", "ragtruth_source_info.jsonl", "faithbench_batch_1.json"):
        assert (tmp_path / f).read_bytes() == open(os.path.join(DATA, f), "rb").read(), f


def test_ragtruth_keeps_qa_good_rows_and_counts_every_drop():
    from harness.cases.importers.ragtruth import import_files

    r = import_files(RT)
    assert [c["id"] for c in r.cases] == [f"ragtruth-{n}" for n in range(1, 9)]
    assert dict(r.dropped) == {
        "quality incorrect_refusal (the authors keep only 'good')": 1,
        "quality truncated (the authors keep only 'good')": 1,
        "task Summary (QA only)": 1,
        "task Data2txt (QA only)": 1,
        "label offsets do not match their text": 1,
        "unknown label_type": 1,
        "no source_info row for its source_id": 1,
        "empty or missing response": 1,
        "duplicate id": 1,
        "line is not valid JSON": 1,
    }
    assert "line 18" in r.examples["line is not valid JSON"]
    assert "'41 weeks'" in r.examples["label offsets do not match their text"]
    assert r.notes == {"implicit_true spans kept as not_found (true, but not in the passages)": 1}


def test_ragtruth_passages_labels_and_offsets():
    from harness.cases.importers.ragtruth import import_files

    by_id = {c["id"]: c for c in import_files(RT).cases}
    c1 = by_id["ragtruth-1"]
    assert [x["text"] for x in c1["contexts"]] == ["Bake the cookies at 350 F for 8 to 10 minutes.",
                                                    "Let them cool on a wire rack."]
    assert c1["question"] == "how long should cookies bake"
    (sp,) = c1["annotation"]["spans"]
    assert c1["answer"][sp["start"]:sp["end"]] == "The recipe makes three dozen." and sp["label"] == "not_found"
    assert by_id["ragtruth-3"]["annotation"]["spans"][0]["label"] == "contradicted"    # Evident Conflict
    assert by_id["ragtruth-7"]["annotation"]["spans"][0]["label"] == "contradicted"    # Subtle Conflict
    assert by_id["ragtruth-2"]["annotation"]["spans"] == []
    assert "model:model-a" in c1["tags"] and "split:test" in c1["tags"]


def test_span_cases_give_sentence_claims_to_the_reference_judge(tmp_path):
    from harness.cases.importers.labelled import write
    from harness.cases.importers.ragtruth import import_files
    from harness.cases.load import load_cases

    path = tmp_path / "rt.jsonl"
    write(import_files(RT).cases, str(path))
    cases = load_cases(str(path))
    c1 = cases.by_id("ragtruth-1").judged_claims()
    assert [(c.text, c.label) for c in c1] == [("Cookies bake for 8 to 10 minutes at 350 F.", "supported"),
                                               ("The recipe makes three dozen.", "not_found")]
    assert c1[0].evidence and cases.by_id("ragtruth-1").evidence_text(c1[0].evidence[0]).startswith("Bake the cookies")
    clean = cases.by_id("ragtruth-2").judged_claims()       # no span at all: every sentence supported
    assert [c.label for c in clean] == ["supported", "supported"]


def test_faithbench_policy_and_drops():
    from harness.cases.importers.faithbench import QUESTION, import_files

    r = import_files(FB)
    assert [c["id"] for c in r.cases] == [f"faithbench-faithbench_batch_1-{n}" for n in (1, 2, 3, 4)]
    assert dict(r.dropped) == {"annotation offsets do not match their text": 1,
                               "sample without source or summary text": 1}
    assert r.notes == {"annotations ignored by the policy (Benign)": 1}
    c = {x["id"]: x for x in r.cases}
    first = c["faithbench-faithbench_batch_1-1"]
    assert first["question"] == QUESTION and len(first["contexts"]) == 1
    assert {s["label"] for s in first["annotation"]["spans"]} == {"contradicted"}    # Unwanted.Intrinsic
    assert len(first["annotation"]["spans"]) == 2                                    # two annotators, union
    second = c["faithbench-faithbench_batch_1-2"]["annotation"]["spans"]
    assert {s["label"] for s in second} == {"not_found"}                           # Extrinsic and Questionable
    assert len(second) == 1                                                          # the same span once
    assert c["faithbench-faithbench_batch_1-3"]["annotation"]["spans"] == []        # Benign only
    assert "annotators:2" in first["tags"]


def test_cli_summary_exit_codes_and_bad_files(tmp_path):
    r = _import("ragtruth", RT, tmp_path / "rt.jsonl")
    assert r.returncode == 0, r.stderr
    assert "kept 8 case(s); dropped 10 row(s):" in r.stdout and "task Summary (QA only)" in r.stdout
    assert (tmp_path / "rt.jsonl").read_text().count("\n") == 8
    r = _import("ragtruth", RT[:1], tmp_path / "x.jsonl")
    assert r.returncode == 2 and "two files" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = _import("faithbench", [str(bad)], tmp_path / "y.jsonl")
    assert r.returncode == 2 and "bad.json line 1" in r.stderr and not (tmp_path / "y.jsonl").exists()
    none = tmp_path / "none.json"
    none.write_text(json.dumps({"samples": [{"sample_id": 1, "source": "", "summary": "", "annotations": []}]}))
    r = _import("faithbench", [str(none)], tmp_path / "z.jsonl")
    assert r.returncode == 2 and "no faithbench row was kept" in r.stderr
    r = _import("ragas", [str(bad), str(bad)], tmp_path / "w.jsonl")
    assert r.returncode == 2 and "takes one file" in r.stderr


@pytest.mark.parametrize("fmt,files", [("ragtruth", RT), ("faithbench", FB)])
def test_import_run_agree_prints_kappa_with_intervals_for_every_metric(fmt, files, tmp_path):
    """The issue's done-criterion, end to end, with every registered metric and the reference judge."""
    from harness.metric import registry

    cases = tmp_path / "cases.jsonl"
    assert _import(fmt, files, cases).returncode == 0
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", str(cases), "--out", str(tmp_path),
                        "--run-id", "r", "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([sys.executable, "-m", "harness", "agree", "r", "--out", str(tmp_path), "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc["metrics"]) == set(registry.names())
    for name, m in doc["metrics"].items():
        if name == "trulens.citation":      # no [N] markers in these answers: every cell n/a, counted
            assert m["n"] == 0 and m["excluded"] == {"not_applicable": m["labelled"]}
            continue
        assert m["n"] == m["labelled"] > 0, name
        assert m["kappa"] is not None and len(m["kappa_ci"]) == 2 and m["kappa_ci"][0] is not None, name
    assert doc["metrics"]["inhouse.span"]["kappa"] == 1.0      # span labels read perfectly: the ceiling
    text = subprocess.run([sys.executable, "-m", "harness", "agree", "r", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300).stdout
    assert "kappa [95% CI]" in text and "each definition's ceiling" in text
