"""A team's labels reach the report of an unannotated run (issue 32.1 and 32.6): ``harness report RUN --labels L``
(a review's labels file, or annotated cases) shows agreement with those labels on the stored cells, says
where they came from and how many drawn answers are not labelled, and makes no judge call; the decision
table recommends nothing before labels exist (it gives the ``harness review`` command), and never a metric
whose agreement interval reaches chance, however cheap (here a similarity baseline that flags every answer).

The run is written straight into a store (cells from each definition applied to the canonical labels, the
similarity baseline flagging everything), with its cases stored unannotated under a model judge: no vendor
code runs, so the file stays fast.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os

from harness.cases.load import case_digest, case_to_json, load_cases

import pytest

from tests.conftest import CANONICAL

METRICS = ("inhouse.span", "deepeval.faithfulness_penalized", "baseline.similarity")
SAMPLE, LABELLED = 16, 13


def harness(*argv: str) -> tuple[int, str, str]:
    """``harness ARGV`` in this process: (exit code, stdout, stderr)."""
    from harness.console import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _write_run(run_dir: str) -> None:
    """An unannotated run under a model judge; similarity is the cheapest metric and calls every answer
    ungrounded (score 0)."""
    from harness.core.records import CellResult, Ledger
    from harness.store.runstore import RunStore

    from tests.helpers.synthetic import synthetic_cell

    cases = load_cases(CANONICAL)
    bare = [dataclasses.replace(c, annotation=None) for c in cases]
    store = RunStore.create(run_dir)
    try:
        store.write_spec({"run_id": "bare", "cases": {"path": "bare.jsonl", "n": len(bare)},
                          "metrics": [{"name": m, "version": "1", "vendor": m.split(".")[0], "display_name": m,
                                       "unit": "claim", "higher_is_better": True} for m in METRICS],
                          "judge": {"kind": "url", "url": "http://127.0.0.1:9/v1", "model": "team-judge"}})
        store.write_cases(bare)
        for case, b in zip(cases, bare):
            for k, m in enumerate(METRICS):
                res = CellResult.scored(0.0) if m == "baseline.similarity" else synthetic_cell(m, case)
                calls = 1 if m == "baseline.similarity" else 3 + k
                store.write_cell(b.id, m, "1", case_digest(b), res,
                                 Ledger(calls=calls, prompt_tokens=40 * calls, completion_tokens=5 * calls,
                                        latency_ms=1.0), [], 1.0)
    finally:
        store.close()


def _label(labels: str, ids: list[str], who: str = "alice") -> None:
    """Save the canonical annotation of each answer in ``ids`` as ``who``'s labels (as the app saves them)."""
    from harness.reports.review.store import LabelStore

    by = {c.id: c for c in load_cases(CANONICAL)}
    s = LabelStore(labels)
    try:
        for cid in ids:
            c = by[cid]
            s.save(who, cid, {"claims": [{"start": k.answer_span[0], "end": k.answer_span[1], "label": k.label,
                                          "evidence": [{"context_id": e.context_id, "start": e.start, "end": e.end,
                                                        "quote": c.evidence_text(e)} for e in k.evidence]}
                                         for k in c.judged_claims()],
                              "abstention": c.annotation.abstention, "answerable": c.annotation.answerable})
    finally:
        s.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("labels-flow")
    run = str(d / "bare")
    _write_run(run)
    labels = str(d / "team.sqlite")
    rc, out, err = harness("review", run, "--labels", labels, "--sample", str(SAMPLE), "--kappa")
    assert rc == 0, err
    from harness.reports.review.store import LabelStore

    s = LabelStore(labels)
    drawn = [p.case_id for p in s.picks()]
    s.close()
    _label(labels, drawn[:LABELLED])
    exported = str(d / "labelled.jsonl")
    rc, out, err = harness("review", "--labels", labels, "--export", exported)
    assert rc == 0 and f"wrote {LABELLED} labelled answers" in out, err
    return {"dir": d, "run": run, "labels": labels, "exported": exported, "drawn": drawn}


def _store_state(run: str) -> tuple[str, int]:
    """(digest of the store's cells, judge calls recorded): a report must change neither."""
    from harness.store.runstore import RunStore

    s = RunStore.open(os.path.join(run, "store.sqlite"))
    try:
        cells = s.rows("SELECT case_id, metric, status, score, calls FROM cells ORDER BY case_id, metric")
        return hashlib.sha256(json.dumps(cells).encode()).hexdigest(), s.rows("SELECT COUNT(*) FROM calls")[0][0]
    finally:
        s.close()


