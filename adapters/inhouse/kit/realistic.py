"""The realistic judge's answers to inhouse's prompts (content only; the server adds the noise)."""
from __future__ import annotations

import json
import random
import re

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer, make_quote


def inhouse(messages: list[tuple[str, str]], rng: random.Random, quote_rng: random.Random) -> Answer | None:
    system = next((t for r, t in messages if r == "system"), "")
    user = next((t for r, t in messages if r == "user"), "")
    if system.startswith("You split an answer into atomic claims"):
        answer = user.split("\n\nANSWER:\n", 1)[1] if "\n\nANSWER:\n" in user else user
        return Answer("inhouse.decompose", {"claims": T.statements(answer, rng)})
    if not system.startswith("You check claims against numbered source passages"):
        return None
    head, _, tail = user.partition("\n\nCLAIMS (JSON list, numbered from 1):\n")
    try:
        claims = json.loads(tail)
    except ValueError:
        return None
    passages = dict(re.findall(r"^\[([^\]\n]+)\] (.*?)(?=\n\n\[[^\]\n]+\] |\Z)",
                               head.removeprefix("PASSAGES:\n"), re.S | re.M))
    out = [inhouse_verdict(i, str(c), passages, quote_rng) for i, c in enumerate(claims, start=1)]
    return Answer("inhouse.verify", {"verdicts": out})


def inhouse_verdict(i: int, claim: str, passages: dict[str, str], rng: random.Random) -> dict:
    rated = sorted(((T.support(claim, t), cid) for cid, t in passages.items()), key=lambda x: -x[0][1])
    if not rated:
        return {"claim": i, "verdict": "not_found", "evidence": [], "reason": "There are no passages."}
    (label, frac), cid = rated[0]
    use = [cid]
    if label != "supported" and len(rated) > 1:   # a multi-hop claim: two passages together
        both = T.support(claim, passages[cid] + " " + passages[rated[1][1]])[0]
        if both == "supported":
            label, use = "supported", [cid, rated[1][1]]
    if label not in ("supported", "contradicted"):
        return {"claim": i, "verdict": "not_found", "evidence": [], "reason": "No passage states this."}
    evidence = [{"context_id": c, "quote": make_quote(claim, passages[c], rng)} for c in use]
    why = "The passage states it." if label == "supported" else "The passage says otherwise."
    return {"claim": i, "verdict": label, "evidence": evidence, "reason": why}


ORDER = 70
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return inhouse(messages, rng, quotes)
