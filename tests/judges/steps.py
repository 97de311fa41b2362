"""Which step a request is, and what the realistic judge answers to it (content only; the noise a
real model adds is :mod:`tests.judges.noise`'s job).

Steps are recognised from the prompt text alone (never from annotations, never from the URL):
Ragas Faithfulness (statements, NLI) and ResponseGroundedness (two judges), DeepEval faithfulness
(truths, claims, verdicts, reason), TruLens (trivial filter, groundedness with CoT reasons,
abstention, answerability, citation, the reformat call) and the in-house decompose / verify
prompts. Each handler returns an :class:`Answer`; an unknown prompt gets a polite non-answer, as
from a real model, counted by the server as ``unrecognised``.
"""
from __future__ import annotations

import ast
import json
import random
import re
from dataclasses import dataclass

from tests.judges import text as T

RAGAS_INPUT = "Now perform the same with the following input\ninput: "
REASK = "Correct your JSON ONLY RESPONSE"


@dataclass
class Answer:
    """The judge's answer before noise: a JSON object, a plain text, or a 0/1/2/3 score."""

    step: str
    value: object
    kind: str = "json"
    """``json`` (value is a dict) | ``text`` (a string) | ``score`` (an int: bare or ``{"score": n}``)."""
    clean: bool = False
    """True: a model correcting itself after a re-ask; no noise."""


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


def make_quote(claim: str, context: str, rng: random.Random) -> str:
    """Evidence as a real judge quotes it: about half exact, half near-verbatim (a comma, a final
    stop, an ellipsis), and a few invented (the claim's own words)."""
    quote, _ = T.best_quote(claim, context)
    r = rng.random()
    if r < 0.05 or not quote:
        return T.strip_markers(claim).rstrip(".")
    if r < 0.52:
        return quote
    return T.alter_quote(quote, context, rng.choice(("comma", "stop", "ellipsis")))
