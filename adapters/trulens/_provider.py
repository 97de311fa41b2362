"""A TruLens ``LLMProvider`` that makes plain chat-completion calls to the cell's gateway URL.

Imports vendor code at module level (the leading ``_`` keeps adapter discovery away from it).

Why not the stock ``trulens.providers.openai.OpenAI`` provider (vendor notes section 2.1): it tries
the Responses API (``POST /v1/responses``) first, which the gateway does not serve, and constructing
it wraps the openai SDK's ``Completions.create`` / ``Responses.create`` for the whole process. This
subclass overrides only ``_create_chat_completion``, the one method every TruLens feedback call
goes through, so all of TruLens's prompting, parsing and aggregation code runs unchanged:

- one ``POST .../chat/completions`` per TruLens request, on the client from ``endpoint.openai()``
  (the run's shared connection pool, SDK retries off). No other client, no global key;
- scored calls carry TruLens's own pydantic schema (``BaseFeedbackResponse`` /
  ``ChainOfThoughtResponse``) as a ``json_schema`` ``response_format`` (strict);
- ``temperature`` defaults to 0.0 where TruLens passes none (the trivial filter), as the stock
  provider's chat path does; reasoning models get TruLens's ``reasoning_effort`` instead;
- TruLens's own retries are off (``endpoint.retries = 0``) and its pace is set far above any real
  rate (``RPM``): the harness gateway owns retries, backoff and timeouts.

It also records, per provider instance (one per cell), what the trivial-statement filter received
and returned (TruLens does not report which sentences the filter dropped; the adapters mark them
``excluded``), and which judge calls raised (TruLens falls back silently on some: a failed filter
call keeps every sentence, a failed abstention check means "not an abstention"). Recording changes
nothing TruLens sees or returns.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import pydantic
from trulens.core.feedback.endpoint import Endpoint as TruEndpoint
from trulens.core.feedback.feedback import GroundednessConfigs
from trulens.feedback import LLMProvider

ABSTENTION_PROMPT = "You are a ABSTENTION classifier"
"""Start of TruLens's abstention-classifier system prompt (pinned by the contract test's templates)."""

RPM = 1_000_000
"""Requests per minute for TruLens's pace: effectively unpaced (the harness paces nothing either;
a real judge's rate limits come back as 429s that the gateway retries)."""

CONFIGS = GroundednessConfigs(use_sent_tokenize=True, filter_trivial_statements=True)
"""TruLens's defaults, passed explicitly: keyword flags are silently ignored (vendor notes 3.1)."""


def json_schema_format(model: type[pydantic.BaseModel]) -> dict:
    """``response_format`` for one of TruLens's pydantic response schemas."""
    return {"type": "json_schema", "json_schema": {
        "name": model.__name__, "schema": model.model_json_schema(), "strict": True}}


class GatewayProvider(LLMProvider):
    """TruLens provider bound to one cell's gateway endpoint."""

    _client: Any = pydantic.PrivateAttr(default=None)
    _filter_log: list = pydantic.PrivateAttr(default_factory=list)
    _failures: list = pydantic.PrivateAttr(default_factory=list)
    _fallbacks: list = pydantic.PrivateAttr(default_factory=list)

    def __init__(self, endpoint):
        """``endpoint``: the cell's :class:`harness.metric.protocol.Endpoint`."""
        super().__init__(model_engine=endpoint.model,
                         endpoint=TruEndpoint(name="harness-gateway", rpm=RPM, _register_instance=False))
        self.endpoint.retries = 0
        self._client = endpoint.openai()

    def _create_chat_completion(self, prompt: Optional[str] = None, messages: Optional[Sequence[dict]] = None,
                                response_format: Optional[type[pydantic.BaseModel]] = None, **kwargs) -> str:
        msgs = list(messages) if messages is not None else [{"role": "system", "content": prompt}]
        if response_format is not None:
            kwargs["response_format"] = json_schema_format(response_format)
        if "reasoning_effort" not in kwargs and not self._is_reasoning_model():
            kwargs.setdefault("temperature", 0.0)
        try:
            reply = self._client.chat.completions.create(model=self.model_engine, messages=msgs, **kwargs)
        except Exception as e:
            # TruLens swallows some failures (the trivial filter proceeds with all statements, a failed
            # abstention check means "not an abstention"): record them so the cell can say so.
            self._failures.append(f"{type(e).__name__} on: {str(msgs[0].get('content', ''))[:50]}")
            raise
        return reply.choices[0].message.content or ""

    def generate_score(self, system_prompt: str, user_prompt: Optional[str] = None, *args, **kwargs) -> float:
        """TruLens's own ``generate_score``, observed: when the answerability variant's abstention check
        raises or gives TruLens's unparsable ``-1``, TruLens reads the sentence as "not an abstention"
        without saying so; that is recorded (the score and any exception pass through unchanged)."""
        abstention = str(system_prompt).startswith(ABSTENTION_PROMPT)
        sentence = str(user_prompt or "").removeprefix("STATEMENT: ").split("\n\nABSTENTION:")[0][:80]
        try:
            score = super().generate_score(system_prompt, user_prompt, *args, **kwargs)
        except Exception as e:
            if abstention:
                self._fallbacks.append(f"the abstention check on {sentence!r} failed ({type(e).__name__}); "
                                       "TruLens read it as not an abstention")
            raise
        if abstention and score == -1.0:
            self._fallbacks.append(f"the abstention check on {sentence!r} was unparsable; "
                                   "TruLens read it as not an abstention")
        return score

    def _remove_trivial_statements(self, statements: list[str]) -> list[str]:
        kept = super()._remove_trivial_statements(statements)
        # TruLens returns the list it parsed from the reply, or the very ``statements`` object it
        # was given when the reply did not parse to a list: identity tells the two apart.
        self._filter_log.append({"statements": list(statements), "kept": list(kept),
                                 "parsed": kept is not statements})
        return kept

    @property
    def failures(self) -> list[str]:
        """Judge calls that raised (error type and the start of the system prompt)."""
        return list(self._failures)

    @property
    def fallbacks(self) -> list[str]:
        """Silent fallbacks TruLens took on a failed abstention check (one line each)."""
        return list(self._fallbacks)

    @property
    def filter_log(self) -> list[dict]:
        """One entry per trivial-filter call: ``statements`` sent, ``kept`` returned, and whether
        the judge's reply ``parsed`` (False: TruLens proceeded with all statements)."""
        return list(self._filter_log)


def make_provider(endpoint) -> GatewayProvider:
    """A fresh provider for one cell."""
    return GatewayProvider(endpoint)
