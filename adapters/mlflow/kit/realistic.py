"""The realistic judge's answer to MLflow's groundedness judge (``mlflow.genai.judges.is_grounded``;
content only, the server adds the noise).

Recognised from the prompt text alone, as :mod:`tests.helpers.judges.steps` does: the answer is read out of
the ``<claim>``'s ``<answer>`` and the passages out of ``<document>`` (MLflow writes ``str(context)``
there: a Python list literal of ``{"content": ...}`` dicts, read back with ``ast.literal_eval``; any
other document is taken as plain text), and each answer statement (the judge's own split) is rated by
word overlap with the passages (:func:`tests.helpers.judges.text.support`).
"""
from __future__ import annotations

import ast
import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

MLFLOW_START = "Consider the following claim and document. You must determine whether claim is supported"


def _between(text: str, start: str, end: str) -> str | None:
    i, j = text.find(start), text.rfind(end)
    return text[i + len(start):j] if 0 <= i and i + len(start) <= j else None


def _passages(document: str) -> str:
    """The passages' text from the ``<document>`` (a list literal of dicts, or plain text)."""
    try:
        value = ast.literal_eval(document)
    except (ValueError, SyntaxError):
        return document
    if isinstance(value, (list, tuple)):
        return "\n\n".join(str(v.get("content", v)) if isinstance(v, dict) else str(v) for v in value)
    return str(value)


def mlflow(messages: list[tuple[str, str]], rng: random.Random) -> Answer | None:
    if len(messages) != 1 or not messages[0][1].startswith(MLFLOW_START):
        return None
    p = messages[0][1]
    answer = _between(p, "<answer>", "</answer>\n</claim>")
    document = _between(p, "<document>", "</document>")
    if answer is None or document is None:
        return None
    context = _passages(document)
    bad = [s for s in T.statements(answer, rng) if T.support(s, context)[0] not in ("supported", "partial")]
    if bad:
        return Answer("mlflow.groundedness", {"result": "no", "rationale": f"Let's think step by step. "
                                                                           f"The document does not support: {bad[0]}"})
    return Answer("mlflow.groundedness", {"result": "yes", "rationale": "Let's think step by step. "
                                                                        "Every statement is in the document."})


ORDER = 40
"""Where the realistic judge tries this vendor's handler among the vendors' (lower first; the first answer wins)."""


def answer(messages: list[tuple[str, str]], rng: random.Random, quotes: random.Random) -> Answer | None:
    """The realistic judge's hook (:mod:`tests.helpers.judges.realistic`): this vendor's step, or None for another prompt."""
    return mlflow(messages, rng)
