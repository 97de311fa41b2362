"""The reference judge: deterministic, offline, annotation-driven.

It serves chat completions and, as an OpenAI-like server does, the Responses API: a Responses request
is read as the chat request it amounts to and gets the same answer (:mod:`harness.judge.responses_api`;
stock TruLens's OpenAI provider sends its scored calls there first). Chosen over refusing it as a
chat-only server would: TruLens then sends its stock requests with no refused probe per cell, the
call counts stay what they were, and the replies (so the scores) are the chat path's.

It answers each metric's prompts from the case's human claim labels, applying each vendor's rubric
to those labels as the rubric's text instructs. The judge is held constant, so differences between
metrics come only from their definitions. Each metric's reading of the labels is data on its class
(``label_reading``) and its request handling lives with its adapter
(the ``judge`` handler the class names); this module dispatches to it. The annotation views the
handlers read (judged claims, claims in a span, the abstention) are methods of the case
(:class:`harness.core.records.Case`).

The label table is not copied here: each row is the ``label_reading`` of a metric's class, and
:func:`label_table` reads them from the registry (every metric card prints its row). Changing a row is a
versioned change: bump the metric's version (and ``REFERENCE_VERSION`` when the shared reading of the
labels below changes), and say so on its card.

What every row shares: a ``supported`` claim has a verbatim evidence span; an ``inference`` claim follows
from the passages but no span states it; ``not_found`` is plausible but absent; ``contradicted`` is
contradicted. Data with RAGTruth-style spans instead of claims: each answer sentence is a claim,
``not_found``/``contradicted`` where it overlaps a span of that label, else ``supported``.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import math
import time
from dataclasses import dataclass

from harness.core.records import Case
from harness.metric import registry
from harness.metric.judge_request import JudgeRequest
from harness.metric.protocol import UnrecognisedRequest

REFERENCE_VERSION = "1"
"""Version of the label table above."""

MODEL_ID = "reference-judge"
"""The model id the reference judge reports."""


def label_table() -> list[tuple[str, str, dict]]:
    """(metric, what its answer means, annotation label -> the judge's answer) for every registered metric
    that reads claim labels, in display order: the reference judge's label table, from the classes."""
    out = []
    for name in registry.names():
        reading = registry.get(name).label_reading
        if reading is not None:
            out.append((name, reading.meaning, dict(reading.answers)))
    return out


def unannotated(cases) -> list[str]:
    """Ids of the cases the reference judge cannot answer (no annotation), in order."""
    return [c.id for c in cases if c.annotation is None]


CLI_HINT = "pass --judge-url (and --judge-model) to score them with a real judge"
"""How ``harness run`` says to use a real judge; the Python API passes its own (``judge=``)."""


def refuse_unannotated(cases, hint: str = CLI_HINT) -> None:
    """ValueError naming every unannotated case: the reference judge answers from annotations only."""
    missing = unannotated(cases)
    if missing:
        shown = ", ".join(missing[:10]) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
        raise ValueError(f"the reference judge answers from annotations, and {len(missing)} case(s) have none "
                         f"({shown}): {hint}")


def approx_tokens(text: str) -> int:
    """Token count the reference judge reports: ceil(characters / 4), at least 1.

    >>> approx_tokens("abcdefgh"), approx_tokens("")
    (2, 1)
    """
    return max(1, math.ceil(len(text) / 4))


@dataclass
class ReferenceJudge:
    """Answers chat-completion requests for cells from each metric's ``judge`` handler."""

    latency_ms: float = 0.0
    """Injected latency per call (benchmarks use it); applied by the gateway."""

    def reply(self, metric: str, case: Case, body: dict) -> dict:
        """A full ``chat.completion`` response for one request (raises UnrecognisedRequest)."""
        req = JudgeRequest(metric=metric, case=case, body=body)
        if case.annotation is None:
            raise UnrecognisedRequest(metric, f"case {case.id!r} has no annotation, and the reference judge "
                                              "answers only from annotations (pass --judge-url)", req.prompt)
        content = handler(metric, req.prompt)(req)
        if not isinstance(content, str):
            content = json.dumps(content)
        return completion(content, body.get("model") or MODEL_ID, req.prompt)


def handler(metric: str, prompt: str = ""):
    """The reference-judge handler of ``metric``: its class's ``judge`` ("module:function"),
    imported on first use (UnrecognisedRequest for a metric no distribution declares)."""

    try:
        cls = registry.get(metric)
    except ValueError as e:
        raise UnrecognisedRequest(metric, "unknown metric", prompt) from e
    module, _, func = cls.judge.partition(":")
    return getattr(importlib.import_module(module), func)


def completion(content: str, model: str, prompt_text: str) -> dict:
    """Wrap reply text as an OpenAI ``chat.completion`` with usage counts."""
    pt, ct = approx_tokens(prompt_text), approx_tokens(content)
    rid = hashlib.sha256((prompt_text + content).encode()).hexdigest()[:24]
    return {
        "id": f"chatcmpl-ref-{rid}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "system_fingerprint": f"reference-v{REFERENCE_VERSION}",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


__all__ = [
    "REFERENCE_VERSION", "MODEL_ID", "unannotated", "refuse_unannotated", "approx_tokens", "ReferenceJudge",
    "handler", "completion", "UnrecognisedRequest",
]
