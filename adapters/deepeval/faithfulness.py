"""DeepEval ``FaithfulnessMetric`` (deepeval 4.3.1), two variants sharing one base.

``deepeval.faithfulness``: DeepEval's defaults. ``deepeval.faithfulness_penalized``: the same with
``penalize_ambiguous_claims=True``. Both pass ``eval_mode="llm"`` explicitly (see
``_model.build_metric``); every other argument is DeepEval's default.

DeepEval extracts truths from the contexts and claims from the answer (two calls, concurrent),
asks one verdict per claim against the truths (yes / no / borderline), then a reason. Score:
``(yes + borderline) / N`` by default, ``yes / N`` penalized, N the number of verdicts; no claims
(no verdict call) scores ``1``, kept and flagged ``no_claims_scored_1``. An empty answer is
rejected by DeepEval before any call (``MissingTestCaseParamsError``): unscored by the vendor.

Units: every claim DeepEval extracted, in its order, with its verdict normalised (yes ->
supported, no -> unsupported; borderline -> ambiguous in the default variant, where it passes,
and -> unsupported in the penalized one, where it counts against the score), the raw verdict, the
judge's reason, and its span in the answer when it can be located. The cell keeps DeepEval's
truths, its reason string and its token counts.

Vendor traps handled (``vendor-notes/deepeval.md``): telemetry and dotenv loading are switched off
by ``harness.metric.vendor_env`` before any import; a metric instance carries state, so each cell builds
its own; ``a_measure(..., _show_indicator=False)`` in async code (no spinner, no
``nest_asyncio``); never ``evaluate()`` (it prints and writes files). The judge model is described
in ``_model``. No DeepEval code is patched.
"""
from __future__ import annotations

from harness.adapters.deepeval._telemetry import SHIM as TELEMETRY_SHIM
from harness.adapters.deepeval._usage import SHIM as USAGE_SHIM
from harness.core.records import Case, CellResult, UnitVerdict
from harness.core.vocab import FLAGS, Flag
from harness.metric import Endpoint, LabelReading, UnitCredit, register

CARD_NOTES = """\
Deviations from stock use (everything else is DeepEval's own code, unpatched; the stock-parity test
`tests/vendors/test_stock_parity.py` scores every canonical case with `FaithfulnessMetric(model=OpenAIModel(...))`
pointed straight at the realistic test judge and gets the same scores):
- Request protocol: none forced. DeepEval picks it from its own model registry for the judge's model
  id, as in stock use: a `gpt-4o`-class id gets a strict json_schema (structured output), a
  `gpt-3.5`-class id JSON mode, any other id (a local model, `reference-judge`) plain text that
  DeepEval trims to its outer braces and validates.
- One client per cell (`GatewayModel.load_model`): the stock `OpenAIModel` builds a new client for
  every call; the requests are the same. Reason: about 90 % of DeepEval's per-case CPU.
- Token accounting (`GatewayModel.calculate_cost`): for a judge DeepEval has no price for, the
  stock class drops the token counts; the harness keeps them (`evaluation_cost` stays None).
- Retries and timeouts: `DEEPEVAL_RETRY_MAX_ATTEMPTS=1` and `DEEPEVAL_DISABLE_TIMEOUTS=1`. Reason:
  the harness gateway owns transport retries (connection errors, timeouts, 429, 5xx) and the per-call
  timeout, so DeepEval's own (2 attempts, 88.5 s) do not stack on them. A judge reply is never
  retried for its content: DeepEval's own validation decides, as in stock use.
- `eval_mode="llm"` passed explicitly. Reason: left unset, DeepEval reads `DEEPEVAL_EVAL_MODE`, and
  `hybrid` / `system_one` would send the verdict step to an external service instead of the judge.
- A judge response without `usage` (legal, and what several servers send): stock DeepEval fails the
  cell (its `OpenAIModel` reads `completion.usage.prompt_tokens`); the harness's client gives such a
  completion an all-zero usage first (the shim below, `adapters/deepeval/_usage.py`), so the cell
  scores, and the ledger marks the call as carrying no usage. Issue 13: usage is optional.
"""

NORMALISED = {
    False: {"yes": "supported", "no": "unsupported", "borderline": "ambiguous", "idk": "ambiguous"},
    True: {"yes": "supported", "no": "unsupported", "borderline": "unsupported", "idk": "unsupported"},
}
"""penalize_ambiguous_claims -> DeepEval verdict -> normalised verdict (a verdict that counts
against the score is unsupported). ``idk`` is the same verdict under its name before DeepEval 4.2.4 (a
drift card's older version: docs/drift.md)."""


