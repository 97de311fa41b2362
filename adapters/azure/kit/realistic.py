"""The realistic judge's answer to Azure AI Evaluation's groundedness prompty (content only; the
server adds the noise): ``{reason, score 1-5, status}``.

Recognised from the prompt text alone: the definition's first words, then the ``# Data`` block's
``CONTEXT:``, ``QUERY:`` and ``RESPONSE:`` lines. Each answer statement (the judge's own split) is rated
by word overlap with the context (:func:`tests.helpers.judges.text.support`): nothing to rate (a refusal, a
pleasantry, an empty answer) is 3; a statement the context contradicts or lacks makes it 2; a partly
supported one 4; else 5.
"""
from __future__ import annotations

import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

DEFINITION = "**Groundedness** refers to how well an answer is anchored in the provided context"


def _data(prompt: str) -> tuple[str, str] | None:
    """(context, response) from the prompt's last ``# Data`` block."""
    i = prompt.rfind("\n# Data\nCONTEXT: ")
    j, k, end = prompt.rfind("\nQUERY: "), prompt.rfind("\nRESPONSE: "), prompt.rfind("\n# Tasks\n")
    if not 0 <= i < j < k < end:
        return None
    return prompt[i + len("\n# Data\nCONTEXT: "):j], prompt[k + len("\nRESPONSE: "):end].strip()


def azure(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    users = [t for r, t in messages if r == "user"]
    if len(users) != 1 or DEFINITION not in users[0]:
        return None
    data = _data(users[0])
    if data is None:
        return None
    context, response = data
    labels = [T.support(s, context)[0] for s in T.statements(response, rng)]
    if not labels:
        score, why = 3, "the response makes no claim that can be checked against the context."
    elif any(x in ("contradicted", "not_found") for x in labels):
        score, why = 2, "the response includes information the context does not support."
    elif "partial" in labels:
        score, why = 4, "the response is supported but leaves out details of the context."
    else:
        score, why = 5, "every statement of the response is supported by the context."
    return Answer("azure.groundedness", {"reason": f"Let's think step by step: {why}", "score": score,
                                         "status": "completed"})


ORDER = 60
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return azure(messages, rng)
