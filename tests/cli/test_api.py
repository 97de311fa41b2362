"""``harness.evaluate``: from a script, inside a running event loop, from a case file, a list of dicts and
a DataFrame with Ragas' or DeepEval's column names; the result carries the run store's tables."""
from __future__ import annotations

import asyncio
import json
import math
import os

import harness
from harness.cases.columns import dialect, to_case_object

import pandas as pd
import pytest

from tests.conftest import CANONICAL

N_CASES = sum(1 for line in open(CANONICAL, encoding="utf-8") if line.strip())


def _canonical_rows(n=3):
    with open(CANONICAL, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh][:n]


def test_case_file_from_a_script(tmp_path):
    res = harness.evaluate(CANONICAL, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="api", progress=False)
    cells = res.cells
    assert {"case_id", "metric", "score", "status"} <= set(cells.columns)
    assert len(cells) == N_CASES and set(cells["metric"]) == {"inhouse.span"}
    cookie = cells.set_index("case_id").loc["cookie-yield"]
    assert cookie["status"] == "scored" and cookie["score"] == 0.75
    assert len(res.units) > 0 and len(res.calls) == int(cells["calls"].sum())
    assert res.run_id == "api" and os.path.isfile(res.report_path) and res.report_path.endswith("index.html")
    assert os.path.isfile(res.md_report_path)
    assert res.counts["inhouse.span"] == cells["status"].value_counts().to_dict()


def test_inside_a_running_event_loop(tmp_path):
    async def in_a_notebook():
        return harness.evaluate(CANONICAL, metrics="inhouse.span", out_dir=str(tmp_path), run_id="loop",
                                progress=False, report=False)

    res = asyncio.run(in_a_notebook())
    assert res.report_path is None
    assert res.cells.set_index("case_id").loc["cookie-yield", "score"] == 0.75


def _ragas_frame(rows):
    return pd.DataFrame([{"id": r["id"], "user_input": r["question"],
                          "retrieved_contexts": [c["text"] for c in r["contexts"]], "response": r["answer"],
                          "reference": r.get("reference_answer"), "annotation": r["annotation"]} for r in rows])


def test_dataframe_with_ragas_columns(tmp_path):
    rows = _canonical_rows()
    res = harness.evaluate(_ragas_frame(rows), metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="df",
                           progress=False, report=False)
    got = res.cells.set_index("case_id")["score"].to_dict()
    ref = harness.evaluate(CANONICAL, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="ref",
                           progress=False, report=False).cells.set_index("case_id")["score"].to_dict()
    assert list(got) == [r["id"] for r in rows]
    for cid, score in got.items():
        assert (math.isnan(score) and math.isnan(ref[cid])) or score == ref[cid], cid


def test_list_of_dicts_with_deepeval_columns(tmp_path):
    rows = _canonical_rows(2)
    dicts = [{"input": r["question"], "actual_output": r["answer"],
              "retrieval_context": [c["text"] for c in r["contexts"]], "annotation": r["annotation"]} for r in rows]
    res = harness.evaluate(dicts, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="dicts",
                           progress=False, report=False)
    assert list(res.cells["case_id"]) == ["case-1", "case-2"]
    assert res.cells.iloc[0]["score"] == 0.75   # cookie-yield, whatever its id


def test_column_mapping():
    assert dialect(["user_input", "response", "retrieved_contexts", "reference"]) == "ragas"
    obj = to_case_object({"input": "q", "actual_output": "a", "retrieval_context": ["x", "y"],
                          "expected_output": "r"}, 5)
    assert obj == {"id": "case-5", "question": "q", "contexts": [{"id": "1", "text": "x"}, {"id": "2", "text": "y"}],
                   "answer": "a", "reference_answer": "r"}


