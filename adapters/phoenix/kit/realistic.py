"""The realistic judge's answer to Phoenix's faithfulness classification (content only; the server adds the
noise).

Recognised from the prompt text alone, as :mod:`tests.helpers.judges.steps` does: the answer and the context
are read out of the prompt, and each answer statement (the judge's own split) is rated by word
overlap with the context (:func:`tests.helpers.judges.text.support`).
"""
from __future__ import annotations

import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

PHOENIX_START = "In this task, you will be presented with a query, some context and a response."


def phoenix(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    if len(messages) != 1 or not messages[0][1].startswith(PHOENIX_START):
        return None
    p = messages[0][1]
    answer, context = T.between(p, "<response>\n", "\n</response>"), T.between(p, "<context>\n", "\n</context>")
    if answer is None or context is None:
        return None
    bad = [s for s, label in T.rated(answer, context, rng) if label not in ("supported", "partial")]
    if bad:
        return Answer("phoenix.faithfulness", {"explanation": f"The context does not support: {bad[0]}",
                                               "label": "unfaithful"})
    return Answer("phoenix.faithfulness", {"explanation": "The response is based on the context.",
                                           "label": "faithful"})


ORDER = 30
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return phoenix(messages, rng)
