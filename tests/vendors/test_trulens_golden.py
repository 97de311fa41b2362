"""The TruLens adapters over every canonical case, through the real gateway and the reference judge
(golden tables: tests/vendors/test_golden_tables.py): the judge traffic each metric's definition implies
(from the ledgers) and the per-sentence units."""
from __future__ import annotations

from harness.cases.load import load_cases

import pytest

from tests.conftest import CANONICAL
from tests.helpers.goldens import canonical_results

METRICS = ("trulens.groundedness", "trulens.groundedness_answerability", "trulens.citation")
CASES = list(load_cases(CANONICAL))
CASE_IDS = [c.id for c in CASES]


@pytest.fixture(scope="module")
def results():
    return {m: canonical_results(m) for m in METRICS}


def test_calls_per_case_follow_the_definition(results):
    """Ledgers: groundedness 1 + kept sentences; the answerability variant 1 + 2 x kept; citation 1
    where it applies, 0 elsewhere. No judge call fails."""
    for case_id in CASE_IDS:
        g = results["trulens.groundedness"][case_id]
        a = results["trulens.groundedness_answerability"][case_id]
        c = results["trulens.citation"][case_id]
        kept = sum(1 for u in g.result.units if u.detail.get("judged"))
        assert g.ledger.calls == 1 + kept, case_id
        assert a.ledger.calls == 1 + 2 * kept, case_id
        assert c.ledger.calls == (1 if c.result.status == "scored" else 0), case_id
        assert g.ledger.errors == a.ledger.errors == c.ledger.errors == 0, case_id


def test_abstention_where_the_context_answers(results):
    base = results["trulens.groundedness"]["abstain-answerable"].result
    variant = results["trulens.groundedness_answerability"]["abstain-answerable"].result
    assert base.score == 1.0 and "abstention_scored_grounded" in base.flags
    assert base.units[0].quotes == () and base.units[0].detail["abstention"]
    assert variant.score == 0.0 and variant.units[0].raw_verdict == "answerable_abstention"
    assert variant.units[0].verdict == "unsupported"


def test_misattributed_citation_keeps_groundedness_high(results):
    assert results["trulens.citation"]["citation-misattributed"].result.score == 0.0
    assert results["trulens.groundedness"]["citation-misattributed"].result.score == 1.0
    unit = results["trulens.citation"]["citation-misattributed"].result.units[0]
    assert unit.raw_verdict == "0/1" and "misattributed" in unit.reason


def test_units_carry_spans_verdicts_and_verbatim_quotes(results):
    res = results["trulens.groundedness"]["cookie-yield"].result
    case = next(c for c in CASES if c.id == "cookie-yield")
    assert [u.raw_verdict for u in res.units] == ["3/3", "3/3", "0/3"]
    assert [u.verdict for u in res.units] == ["supported", "supported", "unsupported"]
    for u in res.units:
        assert case.answer[u.span[0]:u.span[1]] == u.text
    quotes = [q for u in res.units for q in u.quotes]
    assert quotes and all(q.verbatim and q.context_id == "1" for q in quotes)
    assert all(case.context(q.context_id).text[q.start:q.end] == q.text for q in quotes)
    assert res.units[2].quotes == () and res.units[2].reason == "NOTHING FOUND"


def test_trivial_sentence_is_excluded_not_judged(results):
    res = results["trulens.groundedness"]["trivial-greeting"].result
    first = res.units[0]
    assert (first.text, first.verdict, first.raw_verdict) == ("Great question!", "excluded", "trivial")
    assert res.detail["sentences"] == 3 and res.detail["judged"] == 2 and res.detail["filter_parsed"]


def test_empty_answer_is_all_trivial_zero(results):
    for metric in ("trulens.groundedness", "trulens.groundedness_answerability"):
        s = results[metric]["empty-answer"]
        assert s.result.score == 0.0 and "all_trivial_scored_0" in s.result.flags
        assert s.ledger.calls == 1  # the filter is asked about an empty list
    assert results["trulens.citation"]["empty-answer"].result.status == "not_applicable"


def test_mixed_sentence_is_ambiguous(results):
    unit = results["trulens.groundedness"]["mixed-sentence"].result.units[0]
    assert (unit.raw_verdict, unit.verdict) == ("2/3", "ambiguous")
