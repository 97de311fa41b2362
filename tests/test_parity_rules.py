"""Each allowed difference of the strict stock-parity test matches only what its name says (issue 37
item 2): for every rule of ``tests.test_stock_parity.ALLOWED`` a cell it was written for is ``allowed``,
and a near miss (the same two outcomes on another input, or another outcome on that input) is
``DIFFERENT``. Failures compare by the vendor's own exception, never by a harness wrapper's. Pure
functions on made-up outcomes: no judge, no vendor import."""
from __future__ import annotations

import json
from dataclasses import replace

from harness.cases.load import load_cases

import pytest

from tests.conftest import CANONICAL
from tests.test_stock_parity import ALLOWED, USAGE_TWIN, compare

MODE = "openai"
RAGAS_F, DE = "ragas.faithfulness", "deepeval.faithfulness"


@pytest.fixture(scope="module")
def cases():
    full = load_cases(CANONICAL)
    return {"empty": full.by_id("empty-answer"), "plain": full.by_id("cookie-yield"),
            "marked": full.by_id("citation-misattributed")}


def verdict(metric, case, stock_cell, cell, mode=MODE, extra=None):
    stock = {mode: {metric: {case.id: stock_cell}}, **(extra or {})}
    return compare(mode, metric, case, stock, cell)[5:]


def test_every_rule_is_covered_here():
    assert {r.name for r in ALLOWED} == {
        "empty answer (Ragas)", "empty answer (DeepEval)", "reply without usage (DeepEval)",
        "no citation markers (TruLens)", "no citation markers, not asked (TruLens, live)",
        "Responses API 404 (TruLens)"}


RAGAS_EMPTY = (None, "ValueError", "response is missing. Please add response to the test sample.")
RAGAS_CELL = ("vendor_nan", None, "unscored by the vendor", "vendor_raised_on_empty_input", "")


def test_ragas_empty_answer_only(cases):
    empty = cases["empty"]
    assert verdict(RAGAS_F, empty, RAGAS_EMPTY, RAGAS_CELL) == ("allowed", "empty answer (Ragas)")
    no_contexts = replace(empty, contexts=())
    said = (None, "ValueError", "retrieved_contexts is missing. Please add retrieved_contexts to the test sample.")
    assert verdict(RAGAS_F, no_contexts, said, RAGAS_CELL)[0] == "DIFFERENT"
    assert verdict(RAGAS_F, replace(empty, question=""), RAGAS_EMPTY, RAGAS_CELL)[0] == "DIFFERENT"
    answered = replace(cases["plain"])   # an answer there: the same two outcomes are not this rule
    assert verdict(RAGAS_F, answered, RAGAS_EMPTY, RAGAS_CELL)[0] == "DIFFERENT"
    assert verdict(RAGAS_F, empty, RAGAS_EMPTY, ("vendor_nan", None, "", "", ""))[0] == "DIFFERENT"   # no flag


def test_deepeval_empty_answer_only(cases):
    empty = cases["empty"]
    stock = (None, "deepeval.errors.MissingTestCaseParamsError",
             "'actual_output' cannot be empty for the 'Faithfulness' metric.")
    cell = ("vendor_nan", None, "", "empty_answer_rejected", "")
    assert verdict(DE, empty, stock, cell) == ("allowed", "empty answer (DeepEval)")
    other = (None, "deepeval.errors.MissingTestCaseParamsError",
             "'retrieval_context' cannot be empty for the 'Faithfulness' metric.")
    assert verdict(DE, replace(empty, contexts=()), stock, cell)[0] == "DIFFERENT"   # not only the answer empty
    assert verdict(DE, empty, other, cell)[0] == "DIFFERENT"   # the vendor says another input is missing


def test_deepeval_no_usage_accepts_only_the_score_stock_gives_with_usage(cases):
    case = cases["plain"]
    stock = (None, "AttributeError", "'NoneType' object has no attribute 'prompt_tokens'")
    cell = ("scored", 0.5, "", "", "")
    twin = {MODE + USAGE_TWIN: {DE: {case.id: (0.5, None, None)}}}
    assert verdict(DE, case, stock, cell, extra=twin) == ("allowed", "reply without usage (DeepEval)")
    wrong = {MODE + USAGE_TWIN: {DE: {case.id: (1.0, None, None)}}}
    assert verdict(DE, case, stock, cell, extra=wrong)[0] == "DIFFERENT"
    assert verdict(DE, case, stock, cell)[0] == "DIFFERENT"   # no stock score to hold it to
    other = (None, "AttributeError", "'NoneType' object has no attribute 'verdicts'")
    assert verdict(DE, case, other, cell, extra=twin)[0] == "DIFFERENT"


def test_no_citation_markers_only(cases):
    cell = ("not_applicable", None, "no [N] citation markers in the answer", "", "")
    for stock in ((0.5, None, None), (None, "RuntimeError", "Endpoint openai request failed 4 time(s)")):
        assert verdict("trulens.citation", cases["plain"], stock, cell) == ("allowed", "no citation markers (TruLens)")
        assert verdict("trulens.citation", cases["marked"], stock, cell)[0] == "DIFFERENT"


def test_responses_404_only_where_the_harness_scores_what_stock_scores_against_the_400_server(cases):
    case, m = cases["plain"], "trulens.groundedness"
    stock_404 = (None, "RuntimeError", "Endpoint openai request failed 4 time(s): Error code: 404")
    chat400 = {"chat-400": {m: {case.id: (0.75, None, None)}}}
    assert verdict(m, case, stock_404, ("scored", 0.75, "", "", ""), "chat-404", chat400) == \
        ("allowed", "Responses API 404 (TruLens)")
    assert verdict(m, case, stock_404, ("scored", 0.5, "", "", ""), "chat-404", chat400)[0] == "DIFFERENT"
    assert verdict(m, case, stock_404, ("scored", 0.75, "", "", ""), "openai", chat400)[0] == "DIFFERENT"


def test_a_failure_compares_by_the_vendors_exception_not_the_harness_wrapper(cases):
    case = cases["plain"]
    stock = (None, "instructor.core.exceptions.InstructorRetryException", "cut at the token limit")
    wrapped = ("error", None, "RagasStepError: ragas Faithfulness failed in step 'statements': ...", "",
               json.dumps({"exception": "instructor.core.exceptions.InstructorRetryException"}))
    assert verdict(RAGAS_F, case, stock, wrapped)[0] == "same"
    other = ("error", None, wrapped[2], "", json.dumps({"exception": "instructor.core.exceptions.IncompleteOutputException"}))
    assert verdict(RAGAS_F, case, stock, other)[0] == "DIFFERENT"
    unrecorded = ("error", None, wrapped[2], "", "")   # an old run without detail.exception: the reason's head
    assert verdict(RAGAS_F, case, stock, unrecorded)[0] == "DIFFERENT"