def test_before_labels_nothing_is_recommended_and_the_review_command_is_given(world, tmp_path):
    from harness.reports.build import build

    built = build(world["run"], str(tmp_path))
    rep = built.report
    assert not any(n.recommended for n in rep.decision.needs)
    cheap = next(n for n in rep.decision.needs if n.need == "cheap monitoring of production traffic")
    assert "baseline.similarity" in cheap.candidates and cheap.held == "none yet: no answer of this run is labelled"
    run = world["run"]
    assert (f"Label 24 answers first: harness review {run} --labels {run}/labels.sqlite --sample 24 "
            "--reviewer YOUR_NAME") in rep.decision.note
    assert f"then harness report {run} --labels {run}/labels.sqlite" in rep.decision.note
    md = open(built.md_path, encoding="utf-8").read()
    assert "none yet: no answer of this run is labelled" in md and "Label 24 answers first" in md
    rc, out, err = harness("report", run, "--report-dir", str(tmp_path / "t"))
    assert rc == 0 and "decision: No answer of this run is labelled" in out and "--sample 24" in out, err


def test_report_with_a_labels_file_shows_agreement_with_those_labels(world, tmp_path):
    before = _store_state(world["run"])
    rc, out, err = harness("report", world["run"], "--labels", world["labels"], "--report-dir", str(tmp_path))
    assert rc == 0, err
    assert _store_state(world["run"]) == before            # the stored cells reused: no judge call, no new cell
    unlabelled = SAMPLE - LABELLED
    assert (f"{LABELLED} labelled answers of {SAMPLE} drawn; {unlabelled} drawn but not labelled "
            f"({unlabelled} drawn, not labelled yet); labels taken from alice {LABELLED} (reviewers: alice); "
            f"gold labels {LABELLED} one reviewer; saved 20") in out
    md = open(os.path.join(tmp_path, "report.md"), encoding="utf-8").read()
    assert "No case of this run carries human labels" not in md
    assert "Estimates over the whole run from the labelled sample" in md and f"{LABELLED} labelled answers" in md
    assert f"Labels: {world['labels']}, {LABELLED} labelled answers of {SAMPLE} drawn. Each labelled answer" in md
    from harness.reports.analysis.data import load_run
    from harness.reports.review.team import apply, load

    data = load_run(world["run"])
    assert not any(c.annotation for c in data.cases.values())   # the run itself is unannotated
    data, _ = apply(data, load(world["labels"], data.cases, data.run_id))
    from harness.reports.analysis import agreement

    mine = {a.metric: a for a in agreement.compute(data)}
    # the same figures as a run whose cases had carried exactly those labels as annotations
    canon = {c.id: c for c in load_cases(CANONICAL)}
    same = dataclasses.replace(load_run(world["run"]), cases={
        cid: (canon[cid] if cid in world["drawn"][:LABELLED] else c) for cid, c in data.cases.items()})
    for a in agreement.compute(same):
        assert mine[a.metric].labelled == a.labelled == LABELLED
        assert mine[a.metric].answers["hallucinated"].point == a.answers["hallucinated"].point, a.metric
    f = mine["inhouse.span"].answers["hallucinated"]
    assert f.n == LABELLED - mine["inhouse.span"].excluded.get("unscored", 0) and f.point.balanced_accuracy > 0.8
    html = open(os.path.join(tmp_path, "index.html"), encoding="utf-8").read()
    assert "With the team&#x27;s labels" in html or "With the team's labels" in html   # on the cards, too
    assert f"on n={f.n} labelled answers" in html


def test_a_cheapest_metric_at_chance_is_not_recommended(world, tmp_path):
    from harness.reports.build import build

    rep = build(world["run"], str(tmp_path), labels=world["labels"]).report
    from harness.reports.analysis.decision import standings

    sim = standings(rep)["baseline.similarity"]
    assert sim.value == pytest.approx(0.5) and sim.at_chance          # flags every answer: chance
    cheap = next(n for n in rep.decision.needs if n.need == "cheap monitoring of production traffic")
    assert "baseline.similarity" in cheap.candidates and "baseline.similarity" not in cheap.recommended
    assert cheap.recommended, "a candidate clear of chance is there to recommend"
    best = cheap.recommended[0]
    assert not standings(rep)[best].at_chance
    # the recommendation names its figures: agreement with interval and n, then cost per answer
    s = standings(rep)[best]
    assert cheap.agreement.startswith(f"{rep.shorts[best]} {s.text()}, at ") and " judge calls and " in cheap.agreement
    assert "not recommended, agreement interval reaching chance" in cheap.why and "similarity 0.50" in cheap.why
    assert (f"Agreement on the team's labels: {world['labels']}, {LABELLED} labelled answers, {SAMPLE - LABELLED} "
            "drawn but not labelled (balanced accuracy weighted by each answer's inclusion probability") in rep.decision.note
    # the table rests on the design-weighted estimates (h-stats' estimator, through the standings hook)
    assert set(standings(rep)) == set(rep.estimates) and standings(rep)[best] == rep.estimates[best]
    for n in rep.decision.needs:
        assert all(not standings(rep)[m].at_chance for m in n.recommended), n


