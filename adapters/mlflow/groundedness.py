"""``mlflow.groundedness``: mlflow-skinny 3.17.2 ``mlflow.genai.judges.is_grounded``, MLflow's own
groundedness judge (the one its ``RetrievalGroundedness`` scorer calls once per retriever span).

The vendor's definition: one judge call sees MLflow's prompt (the question and the answer as a
``<claim>``, the retrieved context as a ``<document>``; "do not make assumptions, approximations, or
bring in external knowledge") and answers ``{"rationale", "result": "yes"|"no"}``; MLflow returns a
``Feedback`` whose value is that ``yes`` or ``no``. The harness scores ``yes`` 1.0 and ``no`` 0.0
(MLflow's own pass rate counts them so).

How it is run (the vendor's documented usage, pointed at the cell):

- ``is_grounded(request=question, response=answer, context=[{"content": passage}, ...],
  model="openai:/<judge model>", extra_headers=...)``: the context in the documented form (MLflow
  puts ``str(context)`` in the prompt, as it does with the chunks a retriever span gives).
- MLflow's ``openai`` provider posts with ``requests`` to ``OPENAI_API_BASE`` from the environment;
  it takes no client. So for the length of the cell that base URL is the process's authenticated
  loopback face (:mod:`harness.judge.loopback`, as :data:`LOOPBACK` says), and the cell's random token
  goes in MLflow's own ``extra_headers=`` as ``X-Harness-Token``; the face hands the body to the
  cell's gateway URL and the gateway's answer back, byte for byte. ``OPENAI_API_KEY`` is a placeholder
  while the cell runs when it is unset (MLflow refuses to call without one); its value stops at the face.
- MLflow's retries are off (the one shim, :mod:`harness.adapters.mlflow._retries`); its parsing decides: a
  reply that is not JSON raises ``MlflowException`` in MLflow and the cell is that error, as in stock
  use; a ``result`` other than yes/no (MLflow passes it on as the value) is an error cell naming it.
- The call is synchronous: it runs in a worker thread (``asyncio.to_thread``), as TruLens's do.
"""
from __future__ import annotations

import asyncio

from harness.adapters.mlflow._retries import SHIM, no_vendor_retries
from harness.core.records import Case, CellResult, UnitVerdict
from harness.judge import loopback
from harness.metric.endpoint import Endpoint
from harness.metric.protocol import LabelReading, register

SCORES = {"yes": 1.0, "no": 0.0}
"""MLflow's value -> the cell's score."""
LOOPBACK = loopback.Use(base_env=("OPENAI_API_BASE",), key_env="OPENAI_API_KEY")
"""How MLflow reaches the run's gateway: its ``openai`` provider reads ``OPENAI_API_BASE`` (only MLflow
reads it: every other vendor's client is built with an explicit base URL) and will not call without
``OPENAI_API_KEY``."""

DEVIATIONS = """Deviations from stock use (each with its reason):

- MLflow's `openai` provider reads its base URL from `OPENAI_API_BASE` and cannot be given a client,
  so the harness points that variable at a loopback face of its own (127.0.0.1, one per process) and
  passes the cell's random token in MLflow's documented `extra_headers=` (`X-Harness-Token`; a request
  without an open cell's token is refused, unread). Reason: every call must reach the cell's gateway;
  the request body and the reply travel the face byte for byte. The `Authorization` header MLflow sends
  (from `OPENAI_API_KEY`, set to a placeholder when unset) stops at the face.
- MLflow's own retries are off (see Shims). Reason: the gateway owns retries.
- The passages go in as `[{"content": passage}, ...]`, the form MLflow documents and the one its
  `RetrievalGroundedness` scorer passes (there with each chunk's `doc_uri` too). MLflow writes
  `str(context)` into the prompt, so the judge sees that Python list literal.

Switches (no score depends on them):

- Set before MLflow is imported (`harness/metric/vendor_env.py`): `MLFLOW_DISABLE_TELEMETRY=true` (MLflow's
  usage telemetry, which records every judge invocation) and `MLFLOW_MODEL_CATALOG_URI` empty (MLflow's
  judge otherwise fetches a model catalog from GitHub on a process's first call, for the context size and
  the cost it reports; empty keeps to the catalog bundled in the package). MLflow 3.17.2 has no tracing
  switch: `is_grounded` opens no trace and the harness never calls MLflow tracking or tracing, so no
  `mlruns` folder or database is written (the offline test checks the home and working folders).
- Set while MLflow cells run, and put back exactly as they were when the last one ends: `OPENAI_API_BASE`
  (the face; only MLflow reads it, every other vendor's client is built with an explicit base URL),
  `OPENAI_API_KEY` when unset (a placeholder MLflow insists on), and `127.0.0.1,localhost` added to
  `NO_PROXY` (MLflow posts with `requests`, which obeys the environment's proxies).
- Stock MLflow retries a failed judge call 10 times over about 3 minutes; here it does not (Shims): a
  judge fault the gateway's own retries did not absorb ends the cell as an error.
"""


