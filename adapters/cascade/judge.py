"""Reference-judge handler for ``cascade.similarity_span``: its only chat step is the in-house
verify step, answered by the in-house handler (``adapters/inhouse/judge.py``), which reads a whole
answer sentence from the labels of the claims in it."""
from __future__ import annotations

from harness.metric import JudgeRequest


def cascade_reply(req: JudgeRequest) -> str:
    """The in-house verifier's reference reply to the cascade's verify request."""
    from harness.adapters.inhouse.judge import reply

    return reply(req)
