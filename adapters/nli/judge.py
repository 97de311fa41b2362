"""Reference-judge handler for ``nli.minicheck``: MiniCheck's yes/no question answered from the labels.

The request is recognised by MiniCheck's system prompt; the user prompt names one passage chunk
(``Document:``) and one answer sentence (``Claim:``). The sentence is found in the answer (at its
first occurrence) and the chunk in the passages (whitespace-normalised, as the metric joins a
chunk's sentences with one space). The sentence's claims are the annotated claims overlapping it,
and each is read against this chunk as :data:`LABEL_READING` says:

============  =======================================================================
annotation    reply for this chunk
============  =======================================================================
supported     ``Yes`` when every evidence span of the claim lies inside this chunk (a
              multi-hop claim, with evidence in two passages, is in no single chunk:
              ``No``); a supported claim without evidence reads as an inference
inference     ``Yes`` (it follows from the passages and no span states it, so there is
              no chunk to confine it to)
not_found     ``No``
contradicted  ``No``
============  =======================================================================

The sentence is ``Yes`` when every claim in it is; a sentence that carries no claim (a greeting, an
abstention) presents no information, so none of it is unsubstantiated: ``Yes``, as the prompt's
"all information presented in the claim is substantiated" reads for an empty set. A reply is the
bare word, with no log-probabilities (the reference judge has no token distribution to report), so
the metric takes its text reading.
"""
from __future__ import annotations

from harness.adapters.nli.prompt import SYSTEM_PROMPT, parse_user
from harness.core.spans import find_verbatim
from harness.metric import JudgeRequest, LabelReading, UnrecognisedRequest

LABEL_READING = LabelReading(
    {"supported": "Yes (the chunk holding all its evidence)", "inference": "Yes", "not_found": "No",
     "contradicted": "No"},
    "MiniCheck's Yes/No for a passage chunk and an answer sentence")


def chunk_location(case, document: str) -> tuple[str, int, int] | None:
    """(context id, start, end) of a chunk's text in the case's passages, or None (an empty chunk
    or one that is in no passage)."""
    for ctx in case.contexts:
        hit = find_verbatim(document, ctx.text)
        if hit is not None:
            return ctx.id, hit[0], hit[1]
    return None


def claim_holds(claim, where: tuple[str, int, int] | None) -> bool:
    """Does the chunk at ``where`` substantiate ``claim``, by the label table above?"""
    if claim.label == "inference" or (claim.label == "supported" and not claim.evidence):
        return True
    if claim.label != "supported" or where is None:
        return False
    cid, start, end = where
    return all(ev.context_id == cid and start <= ev.start and ev.end <= end for ev in claim.evidence)


def minicheck_reply(req: JudgeRequest) -> str:
    """``Yes`` or ``No`` for one MiniCheck request (UnrecognisedRequest for anything else)."""
    if not req.text_of("system").startswith(SYSTEM_PROMPT[:60]):
        raise UnrecognisedRequest(req.metric, "not MiniCheck's yes/no prompt", req.prompt)
    parsed = parse_user(req.text_of("user"))
    if parsed is None:
        raise UnrecognisedRequest(req.metric, "MiniCheck prompt without 'Document:' and 'Claim:'", req.prompt)
    document, sentence = parsed
    at = req.case.answer.find(sentence) if sentence else -1
    if at < 0:
        raise UnrecognisedRequest(req.metric, f"the claim {sentence[:80]!r} is not a sentence of the answer",
                                  req.prompt)
    where = chunk_location(req.case, document) if document.strip() else None
    claims = req.case.claims_in((at, at + len(sentence)))
    return "Yes" if all(claim_holds(c, where) for c in claims) else "No"