def context_of(case: Case) -> list[dict]:
    """The ``context`` MLflow is given: one ``{"content": text}`` per passage.

    >>> from harness.core.records import Case, Context
    >>> context_of(Case("x", "q", (Context("1", "A."), Context("2", "B.")), "a", None))
    [{'content': 'A.'}, {'content': 'B.'}]
    """
    return [{"content": text} for text in case.context_texts]


def model_uri(endpoint: Endpoint) -> str:
    """MLflow's model URI for the judge: its OpenAI-compatible route."""
    return f"openai:/{endpoint.model}"


@register
class MlflowGroundedness:
    name = "mlflow.groundedness"
    version = "1"
    display_name = "MLflow Groundedness"
    short_name = "mlflow.ground"
    order = 62
    higher_is_better = True
    vendor = "mlflow"
    import_cpu_s = 1.1   # its vendor stack's import (harness.run.stages)
    vendor_package = "mlflow-skinny"
    extra = "mlflow"
    requires = ("mlflow",)   # a top-level name: find_spec of "mlflow.genai" would import mlflow (and pandas)
    vendor_packages = ("mlflow-skinny", "requests")
    unit = "answer"
    definition = ("mlflow-skinny 3.17.2 mlflow.genai.judges.is_grounded (the judge of MLflow's "
                  "RetrievalGroundedness scorer): one judge call reads the question and answer as a claim "
                  "and the passages as a document and answers yes only if every statement of the claim "
                  "is supported by the document, with no assumptions, approximations or outside "
                  "knowledge; the harness scores yes 1.0 and no 0.0.")
    card_notes = DEVIATIONS
    shims = (SHIM,)
    label_reading = LabelReading({"supported": "yes", "inference": "no", "not_found": "no",
                                  "contradicted": "no"},
                                 "MLflow result (yes only if every claim reads yes; MLflow's prompt "
                                 "forbids assumptions and approximations, so an inference reads no)")
    judge = "harness.adapters.mlflow.judge:reference_reply"

    @classmethod
    def prepare(cls) -> None:
        """Import the vendor stack once, before cells start, and apply the shim."""
        import mlflow.genai.judges  # noqa: F401

        no_vendor_retries()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from mlflow.genai.judges import is_grounded

        no_vendor_retries()
        with loopback.cell(endpoint, LOOPBACK) as opened:
            feedback = await asyncio.to_thread(
                is_grounded, request=case.question, response=case.answer, context=context_of(case),
                model=model_uri(endpoint), extra_headers=opened.headers)
        return to_cell(case, feedback)


def to_cell(case: Case, feedback) -> CellResult:
    """The cell from MLflow's ``Feedback``: yes 1.0, no 0.0, one unit for the whole answer; any other
    value is an error cell naming it (MLflow gives no score for it)."""
    value = getattr(feedback.value, "value", feedback.value)   # a CategoricalRating is a str enum
    why = feedback.rationale or ""
    detail = {"value": value, "rationale": feedback.rationale, "metadata": dict(feedback.metadata or {})}
    if value not in SCORES:
        return CellResult.error(f"MLflow's groundedness value is {value!r}, neither 'yes' nor 'no'", detail=detail)
    unit = UnitVerdict(index=0, text=case.answer, kind="answer", raw_verdict=value,
                       verdict="supported" if value == "yes" else "unsupported",
                       reason=why, span=(0, len(case.answer)) if case.answer else None)
    return CellResult.scored(SCORES[value], (unit,), reason=why, detail=detail)