class DeepEvalFaithfulnessBase:
    """Shared code of the two variants; subclasses set the class attributes and ``penalize``."""

    version = "1"
    higher_is_better = True
    vendor = "deepeval"
    import_cpu_s = 0.9   # its vendor stack's import (harness.run.stages)
    vendor_package = "deepeval"
    vendor_packages = ("deepeval", "openai")
    extra = "deepeval"
    requires = ("deepeval",)
    unit = "claim"
    label_reading = LabelReading({"supported": "yes", "inference": "yes", "not_found": "borderline",
                                  "contradicted": "no"}, "DeepEval verdict")
    judge = "harness.adapters.deepeval.judge:reference_reply"
    flags = (FLAGS["no_claims_scored_1"],
             Flag("no_verdicts_scored_1", "no verdicts, scored 1", "no verdicts = 1",
                  "the verdict step returned no verdicts and DeepEval scores 1"),
             Flag("verdict_count_mismatch", "verdict count differs", "verdict count",
                  "the judge returned a different number of verdicts than claims"),
             Flag("empty_answer_rejected", "empty answer rejected", "empty answer",
                  "DeepEval rejects an empty answer before any judge call"))
    card_notes = CARD_NOTES
    shims = (USAGE_SHIM, TELEMETRY_SHIM)
    penalize: bool = False

    @classmethod
    def prepare(cls) -> None:
        """Import the vendor stack once, before cells start."""
        from harness.adapters.deepeval import _model  # noqa: F401

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from harness.adapters.deepeval import _model

        metric = _model.build_metric(endpoint, self.penalize)
        tc = _model.make_test_case(case.question, case.answer, case.context_texts)
        try:
            await metric.a_measure(tc, _show_indicator=False)
        except Exception as exc:  # noqa: BLE001 - explained when we can, else re-raised for the runner
            explained = _model.explain(exc)
            if explained is None:
                raise
            return explained
        return self.result(case, metric)

    def result(self, case: Case, metric) -> CellResult:
        """The cell from a measured ``FaithfulnessMetric``."""
        claims, verdicts = list(metric.claims or []), list(metric.verdicts or [])
        counted = [v for v in verdicts if v is not None]
        names = NORMALISED[self.penalize]
        units = []
        for i in range(max(len(claims), len(verdicts))):
            text = claims[i] if i < len(claims) else ""
            v = verdicts[i] if i < len(verdicts) else None
            raw = str(v.verdict) if v is not None else "none"  # Verdict.__str__ is its value
            units.append(UnitVerdict(
                index=i, text=text, verdict=names.get(raw, "excluded"), raw_verdict=raw, kind="claim",
                reason=getattr(v, "reason", None), span=case.unit_span(text) if text else None))
        flags = []
        if not claims:
            flags.append("no_claims_scored_1")
        elif not counted:
            flags.append("no_verdicts_scored_1")
        if len(verdicts) != len(claims):
            flags.append("verdict_count_mismatch")
        detail = {
            "truths": list(metric.truths or []),
            "claims": claims,
            "verdict_counts": {k: sum(1 for u in units if u.raw_verdict == k)
                               for k in ("yes", "no", "borderline")},
            "penalize_ambiguous_claims": self.penalize,
            "threshold": metric.threshold,
            "success": metric.success,
            "evaluation_model": metric.evaluation_model,
            "evaluation_cost": metric.evaluation_cost,
            "deepeval_tokens": {"input": getattr(metric, "input_tokens", None),
                                "output": getattr(metric, "output_tokens", None)},
        }
        return CellResult.scored(metric.score, units, reason=metric.reason, flags=flags, detail=detail)


@register
class DeepEvalFaithfulness(DeepEvalFaithfulnessBase):
    """DeepEval FaithfulnessMetric, defaults: a borderline claim passes."""

    name = "deepeval.faithfulness"
    display_name = "DeepEval Faithfulness"
    short_name = "deepeval"
    order = 30
    definition = ("DeepEval 4.3.1 FaithfulnessMetric with its defaults: the judge extracts truths from the "
                  "passages and claims from the answer, then gives each claim a verdict yes, no or borderline; "
                  "the score is (yes + borderline) / verdicts, so a borderline claim passes.")
    penalize = False
    unit_credit = UnitCredit(ambiguous=1.0)   # (yes + borderline) / verdicts: a borderline claim counts as faithful


@register
class DeepEvalFaithfulnessPenalized(DeepEvalFaithfulnessBase):
    """DeepEval FaithfulnessMetric with ``penalize_ambiguous_claims=True``: a borderline claim fails."""

    name = "deepeval.faithfulness_penalized"
    display_name = "DeepEval Faithfulness (penalize ambiguous)"
    short_name = "deepeval.pen"
    order = 31
    definition = ("DeepEval 4.3.1 FaithfulnessMetric with penalize_ambiguous_claims=True: as the default "
                  "variant, but the score is yes / verdicts, so a borderline claim fails.")
    penalize = True
