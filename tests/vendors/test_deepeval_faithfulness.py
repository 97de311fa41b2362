"""deepeval.faithfulness and deepeval.faithfulness_penalized on every canonical case, through the
real gateway and the reference judge (the golden tables are compared in tests/vendors/test_golden_tables.py)."""
from __future__ import annotations

import pytest

from tests.helpers.contracts.deepeval_case import CASE, RecordingUpstream, step_of_body
from tests.helpers.goldens import canonical_results
from tests.helpers.scoring import score_cases, score_one

METRICS = ("deepeval.faithfulness", "deepeval.faithfulness_penalized")


@pytest.fixture(scope="module")
def results():
    return {m: canonical_results(m) for m in METRICS}


def test_cookie_case_lenient_vs_penalized(results, canonical):
    case = canonical.by_id("cookie-yield")
    lenient = results["deepeval.faithfulness"]["cookie-yield"].result
    strict = results["deepeval.faithfulness_penalized"]["cookie-yield"].result
    assert (lenient.score, strict.score) == (1.0, 0.75)
    assert [u.raw_verdict for u in lenient.units] == ["yes", "yes", "yes", "borderline"]
    assert [u.verdict for u in lenient.units] == ["supported"] * 3 + ["ambiguous"]
    assert [u.verdict for u in strict.units] == ["supported"] * 3 + ["unsupported"]
    for res in (lenient, strict):
        assert [u.text for u in res.units] == [c.text for c in case.annotation.claims]
        assert [u.span for u in res.units] == [c.answer_span for c in case.annotation.claims]
        assert [u.kind for u in res.units] == ["claim"] * 4
        assert res.units[0].reason is None and "does not mention" in res.units[3].reason
    # DeepEval's reason: the borderline claim is a contradiction only when penalized
    assert lenient.reason.startswith("The score is 1.00 because") and "(Ambiguous)" not in lenient.reason
    assert strict.reason.startswith("The score is 0.75 because") and "(Ambiguous)" in strict.reason


def test_truths_are_the_context_sentences(results, canonical):
    res = results["deepeval.faithfulness"]["refund-invented"].result
    case = canonical.by_id("refund-invented")
    truths = res.detail["truths"]
    assert len(truths) >= len(case.contexts)
    assert all(any(t in ctx for ctx in case.context_texts) for t in truths)
    assert res.detail["claims"] == [u.text for u in res.units]


def test_contradicted_claim_is_unsupported_with_the_context_quoted(results):
    for metric in METRICS:
        unit = results[metric]["leave-40-weeks"].result.units[0]
        assert (unit.raw_verdict, unit.verdict) == ("no", "unsupported")
        assert "39 weeks" in unit.reason


def test_no_claims_scores_1_flagged_and_skips_the_verdict_call(results):
    for metric in METRICS:
        for cid in ("abstain-answerable", "abstain-unanswerable"):
            s = results[metric][cid]
            assert (s.result.status, s.result.score, s.result.units) == ("scored", 1.0, ())
            assert s.result.flags == ("no_claims_scored_1",)
            starts = ("Based on the given text, please extract", "Based on the given text, please generate",
                      "Below is a list of Contradictions.")   # the plain-text protocol: steps by prompt start
            assert sorted(next(p for p in starts if c.step.startswith(p)) for c in s.calls) == sorted(starts)


def test_empty_answer_is_rejected_by_the_vendor_before_any_call(results):
    for metric in METRICS:
        s = results[metric]["empty-answer"]
        assert s.result.status == "vendor_nan" and "cannot be empty" in s.result.reason
        assert s.result.flags == ("empty_answer_rejected",)
        assert s.ledger.calls == 0


def test_four_calls_per_case_with_claims(results, canonical):
    for metric in METRICS:
        for case in canonical:
            s = results[metric][case.id]
            want = 0 if not case.answer else (4 if case.annotation.claims else 3)
            assert s.ledger.calls == want, (metric, case.id)
            assert s.ledger.errors == 0 and s.ledger.retries == 0, (metric, case.id)


def test_token_usage_reaches_deepeval(results):
    """Shim ``calculate_cost``: without it an unpriced judge leaves DeepEval's token counts None."""
    for metric in METRICS:
        s = results[metric]["cookie-yield"]
        assert s.result.detail["deepeval_tokens"] == {"input": s.ledger.prompt_tokens,
                                                     "output": s.ledger.completion_tokens}
        assert s.result.detail["evaluation_cost"] is None  # no price for the reference judge


def test_idk_verdict_is_an_error_naming_the_step():
    """Legacy ``idk`` is outside DeepEval's verdict vocabulary: the gateway hands the reply on as it
    came, DeepEval's own validation rejects it (no retry), and the cell is an explained error."""
    def idk(body, content):
        return content.replace('"borderline"', '"idk"') if step_of_body(body) == "verdicts" else content

    up = RecordingUpstream({("test", CASE.id): CASE}, edit=idk)
    s = score_one("deepeval.faithfulness", CASE, upstream=up)
    assert s.result.status == "error" and s.result.score is None
    assert "does not fit DeepEval's Verdicts schema" in s.result.reason and "verdict" in s.result.reason
    steps = [step_of_body(b) for _, b, _ in up.log]
    assert steps.count("verdicts") == 1 and "reason" not in steps and s.ledger.retries == 0


def test_schema_violation_is_explained_naming_the_schema():
    """A reply that reaches DeepEval but fails its pydantic schema (no retry by DeepEval)."""
    from harness.adapters.deepeval._model import explain

    import pydantic
    from deepeval.metrics.faithfulness.schema import Verdicts

    with pytest.raises(pydantic.ValidationError) as err:
        Verdicts.model_validate({"verdicts": [{"verdict": "idk", "reason": None}]})
    cell = explain(err.value)
    assert cell.status == "error" and "Verdicts schema" in cell.reason and "verdicts.0.verdict" in cell.reason
    assert explain(RuntimeError("x")) is None


def test_cells_run_concurrently_without_sharing_state(canonical):
    """Four cells in one event loop, both variants: each keeps its own claims and score."""
    cases = [canonical.by_id(i) for i in ("cookie-yield", "memory-correct", "leave-misread", "product-age")]
    a = score_cases("deepeval.faithfulness_penalized", cases, concurrency=4)
    assert [a[c.id].result.score for c in cases] == [0.75, 0.0, 0.5, 1.0]
    assert [len(a[c.id].result.units) for c in cases] == [len(c.annotation.claims) for c in cases]
