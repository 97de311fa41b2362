"""The realistic judge's answer to Opik's hallucination score (content only; the server adds the noise).

Recognised from the prompt text alone: the answer and the context are read out of the prompt, and each answer
statement (the judge's own split) is rated by word overlap with the context (:func:`tests.helpers.judges.text.support`).
"""
from __future__ import annotations

import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

OPIK_SYSTEM = "You are an expert judge tasked with evaluating the faithfulness of an AI-generated answer"


def opik(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    if len(messages) != 2 or not messages[0][1].startswith(OPIK_SYSTEM):
        return None
    user = messages[1][1]
    answer = T.between(user, "<opik_output>\n", "\n</opik_output>")
    context = T.between(user, "<opik_context>\n", "\n</opik_context>")
    if answer is None or context is None:
        return None
    rated = T.rated(answer, context, rng)
    bad = [s for s, label in rated if label != "supported"]
    score = round(len(bad) / len(rated), 2) if rated else 0.0
    reasons = [f"Not in the context: {s}" for s in bad] or ["The output is faithful to the context."]
    return Answer("opik.hallucination", {"score": score, "reason": reasons})


ORDER = 50
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return opik(messages, rng)
