"""Each of DeepEval's allowed differences (``kit/parity.py``) matches only what its name says: a cell it was
written for is ``allowed``, a near miss (the same two outcomes on another input, or another outcome on that input)
is ``DIFFERENT``. Pure functions on made-up outcomes: no judge, no vendor import."""
from __future__ import annotations

from dataclasses import replace

from tests.helpers.parity import MODE, USAGE_TWIN, parity_cases, verdict

DE = "deepeval.faithfulness"

def test_deepeval_empty_answer_only():
    cases = parity_cases()
    empty = cases["empty"]
    stock = (None, "deepeval.errors.MissingTestCaseParamsError",
             "'actual_output' cannot be empty for the 'Faithfulness' metric.")
    cell = ("vendor_nan", None, "", "empty_answer_rejected", "")
    assert verdict(DE, empty, stock, cell) == ("allowed", "empty answer (DeepEval)")
    other = (None, "deepeval.errors.MissingTestCaseParamsError",
             "'retrieval_context' cannot be empty for the 'Faithfulness' metric.")
    assert verdict(DE, replace(empty, contexts=()), stock, cell)[0] == "DIFFERENT"   # not only the answer empty
    assert verdict(DE, empty, other, cell)[0] == "DIFFERENT"   # the vendor says another input is missing


def test_deepeval_no_usage_accepts_only_the_score_stock_gives_with_usage():
    cases = parity_cases()
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
