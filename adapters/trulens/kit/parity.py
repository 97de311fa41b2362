"""TruLens's allowed differences in the strict stock-parity test (``tests/vendors/test_stock_parity.py``; each is
checked to match only what its name says by ``tests/vendors/test_parity_rules.py``)."""
from __future__ import annotations

from tests.helpers.judges.realistic import SERVER_MODES
from tests.helpers.parity import ANY, Allowed

RULES = (
    Allowed("no citation markers (TruLens)", ("trulens.citation",), SERVER_MODES, ANY, "not_applicable",
            "adapter rule on the card: the citation check applies only to answers with [N] markers; stock "
            "TruLens scores any answer (or raises, as on any answer, when the judge's replies fail it)",
            when=lambda case: "[" not in case.answer),
    Allowed("no citation markers, not asked (TruLens, live)", ("trulens.citation",), SERVER_MODES,
            "stock_vendor.NotAsked", "not_applicable",
            "the live run against a real model asks stock TruLens's citation check only of answers with [N] "
            "markers (its kit/stock.py's MARKED_ONLY); the harness's cell is not_applicable there by the "
            "card's rule", live_only=True),
    Allowed("Responses API 404 (TruLens)", ("trulens.groundedness", "trulens.groundedness_answerability",
                                            "trulens.citation"), ("chat-404",),
            "RuntimeError", None,
            "stock TruLens's OpenAI provider re-raises the 404 a chat-only server gives its Responses API probe "
            "and fails every scored call (4 attempts, then RuntimeError); the harness's provider takes stock's "
            "own fallback after a 400 instead, so its cell is what stock gives against the 400 server (card)",
            same_as_mode="chat-400"),
)
