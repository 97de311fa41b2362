"""Reference-judge handlers and result building for the TruLens adapters (no vendor import, fast).

Requests are built from the recorded TruLens templates (``tests/helpers/contracts/trulens.json``), so they
have exactly the text the vendor sends.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

from harness.adapters.trulens import judge
from harness.adapters.trulens.common import join_source
from harness.adapters.trulens.units import UNPARSABLE, evidence_text, groundedness_result, quotes
from harness.core.records import Annotation, Case, Claim, Context, Evidence
from harness.metric.judge_request import JudgeRequest
from harness.metric.protocol import UnrecognisedRequest

import pytest

from tests.conftest import ROOT

P = {k: v["text"] for k, v in json.loads((Path(ROOT) / "tests" / "helpers" / "contracts" / "trulens.json").read_text())["prompts"].items()}
COT = "ChainOfThoughtResponse"
BASE = "BaseFeedbackResponse"

CTX = (Context("1", "Refund requests are accepted up to 30 days after the date of purchase."),
       Context("2", "Approved refunds are paid back to the original payment method."))
ANSWER = "Great question! You have 30 days to ask [1]. The money goes back to your card [1]. I don't know the fee."
# spans: "You have 30 days to ask" (16, 39); "...your card" (45, 77); the abstention (83, 104)


def make_case(claims, *, answerable=True, abstention_span=(83, 104), answer=ANSWER) -> Case:
    return Case("t", "How do refunds work?", CTX, answer,
                Annotation(tuple(claims), answerable, abstention_span is not None, abstention_span))


def claim(text, span, label, ev=(), cited=None):
    return Claim(text, span, label, tuple(Evidence(*e) for e in ev), cited)


DAYS = claim("You have 30 days to ask", (16, 39), "supported", [("1", 0, 68)], cited="1")
CARD = claim("The money goes back to your card", (45, 77), "supported", [("2", 0, 62)], cited="1")
CASE = make_case([DAYS, CARD])


def request(metric, system, user, schema=None, case=CASE) -> JudgeRequest:
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    if schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": schema, "schema": {}}}
    return JudgeRequest(metric, case, body)


def grounded(sentence, case=CASE, metric="trulens.groundedness"):
    user = P["groundedness.user"].format(premise=join_source(case), hypothesis=sentence)
    return json.loads(judge.reply(request(metric, P["groundedness.system"], user, COT, case),
                                  ("trivial", "groundedness")))


def test_trivial_filter_keeps_claims_and_abstentions_as_a_python_list():
    sentences = ["Great question!", "You have 30 days to ask [1].", "The money goes back to your card [1].",
                 "I don't know the fee."]
    user = P["trivial.user"].format(statements=str(sentences))
    out = judge.reply(request("trulens.groundedness", P["trivial.system"], user), ("trivial", "groundedness"))
    assert ast.literal_eval(out) == sentences[1:]


def test_trivial_filter_of_nothing_is_an_empty_list():
    user = P["trivial.user"].format(statements=str([]))
    assert judge.reply(request("m", P["trivial.system"], user), ("trivial",)) == "[]"


def test_groundedness_reply_shape_score_and_evidence():
    out = grounded("You have 30 days to ask [1].")
    assert out == {"criteria": "You have 30 days to ask [1].", "score": 3,
                   "supporting_evidence": CTX[0].text[:68]}
    assert grounded("I don't know the fee.") == {"criteria": "I don't know the fee.",
                                                 "supporting_evidence": "ABSTENTION", "score": 3}


def test_groundedness_mixed_and_contradicted_sentences():
    mixed = make_case([claim("30 days", (16, 39), "supported", [("1", 0, 68)]),
                       claim("card", (45, 77), "not_found")], abstention_span=None,
                      answer=ANSWER[:77])
    both = "You have 30 days to ask [1]. The money goes back to your card"
    assert mixed.answer.endswith("your card")
    c = make_case([claim("a", (16, 39), "contradicted", [("1", 0, 20)])], abstention_span=None)
    assert grounded("You have 30 days to ask [1].", c) == {
        "criteria": "You have 30 days to ask [1].", "supporting_evidence": "NOTHING FOUND", "score": 0}
    out = grounded(both, mixed)
    assert (out["score"], out["supporting_evidence"]) == (2, CTX[0].text[:68])  # (3 + 0) / 2 rounds up


@pytest.mark.parametrize("sentence,why", [("Great question!", "no annotated claim"),
                                          ("A sentence from elsewhere.", "not in the case's answer")])
def test_groundedness_refuses_what_the_labels_cannot_answer(sentence, why):
    with pytest.raises(UnrecognisedRequest, match=why):
        grounded(sentence)


def test_groundedness_refuses_another_source():
    user = P["groundedness.user"].format(premise=str(CASE.context_texts), hypothesis="You have 30 days to ask [1].")
    with pytest.raises(UnrecognisedRequest, match="SOURCE"):
        judge.reply(request("m", P["groundedness.system"], user, COT), ("groundedness",))


def test_unknown_step_is_refused_naming_the_metric():
    with pytest.raises(UnrecognisedRequest, match="trulens.citation"):
        judge.reply(request("trulens.citation", P["groundedness.system"], "x", COT), ("citation",))
    with pytest.raises(UnrecognisedRequest):
        judge.reply(request("m", "Convert the following text into a strict JSON object", "x", COT),
                    ("trivial", "groundedness"))


def test_abstention_and_answerability_classifiers():
    steps = ("trivial", "groundedness", "abstention", "answerability")

    def ask(system, user, case=CASE):
        return json.loads(judge.reply(request("m", system, user, BASE, case), steps))

    assert ask(P["abstention.system"], P["abstention.user"].format(statement="I don't know the fee.")) == {"score": 1}
    assert ask(P["abstention.system"], P["abstention.user"].format(statement="Great question!")) == {"score": 0}
    ans = P["answerability.user"].format(question=CASE.question, source=join_source(CASE))
    assert ask(P["answerability.system"], ans) == {"score": 1}
    assert ask(P["answerability.system"], ans, make_case([DAYS], answerable=False)) == {"score": 0}


def cite(case, cot=True):
    user = P["citation.user"].format(question=case.question, source="...", statement=case.answer)
    if cot:
        user = user.replace("CITATION ATTRIBUTION:", P["citation.cot_template"])
    return json.loads(judge.reply(request("trulens.citation", P["citation.system"], user, COT if cot else BASE, case),
                                  ("citation",)))


@pytest.mark.parametrize("label,ev,cited,score", [
    ("supported", [("2", 0, 62)], "2", 1),   # evidence in the cited passage
    ("supported", [("2", 0, 62)], "1", 0),   # misattributed
    ("supported", [("1", 0, 68), ("2", 0, 62)], "2", 0),  # multi-hop: one of its passages is not enough
    ("inference", [], "2", 1),               # no span to check: attributed
    ("not_found", [], "2", 0),               # the cited passage does not state it
    ("contradicted", [("2", 0, 20)], "2", 0),
    ("supported", [("2", 0, 62)], "7", 0),   # no passage 7
])
def test_citation_rule(label, ev, cited, score):
    case = make_case([DAYS, claim("The money goes back to your card", (45, 77), label, ev, cited)])
    out = cite(case)
    assert set(out) == {"criteria", "supporting_evidence", "score"} and out["score"] == score
    assert cite(case, cot=False) == {"score": score}


def test_citation_without_cited_ids_is_refused():
    with pytest.raises(UnrecognisedRequest, match="cited_context_id"):
        cite(make_case([claim("x", (16, 39), "supported", [("1", 0, 68)])]))


# --- units: TruLens return values -> harness records --------------------------------------------

def test_evidence_and_quotes():
    assert evidence_text("Criteria: x\nSupporting Evidence: NOTHING FOUND") == "NOTHING FOUND"
    assert quotes("NOTHING FOUND", CASE) == () and quotes("ABSTENTION", CASE) == ()
    (q,) = quotes('"Approved refunds are paid back"', CASE)
    assert (q.verbatim, q.context_id, q.start, q.end) == (True, "2", 0, 30)
    a, b = quotes("accepted up to 30 days ... paid back to the original payment method", CASE)
    assert (a.verbatim, a.context_id, b.verbatim, b.context_id) == (True, "1", True, "2")
    (p,) = quotes("Refunds are paid within 30 days", CASE)
    assert p.verbatim is False and p.context_id is None


SENTS = ["Great question!", "You have 30 days to ask [1].", "The money goes back to your card [1].",
         "I don't know the fee."]


def entry(sentence, raw, ev="x"):
    return {"criteria": sentence, "supporting_evidence": f"Criteria: {sentence}\nSupporting Evidence: {ev}",
            "score": UNPARSABLE if raw is None else raw / 3}


def test_all_unparsable_is_vendor_nan():
    out = {"reasons": [entry(s, None) for s in SENTS[1:]]}
    res = groundedness_result(CASE, UNPARSABLE, out, SENTS, [{"kept": SENTS[1:], "parsed": True}], variant=False)
    assert res.status == "vendor_nan" and res.score is None and "-1.0" in res.reason
    assert [u.raw_verdict for u in res.units] == ["trivial", "unparsable", "unparsable", "unparsable"]


def test_variant_reason_entries_and_filter_rewrites():
    kept = ["You have 30 days to ask.", SENTS[2], SENTS[3]]  # the judge rewrote the first kept sentence
    out = {"reasons": [entry(kept[0], 3), entry(SENTS[2], 0, "NOTHING FOUND"), {"reason": "Answerable abstention"}]}
    res = groundedness_result(CASE, 1 / 3, out, SENTS, [{"kept": kept, "parsed": True}], variant=True)
    assert res.status == "scored" and res.score == 1 / 3
    got = [(u.text, u.verdict, u.raw_verdict) for u in res.units]
    assert got == [(SENTS[0], "excluded", "trivial"), (SENTS[1], "excluded", "trivial"),
                   (SENTS[2], "unsupported", "0/3"), (SENTS[3], "unsupported", "answerable_abstention"),
                   (kept[0], "supported", "3/3")]
    assert res.units[4].span == (16, 39)  # located in the answer by the aligner: the words it states, without the marker
    assert "answerable_abstention_scored_0" in res.flags


def test_all_trivial_is_zero_and_flagged():
    res = groundedness_result(CASE, 0.0, {"reason": "No non-trivial statements to evaluate"}, SENTS,
                              [{"kept": [], "parsed": True}], variant=False)
    assert res.status == "scored" and res.score == 0.0 and res.flags == ("all_trivial_scored_0",)
    assert all(u.verdict == "excluded" for u in res.units)
