"""inhouse.span on every canonical case (its golden table is compared in tests/vendors/test_golden_tables.py)."""
import json

from harness.core.records import Annotation, Case, Claim, Context, Evidence
from harness.metric.judge_request import JudgeRequest

import pytest

from tests.helpers.goldens import canonical_results


@pytest.fixture(scope="module")
def results():
    return canonical_results("inhouse.span")


def test_cookie_case_claims_and_spans(results, canonical):
    res = results["cookie-yield"].result
    case = canonical.by_id("cookie-yield")
    assert res.score == 0.75
    assert [u.verdict for u in res.units] == ["supported", "supported", "supported", "unsupported"]
    for u, claim in zip(res.units, case.annotation.claims):
        assert u.span == claim.answer_span
    yield_unit = res.units[3]
    assert yield_unit.raw_verdict == "not_found"
    for u in res.units[:3]:
        q = u.quotes[0]
        assert q.verbatim is True
        assert case.context(q.context_id).text[q.start:q.end] == q.text


def test_two_calls_at_most_and_none_for_empty(results):
    for cid, s in results.items():
        assert s.ledger.calls <= 2, cid
    assert results["empty-answer"].ledger.calls == 0
    assert results["abstain-answerable"].ledger.calls == 1


def test_inference_is_supported_without_span(results):
    unit = results["product-age"].result.units[1]
    assert unit.raw_verdict.startswith("supported")
    assert unit.verdict == "unsupported"
    assert "no span" in unit.reason


def test_multi_hop_needs_both_quotes(results):
    unit = results["multi-hop"].result.units[0]
    assert unit.verdict == "supported"
    assert {q.context_id for q in unit.quotes} == {"1", "2"}


# --- the local span check, with a judge that lies ----------------------------------------------

CASE = Case(
    id="x", question="q?", contexts=(Context("1", "Bake at 350 \u00b0F for 8 to 10 minutes."),),
    answer="Bake at 350 F. It yields 24.",
    annotation=Annotation(claims=(Claim("Bake at 350 F.", (0, 14), "supported", (Evidence("1", 0, 12),)),),
                          answerable=True, abstention=False))


def _check(verdict):
    from harness.adapters.inhouse.span import check_evidence

    return check_evidence(CASE, verdict)


@pytest.mark.parametrize("verdict,grounded,check", [
    ({"verdict": "supported", "evidence": [{"context_id": "1", "quote": "Bake at 350"}]}, True, "verbatim span found"),
    ({"verdict": "supported", "evidence": [{"context_id": "1", "quote": "Bake  at\n350"}]}, True, "verbatim span found"),
    ({"verdict": "supported", "evidence": [{"context_id": "1", "quote": "Bake at 400"}]}, False,
     "span not found; nearest passage [1]: 'Bake at 350 \u00b0F for 8 to 10 minutes.'"),
    ({"verdict": "supported", "evidence": [{"context_id": "9", "quote": "Bake at 350"}]}, False, "span not found (no context '9'; contexts: 1)"),
    ({"verdict": "supported", "evidence": [{"context_id": "1", "quote": "   "}]}, False, "no span: the judge quoted no evidence"),
    ({"verdict": "supported", "evidence": []}, False, "no span: the judge quoted no evidence"),
    ({"verdict": "supported", "evidence": [{"context_id": "1", "quote": "Bake at 350"},
                                           {"context_id": "1", "quote": "yields 24"}]}, False,
     "span not found; nearest passage [1]: 'Bake at 350 \u00b0F for 8 to 10 minutes.'"),
    ({"verdict": "not_found", "evidence": []}, False, "not_found"),
    ({"verdict": "contradicted", "evidence": [{"context_id": "1", "quote": "350"}]}, False, "contradicted"),
], ids=["verbatim", "whitespace", "paraphrase", "unknown-context", "blank-quote", "no-evidence",
        "one-of-two-missing", "not-found", "contradicted"])
def test_local_span_check(verdict, grounded, check):
    got_grounded, _, got_check = _check(verdict)
    assert (got_grounded, got_check) == (grounded, check)


@pytest.mark.parametrize("reply,message", [
    ('{"verdicts": []}', "judge returned 0 verdicts for 1 claims"),
    ('{"verdicts": [{"claim": 1, "verdict": "maybe", "evidence": []}]}', "is not one of"),
    ('{"verdicts": [{"claim": 3, "verdict": "supported", "evidence": []}]}', "names claim 3"),
    ('not json', "reply is not JSON"),
    ('{"claims": []}', "lacks a list under 'verdicts'"),
])
def test_unreadable_verdicts_are_errors_not_unsupported(reply, message):
    from harness.adapters.inhouse.span import ReplyError, parse_verdicts

    with pytest.raises(ReplyError, match=message):
        parse_verdicts(reply, 1)


