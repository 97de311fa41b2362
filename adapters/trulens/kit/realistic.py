"""The realistic judge's answers to TruLens's prompts (recognised by the system prompt's start)."""
from __future__ import annotations

import ast
import random
import re

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer, make_quote

TRIVIAL = "Consider the following list of statements. Identify and remove sentences"
GROUNDEDNESS = "You are an INFORMATION OVERLAP classifier"
ABSTENTION = "You are a ABSTENTION classifier"
ANSWERABILITY = "You are a ANSWERABILITY classifier"
CITATION = "You are a CITATION-ATTRIBUTION classifier"
REFORMAT = "Convert the following text into a strict JSON object"
COT = "Please evaluate using the following template:"


def trulens(messages: list[tuple[str, str]], rng: random.Random, quote_rng: random.Random) -> Answer | None:
    system = next((t for r, t in messages if r == "system"), "")
    user = next((t for r, t in messages if r == "user"), "")
    if system.startswith(TRIVIAL):
        m = re.search(r"ALL STATEMENTS: (.*)\n\nIMPORTANT STATEMENTS:", user, re.S)
        try:
            stmts = ast.literal_eval(m.group(1)) if m else None
        except (ValueError, SyntaxError):
            stmts = None
        if not isinstance(stmts, list):
            return None
        return Answer("trulens.trivial", repr([s for s in stmts if not T.PLEASANTRY.match(str(s))]), kind="text")
    if system.startswith(GROUNDEDNESS):
        m = re.match(r"SOURCE: (.*)\n\nSTATEMENT: (.*?)\n\nRespond ONLY", user, re.S)
        if not m:
            return None
        return groundedness(m.group(1), m.group(2), rng, quote_rng)
    if system.startswith(ABSTENTION):
        m = re.match(r"STATEMENT: (.*)\n\nABSTENTION:", user, re.S)
        return Answer("trulens.abstention", int(T.is_abstention(m.group(1))), kind="score") if m else None
    if system.startswith(ANSWERABILITY):
        m = re.match(r"QUESTION: (.*?)\n\nSOURCE: (.*)\n\nANSWERABILITY:", user, re.S)
        if not m:
            return None
        _, frac = T.support(m.group(1), m.group(2))
        return Answer("trulens.answerability", int(frac >= 0.5), kind="score")
    if system.startswith(CITATION):
        return citation(user)
    if system.startswith(REFORMAT):
        n = re.search(r"\b([0-3])\b", user)
        return Answer("trulens.reformat", {"criteria": "The statement's support in the source.",
                                           "supporting_evidence": user.strip()[:200] or "NOTHING FOUND",
                                           "score": int(n.group(1)) if n else 0}, clean=True)
    return None


def groundedness(source: str, statement: str, rng: random.Random, quote_rng: random.Random) -> Answer:
    """0-3 by word overlap; an abstention gets 3 and ``ABSTENTION``, as the prompt asks."""
    echo = statement.rstrip(".") if rng.random() < 0.1 else statement
    if T.is_abstention(statement):
        return Answer("trulens.groundedness", {"criteria": echo, "supporting_evidence": "ABSTENTION", "score": 3})
    label, frac = T.support(statement, source)
    score = {"supported": 3, "partial": 2 if frac >= 0.65 else 1}.get(label, 0)
    evidence = make_quote(statement, source, quote_rng) if score else "NOTHING FOUND"
    return Answer("trulens.groundedness", {"criteria": echo, "supporting_evidence": evidence, "score": score})


def citation(user: str) -> Answer | None:
    m = re.search(r"SOURCES?:\n(.*?)\n\nANSWER WITH CITATIONS: (.*?)\n\n", user + "\n\n", re.S)
    if not m:
        return None
    passages = dict(re.findall(r"^\[(\d+)\] (.*?)(?=\n\n\[\d+\] |\Z)", m.group(1), re.S | re.M))
    checks = []
    for s in T.sentences(m.group(2)):
        for n in re.findall(r"\[(\d+)\]", s):
            label, _ = T.support(T.strip_markers(s), passages.get(n, ""))
            checks.append((n, label in ("supported", "partial")))
    score = int(all(ok for _, ok in checks))
    if COT not in user:
        return Answer("trulens.citation", score, kind="score")
    why = "; ".join(f"[{n}] {'supports' if ok else 'does not support'} its claim" for n, ok in checks) or "no markers"
    return Answer("trulens.citation", {"criteria": "Each [N] marker points to a passage that supports its claim.",
                                       "supporting_evidence": why, "score": score})


ORDER = 80
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return trulens(messages, rng, quotes)
