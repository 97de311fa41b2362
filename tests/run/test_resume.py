"""A rerun with the same run id keeps finished cells and recomputes the rest."""
from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.helpers.upstreams import FailFor


def _cells(store_path):
    s = RunStore.open(store_path)
    try:
        return {(r[0], r[1]): r for r in s.rows("SELECT case_id, metric, status, score, finished, attempt FROM cells")}
    finally:
        s.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_keeps_finished_and_recomputes_errors(canonical, tmp_path, workers):
    cases = CaseSet(canonical.path, canonical.cases[:6], canonical.sha256)
    broken = {cases.cases[1].id, cases.cases[4].id}
    opts = RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r1", progress=False,
                      upstream_wrapper=FailFor(broken), workers=workers)
    first = run(opts)
    before = _cells(first.store_path)
    assert first.computed == 6 and first.reused == 0
    assert {k[0] for k, v in before.items() if v[2] == "error"} == broken
    err = before[(cases.cases[1].id, "inhouse.span")]
    assert err[3] is None   # an errored cell is never scored 0

    second = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r1", progress=False,
                            workers=workers))
    after = _cells(second.store_path)
    assert second.computed == 2 and second.reused == 4
    for key, row in before.items():
        if row[2] != "error":
            assert after[key] == row, key            # untouched: same finish time, same attempt
        else:
            assert after[key][2] == "scored" and after[key][5] == 2
    third = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r1", progress=False))
    assert third.computed == 0 and _cells(third.store_path) == after


def test_resume_recomputes_a_case_whose_annotation_changed(canonical, tmp_path):
    import dataclasses

    cases = CaseSet(canonical.path, canonical.cases[:3], canonical.sha256)
    run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False))
    edited = dataclasses.replace(cases.cases[0], question=cases.cases[0].question + " (edited)")
    changed = CaseSet(cases.path, (edited,) + cases.cases[1:], "other")
    out = run(RunOptions(cases=changed, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False))
    assert (out.computed, out.reused) == (1, 2)


def test_resume_refuses_another_judge(canonical, tmp_path):
    from harness.run.runner import JudgeConfig

    cases = CaseSet(canonical.path, canonical.cases[:1], canonical.sha256)
    run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False))
    with pytest.raises(ValueError, match="exists with another judge"):
        run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False,
                       judge=JudgeConfig(url="http://127.0.0.1:9/v1", model="x")))


def test_store_is_pandas_readable_with_spec(canonical, tmp_path):
    cases = CaseSet(canonical.path, canonical.cases[:2], canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False))
    s = RunStore.open(out.run_dir)
    try:
        cells, units, calls = s.cells(), s.units(), s.calls()
        spec = s.spec()
    finally:
        s.close()
    assert len(cells) == 2 and set(cells["status"]) == {"scored"}
    assert len(units) == sum(len(c.annotation.claims) for c in cases)
    assert len(calls) == cells["calls"].sum() == 4
    # the engine's packages and the run's metrics' own (inhouse.span names none): no vendor it did not use
    assert spec["judge"]["kind"] == "reference" and spec["packages"]["groundedness-harness"]
    assert "ragas" not in spec["packages"] and spec["metrics"][0]["packages"] == []
    assert spec["cases"]["sha256"] == cases.sha256 and spec["metrics"][0]["name"] == "inhouse.span"


def test_store_keeps_the_cases_so_reports_need_no_case_file(canonical, tmp_path):
    from harness.cases.load import parse_case

    cases = CaseSet(canonical.path, canonical.cases[:4], canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False))
    s = RunStore.open(out.run_dir)
    try:
        stored = s.case_objects()
    finally:
        s.close()
    assert [cid for cid, _, _ in stored] == [c.id for c in cases]
    for (cid, _, obj), case in zip(stored, cases):
        assert parse_case(obj, "x") == case.__class__(**{**case.__dict__, "source": "x"})


def test_report_data_survives_a_deleted_case_file(canonical, tmp_path):
    import json as _json

    from harness.cases.load import case_to_json, load_cases
    from harness.reports.analysis.data import load_run

    path = tmp_path / "few.jsonl"
    path.write_text("".join(_json.dumps(case_to_json(c)) + "\n" for c in canonical.cases[:3]))
    cases = load_cases(str(path))
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r", progress=False))
    path.unlink()
    data = load_run(out.run_dir)
    assert sorted(data.cases) == sorted(c.id for c in cases)
    assert data.cases[cases.cases[0].id].answer == cases.cases[0].answer


def test_the_spec_records_injected_faults(canonical, tmp_path):
    from harness.judge.faults import FaultInjector, FaultSpec

    cases = CaseSet(canonical.path, canonical.cases[:1], canonical.sha256)
    inj = FaultInjector(FaultSpec.parse("500=0.1"), 7)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="f", progress=False,
                         upstream_wrapper=inj))
    s = RunStore.open(out.run_dir)
    try:
        assert s.spec()["faults"] == {"spec": "500=0.1", "seed": 7}
    finally:
        s.close()
    clean = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="g", progress=False))
    s = RunStore.open(clean.run_dir)
    try:
        assert s.spec()["faults"] is None
    finally:
        s.close()


def test_client_timeout_covers_every_attempt_and_wait():
    from harness.judge.upstream import RetryPolicy
    from harness.run.runner import client_timeout

    opts = RunOptions(cases=None, metrics=[], retry_attempts=4, call_timeout_s=120)
    assert client_timeout(opts) == 4 * 120 + 3 * RetryPolicy().max_delay_s + 30
