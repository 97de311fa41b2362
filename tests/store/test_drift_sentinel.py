"""The drift sentinel (issue 35.3) and the drift card's logic (35.4), offline, on real runs of the in-house
scorer (no vendor stack to import): every cell records its vendor's versions, its prompt-template hash
and the judge's fingerprint; ``harness compare`` names a changed vendor version and a changed prompt hash
and lists the cells that changed outcome with their causes; the drift card is made from two recorded runs.

Run B's changes are made where they happen in real use: the version the runner records for the metric's
vendor, the prompt file the scorer sends, the score it computes from the same verdicts."""
import dataclasses

from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

METRIC = "inhouse.span"


@pytest.fixture
def three(canonical):
    return CaseSet(canonical.path, canonical.cases[:3], canonical.sha256)


def _run(tmp_path, cases, run_id):
    return run(RunOptions(cases=cases, metrics=[METRIC], out_dir=str(tmp_path), run_id=run_id, progress=False,
                          workers=1))


def _facts(tmp_path, run_id):
    store = RunStore.open(str(tmp_path / run_id))
    try:
        return store.drift()
    finally:
        store.close()


def _compare(tmp_path, a, b):
    from harness.reports.analysis.compare import compare
    from harness.reports.analysis.data import load_run

    return compare(load_run(a, str(tmp_path)), load_run(b, str(tmp_path)))


def _upgrade(monkeypatch):
    """Run B's world: another vendor version recorded, another verify prompt sent, another score computed
    from the same verdicts (every claim's verdict as before, the score halved)."""
    import harness.run.cellwork as cellwork
    from harness.adapters.inhouse import ask, span

    monkeypatch.setattr(cellwork, "vendor_versions", lambda metric: "inhouse-vendor 2.0")
    original = ask.prompt
    monkeypatch.setattr(ask, "prompt", lambda name: original(name) + ("\nBe terse." if name == "verify" else ""))
    score = span.InhouseSpan.score

    async def halved(self, case, endpoint):
        r = await score(self, case, endpoint)
        return dataclasses.replace(r, score=r.score / 2) if r.status == "scored" and r.score else r

    monkeypatch.setattr(span.InhouseSpan, "score", halved)


def test_every_cell_records_vendor_prompt_and_judge(tmp_path, three):
    _run(tmp_path, three, "a")
    facts = _facts(tmp_path, "a")
    assert set(facts) == {(c.id, METRIC) for c in three}
    scored = [f for f in facts.values() if f["prompt_hash"]]
    assert scored and all(f["judge"] == "reference-judge@reference-v1" for f in scored)
    assert all(f["vendor"] == "" for f in facts.values())   # the in-house scorer names no vendor distribution
    # the case text is taken out: every case sent the same template at each step
    steps = {}
    for f in scored:
        for step, hashes in f["steps"].items():
            steps.setdefault(step, set()).update(hashes)
    assert set(steps) == {"InhouseClaims", "InhouseVerdicts"}
    assert all(len(h) == 1 for h in steps.values()), steps


def test_the_same_runs_name_nothing(tmp_path, three):
    from harness.reports.analysis.compare import AGREE

    _run(tmp_path, three, "a")
    _run(tmp_path, three, "b")
    cmp = _compare(tmp_path, "a", "b")
    assert cmp.differences == [AGREE]
    assert cmp.drift.recorded and cmp.drift.changes == []
    assert [(d.prompt_changed, d.outcome_changed) for d in cmp.drift.metrics] == [(0, 0)]


def test_compare_names_a_changed_vendor_version_and_prompt_hash(tmp_path, three, monkeypatch):
    _run(tmp_path, three, "a")
    with monkeypatch.context() as mp:
        _upgrade(mp)
        _run(tmp_path, three, "b")
    cmp = _compare(tmp_path, "a", "b")
    asked = [k for k, f in _facts(tmp_path, "a").items() if f["steps"].get("InhouseVerdicts")]
    assert f"vendor: {METRIC} ? -> inhouse-vendor 2.0" in cmp.differences
    assert (f"prompt templates: {METRIC}: {len(asked)} of 3 cell(s) sent other templates (steps: InhouseVerdicts)"
            in cmp.differences)
    changed = {c.case_id: c.causes for c in cmp.drift.changes}
    assert set(changed) == {c for c, _ in asked}
    for causes in changed.values():   # same verdicts from the judge, a halved score: the scoring rule moved
        assert causes == ("vendor version changed", "prompt changed (InhouseVerdicts)", "scoring rule changed")


def test_the_drift_card_from_two_recorded_runs(tmp_path, three, monkeypatch):
    from harness.reports.cards.drift import write_card

    _run(tmp_path, three, "a")
    with monkeypatch.context() as mp:
        _upgrade(mp)
        _run(tmp_path, three, "b")
    cmp = _compare(tmp_path, "a", "b")
    path = write_card(cmp, str(tmp_path / "cards" / "inhouse-1-2.md"))
    text = open(path, encoding="utf-8").read()
    assert text.startswith("# Drift card: not recorded \u2192 inhouse-vendor 2.0")
    for c in cmp.drift.changes:   # every changed case, with its outcomes and why
        assert f"| {c.case_id} | inhouse.span | {c.label_a} | {c.label_b} | vendor version changed; prompt changed" in text
    assert "scoring rule changed" in text
    same = _compare(tmp_path, "a", "a")
    write_card(same, str(tmp_path / "same.md"))
    assert "None: every cell ended with the same status and score" in open(tmp_path / "same.md", encoding="utf-8").read()


def test_a_store_without_the_sentinel_is_not_recorded(tmp_path, three):
    _run(tmp_path, three, "a")
    _run(tmp_path, three, "b")
    store = RunStore(str(tmp_path / "b" / RunStore.FILENAME))
    store.db.execute("DROP TABLE cell_drift")
    store.close()
    cmp = _compare(tmp_path, "a", "b")
    assert not cmp.drift.recorded
    from harness.reports.cards.drift import write_card

    with pytest.raises(ValueError, match="drift sentinel"):
        write_card(cmp, str(tmp_path / "x.md"))
