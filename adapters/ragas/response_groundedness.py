"""``ragas.response_groundedness``: Ragas 0.4.3 ``metrics.collections.ResponseGroundedness``, unmodified.

The vendor's definition: two judge prompts each rate the whole answer against the joined contexts
0 (not supported), 1 (partially) or 2 (fully); each judge is tried up to ``max_retries=5`` times
until it gives a rating in {0, 1, 2}, else that judge is NaN; the score is the mean of the two
ratings / 2, one judge alone when the other is NaN, NaN when both are. A blank (whitespace-only)
answer or context scores 0.0 with no judge call; an empty one raises ``ValueError``.

What the adapter adds, without touching that computation:

- one unit per judge (kind ``judge``, raw verdict "0"/"1"/"2", or "nan" for a judge that gave no
  valid rating, which the vendor leaves out of the mean: ``excluded``), span = the whole answer;
  the per-judge result is the value the vendor's own ``_get_judge_rating`` returned, observed on
  the metric instance, and the attempts come from the observed LLM calls (``_llm.observe``);
- NaN stays NaN (``vendor_nan`` with the judges' last errors); the degenerate cases are flagged:
  ``one_judge_nan`` (with ``vendor_fallback``: the reason names the judge Ragas scored from alone and
  why the other gave nothing), ``blank_input_scored_0``, and ``judge_errors`` when any judge call raised
  (Ragas swallows those exceptions and retries or returns NaN, so an unreachable judge looks like
  NaN: the flag and the reason tell the two apart); an empty answer raises in Ragas before any judge
  call and is shown as ``vendor_nan`` with the vendor's message (``vendor_raised_on_empty_input``).
"""
from __future__ import annotations

import math

from harness.adapters.ragas.common import DEVIATIONS, SHIMS
from harness.core.records import Case, CellResult, UnitVerdict
from harness.core.vocab import FLAGS, Flag
from harness.metric import Endpoint, LabelReading, register

JUDGES = {"ResponseGroundednessJudge1Prompt": "judge1", "ResponseGroundednessJudge2Prompt": "judge2"}
_VERDICT = {0: "unsupported", 1: "ambiguous", 2: "supported"}


@register
class RagasResponseGroundedness:
    name = "ragas.response_groundedness"
    version = "1"
    display_name = "Ragas Response Groundedness"
    short_name = "ragas.rg"
    order = 21
    higher_is_better = True
    vendor = "ragas"
    import_cpu_s = 1.4   # its vendor stack's import (harness.run.stages)
    vendor_package = "ragas"
    vendor_packages = ("ragas", "langchain-core", "langchain-openai", "langchain-community", "instructor", "openai")
    extra = "ragas"
    requires = ("ragas",)
    card_notes = DEVIATIONS
    unit = "answer"
    definition = ("Ragas 0.4.3 ResponseGroundedness: two judge prompts each rate the whole answer against the "
                  "joined passages 0 (not supported), 1 (partially) or 2 (fully); the score is the mean of the "
                  "two ratings divided by 2.")
    shims = SHIMS
    label_reading = LabelReading({"supported": "grounded", "inference": "grounded", "not_found": "not grounded",
                                  "contradicted": "not grounded"}, "counts toward the 0/1/2 rating as")
    judge = "harness.adapters.ragas.judge:response_groundedness_reply"
    flags = (FLAGS["vendor_raised_on_empty_input"], FLAGS["vendor_fallback"],
             Flag("one_judge_nan", "one judge NaN", "one judge",
                  "one of the two judges gave no valid rating; the score is the other judge's alone"),
             Flag("blank_input_scored_0", "blank input, scored 0", "blank = 0",
                  "a whitespace-only answer or context scores 0.0 with no judge call"),
             Flag("judge_errors", "judge calls raised", "judge errors",
                  "a judge call raised; Ragas swallowed it and retried or returned NaN"))

    @classmethod
    def prepare(cls) -> None:
        from harness.adapters.ragas._llm import vendor

        vendor()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from harness.adapters.ragas._llm import describe, is_missing_input, make_llm, observe, vendor

        llm = make_llm(endpoint)
        calls = observe(llm)
        metric = vendor().ResponseGroundedness(llm=llm)
        ratings = observe_ratings(metric)
        try:
            result = await metric.ascore(response=case.answer, retrieved_contexts=case.context_texts)
        except ValueError as e:
            if is_missing_input(e) and not calls:
                return CellResult.vendor_nan(
                    f"unscored by the vendor: Ragas raises before any judge call ({describe(e)})",
                    flags=("vendor_raised_on_empty_input",))
            raise
        return to_cell(case, result.value, ratings, calls, metric.judge1_prompt.instruction)


