"""Each of Ragas's allowed differences (``kit/parity.py``) matches only what its name says: a cell it was
written for is ``allowed``, a near miss (the same two outcomes on another input, or another outcome on that input)
is ``DIFFERENT``. Pure functions on made-up outcomes: no judge, no vendor import."""
from __future__ import annotations

import json
from dataclasses import replace

from tests.helpers.parity import parity_cases, verdict

RAGAS_F = "ragas.faithfulness"
RAGAS_EMPTY = (None, "ValueError", "response is missing. Please add response to the test sample.")
RAGAS_CELL = ("vendor_nan", None, "unscored by the vendor", "vendor_raised_on_empty_input", "")


def test_ragas_empty_answer_only():
    cases = parity_cases()
    empty = cases["empty"]
    assert verdict(RAGAS_F, empty, RAGAS_EMPTY, RAGAS_CELL) == ("allowed", "empty answer (Ragas)")
    no_contexts = replace(empty, contexts=())
    said = (None, "ValueError", "retrieved_contexts is missing. Please add retrieved_contexts to the test sample.")
    assert verdict(RAGAS_F, no_contexts, said, RAGAS_CELL)[0] == "DIFFERENT"
    assert verdict(RAGAS_F, replace(empty, question=""), RAGAS_EMPTY, RAGAS_CELL)[0] == "DIFFERENT"
    answered = replace(cases["plain"])   # an answer there: the same two outcomes are not this rule
    assert verdict(RAGAS_F, answered, RAGAS_EMPTY, RAGAS_CELL)[0] == "DIFFERENT"
    assert verdict(RAGAS_F, empty, RAGAS_EMPTY, ("vendor_nan", None, "", "", ""))[0] == "DIFFERENT"   # no flag


def test_a_failure_compares_by_the_vendors_exception_not_the_harness_wrapper():
    cases = parity_cases()
    case = cases["plain"]
    stock = (None, "instructor.core.exceptions.InstructorRetryException", "cut at the token limit")
    wrapped = ("error", None, "RagasStepError: ragas Faithfulness failed in step 'statements': ...", "",
               json.dumps({"exception": "instructor.core.exceptions.InstructorRetryException"}))
    assert verdict(RAGAS_F, case, stock, wrapped)[0] == "same"
    other = ("error", None, wrapped[2], "", json.dumps({"exception": "instructor.core.exceptions.IncompleteOutputException"}))
    assert verdict(RAGAS_F, case, stock, other)[0] == "DIFFERENT"
    unrecorded = ("error", None, wrapped[2], "", "")   # an old run without detail.exception: the reason's head
    assert verdict(RAGAS_F, case, stock, unrecorded)[0] == "DIFFERENT"