def test_annotated_cases_as_labels_and_the_cases_flag_that_used_to_hide_everything(world, tmp_path):
    from harness.reports.build import build

    a = build(world["run"], str(tmp_path / "a"), labels=world["exported"]).report
    assert a.labels.kind == "case file" and a.labels.labelled == LABELLED
    assert not getattr(a.data, "label_weights", None)   # a case file knows no inclusion probabilities
    b = build(world["run"], str(tmp_path / "b"), labels=world["labels"]).report
    fig = {x.metric: x.answers["hallucinated"].point for x in a.agreement}
    assert fig == {x.metric: x.answers["hallucinated"].point for x in b.agreement}
    # --cases with the exported file: read as labels, every case keeps its text
    rc, out, err = harness("report", world["run"], "--cases", world["exported"], "--report-dir", str(tmp_path / "c"))
    assert rc == 0, err
    assert "read as --labels" in err and f"{LABELLED} labelled answers of {LABELLED} drawn" in out
    md = open(tmp_path / "c" / "report.md", encoding="utf-8").read()
    assert "texts are not shown" not in md and "No case of this run carries human labels" not in md
    rc, out, err = harness("agree", world["run"], "--labels", world["exported"], "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["labels"]["kind"] == "case file" and doc["labels"]["labelled"] == LABELLED
    assert doc["metrics"]["baseline.similarity"]["balanced_accuracy"] == pytest.approx(0.5)


def _bad_cases(tmp_path, world, edit) -> str:
    rows = [json.loads(line) for line in open(world["exported"], encoding="utf-8")]
    edit(rows)
    path = str(tmp_path / "bad.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_bad_labels_are_one_line_exit_2_naming_file_line_field(world, tmp_path):
    def one_line(args, *needles):
        rc, out, err = harness(*args)
        assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, (rc, err)
        for n in needles:
            assert n in err, (n, err)

    run = world["run"]
    one_line(("report", run, "--labels", str(tmp_path / "nope.sqlite")), "nope.sqlite: no such file")

    def rename(rows):
        rows[2]["id"] = "not-in-the-run"
    bad = _bad_cases(tmp_path, world, rename)
    one_line(("report", run, "--labels", bad), f"{bad} line 3, field id: answer 'not-in-the-run' is not a case of run 'bare'")

    def retext(rows):
        rows[1]["answer"] = rows[1]["answer"] + " And more."
    bad = _bad_cases(tmp_path, world, retext)
    one_line(("agree", run, "--labels", bad), f"{bad} line 2, field answer")
    bad = str(tmp_path / "broken.jsonl")
    with open(bad, "w", encoding="utf-8") as fh:
        fh.write('{"id": 1}\nnot json\n')
    one_line(("report", run, "--labels", bad), f"{bad} line 1, field id", "more problem")
    store = os.path.join(run, "store.sqlite")
    before = hashlib.sha256(open(store, "rb").read()).hexdigest()
    one_line(("report", run, "--labels", store), "a SQLite file but not a labels file of harness review")
    assert hashlib.sha256(open(store, "rb").read()).hexdigest() == before   # a foreign file is never written


def test_harness_run_takes_labels_too(world, tmp_path):
    """``harness run ... --labels L`` (the in-house scorer under the reference judge: no vendor import): the
    report after the run agrees with L's labels only; bad labels stop the run before it starts."""
    cases = str(tmp_path / "cases.jsonl")
    with open(cases, "w", encoding="utf-8") as fh:
        for c in load_cases(CANONICAL):
            fh.write(json.dumps(case_to_json(c), ensure_ascii=False) + "\n")
    out_dir = str(tmp_path / "out")
    rc, out, err = harness("run", "--cases", cases, "--metrics", "inhouse.span", "--out", out_dir, "--run-id", "r",
                           "--no-progress", "--labels", world["exported"])
    assert rc == 0, err
    assert f"Labels: {world['exported']} (annotated case file): {LABELLED} labelled answers" in out
    assert f"the run's own annotations on {24 - LABELLED} other case(s) are not used" in out
    missing = str(tmp_path / "missing.jsonl")
    rc, out, err = harness("run", "--cases", cases, "--metrics", "inhouse.span", "--out", out_dir, "--run-id", "r2",
                           "--no-progress", "--labels", missing)
    assert rc == 2 and "missing.jsonl: no such file" in err and not os.path.exists(os.path.join(out_dir, "r2"))