def observe_ratings(metric) -> list[tuple[str, float]]:
    """Record what the vendor's ``_get_judge_rating`` returns, per judge (values pass through)."""
    seen: list[tuple[str, float]] = []
    inner = metric._get_judge_rating

    async def _get_judge_rating(prompt_obj, *args, **kwargs):
        rating = await inner(prompt_obj, *args, **kwargs)
        seen.append((JUDGES.get(type(prompt_obj).__name__, type(prompt_obj).__name__), rating))
        return rating

    metric._get_judge_rating = _get_judge_rating
    return seen


def to_cell(case: Case, value: float, ratings, calls, judge1_instruction: str) -> CellResult:
    """The cell for a finished ``ascore``: the vendor's value plus both judges' ratings."""
    attempts = {"judge1": [], "judge2": []}
    for c in calls:
        attempts["judge1" if c.prompt.startswith(judge1_instruction) else "judge2"].append(c)
    units = tuple(judge_unit(case, i, judge, r, attempts.get(judge, [])) for i, (judge, r) in enumerate(ratings))
    detail = {"ratings": {judge: _plain(r) for judge, r in ratings}}
    flags = ["judge_errors"] if any(c.error is not None for c in calls) else []
    if value is None or math.isnan(value):
        errs = "; ".join(f"{u.detail['judge']}: {u.reason}" for u in units)
        return CellResult.vendor_nan(f"unscored by the vendor: no judge gave a rating in 0/1/2 ({errs})",
                                     units, flags=flags, detail=detail)
    if not ratings:
        flags.append("blank_input_scored_0")
    reason = None
    if any(math.isnan(r) for _, r in ratings):
        flags += ["one_judge_nan", "vendor_fallback"]
        lost = [u for u in units if u.verdict == "excluded"]
        kept = [u.detail["judge"] for u in units if u.verdict != "excluded"]
        reason = (f"scored after a silent fallback: Ragas scored from {' and '.join(kept) or 'no judge'} alone; "
                  + "; ".join(f"{u.detail['judge']} gave no valid rating ({u.reason})" for u in lost))
    return CellResult.scored(value, units, reason=reason, flags=flags, detail=detail)


def judge_unit(case: Case, index: int, judge: str, rating: float, calls) -> UnitVerdict:
    """One judge's rating of the whole answer as a unit."""
    nan = math.isnan(rating)
    reason = None
    if nan:
        from harness.adapters.ragas._llm import describe

        last = next((c for c in reversed(calls) if c.error is not None), None)
        seen = [c.output.rating for c in calls if c.output is not None]
        reason = (f"no valid rating after {len(calls)} judge calls"
                  + (f"; ratings given {seen}" if seen else "")
                  + (f"; last error {describe(last.error, 160)}" if last else ""))
    return UnitVerdict(
        index=index, text=case.answer, kind="judge",
        verdict="excluded" if nan else _VERDICT[int(rating)], raw_verdict="nan" if nan else str(int(rating)),
        reason=reason, span=(0, len(case.answer)),
        detail={"judge": judge, "calls": len(calls), "rating": _plain(rating)})


def _plain(r: float) -> int | None:
    return None if math.isnan(r) else int(r)
