"""The realistic judge's answers to deepeval's prompts (content only; the server adds the noise)."""
from __future__ import annotations

import ast
import random
import re

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer


def _between(prompt: str, head: str, tail: str = "\n\nJSON:") -> str | None:
    at = prompt.rfind(head)
    end = prompt.rfind(tail)
    return prompt[at + len(head):end] if 0 <= at < end else None


def deepeval(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    if len(messages) != 1 or messages[0][0] != "user":
        return None
    p = messages[0][1].lstrip()
    if p.startswith("Based on the given text, please generate a comprehensive list of"):
        body = _between(p, "\nText:\n")
        if body is None:
            return None
        truths = [t for s in T.sentences(body) for t in T.paraphrase(s, rng)]
        return Answer("deepeval.truths", {"truths": truths})
    if p.startswith("Based on the given text, please extract a comprehensive list of"):
        body = _between(p, "\nAI Output:\n")
        return None if body is None else Answer("deepeval.claims", {"claims": T.statements(body, rng)})
    if p.startswith("Based on the given claims, which is a list of strings"):
        ctx = _between(p, "\nRetrieval Contexts:\n", "\n\nClaims:\n")
        try:
            claims = ast.literal_eval(_between(p, "\nClaims:\n") or "")
        except (ValueError, SyntaxError):
            return None
        out = []
        for c in claims:
            label, _ = T.support(str(c), ctx or "")
            if label == "supported":
                out.append({"verdict": "yes"})
            elif label == "contradicted":
                out.append({"reason": "The retrieval context states something different.", "verdict": "no"})
            else:
                out.append({"reason": "The retrieval context does not mention this.", "verdict": "borderline"})
        return Answer("deepeval.verdicts", {"verdicts": out})
    if p.startswith("Below is a list of Contradictions."):
        score = re.search(r"Faithfulness Score:\n([0-9.]+)", p)
        items = _between(p, "\nContradictions:\n") or "[]"
        n = items.count("', '") + 1 if items.strip() not in ("[]", "") else 0
        why = f"there are {n} contradiction(s) with the retrieval context" if n else "the output agrees with the context"
        return Answer("deepeval.reason", {"reason": f"The score is {score.group(1) if score else '?'} because {why}."})
    return None


ORDER = 20
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return deepeval(messages, rng)
