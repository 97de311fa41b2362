"""Which step a request is, and what the realistic judge answers to it (content only; the noise a
real model adds is :mod:`tests.helpers.judges.noise`'s job).

Steps are recognised from the prompt text alone (never from annotations, never from the URL):
Ragas Faithfulness (statements, NLI) and ResponseGroundedness (two judges), DeepEval faithfulness
(truths, claims, verdicts, reason), TruLens (trivial filter, groundedness with CoT reasons,
abstention, answerability, citation, the reformat call) and the in-house decompose / verify
prompts. Each handler returns an :class:`Answer`; an unknown prompt gets a polite non-answer, as
from a real model, counted by the server as ``unrecognised``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from tests.helpers.judges import text as T


@dataclass
class Answer:
    """The judge's answer before noise: a JSON object, a plain text, or a 0/1/2/3 score."""

    step: str
    value: object
    kind: str = "json"
    """``json`` (value is a dict) | ``text`` (a string) | ``score`` (an int: bare or ``{"score": n}``)."""
    clean: bool = False
    """True: a model correcting itself after a re-ask; no noise."""


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
