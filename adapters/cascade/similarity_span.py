"""``cascade.similarity_span``: the similarity check as a filter, the in-house verifier for the rest.

Definition: split the answer into sentences and run the similarity check of ``baseline.similarity``
(threshold default 0.80, ``harness run --similarity-threshold T``). A sentence the check approves is
accepted as grounded without a judge call. Every sentence it flags goes, in one batched call, to the
in-house span verifier (``inhouse.span``'s verify prompt, each flagged sentence as one claim), and is
grounded only under the in-house rule: verdict supported with a non-empty quote located in the
passage it names. The verifier's reply is read as ``inhouse.span`` reads it, one re-ask for missing
verdicts included (:mod:`harness.adapters.inhouse.verdicts`). Score = grounded sentences / sentences; an
empty answer is unscored.

What the cascade costs is stated beside the full in-house scorer (report section "Similarity
cascade", and the metric card): the share of sentences the verifier never saw (its work saved), the
residual errors (approved sentences that the full in-house check rejects: the shortcut's misses,
which the cascade cannot catch) and the false rejects (flagged sentences that the full check
accepts: verifier work spent for nothing). The cascade itself never runs the full check on an
approved sentence; the report compares with the ``inhouse.span`` cell of the same case.

The reference judge answers the verify step through the in-house handler, which reads a whole
answer sentence from the labels of the claims in it (``adapters/inhouse/judge.py``); the embeddings
come from the configured embedding model, not from the labels.
"""
from __future__ import annotations

from harness.adapters.baseline._sim import Match, SimilarityThreshold, match_sentences
from harness.core.records import Case, CellResult, UnitVerdict
from harness.metric import Endpoint, JudgeRequest, register

CARD_NOTES = """
Judge calls per answer: one embeddings request, plus one verify call only when the similarity check
flags a sentence. Each unit's detail says which route decided it (`similarity` or `verifier`) and keeps
its best similarity.
"""


def approved_unit(i: int, m: Match, threshold: float) -> UnitVerdict:
    return UnitVerdict(index=i, text=m.text, verdict="supported", raw_verdict=f"approved ({m.similarity:.4f})",
                       kind="sentence", span=m.span,
                       reason=f"similarity {m.similarity:.4f} >= {threshold:.2f}: accepted without the verifier",
                       detail={"route": "similarity", "similarity": round(m.similarity, 6), "grounded": True,
                               "context_id": m.context_id, "best": m.best})


def verified_unit(case: Case, i: int, m: Match, v: dict) -> UnitVerdict:
    from harness.adapters.inhouse.span import check_evidence

    grounded, quotes, check = check_evidence(case, v)
    raw = v["verdict"] if grounded or v["verdict"] != "supported" else f"supported ({check})"
    reason = str(v.get("reason") or "").strip()
    return UnitVerdict(index=i, text=m.text, verdict="supported" if grounded else "unsupported",
                       raw_verdict=raw, kind="sentence", span=m.span, quotes=quotes,
                       reason=f"similarity {m.similarity:.4f}: sent to the verifier; {reason} [{check}]".rstrip(),
                       detail={"route": "verifier", "similarity": round(m.similarity, 6), "grounded": grounded,
                               "check": check, "context_id": m.context_id, "best": m.best,
                               **({"reasked": True} if v.get("_reasked") else {})})


@register
class CascadeSimilaritySpan(SimilarityThreshold):
    """Similarity filter, then the in-house verifier on the flagged sentences (see the module docstring)."""

    name = "cascade.similarity_span"
    version = "2"
    display_name = "Cascade: similarity filter, then in-house verifier"
    short_name = "cascade"
    higher_is_better = True
    vendor = "inhouse"
    unit = "sentence"
    order = 51
    vendor_package = None
    score_range = (0.0, 1.0)
    definition = ("Sentences the similarity check approves are accepted; the rest are verified by the in-house span "
                  "verifier. Score = grounded sentences / sentences.")
    card_notes = CARD_NOTES
    shims = ()
    flags = ()
    label_reading = None
    uses_judge = True   # the verifier is a judge (the similarity check before it is not)
    judge = "harness.adapters.cascade.judge:cascade_reply"

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        from harness.adapters.inhouse.span import ReplyError
        from harness.adapters.inhouse.verdicts import verify_claims

        if not case.answer.strip():
            return CellResult.unscored("no sentences: the answer is empty")
        matches, detail = await match_sentences(case, endpoint)
        flagged = [i for i, m in enumerate(matches) if not m.passes(self.threshold)]
        verdicts: dict[int, dict] = {}
        reasked, note = [], None
        if flagged:
            try:
                verified = await verify_claims(endpoint, case, [matches[i].text for i in flagged])
            except ReplyError as e:
                return CellResult.unscored(f"judge reply unreadable: {e}")
            verdicts = dict(zip(flagged, verified.verdicts))
            reasked, note = list(verified.reasked), verified.note or None
        units = [verified_unit(case, i, m, verdicts[i]) if i in verdicts else approved_unit(i, m, self.threshold)
                 for i, m in enumerate(matches)]
        grounded = sum(u.detail["grounded"] for u in units)
        n = len(units)
        return CellResult.scored(grounded / n, units, reason=note, detail={
            **detail, "threshold": self.threshold, "sentences": n, "approved": n - len(flagged),
            "verified": len(flagged), "grounded": grounded, "work_saved": (n - len(flagged)) / n,
            **({"reasked_claims": reasked} if reasked else {})})

    @staticmethod
    def report_sections(data) -> list:
        """The "Similarity cascade" section: what the shortcut saves and what it lets through."""
        from harness.adapters.cascade import report  # reports/ is loaded only when a report is built

        return report.sections(data)

    @staticmethod
    def card_sections(data, card: str) -> list[str]:
        """The cascade's costs, on its own card and on the similarity baseline's (its filter)."""
        from harness.adapters.cascade import report

        return report.card_sections(data, card)

    @staticmethod
    def reference_reply(req: JudgeRequest) -> str:
        from harness.adapters.cascade.judge import cascade_reply

        return cascade_reply(req)
