"""``ragas.faithfulness``: Ragas 0.4.3 ``metrics.collections.Faithfulness``, unmodified.

The vendor's definition: an LLM splits the answer into statements (step ``statements``), a second
call judges all of them against the joined contexts, 1 if the statement "can be directly inferred"
else 0 (step ``nli``), and the score is the share of truthy verdicts in the NLI output list.

What the adapter adds, without touching that computation:

- per-statement verdicts, read from the observed parsed outputs of the two steps (``_llm.observe``;
  ``MetricResult`` drops them): one unit per NLI item (the list the score divides by), with the
  0/1 verdict, the judge's reason and the statement's span in the answer where it can be located;
  the generated statements are kept in ``detail["statements"]``, and ``nli_count_mismatch`` flags a
  judge whose NLI list is not as long as the generated list (Ragas divides by the NLI list);
- NaN stays NaN: no statements -> ``vendor_nan`` (Ragas returns NaN and skips the NLI call);
- an empty answer, question or context list: Ragas raises ``ValueError("... is missing ...")``
  before any judge call; that is shown as ``vendor_nan`` with the vendor's message and the flag
  ``vendor_raised_on_empty_input``, not as an error;
- any other exception (a judge failure: Faithfulness has no retry loop of its own) propagates,
  renamed to say which step failed.
"""
from __future__ import annotations

import math

from harness.adapters.ragas.common import DEVIATIONS, SHIMS
from harness.core.records import Case, CellResult, UnitVerdict
from harness.core.vocab import FLAGS, Flag
from harness.metric import Endpoint, LabelReading, register


class RagasStepError(RuntimeError):
    """A Ragas step raised; the message names the step and the vendor's exception."""


@register
class RagasFaithfulness:
    name = "ragas.faithfulness"
    version = "1"
    display_name = "Ragas Faithfulness"
    short_name = "ragas.faith"
    order = 20
    higher_is_better = True
    vendor = "ragas"
    import_cpu_s = 1.4   # its vendor stack's import (harness.run.stages)
    vendor_package = "ragas"
    vendor_packages = ("ragas", "langchain-core", "langchain-openai", "langchain-community", "instructor", "openai")
    extra = "ragas"
    requires = ("ragas",)
    card_notes = DEVIATIONS
    unit = "statement"
    definition = ("Ragas 0.4.3 Faithfulness: the judge splits the answer into statements, then gives each an "
                  "NLI verdict against the joined passages (1 if it can be directly inferred, else 0); the "
                  "score is the share of statements marked 1.")
    shims = SHIMS
    label_reading = LabelReading({"supported": 1, "inference": 1, "not_found": 0, "contradicted": 0},
                                 "NLI verdict (1 = can be directly inferred)")
    judge = "harness.adapters.ragas.judge:faithfulness_reply"
    flags = (FLAGS["vendor_raised_on_empty_input"],
             Flag("no_statements_nan", "no statements, NaN", "no statements",
                  "the statement step returned no statements and Ragas returns NaN"),
             Flag("nli_count_mismatch", "NLI count differs", "NLI count",
                  "the NLI list is not as long as the statement list (Ragas divides by the NLI list)"))

    @classmethod
    def prepare(cls) -> None:
        from harness.adapters.ragas._llm import vendor

        vendor()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from harness.adapters.ragas._llm import describe, is_missing_input, make_llm, observe, vendor

        llm = make_llm(endpoint)
        calls = observe(llm)
        metric = vendor().Faithfulness(llm=llm)
        try:
            result = await metric.ascore(user_input=case.question, response=case.answer,
                                         retrieved_contexts=case.context_texts)
        except Exception as e:
            if is_missing_input(e) and not calls:
                return CellResult.vendor_nan(
                    f"unscored by the vendor: Ragas raises before any judge call ({describe(e)})",
                    flags=("vendor_raised_on_empty_input",))
            step = _step_name(calls[-1].output_type) if calls else "input validation"
            raise RagasStepError(f"ragas Faithfulness failed in step {step!r}: {describe(e)}") from e
        return to_cell(case, result.value, calls)


_STEPS = {"StatementGeneratorOutput": "statements", "NLIStatementOutput": "nli"}


def _step_name(output_type: str) -> str:
    return _STEPS.get(output_type, output_type)


def to_cell(case: Case, value: float, calls) -> CellResult:
    """The cell for a finished ``ascore``: the vendor's value plus the observed statements."""
    generated = [c.output for c in calls if c.output_type == "StatementGeneratorOutput"]
    nli = [c.output for c in calls if c.output_type == "NLIStatementOutput"]
    statements = list(generated[-1].statements) if generated else []
    units = tuple(statement_unit(case, i, s) for i, s in enumerate(nli[-1].statements)) if nli else ()
    detail = {"statements": statements, "judge_steps": [_step_name(c.output_type) for c in calls]}
    if value is None or math.isnan(value):
        why = ("the statement generator returned no statements" if not statements
               else "the NLI step returned no verdicts")
        return CellResult.vendor_nan(f"unscored by the vendor: {why} (Ragas returns NaN)", units,
                                     flags=("no_statements_nan",) if not statements else (), detail=detail)
    flags = ("nli_count_mismatch",) if len(units) != len(statements) else ()
    return CellResult.scored(value, units, flags=flags, detail=detail)


def statement_unit(case: Case, index: int, item) -> UnitVerdict:
    """One NLI item as a unit: verdict 1 (any truthy value, as Ragas counts it) is supported."""
    return UnitVerdict(
        index=index, text=item.statement, kind="statement",
        verdict="supported" if item.verdict else "unsupported", raw_verdict=str(item.verdict),
        reason=item.reason, span=case.unit_span(item.statement))
