"""``opik.hallucination``: Opik 2.2.122 ``Hallucination`` metric with the context, unmodified.

The vendor's definition: one judge call (Opik's system prompt with eight guidelines, the question,
the context list and the answer, asking for ``{"score", "reason"}`` with a ``json_schema`` response
format named ``HallucinationResponseFormat``); the judge's score is a hallucination score between 0
(entirely faithful) and 1 (entirely unfaithful). Opik's parser takes the JSON out of the reply
(fences and prose around it included), checks 0 <= score <= 1 and returns it as the metric's value.
Lower is better.

How it is run (the vendor's documented usage, pointed at the cell):

- ``Hallucination(model=LiteLLMChatModel(model_name="openai/<model>", api_base=<cell URL>,
  api_key=<placeholder>, track=False), track=False)`` and ``await metric.ascore(input, output,
  context=[passages])``. LiteLLM's OpenAI route sends the request; the harness hands LiteLLM the
  cell's ``AsyncOpenAI`` client (``client=``, on the run's shared connection pool), so the call
  travels the in-process transport into the gateway. The request LiteLLM builds is unchanged.
- Opik retries a failed model call itself (tenacity, 3 attempts); LiteLLM's own retries are 0 (Opik's
  default). A reply Opik cannot parse raises ``MetricComputationError`` in Opik: the cell is that
  error, as in stock use, never a score.
"""
from __future__ import annotations

from harness.adapters.opik import _shims
from harness.core.records import Case, CellResult, UnitVerdict
from harness.metric.endpoint import Endpoint
from harness.metric.protocol import LabelReading, Shim, register

DEVIATIONS = """Deviations from stock use (each with its reason):

- `track=False` on the metric and on its model, and `OPIK_TRACK_DISABLE=true`,
  `OPIK_ANALYTICS_ENABLE=false`, `OPIK_SENTRY_ENABLE=false`, `OPIK_ENABLE_LITELLM_MODELS_MONITORING=false`
  and `LITELLM_LOCAL_MODEL_COST_MAP=True` in the environment before Opik is imported
  (`harness/metric/vendor_env.py`). Reason: Opik logs every metric call as a trace to its
  server (Comet's cloud by default), reports product analytics to Comet's stats host when a metric is
  created (offline, the process then waits on that host name) and errors to Sentry, and LiteLLM fetches
  its price map from GitHub at import; the harness sends nothing anywhere but the judge.
- LiteLLM's post-call success handler runs as its own task instead of in LiteLLM's logging worker
  (the shim below). Reason: on Python 3.11 that worker can miss the cancellation when a run's event
  loop closes and the run never exits; the handler, the request and the reply are unchanged.
- LiteLLM gets the cell's `AsyncOpenAI` client (`client=`) besides `api_base`. Reason: every call must
  reach the cell's gateway URL over the run's connection pool; LiteLLM's request is unchanged.
- Batch mode only (`--judge-batch`): the model gets `timeout=` the cell's client timeout (which covers the
  batch's wait, up to 25 h) instead of Opik's own 60 s read timeout, which would end every call of a batch that
  takes longer. Outside batch mode Opik keeps its own.
"""


def make_model(endpoint: Endpoint):
    """Opik's LiteLLM judge model on the cell's URL (imports opik: call lazily). In batch mode
    (``endpoint.batched``) its calls get the cell's client timeout, which covers the batch's wait, instead of
    Opik's own 60 s read timeout (``timeout``, a documented completion argument of the model; see the card)."""
    from opik.evaluation.models import LiteLLMChatModel

    batch = {"timeout": endpoint.timeout_s} if endpoint.batched else {}
    return LiteLLMChatModel(model_name=f"openai/{endpoint.model}", api_base=endpoint.base_url,
                            api_key=endpoint.api_key, track=False, client=endpoint.async_openai(), **batch)


@register
class OpikHallucination:
    name = "opik.hallucination"
    version = "1"
    display_name = "Opik Hallucination"
    short_name = "opik.halluc"
    order = 61
    higher_is_better = False
    vendor = "opik"
    import_cpu_s = 2.6   # its vendor stack's import (harness.run.stages)
    vendor_package = "opik"
    extra = "opik"
    requires = ("opik", "litellm")
    vendor_packages = ("opik", "litellm", "openai")
    unit = "answer"
    definition = ("Opik 2.2.122 Hallucination with context: one judge call gives the whole answer a "
                  "hallucination score from 0 (entirely faithful to the context) to 1 (entirely unfaithful), "
                  "following Opik's guidelines (no new information beyond the context, no contradiction, "
                  "partial hallucinations count); Opik returns that score. Lower is better.")
    card_notes = DEVIATIONS
    shims = (Shim("adapters/opik/_shims.py", _shims.SHIM_TEXT),)
    label_reading = LabelReading({"supported": "faithful", "inference": "faithful", "not_found": "hallucinated",
                                  "contradicted": "hallucinated"},
                                 "Opik reading (score = share of claims that are hallucinated)")
    judge = "harness.adapters.opik.judge:reference_reply"

    @classmethod
    def prepare(cls) -> None:
        """Import the vendor stack once, before cells start."""
        import opik.evaluation.metrics  # noqa: F401
        import opik.evaluation.models  # noqa: F401

        _shims.install()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from opik.evaluation.metrics import Hallucination

        _shims.install()   # once per process (a no-op after prepare)
        metric = Hallucination(model=make_model(endpoint), track=False)
        result = await metric.ascore(input=case.question, output=case.answer, context=list(case.context_texts))
        return to_cell(case, result)


def to_cell(case: Case, result) -> CellResult:
    """The cell from Opik's ``ScoreResult``: its value as Opik gives it, one unit for the answer
    (0: supported; any hallucination score above 0: unsupported, the score kept as the raw verdict)."""
    value = float(result.value)
    unit = UnitVerdict(index=0, text=case.answer, kind="answer", raw_verdict=f"{value:g}",
                       verdict="supported" if value == 0 else "unsupported", reason=result.reason,
                       span=(0, len(case.answer)) if case.answer else None)
    return CellResult.scored(value, (unit,), reason=result.reason, detail={"reason": result.reason})
