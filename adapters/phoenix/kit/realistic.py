"""The realistic judge's answers to the whole-answer vendor judges of issue 24 (content only; the
server adds the noise): Phoenix's faithfulness classification and Opik's hallucination score.

Recognised from the prompt text alone, as :mod:`tests.judges.steps` does: the answer and the context
are read out of the prompt, and each answer statement (the judge's own split) is rated by word
overlap with the context (:func:`tests.judges.text.support`).
"""
from __future__ import annotations

import random

from tests.judges import text as T
from tests.judges.steps import Answer

PHOENIX_START = "In this task, you will be presented with a query, some context and a response."
OPIK_SYSTEM = "You are an expert judge tasked with evaluating the faithfulness of an AI-generated answer"


def _between(text: str, start: str, end: str) -> str | None:
    i = text.rfind(start)
    j = text.rfind(end)
    return text[i + len(start):j] if 0 <= i and i + len(start) <= j else None


def _rated(answer: str, context: str, rng: random.Random) -> list[tuple[str, str]]:
    return [(s, T.support(s, context)[0]) for s in T.statements(answer, rng)]


def phoenix(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    if len(messages) != 1 or not messages[0][1].startswith(PHOENIX_START):
        return None
    p = messages[0][1]
    answer, context = _between(p, "<response>\n", "\n</response>"), _between(p, "<context>\n", "\n</context>")
    if answer is None or context is None:
        return None
    bad = [s for s, label in _rated(answer, context, rng) if label not in ("supported", "partial")]
    if bad:
        return Answer("phoenix.faithfulness", {"explanation": f"The context does not support: {bad[0]}",
                                               "label": "unfaithful"})
    return Answer("phoenix.faithfulness", {"explanation": "The response is based on the context.",
                                           "label": "faithful"})


def opik(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    if len(messages) != 2 or not messages[0][1].startswith(OPIK_SYSTEM):
        return None
    user = messages[1][1]
    answer = _between(user, "<opik_output>\n", "\n</opik_output>")
    context = _between(user, "<opik_context>\n", "\n</opik_context>")
    if answer is None or context is None:
        return None
    rated = _rated(answer, context, rng)
    bad = [s for s, label in rated if label != "supported"]
    score = round(len(bad) / len(rated), 2) if rated else 0.0
    reasons = [f"Not in the context: {s}" for s in bad] or ["The output is faithful to the context."]
    return Answer("opik.hallucination", {"score": score, "reason": reasons})
