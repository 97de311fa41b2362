"""A TruLens ``LLMProvider`` that sends the cell's gateway what stock TruLens's OpenAI provider sends.

Imports vendor code at module level (the leading ``_`` keeps adapter discovery away from it).

Why not the stock ``trulens.providers.openai.OpenAI`` provider itself (vendor notes section 2.1):
constructing it wraps the openai SDK's ``Completions.create`` / ``Responses.create`` for the whole
process (every vendor's client in a worker would be instrumented), and it keeps what it learns about a
server in a process-wide cache keyed by the model name. This subclass overrides only
``_create_chat_completion``, the one method every TruLens feedback call goes through, so all of
TruLens's prompting, parsing and aggregation code runs unchanged, and sends what the stock provider
sends (:mod:`harness.adapters.trulens._sequence`: the Responses API first for scored calls, chat completions
without ``response_format`` when the server has none, the same parameters), on the client from
``endpoint.openai()`` (the run's shared connection pool, SDK retries off; no other client, no global key):

- against an OpenAI-like judge, scored calls go to ``POST .../responses`` with TruLens's own pydantic
  schema (``BaseFeedbackResponse`` / ``ChainOfThoughtResponse``) as a strict json_schema ``text.format``,
  and TruLens gets the parsed object, as from stock;
- against a chat-only judge, the cell's first scored call learns that (a 400 "not supported", or a
  404, where stock fails: the card says so), and every call goes to ``POST .../chat/completions``
  without ``response_format``, ``temperature`` 0.0 and ``seed`` 123, as stock's fallback sends;
- TruLens's own retries are stock (``endpoint.retries`` 3, with its 2/4/8 s sleeps) for every failure
  except a transport one (:class:`GatewayEndpoint`): a reply cut at the token limit or one TruLens cannot
  parse is asked again as in stock use; an API error or timeout reaches TruLens after the gateway's own
  retries and is not repeated. Its pace is set far above any real rate (``RPM``): the gateway paces.

It also records, per provider instance (one per cell), what the trivial-statement filter received
and returned (TruLens does not report which sentences the filter dropped; the adapters mark them
``excluded``), and which judge calls raised (TruLens falls back silently on some: a failed filter
call keeps every sentence, a failed abstention check means "not an abstention"). Recording changes
nothing TruLens sees or returns.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from harness.adapters.trulens import _sequence

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


class GatewayEndpoint(TruEndpoint):
    """TruLens's endpoint with its stock retries (3, 2/4/8 s apart), except that it does not repeat a
    transport failure (an openai ``APIError``: a status, connection or timeout error; the harness's
    ``JudgeHTTPError``), which the gateway has already retried with its own attempts and budget."""

    def _can_retry(self, e: Exception) -> bool:
        from harness.metric.endpoint import JudgeHTTPError  # noqa: PLC0415

        import openai  # noqa: PLC0415 - imported by TruLens already

        return not isinstance(e, (openai.APIError, JudgeHTTPError)) and super()._can_retry(e)


class GatewayProvider(LLMProvider):
    """TruLens provider bound to one cell's gateway endpoint."""

    _client: Any = pydantic.PrivateAttr(default=None)
    _filter_log: list = pydantic.PrivateAttr(default_factory=list)
    _failures: list = pydantic.PrivateAttr(default_factory=list)
    _fallbacks: list = pydantic.PrivateAttr(default_factory=list)
    _caps: Any = pydantic.PrivateAttr(default_factory=_sequence.Capabilities)

    def __init__(self, endpoint):
        """``endpoint``: the cell's :class:`harness.metric.endpoint.Endpoint`."""
        super().__init__(model_engine=endpoint.model,
                         endpoint=GatewayEndpoint(name="harness-gateway", rpm=RPM, _register_instance=False))
        self._client = endpoint.openai()

    def _create_chat_completion(self, prompt: Optional[str] = None, messages: Optional[Sequence[dict]] = None,
                                response_format: Optional[type[pydantic.BaseModel]] = None,
                                reasoning_effort: Optional[str] = None, **kwargs):
        """Stock's request for this call (:func:`harness.adapters.trulens._sequence.send`): the Responses API's
        parsed object, or the chat completion's text."""
        msgs = list(messages) if messages is not None else [{"role": "system", "content": prompt}]
        params = _sequence.prepare(self.model_engine, kwargs, reasoning_effort)
        try:
            return _sequence.send(self._client, self._caps, msgs, response_format, params)
        except Exception as e:
            # TruLens swallows some failures (the trivial filter proceeds with all statements, a failed
            # abstention check means "not an abstention"): record them so the cell can say so.
            self._failures.append(f"{type(e).__name__} on: {str(msgs[0].get('content', ''))[:50]}")
            raise

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
