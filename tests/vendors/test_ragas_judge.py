"""The reference judge's Ragas handlers, fed the prompts the installed Ragas renders, answering in
exactly the shape instructor (Mode.JSON) parses: a bare JSON object validated by the step's model."""
from __future__ import annotations

import json
from dataclasses import replace

from harness.metric.judge_request import JudgeRequest
from harness.metric.protocol import UnrecognisedRequest

import pytest

F, RG = "ragas.faithfulness", "ragas.response_groundedness"


@pytest.fixture(scope="module")
def cases(canonical):
    return canonical


@pytest.fixture(scope="module")
def util():
    from harness.adapters.ragas._llm import vendor

    vendor()
    import ragas.metrics.collections.faithfulness.util as f
    import ragas.metrics.collections.response_groundedness.util as rg

    return f, rg


def request(metric, case, prompt, *, extra=(), response_format="json_object") -> JudgeRequest:
    body = {"model": "reference-judge",
            "messages": [{"role": "system", "content": "As a genius expert, ..."},
                         {"role": "user", "content": prompt}, *extra]}
    if response_format:
        body["response_format"] = {"type": response_format}
    return JudgeRequest(metric, case, body)


def statements_prompt(util, case):
    f, _ = util
    return f.StatementGeneratorPrompt().to_string(f.StatementGeneratorInput(question=case.question, answer=case.answer))


def nli_prompt(util, case, statements):
    f, _ = util
    context = "\n".join(case.context_texts)
    return f.NLIStatementPrompt().to_string(f.NLIStatementInput(context=context, statements=statements))


def rg_prompt(util, case, judge):
    _, rg = util
    cls = rg.ResponseGroundednessJudge1Prompt if judge == 1 else rg.ResponseGroundednessJudge2Prompt
    return cls().to_string(rg.ResponseGroundednessInput(response=case.answer, context="\n".join(case.context_texts)))


def reply(metric, req):
    from harness.judge.reference import handler

    out = handler(metric)(req)
    assert out.startswith("{") and out.endswith("}"), "instructor Mode.JSON needs a bare JSON object"
    return out


def test_statements_are_the_judged_claims_in_order(util, cases):
    f, _ = util
    case = cases.by_id("cookie-yield")
    out = f.StatementGeneratorOutput.model_validate_json(reply(F, request(F, case, statements_prompt(util, case))))
    assert out.statements == [c.text for c in case.annotation.claims]


@pytest.mark.parametrize("case_id", ["abstain-answerable", "abstain-unanswerable", "empty-answer"])
def test_statements_for_no_claims_are_empty(util, cases, case_id):
    f, _ = util
    case = cases.by_id(case_id)
    out = f.StatementGeneratorOutput.model_validate_json(reply(F, request(F, case, statements_prompt(util, case))))
    assert out.statements == []


@pytest.mark.parametrize("case_id,verdicts", [("cookie-yield", [1, 1, 1, 0]), ("product-age", [1, 1]),
                                              ("non-english", [1, 0, 0])])
def test_nli_verdicts_follow_the_label_table(util, cases, case_id, verdicts):
    f, _ = util
    case = cases.by_id(case_id)
    texts = [c.text for c in case.annotation.claims]
    out = f.NLIStatementOutput.model_validate_json(reply(F, request(F, case, nli_prompt(util, case, texts))))
    assert [s.verdict for s in out.statements] == verdicts
    assert [s.statement for s in out.statements] == texts and all(s.reason for s in out.statements)


def test_nli_statement_with_no_claim_is_unrecognised(util, cases):
    case = cases.by_id("cookie-yield")
    req = request(F, case, nli_prompt(util, case, [case.annotation.claims[0].text, "Cookies are vegan."]))
    with pytest.raises(UnrecognisedRequest, match="maps to no annotated claim"):
        reply(F, req)


def test_nli_matches_claims_ignoring_case_and_spacing(util, cases):
    f, _ = util
    case = cases.by_id("cookie-yield")
    text = "  " + case.annotation.claims[3].text.upper().replace(" ", "  ")
    out = f.NLIStatementOutput.model_validate_json(reply(F, request(F, case, nli_prompt(util, case, [text]))))
    assert [s.verdict for s in out.statements] == [0]


@pytest.mark.parametrize("judge", [1, 2])
@pytest.mark.parametrize("case_id,rating", [("cookie-yield", 1), ("product-age", 2), ("memory-correct", 0),
                                            ("abstain-answerable", 2)])
def test_rg_rating_follows_the_label_table(util, cases, judge, case_id, rating):
    _, rg = util
    case = cases.by_id(case_id)
    out = rg.ResponseGroundednessOutput.model_validate_json(reply(RG, request(RG, case, rg_prompt(util, case, judge))))
    assert out.rating == rating


def test_input_is_read_after_the_marker_not_from_the_examples(util, cases):
    from harness.adapters.ragas.judge import prompt_input

    case = cases.by_id("cookie-yield")
    assert prompt_input(statements_prompt(util, case)) == {"question": case.question, "answer": case.answer}


@pytest.mark.parametrize("why,make", [
    ("other metric's step", lambda util, case: request(RG, case, statements_prompt(util, case))),
    ("another case's answer", lambda util, case: request(F, replace(case, answer="x"), statements_prompt(util, case))),
    ("foreign follow-up", lambda util, case: request(F, case, statements_prompt(util, case), extra=(
        {"role": "assistant", "content": "oops"}, {"role": "user", "content": "Now do something else"}))),
    ("not json_object", lambda util, case: request(F, case, statements_prompt(util, case), response_format=None)),
    ("unknown prompt", lambda util, case: request(F, case, "Summarise this.")),
])
def test_unrecognised_requests_are_errors_not_guesses(util, cases, why, make):
    from harness.judge.reference import handler

    req = make(util, cases.by_id("cookie-yield"))
    with pytest.raises(UnrecognisedRequest):
        handler(req.metric)(req)


def test_reply_is_plain_json_with_unicode_kept(util, cases):
    case = cases.by_id("non-english")
    out = reply(F, request(F, case, statements_prompt(util, case)))
    assert json.loads(out)["statements"][0] == case.annotation.claims[0].text


def test_reask_is_answered_like_the_request_it_repeats(util, cases):
    from harness.adapters.ragas.judge import REASK

    case = cases.by_id("cookie-yield")
    plain = reply(F, request(F, case, statements_prompt(util, case)))
    reask = request(F, case, statements_prompt(util, case), extra=(
        {"role": "assistant", "content": "{}"}, {"role": "user", "content": REASK + "\n1 validation error"}))
    assert reply(F, reask) == plain
