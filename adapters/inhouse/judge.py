"""Reference-judge handlers for ``inhouse.span`` (its label reading is ``InhouseSpan.label_reading``).

- decompose (schema ``InhouseClaims``): the judged claims' texts, in answer order.
- verify (schema ``InhouseVerdicts``): per claim, the table's verdict; ``supported`` quotes the
  annotated evidence spans verbatim; ``inference`` is answered the way a careful span-level judge
  would: supported, with no quote (nothing in the context states it), so the local check fails it;
  ``contradicted`` quotes the contradicting spans; ``not_found`` quotes nothing.
- a "claim" that is not an annotated claim's text but one whole sentence of the answer (the cascade
  sends the sentences its similarity check flags): the sentence's claims decide, the worst first:
  contradicted, then not_found, then inference (supported, no quote), else supported with every
  claim's evidence; a sentence that states no annotated claim (a greeting, an abstention) is
  not_found, because no passage states it.
"""
from __future__ import annotations

import json

from harness.adapters.inhouse.span import CLAIMS_MARKER, InhouseSpan
from harness.core.spans import find_verbatim
from harness.metric import JudgeRequest, UnrecognisedRequest

WORST_FIRST = ("contradicted", "not_found", "inference", "supported")
"""How a sentence's claims combine into one verdict on the sentence."""

REASONS = {
    "supported": "the passage states it",
    "inference": "follows from the passages, but no passage states it",
    "not_found": "no passage states it",
    "contradicted": "a passage says otherwise",
}


def reply(req: JudgeRequest) -> str:
    """The reference reply to an ``inhouse.span`` request (decompose or verify)."""
    if req.schema_name == "InhouseClaims":
        return json.dumps({"claims": [c.text for c in req.case.judged_claims()]}, ensure_ascii=False)
    if req.schema_name == "InhouseVerdicts":
        user = req.text_of("user")
        if CLAIMS_MARKER not in user:
            raise UnrecognisedRequest(req.metric, "verify (claims list missing)", req.prompt)
        try:
            claims = json.loads(user.split(CLAIMS_MARKER, 1)[1])
        except ValueError:
            raise UnrecognisedRequest(req.metric, "verify (claims list is not JSON)", req.prompt) from None
        return json.dumps({"verdicts": [_verdict(req, i, text) for i, text in enumerate(claims, start=1)]},
                          ensure_ascii=False)
    raise UnrecognisedRequest(req.metric, f"unknown step (schema {req.schema_name!r})", req.prompt)


def _verdict(req: JudgeRequest, i: int, text: str) -> dict:
    claim = req.case.claim_for_text(text)
    if claim is None:
        sentence = _sentence_verdict(req, i, text)
        if sentence is not None:
            return sentence
        raise UnrecognisedRequest(req.metric, f"verify (claim {i} matches no annotated claim: {text[:80]!r})",
                                  req.prompt)
    evidence = []
    if claim.label in ("supported", "contradicted"):
        evidence = [{"context_id": e.context_id, "quote": req.case.evidence_text(e)} for e in claim.evidence]
    return {"claim": i, "verdict": InhouseSpan.label_reading[claim.label], "evidence": evidence,
            "reason": REASONS[claim.label]}


def _sentence_verdict(req: JudgeRequest, i: int, text: str) -> dict | None:
    """The verdict on a whole answer sentence (see the module docstring), or None if ``text`` is not one."""
    span = find_verbatim(text, req.case.answer) if text.strip() else None
    if span is None:
        return None
    claims = req.case.claims_in(span)
    if not claims:
        return {"claim": i, "verdict": "not_found", "evidence": [],
                "reason": "the sentence states no claim that a passage states"}
    label = next(lab for lab in WORST_FIRST if any(c.label == lab for c in claims))
    evidence = []
    if label in ("supported", "contradicted"):
        evidence = [{"context_id": e.context_id, "quote": req.case.evidence_text(e)}
                    for c in claims if c.label == label for e in c.evidence]
    return {"claim": i, "verdict": InhouseSpan.label_reading[label], "evidence": evidence, "reason": REASONS[label]}
