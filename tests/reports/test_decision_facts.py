"""The decision table reads behaviour facts as data, found by what a case is tagged to probe (never by
its id): a renamed copy of the canonical cases gets the identical table; a copy without the tags falls
back to the facts files beside the cards; no agreement figure under the reference judge is called
agreement, and an interval at perfect agreement is not [1.00, 1.00]."""
from __future__ import annotations

import json

import pytest

from tests.conftest import CANONICAL


def _rows(rename=None, strip_tags=False):
    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8")]
    for r in rows:
        if rename:
            r["id"] = rename(r["id"])
        if strip_tags:
            r["tags"] = []
    return rows


def _report(rows, tmp_path, run_id):
    import harness
    from harness.reports.analysis.data import load_run
    from harness.reports.build import compute

    res = harness.evaluate(rows, out_dir=str(tmp_path), run_id=run_id, progress=False, report=False)
    return compute(load_run(res.run_dir))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("facts")
    original = _report(_rows(), tmp, "original")
    renamed = _report(_rows(lambda i: f"team-{len(i):02d}-{i[::-1]}"), tmp, "renamed")
    return original, renamed


def _table(rep):
    d = rep.decision
    return [(n.need, n.recommended, n.why, n.agreement, n.evidence) for n in d.needs], d.sources, d.agreement_title


def test_a_renamed_copy_gets_the_identical_decision_table(pair):
    original, renamed = pair
    assert set(original.data.case_ids).isdisjoint(renamed.data.case_ids)
    assert _table(original) == _table(renamed)
    assert "from this run's cells" in original.decision.sources and "facts files" not in original.decision.sources
    rows = {n.need: n.recommended for n in original.decision.needs}
    assert rows["answers that may abstain"], "the abstention row lost its facts"


def test_facts_come_from_the_run_by_behaviour(pair):
    from harness.reports.analysis.facts import from_card, from_run

    original, renamed = pair
    a, b = from_run(original.data, original.cells), from_run(renamed.data, renamed.cells)
    for m in a:
        assert {k: f.answer for k, f in a[m].items()} == {k: f.answer for k, f in b[m].items()}
        assert {k: f.answer for k, f in a[m].items()} == {k: f.answer for k, f in from_card(m).items()}, m


def test_untagged_cases_fall_back_to_the_facts_files(tmp_path):
    rep = _report(_rows(strip_tags=True)[:3], tmp_path, "untagged")
    assert "facts files" in rep.decision.sources
    # the facts files name the candidates; three labelled answers leave every interval reaching chance
    row = {n.need: n for n in rep.decision.needs}["answers that may abstain"]
    assert row.candidates and not row.recommended and row.held == "none: no candidate's agreement is clear of chance"


def test_reference_agreement_is_a_ceiling_with_honest_intervals(pair):
    original, _ = pair
    d = original.decision
    assert d.agreement_title.startswith("definition ceiling (reference judge)") and "target hallucinated" in d.agreement_title
    for n in d.needs:
        for part in filter(None, n.agreement.split("; ")):
            assert "[1.00, 1.00]" not in part and " n=" in part and "ungrounded" in part, part


def test_never_cheapest_below_another_candidates_interval(pair):
    """The issue's case: the similarity baseline is the cheapest strict metric, but its agreement lies below
    the others' intervals, so it is passed over for cost, and the row says so."""
    from harness.reports.analysis.decision import below, standings

    original, _ = pair
    agree = standings(original)
    row = next(n for n in original.decision.needs if n.need == "cheap monitoring of production traffic")
    assert row.recommended and row.recommended[0] != "baseline.similarity"
    assert below("baseline.similarity", list(agree), agree) and not below(row.recommended[0], list(agree), agree)
    assert "Not picked, whatever their cost" in row.why and "similarity" in row.why.split("Not picked")[1]
