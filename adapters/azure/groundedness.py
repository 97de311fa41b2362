"""``azure.groundedness``: azure-ai-evaluation 1.18.10 ``GroundednessEvaluator``, unmodified.

The vendor's definition: one judge call sees the passages, the question and the answer in Azure's
``groundedness_with_query.prompty`` and rates the answer on Azure's 1-5 rubric (5 fully correct and
complete, 4 correct but incomplete, 3 nothing to ground, 2 attempts an answer with information the
context does not support, 1 unrelated), as a JSON object ``{reason, score, status}``. Azure keeps the
rating as the score (1-5, higher is better) and calls it a pass at 3 or above (its default threshold).

How it is run (the vendor's documented usage, pointed at the cell):

- ``OpenAIModelConfiguration(type="openai", model=..., base_url=<cell URL>, api_key=<placeholder>)``
  and ``GroundednessEvaluator(model_config)(query=..., response=..., context=...)``: Azure's own
  prompty code builds an ``AsyncOpenAI`` client from the configuration for each call (its own retries,
  the SDK's off), renders its template, asks for ``json_object`` and parses the reply itself.
- Azure's client takes no ``http_client``, so inside a run it is given the URL of the process's
  authenticated loopback face into the run's gateway for the time of the cell
  (:mod:`harness.judge.loopback`, as :data:`LOOPBACK` says); a random token in the path names the cell, and
  each request and reply pass unchanged. Outside a run (a real gateway URL) the URL is given as it is.
- The evaluator is synchronous (it runs its coroutine with ``asyncio.run`` in the calling thread), so
  the cell calls it from a worker thread.
"""
from __future__ import annotations

import asyncio
import functools
import math

from harness.core.records import Case, CellResult, UnitVerdict
from harness.judge import loopback
from harness.metric.endpoint import Endpoint
from harness.metric.protocol import LabelReading, register

CONTEXT_JOIN = "\n\n"
"""How the passages become Azure's one ``context`` string."""
PASS_THRESHOLD = 3
"""Azure's default threshold: a rating at or above it is ``pass`` (``groundedness_result``)."""
NOTHING_TO_GROUND = 3
"""Azure's rating for an answer with nothing to ground (fillers, clarifications, a refusal)."""
LOOPBACK = loopback.Use()
"""How Azure reaches the run's gateway: it is handed the base URL (its model configuration's ``base_url``)."""

DEVIATIONS = """Deviations from stock use (each with its reason):

- The passages are joined with a blank line into Azure's single `context` string. Reason: the
  evaluator takes one context text; a blank line keeps the passages apart as a reader would see them.
- Inside a run Azure's OpenAI client is given the URL of a loopback face (127.0.0.1, one per process,
  the cell's random token in the path for the time of the cell) instead of the gateway's in-process URL.
  Reason: Azure's prompty code builds its own `AsyncOpenAI` client from the model configuration and
  takes no `http_client`, so it needs a listening socket; the face answers only a request that carries
  an open cell's token and hands each request and reply on unchanged, so the gateway still names the
  cell, records, caches and retries every call.
- Installs alone (`bash scripts/setup_azure.sh`, `.venv-azure`): every azure-ai-evaluation release
  from 1.10 on needs pandas < 3 and the other extras are locked with pandas 3.1.1. The lock holds both
  resolutions (uv `conflicts`), so neither environment's pins move.
- The report calls an answer ungrounded below the top of the score range (5), as for every metric;
  Azure's own pass mark is 3 (a 4, "correct but incomplete", and a 3, "nothing to ground", pass in
  Azure). Each cell keeps Azure's `result` (pass/fail) and `threshold` in its detail, and the
  agreement sweep includes the cut at 3.
"""


def join_context(case: Case) -> str:
    """The context string Azure is given.

    >>> from harness.core.records import Case, Context
    >>> join_context(Case("x", "q", (Context("1", "A."), Context("2", "B.")), "a", None))
    'A.\\n\\nB.'
    """
    return CONTEXT_JOIN.join(case.context_texts)


def unit_verdict(rating) -> str:
    """Azure's rating normalised: 4-5 supported, 3 excluded (nothing to ground), 1-2 unsupported.

    >>> [unit_verdict(r) for r in (5, 4.0, 3, 2, 1, None)]
    ['supported', 'supported', 'excluded', 'unsupported', 'unsupported', 'ambiguous']
    """
    if rating is None or (isinstance(rating, float) and math.isnan(rating)):
        return "ambiguous"
    if rating >= 4:
        return "supported"
    return "excluded" if rating == NOTHING_TO_GROUND else "unsupported"


