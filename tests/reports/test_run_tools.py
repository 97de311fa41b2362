"""``harness check`` (exit codes, JUnit XML), ``harness compare`` (paired differences, status changes,
movers; HTML and Markdown) and ``harness export`` (jsonl, parquet, and MLflow read back by MLflow)."""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import harness
from harness.console import main
from harness.store.frames import parsed

import pandas as pd
import pytest

from tests.conftest import CANONICAL


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run A: the canonical set; run B: the same cases with cookie-yield's unstated claim answered away
    (another system's answers), both with inhouse.span and deepeval.faithfulness."""
    out = tmp_path_factory.mktemp("runs")
    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8")]
    for r in rows:
        if r["id"] == "cookie-yield":     # drop the unstated last claim: B's system answered better
            last = r["annotation"]["claims"].pop()
            r["answer"] = r["answer"][: last["answer_span"][0]].rstrip()
        if r["id"] == "empty-answer":
            rows.remove(r)
    metrics = ["inhouse.span", "deepeval.faithfulness"]
    a = harness.evaluate(CANONICAL, metrics=metrics, out_dir=str(out), run_id="a", progress=False)
    b = harness.evaluate(rows, metrics=metrics, out_dir=str(out), run_id="b", progress=False)
    return str(out), a, b


def test_check_fails_below_threshold_by_exit_code(runs, tmp_path, capsys):
    out, a, _ = runs
    junit = tmp_path / "ci" / "harness.xml"
    rc = main(["check", "a", "--out", out, "--min", "inhouse.span=0.9", "--min", "deepeval.faithfulness=0.5",
               "--max-errors", "0", "--junit", str(junit)])
    text = capsys.readouterr().out
    assert rc == 1
    assert "FAIL  inhouse.span mean >= 0.9" in text and "PASS  deepeval.faithfulness mean >= 0.5" in text
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    failed = [tc.get("name") for tc in suite.iter("testcase") if tc.find("failure") is not None]
    assert failed == ["inhouse.span mean >= 0.9"]
    mean = a.cells[a.cells.metric == "inhouse.span"].query("status == 'scored'")["score"].mean()
    assert main(["check", a.run_dir, "--min", f"inhouse.span={mean:.6f}"]) == 1 - (round(mean, 6) <= mean)
    assert main(["check", a.run_dir, "--min", "inhouse.span=0.5", "--max-errors", "0"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["--min", "inhouse.span"], "expected METRIC=VALUE"),
    (["--min", "ragas.faithfulness=0.5"], "the run has no metric 'ragas.faithfulness'"),
    (["--min", "inhouse.span=high"], "is not a number"),
    ([], "nothing to check"),
])
def test_check_bad_input_exits_2(runs, capsys, argv, message):
    out, a, _ = runs
    assert main(["check", a.run_dir] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_compare_two_runs(runs, tmp_path, capsys):
    out, a, b = runs
    assert main(["compare", "a", "b", "--out", out, "--report-dir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "differs: cases: 1 shared case(s) differ in content (1 with another answer): cookie-yield" in text
    md = (tmp_path / "compare.md").read_text()
    page = (tmp_path / "compare.html").read_text()
    assert "cookie-yield: 0.75 \u2192 1.00" in md and "cookie-yield: 0.75 \u2192 1.00" in page
    assert "only in A: 1" in md   # empty-answer
    from harness.reports.analysis.compare import compare
    from harness.reports.analysis.data import load_run

    cmp = compare(load_run(a.run_dir), load_run(b.run_dir))
    span = next(d for d in cmp.metrics if d.metric == "inhouse.span")
    n = sum(a.cells[a.cells.metric == "inhouse.span"]["status"] == "scored")   # empty-answer is unscored in A
    assert span.n_pairs == n and span.diff == pytest.approx(0.25 / n)
    assert span.low <= span.diff <= span.high and span.movers == [("cookie-yield", 0.75, 1.0)]
    deepeval = next(d for d in cmp.metrics if d.metric == "deepeval.faithfulness")
    assert deepeval.diff == 0 and deepeval.movers == [] and not deepeval.significant


def test_compare_names_a_judge_change_and_status_changes(tmp_path, canonical):
    from harness.reports.analysis.compare import compare
    from harness.reports.analysis.data import load_run
    from harness.reports.model.compare_page import page
    from harness.reports.render.compare import markdown
    from harness.store.runstore import RunStore

    from tests.helpers.synthetic import synthetic_run

    synthetic_run(str(tmp_path / "x"), canonical, run_id="x")
    synthetic_run(str(tmp_path / "y"), canonical, run_id="y")
    s = RunStore.open(str(tmp_path / "y"), readonly=False)
    spec = s.spec()
    for m in spec["metrics"]:
        if m["name"] == "deepeval.faithfulness":
            m["version"] = "2"
    s.write_spec({**spec, "judge": {"kind": "http", "model": "m-2026", "url": "http://h/v1",
                                    "description": "m-2026 at http://h/v1"}})
    s.db.execute("UPDATE cells SET status='error', score=NULL WHERE case_id='cookie-yield' AND metric='inhouse.span'")
    s.close()
    cmp = compare(load_run(str(tmp_path / "x")), load_run(str(tmp_path / "y")))
    assert cmp.differences[0].startswith("judge: ") and "m-2026 at http://h/v1" in cmp.differences[0]
    assert "metric version: deepeval.faithfulness v1 -> v2" in cmp.differences
    assert next(d for d in cmp.metrics if d.metric == "deepeval.faithfulness").version_b == "2"
    assert [(c.case_id, c.metric, c.label_a, c.label_b) for c in cmp.changes] == [
        ("cookie-yield", "inhouse.span", "0.75", "ERROR")]
    assert "| cookie-yield | inhouse.span | 0.75 | ERROR |" in markdown(page(cmp)).replace("\\.", ".")


def test_export_jsonl_and_parquet(runs, tmp_path):
    out, a, _ = runs
    assert main(["export", "a", "--out", out, "--format", "jsonl", "--dest", str(tmp_path / "j")]) == 0
    cells = pd.read_json(tmp_path / "j" / "cells.jsonl", lines=True)
    assert len(cells) == len(a.cells) and set(cells.columns) >= {"case_id", "metric", "score", "status"}
    assert main(["export", "a", "--out", out, "--format", "parquet", "--dest", str(tmp_path / "p")]) == 0
    back = pd.read_parquet(tmp_path / "p" / "cells.parquet")
    assert isinstance(back["flags"][0], str)   # parquet keeps the store's JSON columns as JSON text
    pd.testing.assert_frame_equal(parsed("cells", back), a.cells)
    assert len(pd.read_parquet(tmp_path / "p" / "units.parquet")) == len(a.units)


def test_export_mlflow_read_back_by_mlflow(runs, tmp_path, monkeypatch, capsys):
    out, a, _ = runs
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    track = tmp_path / "mlruns"
    assert main(["export", "a", "--out", out, "--format", "mlflow", "--tracking-dir", str(track)]) == 0
    rid = capsys.readouterr().out.split("mlflow: run ")[1].split()[0]
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=track.as_uri())
    run = client.get_run(rid)
    assert run.info.status == "FINISHED" and run.info.run_name == "a"
    assert run.data.params["judge.kind"] == "reference" and run.data.params["run_id"] == "a"
    assert run.data.params["metric.inhouse.span.version"] == a.cells.metric_version.iloc[0]
    scored = a.cells[(a.cells.metric == "inhouse.span") & (a.cells.status == "scored")]["score"]
    assert run.data.metrics["inhouse.span.mean"] == pytest.approx(scored.mean())
    assert run.data.metrics["inhouse.span.scored"] == len(scored)
    arts = {f.path for f in client.list_artifacts(rid)} | {f.path for f in client.list_artifacts(rid, "report")}
    assert {"cells.csv", "report/index.html"} <= arts
    local = client.download_artifacts(rid, "cells.csv", str(tmp_path))
    assert len(pd.read_csv(local)) == len(a.cells)
    # per-row results as an MLflow table: one row per case and metric, with the claim verdicts
    assert json.loads(run.data.tags["mlflow.loggedArtifacts"]) == [{"path": "harness_results.json", "type": "table"}]
    rows = pd.read_json(client.download_artifacts(rid, "harness_results.json", str(tmp_path)), orient="split")
    assert len(rows) == len(a.cells) and {"inputs", "outputs", "context", "score", "status", "reason", "claims"} <= set(rows)
    cookie = rows[(rows.case_id == "cookie-yield") & (rows.metric == "inhouse.span")].iloc[0]
    assert cookie.score == 0.75 and len(cookie.claims) == 4 and {c["verdict"] for c in cookie.claims} >= {"supported"}
    assert "agreement.inhouse.span.kappa" in run.data.metrics    # the canonical cases carry human labels
    # MLflow's evaluation view: one trace per case, linked to the run, one assessment per metric
    import mlflow

    mlflow.set_tracking_uri(track.as_uri())
    traces = mlflow.search_traces(experiment_ids=[run.info.experiment_id], run_id=rid, return_type="list")
    assert len(traces) == len(a.case_ids)
    by_case = {t.data.spans[0].name: t for t in traces}
    cookie_t = by_case["cookie-yield"]
    feedback = {f.name: f for f in cookie_t.info.assessments}
    assert set(feedback) == set(a.metrics) and feedback["inhouse.span"].value == 0.75
    assert "supported" in feedback["inhouse.span"].rationale and "\n- " in feedback["inhouse.span"].rationale
    assert any(s.span_type == "RETRIEVER" for s in cookie_t.data.spans)
    # exporting the same run again maps to the same MLflow run and duplicates nothing
    assert main(["export", "a", "--out", out, "--format", "mlflow", "--tracking-dir", str(track)]) == 0
    again = capsys.readouterr().out
    assert f"mlflow: run {rid} (unchanged)" in again
    assert len(client.search_runs([run.info.experiment_id])) == 1
    assert len(mlflow.search_traces(experiment_ids=[run.info.experiment_id], run_id=rid, return_type="list")) == \
        len(a.case_ids)
    rows2 = pd.read_json(client.download_artifacts(rid, "harness_results.json", str(tmp_path / "2")), orient="split")
    assert len(rows2) == len(a.cells)


def test_export_mlflow_honours_the_users_tracking_uri(runs, tmp_path, monkeypatch, capsys):
    out, a, _ = runs
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "theirs").as_uri())
    monkeypatch.delenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", raising=False)
    assert main(["export", "a", "--out", out, "--format", "mlflow", "--tracking-dir", str(tmp_path / "ours")]) == 0
    assert (tmp_path / "theirs").is_dir() and not (tmp_path / "ours").exists()
    assert "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING" not in os.environ   # set for the traces only, then put back


