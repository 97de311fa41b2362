"""Both Ragas adapters over every canonical case, through a real gateway and the reference judge
(the golden tables are compared in tests/vendors/test_golden_tables.py): the recovered per-unit verdicts (they must reproduce the vendor's value), and
the judge calls each case costs according to the ledgers."""
from __future__ import annotations

import pytest

from tests.helpers.goldens import canonical_results

METRICS = ("ragas.faithfulness", "ragas.response_groundedness")


@pytest.fixture(scope="module")
def cases(canonical):
    return canonical


@pytest.fixture(scope="module")
def scored():
    return {m: canonical_results(m) for m in METRICS}


def test_cookie_inference_and_empty_answer(scored):
    f = scored["ragas.faithfulness"]
    assert f["cookie-yield"].result.score == 0.75
    assert f["product-age"].result.score == 1.0
    for metric in METRICS:
        empty = scored[metric]["empty-answer"]
        assert empty.result.status == "vendor_nan" and empty.ledger.calls == 0
        assert empty.result.reason.startswith("unscored by the vendor: ") and "response is missing" in empty.result.reason
        assert empty.result.flags == ("vendor_raised_on_empty_input",)


def test_faithfulness_units_reproduce_the_vendor_value(scored, cases):
    for case in cases:
        res = scored["ragas.faithfulness"][case.id].result
        if res.status != "scored":
            assert res.units == (), case.id
            continue
        supported = [u.verdict == "supported" for u in res.units]
        assert res.score == sum(supported) / len(supported), case.id
        assert [u.text for u in res.units] == res.detail["statements"], case.id
        for u in res.units:
            assert u.kind == "statement" and u.raw_verdict in ("0", "1") and u.reason
            assert (u.raw_verdict == "1") == (u.verdict == "supported")
            assert u.span == case.claim_for_text(u.text).answer_span, (case.id, u.text)


def test_faithfulness_no_statements_is_vendor_nan(scored):
    res = scored["ragas.faithfulness"]["abstain-answerable"]
    assert res.result.status == "vendor_nan" and res.result.flags == ("no_statements_nan",)
    assert "no statements" in res.result.reason and res.ledger.calls == 1


def test_response_groundedness_units_reproduce_the_vendor_value(scored, cases):
    for case in cases:
        res = scored["ragas.response_groundedness"][case.id].result
        if res.status != "scored":
            continue
        ratings = [int(u.raw_verdict) for u in res.units]
        assert [u.detail["judge"] for u in res.units] == ["judge1", "judge2"], case.id
        assert res.score == sum(r / 2.0 for r in ratings) / 2.0, case.id
        assert res.detail["ratings"] == {"judge1": ratings[0], "judge2": ratings[1]}, case.id
        for u in res.units:
            assert u.kind == "judge" and u.span == (0, len(case.answer)) and u.text == case.answer
            assert u.verdict == {0: "unsupported", 1: "ambiguous", 2: "supported"}[int(u.raw_verdict)]


@pytest.mark.parametrize("metric", METRICS)
def test_calls_per_case_from_the_ledger(metric, scored):
    for cid, s in scored[metric].items():
        res, ledger = s.result, s.ledger
        if "vendor_raised_on_empty_input" in res.flags:
            expected = 0
        elif metric == "ragas.faithfulness" and not res.detail.get("statements"):
            expected = 1
        else:
            expected = 2
        assert ledger.calls == expected, f"{metric} {cid}: {ledger.calls} calls, expected {expected}"
        assert ledger.errors == 0 and ledger.retries == 0 and len(s.calls) == ledger.calls