def test_reference_handler_refuses_unknown_claims():
    from harness.adapters.inhouse.judge import reply
    from harness.adapters.inhouse.span import VERDICTS_SCHEMA, verify_messages
    from harness.metric.protocol import UnrecognisedRequest

    body = {"messages": verify_messages(CASE, ["The oven explodes."]),
            "response_format": {"type": "json_schema", "json_schema": VERDICTS_SCHEMA}}
    with pytest.raises(UnrecognisedRequest, match="matches no annotated claim"):
        reply(JudgeRequest("inhouse.span", CASE, body))
    ok = {"messages": verify_messages(CASE, ["Bake at 350 F."]),
          "response_format": {"type": "json_schema", "json_schema": VERDICTS_SCHEMA}}
    got = json.loads(reply(JudgeRequest("inhouse.span", CASE, ok)))
    assert got["verdicts"][0]["evidence"] == [{"context_id": "1", "quote": "Bake at 350 "}]


def test_prompts_are_versioned_files():
    from harness.adapters.inhouse import span

    assert span.PROMPT_VERSION == "v1"
    assert "not_found" in span.prompt("verify")
    assert "atomic" in span.prompt("decompose")


# --- near-verbatim quotes (metric v2) -------------------------------------------------------------

NEAR = Case(
    id="near", question="q?",
    contexts=(Context("1", "Heat the oven to 350 F. Bake for 8 to 10 minutes, until golden. Cool on a rack."),),
    answer="Bake at 350 F for 8 to 10 minutes.", annotation=None)


@pytest.mark.parametrize("quote,found,match", [
    ("Heat the oven to 350 F", "Heat the oven to 350 F", "exact"),
    ("Heat the oven, to 350 F", "Heat the oven to 350 F", "near"),                     # a comma added
    ("Bake for 8 to 10 minutes until golden", "Bake for 8 to 10 minutes, until golden", "near"),   # one dropped
    ("Heat the oven to 350 F.", "Heat the oven to 350 F.", "exact"),                   # the stop is in the text
    ("Cool on a rack..", "Cool on a rack", "near"),
    ("Bake for 8 ... until golden", "Bake for 8 to 10 minutes, until golden", "near"),  # an ellipsis
    ("bake FOR 8 to 10 MINUTES", "Bake for 8 to 10 minutes", "near"),                  # case
], ids=["exact", "comma-added", "comma-dropped", "stop", "double-stop", "ellipsis", "case"])
def test_near_verbatim_quotes_are_located_with_offsets(quote, found, match):
    from harness.adapters.inhouse.span import check_evidence

    grounded, quotes, check = check_evidence(NEAR, {"verdict": "supported",
                                                    "evidence": [{"context_id": "1", "quote": quote}]})
    q = quotes[0]
    assert grounded and NEAR.contexts[0].text[q.start:q.end] == found
    assert (q.match, q.verbatim) == (match, match == "exact")
    assert check == ("verbatim span found" if match == "exact" else
                     "near-verbatim span found (case, punctuation, whitespace or ellipses differ)")
    strict = check_evidence(NEAR, {"verdict": "supported", "evidence": [{"context_id": "1", "quote": quote}]},
                            strict=True)
    assert strict[0] is (match == "exact")        # strict mode: verbatim only, as in version 1


@pytest.mark.parametrize("quote", ["Heat the oven to 400 F", "until golden ... Bake for 8", "Bake for 9 to 10 minutes",
                                   "The recipe makes two dozen cookies", "Golden!"],
                         ids=["changed-number", "pieces-out-of-order", "changed-word", "invented", "one-word-near"])
def test_invented_or_changed_quotes_stay_ungrounded_and_show_the_nearest_passage(quote):
    from harness.adapters.inhouse.span import check_evidence

    grounded, quotes, check = check_evidence(NEAR, {"verdict": "supported",
                                                    "evidence": [{"context_id": "1", "quote": quote}]})
    assert not grounded and quotes[0].match is None and quotes[0].start is None
    assert check.startswith("span not found; nearest passage [1]: '")
    assert check[len("span not found; nearest passage [1]: '"):-1] in NEAR.contexts[0].text


def test_strict_variant_is_the_same_metric_with_verbatim_only():
    from harness.adapters.inhouse.span import InhouseSpan, InhouseSpanStrict

    assert (InhouseSpan.strict, InhouseSpanStrict.strict) == (False, True)
    assert InhouseSpan.version == InhouseSpanStrict.version == "3"


@pytest.mark.parametrize("reply", ['```json\n{"claims": ["Bake at 350 F."]}\n```',
                                   'Here is the JSON you asked for:\n\n{"claims": ["Bake at 350 F."]}',
                                   '{"claims": ["Bake at 350 F."]}'], ids=["fence", "prose", "plain"])
def test_replies_in_a_fence_or_after_prose_are_read(reply):
    from harness.adapters.inhouse.span import parse_claims

    assert parse_claims(reply) == ["Bake at 350 F."]
