"""``baseline.similarity``: the similarity shortcut, each answer sentence against the passages.

Definition: split the answer into sentences; a sentence is grounded when its highest cosine
similarity to any passage sentence, under a real embedding model, reaches the threshold (default
0.80, ``harness run --similarity-threshold T``). Score = grounded sentences / sentences. An empty
answer is unscored. One embeddings request per answer and no chat call: the metric needs no LLM
judge at all, which is why it is the shortcut people reach for.

Similarity measures topic overlap, not support: an invented detail that talks about the same thing
as a passage (a processing time next to a refund window) can pass, and a faithful paraphrase can
fail. The metric card and the cascade (``cascade.similarity_span``) measure how often.

The reference judge does not read the annotation for this metric: the embeddings come from the
configured embedding model (by default the embedded all-MiniLM-L6-v2 int8 ONNX model), so its
verdicts are the model's, not the labels'.
"""
from __future__ import annotations

from harness.adapters.baseline._sim import Match, SimilarityThreshold, match_sentences
from harness.core.records import Case, CellResult, UnitVerdict
from harness.metric import Endpoint, JudgeRequest, register

CARD_NOTES = """
The embeddings request goes to the gateway's `/v1/embeddings` route; the run's embedding model is named
in the run spec (`embeddings`). Each unit's raw verdict is its best similarity; the unit's detail keeps
the best-matching passage sentence and its passage id.
"""


def sentence_unit(i: int, m: Match, threshold: float) -> UnitVerdict:
    """One sentence's verdict from its best match."""
    ok = m.passes(threshold)
    rel = ">=" if ok else "<"
    reason = (f"best similarity {m.similarity:.4f} {rel} {threshold:.2f}"
              + (f" (passage {m.context_id}: {m.best!r})" if m.best is not None else " (no passage sentence)"))
    return UnitVerdict(index=i, text=m.text, verdict="supported" if ok else "unsupported",
                       raw_verdict=f"{m.similarity:.4f}", kind="sentence", reason=reason, span=m.span,
                       detail={"similarity": round(m.similarity, 6), "context_id": m.context_id, "best": m.best,
                               "threshold": threshold})


@register
class BaselineSimilarity(SimilarityThreshold):
    """Sentence-level embedding similarity to the passages (see the module docstring)."""

    name = "baseline.similarity"
    version = "2"
    display_name = "Similarity baseline (sentence embedding)"
    short_name = "similarity"
    higher_is_better = True
    vendor = "baseline"
    unit = "sentence"
    order = 50
    vendor_package = None
    score_range = (0.0, 1.0)
    definition = ("Share of answer sentences whose highest cosine similarity to any passage sentence, under a "
                  "real embedding model, reaches the threshold (default 0.80).")
    card_notes = CARD_NOTES
    shims = ()
    flags = ()
    label_reading = None
    judge = "harness.adapters.baseline.judge:similarity_reply"

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        if not case.answer.strip():
            return CellResult.unscored("no sentences: the answer is empty")
        matches, detail = await match_sentences(case, endpoint)
        units = [sentence_unit(i, m, self.threshold) for i, m in enumerate(matches)]
        grounded = sum(u.verdict == "supported" for u in units)
        return CellResult.scored(grounded / len(units), units,
                                 detail={**detail, "sentences": len(units), "grounded": grounded,
                                         "threshold": self.threshold})

    @staticmethod
    def reference_reply(req: JudgeRequest) -> str:
        from harness.adapters.baseline.judge import similarity_reply

        return similarity_reply(req)
