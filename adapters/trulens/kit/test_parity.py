"""Each of TruLens's allowed differences (``kit/parity.py``) matches only what its name says: a cell it was
written for is ``allowed``, a near miss (the same two outcomes on another input, or another outcome on that input)
is ``DIFFERENT``. Pure functions on made-up outcomes: no judge, no vendor import."""
from __future__ import annotations

from tests.helpers.parity import parity_cases, verdict


def test_no_citation_markers_only():
    cases = parity_cases()
    cell = ("not_applicable", None, "no [N] citation markers in the answer", "", "")
    for stock in ((0.5, None, None), (None, "RuntimeError", "Endpoint openai request failed 4 time(s)")):
        assert verdict("trulens.citation", cases["plain"], stock, cell) == ("allowed", "no citation markers (TruLens)")
        assert verdict("trulens.citation", cases["marked"], stock, cell)[0] == "DIFFERENT"


def test_responses_404_only_where_the_harness_scores_what_stock_scores_against_the_400_server():
    cases = parity_cases()
    case, m = cases["plain"], "trulens.groundedness"
    stock_404 = (None, "RuntimeError", "Endpoint openai request failed 4 time(s): Error code: 404")
    chat400 = {"chat-400": {m: {case.id: (0.75, None, None)}}}
    assert verdict(m, case, stock_404, ("scored", 0.75, "", "", ""), "chat-404", chat400) == \
        ("allowed", "Responses API 404 (TruLens)")
    assert verdict(m, case, stock_404, ("scored", 0.5, "", "", ""), "chat-404", chat400)[0] == "DIFFERENT"
    assert verdict(m, case, stock_404, ("scored", 0.75, "", "", ""), "openai", chat400)[0] == "DIFFERENT"
