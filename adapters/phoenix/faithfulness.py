"""``phoenix.faithfulness``: arize-phoenix-evals 3.9.4 ``FaithfulnessEvaluator``, unmodified.

The vendor's definition: one judge call sees the question, the context and the answer with
Phoenix's own classification template and labels the whole answer ``faithful`` or ``unfaithful``;
Phoenix maps the label to a score (faithful 1.0, unfaithful 0.0) with its own choices table.

How it is run (the vendor's documented usage, pointed at the cell):

- ``phoenix.evals.LLM(provider="openai", model=..., base_url=<cell URL>, api_key=<placeholder>)``:
  Phoenix's own OpenAI adapter builds the SDK clients (it sets ``max_retries=0`` itself); the
  harness only hands it the run's shared ``httpx`` clients (``http_client``), so the calls travel the
  in-process transport into the gateway. Requests are what Phoenix builds: its template, its
  ``json_schema`` response format (``extract_structured_data``), and, if a server rejects structured
  output with a 400, Phoenix's own fall-back to tool calling.
- ``FaithfulnessEvaluator(llm=llm).async_evaluate({"input", "output", "context"})``: the context is
  the case's passages joined with a blank line (Phoenix takes one context string; the card says so).
- Phoenix's parsing decides: a reply that is not JSON, or a label outside the choices, raises in
  Phoenix and the cell is that error (as in stock use), never a score.
"""
from __future__ import annotations

from harness.core.records import Case, CellResult, UnitVerdict
from harness.metric.endpoint import Endpoint
from harness.metric.protocol import LabelReading, register

CONTEXT_JOIN = "\n\n"
"""How the passages become Phoenix's one ``context`` string."""

DEVIATIONS = """Deviations from stock use (each with its reason):

- The passages are joined with a blank line into Phoenix's single `context` string. Reason: Phoenix's
  template takes one context text; a blank line keeps the passages apart as a reader would see them.
- The OpenAI clients Phoenix builds get the run's shared `httpx` clients (`http_client`). Reason: every
  call must reach the cell's gateway URL over the run's connection pool; Phoenix's requests, its
  `max_retries=0` and its parsing are unchanged.
"""


def join_context(case: Case) -> str:
    """The context string Phoenix is given.

    >>> from harness.core.records import Case, Context
    >>> join_context(Case("x", "q", (Context("1", "A."), Context("2", "B.")), "a", None))
    'A.\\n\\nB.'
    """
    return CONTEXT_JOIN.join(case.context_texts)


def make_llm(endpoint: Endpoint):
    """Phoenix's own ``LLM`` wrapper on the cell's URL (imports phoenix.evals: call lazily)."""
    from phoenix.evals import LLM

    shared = {}
    if endpoint.pool is not None:
        shared = {"sync_client_kwargs": {"http_client": endpoint.pool.sync_client()},
                  "async_client_kwargs": {"http_client": endpoint.pool.async_client()}}
    return LLM(provider="openai", model=endpoint.model, base_url=endpoint.base_url, api_key=endpoint.api_key,
               timeout=endpoint.timeout_s, **shared)


@register
class PhoenixFaithfulness:
    name = "phoenix.faithfulness"
    version = "1"
    display_name = "Phoenix Faithfulness"
    short_name = "phoenix.faith"
    order = 60
    higher_is_better = True
    vendor = "phoenix"
    import_cpu_s = 0.7   # its vendor stack's import (harness.run.stages)
    vendor_package = "arize-phoenix-evals"
    extra = "phoenix"
    requires = ("phoenix.evals",)
    vendor_packages = ("arize-phoenix-evals", "openai")
    unit = "answer"
    definition = ("arize-phoenix-evals 3.9.4 FaithfulnessEvaluator: one judge call labels the whole answer "
                  "faithful or unfaithful against the question and the joined passages ('unfaithful' when it "
                  "is not based on the context or assumes information the context does not give); Phoenix "
                  "scores faithful 1.0 and unfaithful 0.0.")
    card_notes = DEVIATIONS
    label_reading = LabelReading({"supported": "faithful", "inference": "faithful", "not_found": "unfaithful",
                                  "contradicted": "unfaithful"},
                                 "Phoenix label (the answer is faithful only if every claim reads faithful)")
    judge = "harness.adapters.phoenix.judge:reference_reply"

    @classmethod
    def prepare(cls) -> None:
        """Import the vendor stack once, before cells start."""
        import phoenix.evals.metrics.faithfulness  # noqa: F401

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from phoenix.evals.metrics.faithfulness import FaithfulnessEvaluator

        evaluator = FaithfulnessEvaluator(llm=make_llm(endpoint))
        scores = await evaluator.async_evaluate({"input": case.question, "output": case.answer,
                                                 "context": join_context(case)})
        return to_cell(case, scores[0])


def explanation_text(explanation) -> str:
    """Phoenix's explanation as reason text: it is whatever the judge put there (a list, a number, null).

    >>> explanation_text(["a", "b"]), explanation_text(None), explanation_text("x")
    ('a; b', '', 'x')
    """
    if explanation is None:
        return ""
    if isinstance(explanation, (list, tuple)):
        return "; ".join(str(x) for x in explanation)
    return str(explanation)


def to_cell(case: Case, score) -> CellResult:
    """The cell from Phoenix's ``Score``: its score as Phoenix gives it, one unit for the answer (the
    explanation as the judge gave it stays in the detail; the reason is its text)."""
    label = str(score.label)
    why = explanation_text(score.explanation)
    unit = UnitVerdict(index=0, text=case.answer, kind="answer", raw_verdict=label,
                       verdict="supported" if label == "faithful" else "unsupported",
                       reason=why, span=(0, len(case.answer)) if case.answer else None)
    detail = {"label": label, "explanation": score.explanation, "model": (score.metadata or {}).get("model")}
    return CellResult.scored(float(score.score), (unit,), reason=why, detail=detail)
