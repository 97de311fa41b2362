"""The DeepEval judge model bound to one cell's gateway URL (imports deepeval: loaded lazily).

``GatewayModel`` is a subclass of DeepEval's own ``OpenAIModel``, so DeepEval treats it as a
native model: its request code, response parsing, cost and token accounting all run unchanged, and
its request protocol is the one DeepEval picks for the model id from its own model registry
(``gpt-4o``-class ids: structured output, a strict json_schema; ``gpt-3.5``-class: JSON mode; any
other id, e.g. ``qwen2.5:7b`` or ``reference-judge``: plain text, DeepEval trims the reply to its
outer braces and validates it), with the message content in DeepEval's own list-of-parts form.
Deviations from stock use, each listed on the card (``DEVIATIONS`` in ``faithfulness.py``):

- ``load_model``: the stock class builds a NEW ``OpenAI``/``AsyncOpenAI`` client on every call
  (about 90 % of its per-case CPU, DESIGN.md). This one returns a client from
  ``endpoint.async_openai()`` / ``endpoint.openai()``, built once per cell, on the run's shared
  connection pool with SDK retries off. No global key or ``OPENAI_BASE_URL`` is ever read: every
  call goes to the cell's gateway URL. Requests are byte-for-byte what the stock class sends.
  The client is wrapped so that a reply without ``usage`` scores instead of failing (the shim
  in ``_usage``, on the card).
- ``calculate_cost``: for a judge DeepEval has no price for, the stock class returns ``None`` and
  the token counts are lost; this one returns an ``EvaluationCost`` with no price (so
  ``evaluation_cost`` stays None) that carries the response's token usage, which DeepEval then
  accrues into ``metric.input_tokens`` / ``output_tokens``. The gateway ledger stays the source
  of truth for calls and tokens.
- ``DEEPEVAL_RETRY_MAX_ATTEMPTS=1`` and ``DEEPEVAL_DISABLE_TIMEOUTS=1`` (``harness.metric.vendor_env``):
  the gateway owns transport retries and timeouts, so DeepEval's own (2 attempts, 88.5 s) do not
  stack on them.

Temperature is passed explicitly (0.0) so a ``TEMPERATURE`` environment variable cannot change
the requests.
"""
from __future__ import annotations

import inspect

from harness.adapters.deepeval._usage import UsageOptional
from harness.core.records import CellResult
from harness.metric import Endpoint
from harness.metric.vendor_env import switches

# deepeval reads its switches as it is imported (the .env autoload, its folder in the working directory): the
# import runs under them even when this module is imported outside a harness run (inside one they are on anyway)
with switches():
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import OpenAIModel
    from deepeval.models.utils import EvaluationCost
    from deepeval.test_case import LLMTestCase


class GatewayModel(OpenAIModel):
    """DeepEval's ``OpenAIModel`` on one cell's gateway URL, one client per cell, DeepEval's own protocol."""

    def __init__(self, endpoint: Endpoint):
        self._endpoint = endpoint
        self._clients: dict[bool, object] = {}
        self._booting = True  # DeepEvalBaseLLM.__init__ calls load_model(): build nothing then
        super().__init__(model=endpoint.model, api_key=endpoint.api_key, base_url=endpoint.base_url,
                         temperature=0.0)
        self._booting = False

    def load_model(self, async_mode: bool = False):
        if self._booting:
            return None
        client = self._clients.get(async_mode)
        if client is None:
            client = self._endpoint.async_openai() if async_mode else self._endpoint.openai()
            client = UsageOptional(client)     # a reply without usage scores (see _usage)
            self._clients[async_mode] = client
        return client

    def calculate_cost(self, input_tokens, output_tokens, *audio_input_tokens):
        # DeepEval passes audio_input_tokens from 4.2.4 on; an older release (a drift card's) passes two
        cost = super().calculate_cost(input_tokens, output_tokens, *audio_input_tokens)
        return cost if cost is not None else EvaluationCost(None, input_tokens, output_tokens)


def build_metric(endpoint: Endpoint, penalize: bool) -> FaithfulnessMetric:
    """A fresh ``FaithfulnessMetric`` (it keeps per-case state) with a fresh model for one cell.

    Every argument is DeepEval's default except ``penalize_ambiguous_claims`` (the variant) and
    ``eval_mode="llm"``: left at None, DeepEval reads ``DEEPEVAL_EVAL_MODE`` from the environment,
    and ``hybrid`` / ``system_one`` would send the verdict step to an external service instead of
    the judge.
    """
    mode = {"eval_mode": "llm"} if HAS_EVAL_MODE else {}   # a release before 4.2.6 has no eval mode: always the judge
    return FaithfulnessMetric(model=GatewayModel(endpoint), penalize_ambiguous_claims=penalize, **mode)


HAS_EVAL_MODE = "eval_mode" in inspect.signature(FaithfulnessMetric.__init__).parameters
"""DeepEval 4.2.6 added ``eval_mode``; an older release (a drift card's other version, docs/drift.md) takes
no such argument and always asks the judge."""


def make_test_case(question: str, answer: str, contexts: list[str]) -> LLMTestCase:
    """The DeepEval test case for one harness case."""
    return LLMTestCase(input=question, actual_output=answer, retrieval_context=contexts)


def explain(exc: BaseException) -> CellResult | None:
    """A cell for the DeepEval failures we can explain better than the runner; None otherwise.

    - ``MissingTestCaseParamsError`` (DeepEval rejects the input, e.g. an empty answer, before any
      call): unscored by the vendor, flagged ``empty_answer_rejected`` for an empty answer.
    - a pydantic ``ValidationError`` (a judge reply that does not fit the step's schema; DeepEval
      does not retry it): an error naming the step's schema.
    - ``tenacity.RetryError`` (DeepEval's own retries ran out): an error naming the last failure.
    - an ``AttributeError`` on ``prompt_tokens``: the judge sent no ``usage``, which DeepEval's own
      model class reads unconditionally (stock DeepEval fails the same way).
    """
    import pydantic
    import tenacity
    from deepeval.errors import MissingTestCaseParamsError

    if isinstance(exc, MissingTestCaseParamsError):
        flags = ("empty_answer_rejected",) if "cannot be empty" in str(exc) else ()
        return CellResult.vendor_nan(f"unscored by the vendor: DeepEval rejects the test case "
                                     f"(MissingTestCaseParamsError: {exc})", flags=flags)
    if isinstance(exc, pydantic.ValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return CellResult.error(f"judge reply does not fit DeepEval's {exc.title} schema "
                                f"({exc.error_count()} error(s); {where}: {first.get('msg', '')})")
    if isinstance(exc, AttributeError) and "prompt_tokens" in str(exc):
        return CellResult.error("the judge's response carried no `usage`: DeepEval's own OpenAIModel reads "
                                "completion.usage.prompt_tokens and raises (AttributeError), as in stock use")
    if isinstance(exc, tenacity.RetryError):
        last = exc.last_attempt.exception() if exc.last_attempt is not None else None
        inner = " ".join(str(last).split())[:200] if last is not None else "unknown"
        return CellResult.error(f"judge call failed after DeepEval's retries: "
                                f"{type(last).__name__}: {inner}")
    return None