@register
class AzureGroundedness:
    name = "azure.groundedness"
    version = "1"
    display_name = "Azure AI Groundedness"
    short_name = "azure.ground"
    order = 70
    higher_is_better = True
    score_range = (1.0, 5.0)
    vendor = "azure"
    vendor_package = "azure-ai-evaluation"
    extra = "azure"
    requires = ("azure.ai.evaluation",)
    installs_alone = ("azure-ai-evaluation needs pandas < 3, so it installs in an environment of its own: "
                      "bash scripts/setup_azure.sh, then .venv-azure/bin/harness")
    vendor_packages = ("azure-ai-evaluation", "openai")
    unit = "answer"
    definition = ("azure-ai-evaluation 1.18.10 GroundednessEvaluator: one judge call rates the answer against "
                  "the question and the joined passages on Azure's 1-5 groundedness rubric (5 fully correct and "
                  "complete, 4 correct but incomplete, 3 nothing to ground, 2 information the context does not "
                  "support, 1 unrelated); the rating is the score, a pass at 3 or above.")
    card_notes = DEVIATIONS
    label_reading = LabelReading({"supported": 5, "inference": 5, "not_found": 2, "contradicted": 2},
                                 "Azure rating (the answer gets its lowest claim's rating; 3 when it has no claim)")
    judge = "harness.adapters.azure.judge:reference_reply"

    @classmethod
    def prepare(cls) -> None:
        """Import the vendor stack once, before cells start."""
        import azure.ai.evaluation  # noqa: F401

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from azure.ai.evaluation import GroundednessEvaluator, OpenAIModelConfiguration

        with loopback.cell(endpoint, LOOPBACK) as opened:
            config = OpenAIModelConfiguration(type="openai", model=endpoint.model, base_url=opened.base_url,
                                              api_key=endpoint.api_key)
            evaluator = GroundednessEvaluator(config)
            call = functools.partial(evaluator, query=case.question, response=case.answer,
                                     context=join_context(case))
            try:
                result = await asyncio.to_thread(call)
            except Exception as e:
                refused = refused_input(e)
                if refused is None:
                    raise
                return CellResult.not_applicable(refused, detail={"refused": str(e)})
        return to_cell(case, result)


def refused_input(e: BaseException) -> str | None:
    """The reason when Azure refused the input itself, before any judge call (its validator's
    ``EvaluationException`` blamed on the user for a missing field, e.g. "Response string cannot be
    empty."): the metric does not apply to that case. None for any other exception (the cell's error).

    >>> class EvaluationException(Exception):
    ...     blame, category = "UserError", "MISSING FIELD"
    >>> refused_input(EvaluationException("Response string cannot be empty."))
    'Azure refuses the input before any judge call: Response string cannot be empty.'
    >>> refused_input(ValueError("x")) is None
    True
    """
    if type(e).__name__ != "EvaluationException":
        return None
    blame, category = (getattr(getattr(e, k, None), "value", getattr(e, k, None)) for k in ("blame", "category"))
    if blame != "UserError" or category != "MISSING FIELD":
        return None
    return f"Azure refuses the input before any judge call: {e.args[0] if e.args else e}"


def to_cell(case: Case, result: dict) -> CellResult:
    """The cell from Azure's result dict: the 1-5 rating as Azure returns it; ``skipped`` (the judge said
    there was nothing to evaluate) is not applicable; a rating Azure could not read is NaN (vendor_nan)."""
    key = "groundedness"
    rating, reason = result.get(key), str(result.get(f"{key}_reason") or "")
    detail = {"result": result.get(f"{key}_result"), "threshold": result.get(f"{key}_threshold"),
              "status": result.get(f"{key}_status")}
    if result.get(f"{key}_status") == "skipped":
        return CellResult.not_applicable(reason or "Azure skipped the evaluation", detail=detail)
    raw = "nan" if rating is None or (isinstance(rating, float) and math.isnan(rating)) else f"{rating:g}"
    unit = UnitVerdict(index=0, text=case.answer, kind="answer", raw_verdict=raw, verdict=unit_verdict(rating),
                       reason=reason, span=(0, len(case.answer)) if case.answer else None)
    return CellResult.scored(rating, (unit,), reason=reason, detail=detail)