def test_compare_two_judges(runs, tmp_path):
    """The reference judge against the realistic test judge, same cases and metrics: the page names the
    judge change and pairs every case both scored."""
    from harness.reports.analysis.compare import compare
    from harness.reports.analysis.data import load_run
    from harness.reports.model.compare_page import page
    from harness.reports.render.compare import write

    from tests.helpers.judges.realistic import MODEL, serve

    out, a, _ = runs
    with serve() as judge:
        b = harness.evaluate(CANONICAL, metrics=["inhouse.span"],
                             judge={"url": judge.url, "model": MODEL}, out_dir=str(tmp_path), run_id="realistic",
                             progress=False, report=False)
    cmp = compare(load_run(a.run_dir), load_run(b.run_dir))
    assert cmp.differences[0] == f"judge: reference (annotation-driven, offline) -> {MODEL} at {judge.url} (no key)"
    assert [d.metric for d in cmp.metrics] == ["inhouse.span"] and cmp.only_metrics_a == ["deepeval.faithfulness"]
    for d in cmp.metrics:
        scored_b = set(b.cells[(b.cells.metric == d.metric) & (b.cells.status == "scored")]["case_id"])
        scored_a = set(a.cells[(a.cells.metric == d.metric) & (a.cells.status == "scored")]["case_id"])
        assert d.n_pairs == len(scored_a & scored_b) > 0
        assert d.low <= d.diff <= d.high
    changed = {(c.case_id, c.metric) for c in cmp.changes}
    assert changed == {(r.case_id, r.metric) for r in b.cells.itertuples()
                       if r.status != a.cells.set_index(["case_id", "metric"]).loc[(r.case_id, r.metric), "status"]}
    html_path, md_path = write(page(cmp), str(tmp_path / "page"))
    assert "realistic" in open(md_path).read() and "<h2>Per metric</h2>" in open(html_path).read()