def test_bad_input_names_the_case_and_field(tmp_path):
    rows = _canonical_rows(1)
    rows[0]["annotation"]["claims"][0]["answer_span"] = [0, 3]
    with pytest.raises(ValueError, match=r"case 1 \(cookie-yield\), field annotation.claims\[0\].answer_span"):
        harness.evaluate(rows, metrics=["inhouse.span"], out_dir=str(tmp_path))
    with pytest.raises(ValueError, match="unknown metric 'inhouse.spam'"):
        harness.evaluate(CANONICAL, metrics=["inhouse.spam"], out_dir=str(tmp_path))
    with pytest.raises(ValueError, match="no metrics selected"):
        harness.evaluate(CANONICAL, metrics=[], out_dir=str(tmp_path))
    with pytest.raises(ValueError, match="judge must be a dict with 'url' and 'model'"):
        harness.evaluate(CANONICAL, metrics=["inhouse.span"], judge={"url": "http://x/v1"}, out_dir=str(tmp_path))
    with pytest.raises(TypeError, match="unknown option"):
        harness.evaluate(CANONICAL, metrics=["inhouse.span"], outdir=str(tmp_path))


def test_default_cases_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARNESS_OUT", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    res = harness.evaluate("datasets/canonical.jsonl", metrics=["inhouse.span"], progress=False, report=False)
    assert len(res.cells) == N_CASES and not os.path.exists(tmp_path / "reports")   # nothing in the working dir
    assert res.run_dir.startswith(str(tmp_path / "data" / "groundedness-harness" / "runs"))
    assert os.path.isfile(res.store_path)


def test_the_result_has_a_case_by_metric_table_and_parsed_json(tmp_path, capsys):
    res = harness.evaluate(CANONICAL, metrics=["inhouse.span", "baseline.similarity"], out_dir=str(tmp_path),
                           run_id="table", report=False)
    assert f"run table stored in {tmp_path / 'table'}" in capsys.readouterr().err
    t = res.scores
    assert list(t.columns) == ["inhouse.span", "baseline.similarity"] and len(t) == N_CASES
    assert t.loc["cookie-yield", "inhouse.span"] == 0.75
    assert math.isnan(t.loc["empty-answer", "inhouse.span"])   # unscored: not a number, never 0
    assert all(isinstance(f, list) for f in res.cells["flags"]) and isinstance(res.units["quotes"].iloc[0], list)


def test_the_api_refusal_names_the_api_argument(tmp_path):
    rows = [{"question": "Q?", "contexts": ["A passage."], "answer": "An answer."}]
    with pytest.raises(ValueError, match=r"pass judge=\{\"url\"") as e:
        harness.evaluate(rows, metrics=["inhouse.span"], out_dir=str(tmp_path))
    assert "--judge-url" not in str(e.value)


def test_unannotated_dataframe_with_a_served_judge(tmp_path):
    """Ragas-named rows without annotations: refused by the reference judge, scored by a judge at a URL
    (here the reference judge served over HTTP, which answers by case id from the canonical file)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    rows = _canonical_rows(2)
    frame = _ragas_frame(rows).drop(columns=["annotation"])
    with pytest.raises(ValueError, match="the reference judge answers from annotations"):
        harness.evaluate(frame, metrics=["inhouse.span"], out_dir=str(tmp_path))
    server = subprocess.Popen([sys.executable, "-m", "harness", "judge", "serve", "--port", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(server.stdout.readline())["url"]
        res = harness.evaluate(frame, metrics=["inhouse.span"], judge={"url": url, "model": "reference-judge"},
                               out_dir=str(tmp_path), run_id="served", progress=False, cache_mode="live")
    finally:
        server.terminate()
        server.wait(30)
    assert res.cells.set_index("case_id").loc["cookie-yield", "score"] == 0.75


def test_the_vendors_own_dataset_objects():
    """A Ragas EvaluationDataset and a DeepEval EvaluationDataset of LLMTestCases convert to the same cases."""
    from harness.api import case_set

    from deepeval.dataset import EvaluationDataset as DeepEvalDataset
    from deepeval.test_case import LLMTestCase
    from ragas.dataset_schema import EvaluationDataset, SingleTurnSample

    r = _canonical_rows(1)[0]
    texts = [c["text"] for c in r["contexts"]]
    ragas = EvaluationDataset(samples=[SingleTurnSample(user_input=r["question"], retrieved_contexts=texts,
                                                        response=r["answer"])])
    deepeval = DeepEvalDataset()
    deepeval.add_test_case(LLMTestCase(input=r["question"], actual_output=r["answer"], retrieval_context=texts))
    a, b = case_set(ragas).cases[0], case_set(deepeval).cases[0]
    assert a == b and a.id == "case-1" and a.answer == r["answer"] and [c.text for c in a.contexts] == texts
    assert a.annotation is None
