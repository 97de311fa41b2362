"""The realistic judge's answer to MiniCheck's yes/no prompt (``nli.minicheck``), and its log-probabilities.

Recognised by MiniCheck's system prompt; the document and the claim are read out of the user prompt.
The verdict is the judge's word-overlap reading (:func:`tests.helpers.judges.text.support`): ``Yes`` for a
supported claim, ``No`` otherwise, as one bare token (the request asks for one). A judge started with
``logprobs=True`` also returns OpenAI-style log-probabilities for that token when the request asks
for them, as OpenAI and vLLM do; otherwise ``logprobs`` is null, as chat-only servers answer.
"""
from __future__ import annotations

import math
import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

SYSTEM = "Determine whether the provided claim is consistent with the corresponding document."
DOC, CLAIM = "Document: ", "\nClaim: "


def _pair(messages: list[tuple[str, str]]) -> tuple[str, str] | None:
    system = next((t for r, t in messages if r == "system"), "")
    user = next((t for r, t in messages if r == "user"), "")
    if not system.startswith(SYSTEM) or not user.startswith(DOC) or CLAIM not in user:
        return None
    at = user.rfind(CLAIM)
    return user[len(DOC):at], user[at + len(CLAIM):]


def yes_probability(document: str, claim: str) -> float:
    """The judge's probability of ``Yes``: above 0.5 exactly when its overlap reading is ``supported``.

    >>> yes_probability("Heat the oven to 350 F.", "The oven is at 350 F.") > 0.5
    True
    >>> yes_probability("Chewy cookies.", "The recipe makes two dozen cookies.") < 0.5
    True
    """
    label, frac = T.support(claim, document)
    return 0.55 + 0.4 * frac if label == "supported" else 0.05 + 0.4 * frac


def minicheck(messages: list[tuple[str, str]]):
    """An :class:`tests.helpers.judges.steps.Answer` for a MiniCheck request, or None for any other prompt."""
    pair = _pair(messages)
    if pair is None:
        return None
    word = "Yes" if yes_probability(*pair) > 0.5 else "No"
    return Answer("nli.minicheck", word, kind="text", clean=True)   # one token: no room for prose


def logprobs(messages: list[tuple[str, str]], body: dict) -> dict | None:
    """The ``logprobs`` object of a reply to a MiniCheck request that asked for them (None otherwise):
    the first token with its alternatives, ``Yes`` and ``yes`` sharing the yes probability."""
    pair = _pair(messages)
    if pair is None or not body.get("logprobs"):
        return None
    p = yes_probability(*pair)
    cands = sorted([("Yes", p * 0.96), ("yes", p * 0.04), ("No", 1.0 - p)], key=lambda c: -c[1])
    top = [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())}
           for t, q in cands[:max(1, int(body.get("top_logprobs") or 1))]]
    return {"content": [{**top[0], "top_logprobs": top}], "refusal": None}


ORDER = 90
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return minicheck(messages)
