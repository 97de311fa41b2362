"""Gold labels and reviewers' agreement with an adjudicator: the adjudicator is not a rater (the reviewers' kappa
is the same before and after adjudicating), a settled disagreement drops from the list, ``--kappa`` honours
``--reviewers``, the gold label is the adjudicated one where there is one and else the agreed one, and unresolved
disagreements are left out and counted. Then ``harness review --next`` adds a wave whose answers were not drawn
before, with their probabilities and the wave kept."""
from __future__ import annotations

import subprocess
import sys

from harness.cases.load import load_cases
from harness.reports.review.labelled import NOT_LABELLED, UNRESOLVED, collect
from harness.reports.review.store import LabelStore

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.synthetic import synthetic_run


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def state(case, flip: bool = False) -> dict:
    """The case's own annotation as the app saves it; ``flip``: every supported claim called not_found."""
    claims = []
    for k in case.judged_claims():
        if flip and k.label == "supported":
            claims.append({"start": k.answer_span[0], "end": k.answer_span[1], "label": "not_found", "evidence": []})
        else:
            claims.append({"start": k.answer_span[0], "end": k.answer_span[1], "label": k.label,
                           "evidence": [{"context_id": e.context_id, "start": e.start, "end": e.end,
                                         "quote": case.evidence_text(e)} for e in k.evidence]})
    return {"claims": claims, "abstention": case.annotation.abstention, "answerable": case.annotation.answerable}


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    """A run of the canonical cases, a sample of 16, alice and bob label 12 (bob differs on four answers with a
    supported claim), nobody labels the last 4."""
    d = tmp_path_factory.mktemp("adj")
    loaded = load_cases(CANONICAL)
    cases = {c.id: c for c in loaded}
    synthetic_run(str(d / "run"), loaded, run_id="adj")
    labels = str(d / "l.sqlite")
    r = harness("review", str(d / "run"), "--labels", labels, "--sample", "16", "--kappa")
    assert r.returncode == 0, r.stderr
    s = LabelStore(labels)
    flipped = []
    try:
        for p in s.picks()[:12]:
            c = cases[p.case_id]
            flip = len(flipped) < 4 and any(k.label == "supported" for k in c.judged_claims())
            flipped += [c.id] if flip else []
            s.save("alice", c.id, state(c))
            s.save("bob", c.id, state(c, flip))
    finally:
        s.close()
    return str(d / "run"), labels, cases, flipped


def _kappa(labels, *extra):
    r = harness("review", "--labels", labels, "--kappa", *extra)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_adjudicating_leaves_the_reviewers_kappa_and_settles_disagreements(review):
    run, labels, cases, flipped = review
    before = _kappa(labels)
    assert "reviewers: alice, bob;" in before and "disagreements to adjudicate: 4" in before
    s = LabelStore(labels)
    try:
        lab = collect(s)
        assert lab.left_out == {UNRESOLVED: 4, NOT_LABELLED: 4} and set(lab.gold.values()) == {"agreed"}
        for cid in flipped[:3]:                       # carol settles three of the four, siding with alice
            s.save("carol", cid, state(cases[cid]))
    finally:
        s.close()
    # carol saved labels but is not named yet: she counts as a third rater (the old behaviour, kept for a store
    # that names no adjudicator)
    assert "reviewers: alice, bob, carol" in _kappa(labels)
    after = _kappa(labels, "--adjudicator", "carol")
    line = [ln for ln in before.splitlines() if ln.startswith(("claims", "answers"))]
    assert line == [ln for ln in after.splitlines() if ln.startswith(("claims", "answers"))]
    assert "reviewers: alice, bob;" in after and "disagreements to adjudicate: 1 (settled by carol: 3 of 4)" in after
    assert "reviewers: alice, bob;" in _kappa(labels)   # the labels file now names carol: no flag needed
    s = LabelStore(labels)
    try:
        lab = collect(s)
        assert s.adjudicators() == ["carol"]
        assert lab.left_out == {UNRESOLVED: 1, NOT_LABELLED: 4}
        assert sorted(k for k, v in lab.gold.items() if v == "adjudicated") == sorted(flipped[:3])
        for cid in flipped[:3]:
            assert lab.chosen[cid] == "carol"
    finally:
        s.close()


def test_kappa_honours_reviewers(review):
    _, labels, _, _ = review
    out = _kappa(labels, "--reviewers", "alice")
    assert "reviewers: alice: inter-annotator kappa needs two reviewers" in out
    r = harness("review", "--labels", labels, "--kappa", "--reviewers", "alice,zed")
    assert r.returncode == 2 and "no labels by 'zed'" in r.stderr and r.stderr.count("\n") == 1


