"""Reference-judge handler for ``baseline.similarity``: the metric sends no chat request (its
embeddings are served by the gateway's embedding model), so any chat request is unrecognised."""
from __future__ import annotations

from harness.metric import JudgeRequest, UnrecognisedRequest


def similarity_reply(req: JudgeRequest) -> str:
    """Always :class:`UnrecognisedRequest`: the metric asks the judge nothing."""
    raise UnrecognisedRequest(req.metric, "chat request (this metric sends only embeddings requests)", req.prompt)
