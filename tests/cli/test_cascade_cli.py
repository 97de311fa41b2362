"""``harness calibrate`` then ``harness run --cascade`` on the canonical set with the reference judge: the
cascade file, its card, the held-out report, the stage that decided each answer, the escalation file; and a
bad cascade file is one line and exit 2 before anything runs."""
from __future__ import annotations

import json
import os

from harness.console import main

import pytest

from tests.conftest import ROOT

CASES = os.path.join(ROOT, "datasets", "canonical.jsonl")
STAGES = "baseline.similarity,inhouse.span"


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A labelled run of both stages, calibrated (target 0.8, delta 0.3: the canonical set is 24 answers)."""
    out = tmp_path_factory.mktemp("cascade")
    runs = str(out / "runs")
    assert main(["run", "--cases", CASES, "--metrics", STAGES, "--out", runs, "--run-id", "labelled",
                 "--no-progress", "--no-report", "--workers", "1"]) == 0
    path = str(out / "cascade.json")
    return out, runs, path


def test_calibrate_writes_the_cascade_its_card_and_a_held_out_report(calibrated, capsys):
    out, runs, path = calibrated
    capsys.readouterr()
    assert main(["calibrate", "labelled", "--runs-out", runs, "--labels", CASES, "--stages", STAGES,
                 "--target", "0.8", "--delta", "0.3", "--holdout", "0.25", "--out", path]) == 0
    text = capsys.readouterr().out
    f = json.load(open(path))
    assert [s["metric"] for s in f["stages"]] == STAGES.split(",")
    assert (f["target"], f["delta"]) == (0.8, 0.3) and "fixed-sequence" in f["method"]
    assert "held out, n = 6 answers" in text and "to a person" in text and "cost against inhouse.span" in text
    card = open(path + ".md").read()
    assert "exchangeable" in card and "drawn like the data" in card and "at least 0.70" in card


def test_run_with_the_cascade_records_the_deciding_stage_and_escalates_the_rest(calibrated, capsys):
    from harness.cases.load import load_cases
    from harness.store.runstore import RunStore

    out, runs, path = calibrated
    # a hand-set cascade: the similarity check decides only what it is sure of, the in-house scorer what it can
    cascade = {"kind": "groundedness-harness cascade", "version": 1, "target": 0.8, "delta": 0.3, "method": "test",
               "stages": [{"metric": "baseline.similarity", "verdict_threshold": 1.0, "confidence": 1.0},
                          {"metric": "inhouse.span", "verdict_threshold": 1.0, "confidence": 0.6}]}
    hand = str(out / "hand.json")
    json.dump(cascade, open(hand, "w"))
    capsys.readouterr()
    rc = main(["run", "--cascade", hand, "--cases", CASES, "--out", runs, "--run-id", "new", "--no-progress",
               "--no-report", "--workers", "1"])
    assert rc in (0, 1)
    text = capsys.readouterr().out
    assert "cascade: target agreement 0.80" in text and "person:" in text
    store = RunStore.open(os.path.join(runs, "new", "store.sqlite"))
    try:
        route = store.meta("cascade")["route"]
        cells = {(c, m): s for c, m, s in store.rows("SELECT case_id, metric, score FROM cells")}
        stored = [r[0] for r in store.case_objects()]
    finally:
        store.close()
    ids = [c.id for c in load_cases(CASES)]
    assert sorted(route) == sorted(ids) and stored == ids         # every case routed, the run keeps them all
    first = {c for c, r in route.items() if r["stage"] == "baseline.similarity"}
    # confidence 1: a score at either end of the range, read as its verdict
    assert first and all(cells[(c, "baseline.similarity")] in (0.0, 1.0) for c in first)
    assert all((route[c]["verdict"] == "grounded") == (cells[(c, "baseline.similarity")] == 1.0) for c in first)
    # the in-house scorer ran only on what the similarity check handed on
    assert {c for (c, m) in cells if m == "inhouse.span"} == set(ids) - first
    people = [c for c, r in route.items() if r["stage"] == "person"]
    escalated = os.path.join(runs, "new", "escalated.jsonl")
    if people:
        assert [c.id for c in load_cases(escalated)] == [c for c in ids if c in people]   # a case file to review
    for c, r in route.items():
        if r["stage"] == "inhouse.span":
            assert (r["verdict"] == "grounded") == (cells[(c, "inhouse.span")] == 1.0)


BAD = {
    "not JSON": ("{", "not JSON"),
    "wrong kind": ({"kind": "other"}, "field kind"),
    "unknown metric": ({"kind": "groundedness-harness cascade", "version": 1, "target": 0.9, "delta": 0.1,
                        "stages": [{"metric": "nope.metric", "verdict_threshold": 1, "confidence": 0.5}]},
                       "stages[0].metric: unknown metric 'nope.metric'"),
    "confidence out of range": ({"kind": "groundedness-harness cascade", "version": 1, "target": 0.9, "delta": 0.1,
                                 "stages": [{"metric": "inhouse.span", "verdict_threshold": 1, "confidence": 2}]},
                                "stages[0].confidence: 2 is outside [0.0, 1.0]"),
    "target of 1": ({"kind": "groundedness-harness cascade", "version": 1, "target": 1, "delta": 0.1,
                     "stages": [{"metric": "inhouse.span", "verdict_threshold": 1, "confidence": 0.5}]},
                    "field target"),
    "no stages": ({"kind": "groundedness-harness cascade", "version": 1, "target": 0.9, "delta": 0.1,
                   "stages": []}, "field stages"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_cascade_file_is_one_line_and_exit_2(name, tmp_path, capsys):
    body, said = BAD[name]
    path = tmp_path / "c.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    rc = main(["run", "--cascade", str(path), "--cases", CASES, "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and str(path) in err and said in err, err
    assert not (tmp_path / "o").exists()                      # nothing ran, nothing written


def test_calibrate_bad_options_exit_2(tmp_path, capsys):
    assert main(["calibrate", "no-such-run", "--runs-out", str(tmp_path), "--labels", CASES, "--stages", STAGES,
                 "--out", str(tmp_path / "c.json")]) == 2
    assert main(["calibrate", "x", "--labels", CASES, "--stages", "inhouse.span@high", "--out", "c.json"]) == 2
    assert main(["calibrate", "x", "--labels", CASES, "--stages", STAGES, "--target", "1", "--out", "c.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "no run 'no-such-run'" in err[0] and "@ must be a number" in err[1] and "--target" in err[2]


def test_held_out_figures_add_up_from_the_stored_cells(calibrated):
    """Coverage, escalation and cost of the held-out replay are the stored cells' own figures."""
    from harness.cases.load import load_cases
    from harness.reports.analysis.cascade_calibration import calibrate_run, labels_of, parse_stages
    from harness.store.runstore import RunStore

    _, runs, _ = calibrated
    store = os.path.join(runs, "labelled", "store.sqlite")
    labels = labels_of(load_cases(CASES), "hallucinated")
    c = calibrate_run(store, labels, parse_stages(STAGES), 0.8, 0.3, holdout=0.5, seed=3)
    assert c.calibration + c.held_out == c.labelled == len(labels)
    assert c.decided + c.escalated == c.held_out
    s = RunStore.open(store)
    try:
        calls = {(cid, m): n for cid, m, n in s.rows("SELECT case_id, metric, calls FROM cells")}
    finally:
        s.close()
    # the strongest stage on every held-out answer: its cells' calls over exactly c.held_out answers
    per_answer = sorted(calls[(cid, "inhouse.span")] for cid in labels)
    assert sum(per_answer[:c.held_out]) <= c.strongest_calls <= sum(per_answer[-c.held_out:])
    for row, stage in zip(c.stages, c.cascade.stages):
        assert row.decided <= row.ran and row.agree <= row.decided
        assert stage.confidence is not None or row.ran == 0          # a stage that decides nothing is not run
    lo, hi = c.stages[0].interval if c.stages[0].decided else (0.0, 1.0)
    assert 0.0 <= lo <= hi <= 1.0


def test_a_cascade_that_certifies_no_stage_sends_every_case_to_a_person(tmp_path, capsys):
    from harness.cases.load import load_cases
    from harness.store.runstore import RunStore

    body = {"kind": "groundedness-harness cascade", "version": 1, "target": 0.99, "delta": 0.01, "method": "test",
            "stages": [{"metric": "inhouse.span", "verdict_threshold": 1.0, "confidence": None}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(body))
    out = tmp_path / "o"
    assert main(["run", "--cascade", str(path), "--cases", CASES, "--out", str(out), "--run-id", "r",
                 "--no-progress", "--no-report"]) == 0
    assert "person: 24 case(s)" in capsys.readouterr().out
    store = RunStore.open(str(out / "r" / "store.sqlite"))
    try:
        assert store.rows("SELECT COUNT(*) FROM cells")[0][0] == 0           # no judge call at all
        assert {r["stage"] for r in store.meta("cascade")["route"].values()} == {"person"}
    finally:
        store.close()
    assert len(load_cases(str(out / "r" / "escalated.jsonl"))) == 24