def test_agree_shows_the_estimates_the_ceiling_and_the_planner(review):
    run, labels, _, _ = review
    r = harness("agree", run, "--labels", labels)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for words in ("weighted by 1 / inclusion probability", "base rate", "raw agreement", "TPR", "FPR", "AC1", "MCC",
                  "ungrounded share of the run: raw", "(PPI++)", "(Rogan-Gladen)", "human ceiling: alice, bob",
                  "alternative-annotator test", "planner:", "drawn, not labelled yet"):
        assert words in out, words
    import json

    doc = json.loads(harness("agree", run, "--labels", labels, "--json").stdout)
    est = doc["estimates"]
    assert est["human"]["reviewers"] == ["alice", "bob"] and est["human"]["adjudicators"] == ["carol"]
    m = est["metrics"]["inhouse.span"]
    assert m["answers"]["n"] >= 10 and 0 <= m["rate"]["ppi_ci"][0] <= m["rate"]["ppi"] <= m["rate"]["ppi_ci"][1] <= 1
    for name, fig in est["metrics"].items():
        a = fig["answers"]
        if a["kappa"] is not None:
            assert -1 <= a["kappa_ci"][0] <= a["kappa"] <= a["kappa_ci"][1] <= 1, name


def test_next_wave_draws_new_answers_with_their_probabilities(review):
    run, labels, _, _ = review
    s = LabelStore(labels)
    before = [p.case_id for p in s.picks()]
    s.close()
    r = harness("review", run, "--labels", labels, "--next", "4")
    assert r.returncode == 0, r.stderr
    assert "drew 4 more of the 8 answers not yet drawn" in r.stdout
    s = LabelStore(labels)
    try:
        picks = s.picks()
        waves = s.meta()["waves"]
    finally:
        s.close()
    assert [p.case_id for p in picks[:16]] == before and not set(p.case_id for p in picks[16:]) & set(before)
    assert waves[0] == {"start": 0, "size": 16} and waves[1]["start"] == 16 and waves[1]["size"] == 4
    assert waves[1]["population"] == 8 and all(0 < p.probability <= 1 for p in picks[16:])
    r = harness("review", "--labels", labels, "--next", "2")
    assert r.returncode == 2 and "needs the run" in r.stderr


def test_the_report_shows_the_estimates_when_the_labels_come_from_a_review(review):
    from harness.reports.analysis.data import load_run
    from harness.reports.build import compute
    from harness.reports.render import markdown
    from harness.reports.review.agree import with_labels
    from harness.reports.review.estimates import gather

    run, labels, _, _ = review
    plain = markdown.render(compute(load_run(run)))
    assert "Estimates over the whole run" not in plain   # a fully annotated run: the agreement section covers it
    data, lab, weights = with_labels(load_run(run), labels)
    g = gather(data, labels, weights, resamples=200)
    data.label_weights, data.label_source, data.label_human, data.label_alt = weights, "team review", g.human, g.alt
    md = markdown.render(compute(data))
    block = md[md.index("## Estimates over the whole run"):]
    for words in ("Labels: team review", "corrected (PPI++)", "Rogan-Gladen", "fitted threshold (out of fold)",
                  "human ceiling: alice, bob", "planner:"):
        assert words in block, words


def test_saving_in_adjudication_mode_names_the_adjudicator(tmp_path, review):
    """Through the app's API: a third reviewer saving an answer alice and bob finished, from the adjudication
    view, becomes an adjudicator; bob mending his own labels from the same view stays a rater."""
    import asyncio
    import shutil

    from harness.reports.review.server import make_app

    from aiohttp.test_utils import TestClient, TestServer

    _, labels, cases, flipped = review
    copy = str(tmp_path / "l.sqlite")
    shutil.copy(labels, copy)
    store = LabelStore(copy)
    store.db.execute("DELETE FROM meta WHERE key = 'adjudicators'")
    pos = {p.case_id: i for i, p in enumerate(store.picks())}
    cid = flipped[3]

    async def go():
        async with TestClient(TestServer(make_app(store, "dave"))) as client:
            for who in ("bob", "dave"):
                r = await client.put(f"/api/answer/{pos[cid]}?adjudicate=1&reviewer={who}", json=state(cases[cid]),
                                     headers={"Host": "127.0.0.1"})
                assert r.status == 200, await r.text()

    try:
        asyncio.run(go())
        assert store.adjudicators() == ["dave"]
    finally:
        store.close()
