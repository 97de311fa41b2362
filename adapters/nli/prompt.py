"""MiniCheck's yes/no request, and the support probability read from the judge's reply.

The system and user prompts are MiniCheck's own (``minicheck/utils.py`` of Liyan06/MiniCheck, MIT
licence), the ones Bespoke-MiniCheck-7B was trained with; the request asks for one token at
temperature 0 with the top five log-probabilities, as MiniCheck's vLLM checker does.

The support probability of a reply (:func:`support`):

- log-probabilities in the reply (OpenAI's ``choices[0].logprobs.content[0].top_logprobs``): the sum
  of ``exp(logprob)`` over the candidate first tokens that read ``yes`` (case and surrounding
  whitespace ignored), MiniCheck's own reading; the chosen token stands in when no alternatives came;
- no log-probabilities (the server ignores the request, as the reference judge and many chat-only
  servers do), or none of the candidates reads yes or no: the reply text, 1.0 for a reply whose first
  word is ``yes``, 0.0 for ``no``;
- anything else is unreadable (None), never a "No".
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

SYSTEM_PROMPT = ("Determine whether the provided claim is consistent with the corresponding document. "
                 "Consistency in this context implies that all information presented in the claim is "
                 "substantiated by the document. If not, it should be considered inconsistent. Please assess "
                 "the claim's consistency with the document by responding with either \"Yes\" or \"No\".")
"""MiniCheck's system prompt, verbatim."""
USER_PROMPT = "Document: [DOCUMENT]\nClaim: [CLAIM]"
"""MiniCheck's user prompt, verbatim (the placeholders are replaced as MiniCheck replaces them)."""
TOP_LOGPROBS = 5
"""Candidates asked for the first token (MiniCheck's vLLM sampling asks for 5)."""
_FIRST_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def request(model: str, document: str, claim: str) -> dict:
    """The chat-completions body for one (chunk, sentence) check.

    >>> b = request("m", "Bake at 350 F.", "Bake hot.")
    >>> b["messages"][1]["content"], b["max_tokens"], b["logprobs"], b["top_logprobs"]
    ('Document: Bake at 350 F.\\nClaim: Bake hot.', 1, True, 5)
    """
    user = USER_PROMPT.replace("[DOCUMENT]", document).replace("[CLAIM]", claim)
    return {"model": model, "temperature": 0, "max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]}


def parse_user(text: str) -> tuple[str, str] | None:
    """(document, claim) from a user prompt built by :func:`request`, or None.

    >>> parse_user("Document: A.\\nB.\\nClaim: C.")
    ('A.\\nB.', 'C.')
    """
    head, sep = "Document: ", "\nClaim: "
    if not text.startswith(head) or sep not in text:
        return None
    at = text.rfind(sep)
    return text[len(head):at], text[at + len(sep):]


@dataclass(frozen=True)
class Support:
    """What one reply says about one (chunk, sentence) pair."""

    prob: float | None
    """Probability that the chunk supports the sentence; None: the reply says neither yes nor no."""
    source: str
    """``logprobs`` | ``text`` | ``unreadable`` (and ``local`` for the ONNX backend)."""
    reply: str
    """The reply text as the judge gave it (shortened)."""


def yes_no(word: str) -> str | None:
    """``yes`` / ``no`` for a token or reply that starts with one of them (markdown and case aside).

    >>> yes_no(" Yes"), yes_no("**No**."), yes_no("Nope"), yes_no("")
    ('yes', 'no', None, None)
    """
    m = _FIRST_WORD.search(word)
    w = m.group(0).lower() if m else ""
    return w if w in ("yes", "no") else None


def from_logprobs(logprobs) -> float | None:
    """MiniCheck's support probability from a reply's ``logprobs`` object, or None when it holds no yes/no.

    >>> lp = {"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": [
    ...     {"token": "Yes", "logprob": -0.1}, {"token": "yes", "logprob": -4.0}, {"token": "No", "logprob": -2.5}]}]}
    >>> round(from_logprobs(lp), 4)
    0.9232
    >>> from_logprobs(None) is None, from_logprobs({"content": []}) is None
    (True, True)
    """
    try:
        first = logprobs["content"][0]
        cands = list(first.get("top_logprobs") or []) or [first]
        read = [(c["token"], float(c["logprob"])) for c in cands]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    kinds = [tok.strip().lower() for tok, _ in read]
    if not {"yes", "no"} & set(kinds):
        return None
    return min(1.0, sum(math.exp(lp) for (_, lp), kind in zip(read, kinds) if kind == "yes"))


def support(reply: dict) -> Support:
    """The support probability of one chat-completion reply (see the module docstring).

    >>> support({"choices": [{"message": {"content": "Yes"}, "logprobs": None}]})
    Support(prob=1.0, source='text', reply='Yes')
    >>> support({"choices": [{"message": {"content": "I cannot say."}}]}).source
    'unreadable'
    """
    try:
        choice = reply["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return Support(None, "unreadable", repr(reply)[:120])
    p = from_logprobs(choice.get("logprobs"))
    if p is not None:
        return Support(p, "logprobs", text[:120])
    word = yes_no(text)
    if word is None:
        return Support(None, "unreadable", text[:120])
    return Support(1.0 if word == "yes" else 0.0, "text", text[:120])
