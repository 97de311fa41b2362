"""The realistic judge's answers to ragas's prompts (content only; the server adds the noise)."""
from __future__ import annotations

import json
import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

RAGAS_INPUT = "Now perform the same with the following input\ninput: "


REASK = "Correct your JSON ONLY RESPONSE"


def ragas(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    users = [t for r, t in messages if r == "user"]
    if not users or RAGAS_INPUT not in users[0]:
        return None
    prompt = users[0]
    at = prompt.rfind(RAGAS_INPUT)
    try:
        data, _ = json.JSONDecoder().raw_decode(prompt, at + len(RAGAS_INPUT))
    except ValueError:
        return None
    reask = any(u.startswith(REASK) for u in users[1:])
    if prompt.startswith("Given a question and an answer"):
        return Answer("ragas.statements", {"statements": T.statements(data.get("answer", ""), rng)}, clean=reask)
    if prompt.startswith("Your task is to judge the faithfulness"):
        ctx = data.get("context", "")
        out = []
        for s in data.get("statements", []):
            label, _ = T.support(str(s), ctx)
            ok = label == "supported"
            why = ("The context states this directly." if ok else
                   "The context says something different." if label == "contradicted" else
                   "The context does not state this.")
            out.append({"statement": s, "reason": why, "verdict": int(ok)})
        return Answer("ragas.nli", {"statements": out}, clean=reask)
    judge1 = prompt.startswith("You are a world class expert designed to evaluate the groundedness")
    if judge1 or prompt.startswith("As a specialist in assessing the strength"):
        return Answer("ragas.rg_judge1" if judge1 else "ragas.rg_judge2",
                      {"rating": rg_rating(data.get("response", ""), data.get("context", ""), strict=judge1)},
                      clean=reask)
    return None


def rg_rating(response: str, context: str, strict: bool) -> int:
    """0/1/2 for a whole answer: judge 1 counts only fully supported sentences, judge 2 also partial."""
    sents = [s for s in T.sentences(response) if not T.PLEASANTRY.match(s)]
    if not context.strip() or not sents:
        return 0
    good = ("supported",) if strict else ("supported", "partial")
    hits = [not T.is_abstention(s) and T.support(s, context)[0] in good for s in sents]
    return 2 if all(hits) else 1 if any(hits) else 0


ORDER = 10
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return ragas(messages, rng)
