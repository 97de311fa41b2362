"""The DeepEval judge model bound to one cell's gateway URL (imports deepeval: loaded lazily).

``GatewayModel`` is a subclass of DeepEval's own ``OpenAIModel``, so DeepEval treats it as a
native model: its request code, response parsing, cost and token accounting all run unchanged. It
overrides four small things, each for a reason in ``vendor-notes/deepeval.md``:

- ``load_model``: the stock class builds a NEW ``OpenAI``/``AsyncOpenAI`` client on every call
  (about 90 % of its per-case CPU, DESIGN.md). This one returns a client from
  ``endpoint.async_openai()`` / ``endpoint.openai()``, built once per cell, on the run's shared
  connection pool with SDK retries off. No global key or ``OPENAI_BASE_URL`` is ever read: every
  call goes to the cell's gateway URL.
- ``supports_structured_outputs``: the stock class asks for a json_schema only for model names in
  its own registry (``gpt-4o``...); any other name (``reference-judge``, ``qwen2.5:7b``) gets the
  loose-JSON path. This one always asks (``beta.chat.completions.parse``, strict json_schema), so
  every judge gets the same request shape and a compliant judge cannot answer outside the
  yes / no / borderline vocabulary.
- ``_prompt_content``: plain string content, DeepEval's own ``text_only_as_string`` option, instead
  of the list-of-parts form that some OpenAI-compatible servers reject.
- ``calculate_cost``: for a judge DeepEval has no price for, the stock class returns ``None`` and
  the token counts are lost; this one returns an ``EvaluationCost`` with no price (so
  ``evaluation_cost`` stays None) that carries the response's token usage, which DeepEval then
  accrues into ``metric.input_tokens`` / ``output_tokens``. The gateway ledger stays the source
  of truth for calls and tokens.

Temperature is passed explicitly (0.0) so a ``TEMPERATURE`` environment variable cannot change
the requests.
"""
from __future__ import annotations

# harness first: importing it forces the vendor switches (telemetry off, no dotenv) before deepeval
from harness.metric import Endpoint
from harness.model import CellResult

from deepeval.metrics import FaithfulnessMetric
from deepeval.models import OpenAIModel
from deepeval.models.llms.multimodal import to_openai_content
from deepeval.models.utils import EvaluationCost
from deepeval.test_case import LLMTestCase


class GatewayModel(OpenAIModel):
    """DeepEval's ``OpenAIModel`` on one cell's gateway URL, one client per cell, json_schema always."""

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
            self._clients[async_mode] = client
        return client

    def supports_structured_outputs(self) -> bool:
        return True

    def _prompt_content(self, prompt, audio=None):
        return to_openai_content(prompt, audio, text_only_as_string=True)

    def calculate_cost(self, input_tokens, output_tokens, audio_input_tokens=0):
        cost = super().calculate_cost(input_tokens, output_tokens, audio_input_tokens)
        return cost if cost is not None else EvaluationCost(None, input_tokens, output_tokens)


def build_metric(endpoint: Endpoint, penalize: bool) -> FaithfulnessMetric:
    """A fresh ``FaithfulnessMetric`` (it keeps per-case state) with a fresh model for one cell.

    Every argument is DeepEval's default except ``penalize_ambiguous_claims`` (the variant) and
    ``eval_mode="llm"``: left at None, DeepEval reads ``DEEPEVAL_EVAL_MODE`` from the environment,
    and ``hybrid`` / ``system_one`` would send the verdict step to an external service instead of
    the judge.
    """
    return FaithfulnessMetric(model=GatewayModel(endpoint), eval_mode="llm",
                              penalize_ambiguous_claims=penalize)


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
    if isinstance(exc, tenacity.RetryError):
        last = exc.last_attempt.exception() if exc.last_attempt is not None else None
        inner = " ".join(str(last).split())[:200] if last is not None else "unknown"
        return CellResult.error(f"judge call failed after DeepEval's retries: "
                                f"{type(last).__name__}: {inner}")
    return None
