"""One chat-completion request as the reference judge's handler of a metric sees it (:class:`JudgeRequest`): the
metric, the case, the body, and readers of its messages and response format."""
from __future__ import annotations

from dataclasses import dataclass

from harness.core.records import Case


@dataclass(frozen=True)
class JudgeRequest:
    """One chat-completion request as the reference judge sees it."""

    metric: str
    """The metric name from the cell URL."""
    case: Case
    """The case of the cell (the reference judge answers from its annotation)."""
    body: dict
    """The request body as sent (OpenAI chat-completions shape)."""

    @property
    def messages(self) -> list[dict]:
        """The request's messages."""
        return list(self.body.get("messages") or [])

    def text_of(self, role: str | None = None) -> str:
        """All message text of one role (or of all roles), joined with blank lines.

        Content given as a list of parts (``[{"type": "text", "text": ...}]``) is flattened.
        """
        out = []
        for m in self.messages:
            if role is not None and m.get("role") != role:
                continue
            c = m.get("content")
            if isinstance(c, list):
                c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
            out.append(c or "")
        return "\n\n".join(out)

    @property
    def prompt(self) -> str:
        """Every message's text, joined."""
        return self.text_of(None)

    def is_case_answer(self, text: str | None) -> bool:
        """Is ``text`` (a section a handler cut from the prompt) this case's answer, whitespace aside?"""
        return text is not None and " ".join(text.split()) == " ".join(self.case.answer.split())

    @property
    def schema_name(self) -> str | None:
        """The ``response_format.json_schema.name``, when a json_schema is requested."""
        rf = self.body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("name")
        return None

    @property
    def response_type(self) -> str:
        """``json_schema`` | ``json_object`` | ``text``."""
        return (self.body.get("response_format") or {}).get("type", "text")
