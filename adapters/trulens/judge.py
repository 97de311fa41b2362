"""Reference-judge handlers for the TruLens prompts: each step answered from the case's labels.

A step is recognised by the start of its system prompt (TruLens 2.16.0's templates; the contract
test checks these prefixes against the installed templates) and answered in exactly the shape
TruLens parses for it:

==============  ====================================  =========================================
step            answer                                shape
==============  ====================================  =========================================
trivial filter  keep exactly the sentences that       Python list literal of strings (the
                carry a claim or overlap the          prompt asks for one; TruLens parses it)
                abstention span
groundedness    :func:`sentence_score` of the         single-line JSON ``{"criteria",
                sentence's claims; an abstention      "supporting_evidence", "score"}``
                sentence without claims: 3 with       (``ChainOfThoughtResponse``)
                evidence ``ABSTENTION``
abstention      1 if the sentence overlaps the        ``{"score": n}`` (``BaseFeedbackResponse``)
                annotated abstention span, else 0
answerability   1 if ``annotation.answerable``        ``{"score": n}``
citation        1 if every cited claim is attributed  ``{"criteria", "supporting_evidence",
                to the passage it cites, else 0       "score"}``, or ``{"score": n}``
==============  ====================================  =========================================

A sentence's evidence is the text of its supported claims' evidence spans, joined with `` ... ``;
``NOTHING FOUND`` when it has none (a contradicted claim's spans contradict it, so they are not
supporting evidence). A sentence that carries both claims and an abstention is scored on its
claims. A sentence the judge is asked about that carries no claim and no abstention (possible only
when the filter's reply did not parse) has no answer in the label table: the request is refused.
The per-sentence steps see one sentence without its position, so a sentence that occurs twice in an
answer is read at its first occurrence (the filter step sees the list in order and maps each one).

Citation rule, per claim with a ``cited_context_id``: ``supported`` is attributed when every
evidence span lies in the cited passage (a multi-hop claim needs all its passages, so citing one of
them is not enough); ``inference`` is attributed (no span states it, so there is nothing to check
against; TruLens's 2 of 3 for it rounds to 1 on the binary scale); ``not_found`` and
``contradicted`` are misattributed (the cited passage does not support them); a citation of a
passage that does not exist is misattributed. The answer scores 1 if no cited claim is
misattributed. An answer with ``[N]`` markers but no claim carrying ``cited_context_id`` is refused.
"""
from __future__ import annotations

import ast
import json
import math
import re

from harness.adapters.trulens.common import LABEL_READING, join_source
from harness.core.records import Case, Claim
from harness.core.spans import overlaps
from harness.metric import JudgeRequest, UnrecognisedRequest

TRIVIAL = "Consider the following list of statements. Identify and remove sentences that are stylistic"
GROUNDEDNESS = "You are an INFORMATION OVERLAP classifier;"
ABSTENTION = "You are a ABSTENTION classifier;"
ANSWERABILITY = "You are a ANSWERABILITY classifier;"
CITATION = "You are a CITATION-ATTRIBUTION classifier"
STEP_PREFIXES = {"trivial": TRIVIAL, "groundedness": GROUNDEDNESS, "abstention": ABSTENTION,
                 "answerability": ANSWERABILITY, "citation": CITATION}
"""System-prompt prefix of each step (checked against the vendor's templates by the contract test)."""

JSON_TAIL = "\n\nRespond ONLY with a single-line JSON object"
COT_MARKER = "Please evaluate using the following template:"
CITATION_CRITERIA = ("Every [N] marker must point to a SOURCE passage that supports the specific claim "
                     "it is attached to; one misattributed marker scores 0.")


def reply(req: JudgeRequest, steps: tuple[str, ...]) -> str:
    """Answer one request of a TruLens metric whose allowed steps are ``steps``."""
    system, user = req.text_of("system"), req.text_of("user")
    step = next((s for s in steps if system.startswith(STEP_PREFIXES[s])), None)
    if step is None:
        raise UnrecognisedRequest(req.metric, f"none of the TruLens steps {', '.join(steps)}", req.prompt)
    return HANDLERS[step](req, user)


def groundedness_reply(req: JudgeRequest) -> str:
    """The reference reply to a ``trulens.groundedness`` request."""
    return reply(req, ("trivial", "groundedness"))


def answerability_reply(req: JudgeRequest) -> str:
    """The reference reply to a ``trulens.groundedness_answerability`` request."""
    return reply(req, ("trivial", "groundedness", "abstention", "answerability"))


def citation_reply(req: JudgeRequest) -> str:
    """The reference reply to a ``trulens.citation`` request."""
    return reply(req, ("citation",))


def sentence_score(claims: list[Claim]) -> int:
    """TruLens 0-3 score of a sentence: the mean of its claims' scores (:data:`LABEL_READING`),
    rounded half up.

    >>> from harness.core.records import Claim
    >>> c = lambda l: Claim("x", (0, 1), l)
    >>> sentence_score([c("supported"), c("not_found")])
    2
    >>> sentence_score([c("inference")]), sentence_score([c("supported"), c("inference")])
    (2, 3)
    """
    if not claims:
        raise ValueError("a sentence without claims has no TruLens score in the reference table")
    mean = sum(LABEL_READING[c.label] for c in claims) / len(claims)
    return int(math.floor(mean + 0.5))


def _refuse(req: JudgeRequest, step: str, why: str):
    return UnrecognisedRequest(req.metric, f"{step}: {why}", req.prompt)


def _sentence_span(req: JudgeRequest, step: str, sentence: str) -> tuple[int, int]:
    at = req.case.answer.find(sentence) if sentence else -1
    if at < 0:
        raise _refuse(req, step, f"the sentence is not in the case's answer: {sentence[:80]!r}")
    return at, at + len(sentence)


def _abstains(case: Case, span: tuple[int, int]) -> bool:
    ab = case.abstention_at()
    return ab is not None and overlaps(span, ab)


def trivial(req: JudgeRequest, user: str) -> str:
    m = re.fullmatch(r"ALL STATEMENTS: (.*)\n\nIMPORTANT STATEMENTS:\s*", user, re.S)
    try:
        statements = ast.literal_eval(m.group(1)) if m else None
    except (ValueError, SyntaxError):
        statements = None
    if not isinstance(statements, list) or not all(isinstance(s, str) for s in statements):
        raise _refuse(req, "trivial filter", "no Python list of statements after 'ALL STATEMENTS:'")
    case, kept, pos = req.case, [], 0
    for s in statements:
        at = case.answer.find(s, pos) if s else -1
        if at < 0:
            raise _refuse(req, "trivial filter", f"statement not in the case's answer: {s[:80]!r}")
        span, pos = (at, at + len(s)), at + len(s)
        if case.claims_in(span) or _abstains(case, span):
            kept.append(s)
    return repr(kept)


def sentence_verdict(case: Case, span: tuple[int, int]) -> tuple[int, str] | None:
    """(0-3 score, supporting evidence) for the answer sentence at ``span``; None if it carries
    neither a claim nor an abstention."""
    claims = case.claims_in(span)
    if claims:
        quotes: list[str] = []
        for c in claims:
            if c.label == "supported":
                quotes += [case.evidence_text(e) for e in c.evidence if case.evidence_text(e).strip()]
        quotes = list(dict.fromkeys(quotes))
        return sentence_score(claims), " ... ".join(quotes) or "NOTHING FOUND"
    if _abstains(case, span):
        return 3, "ABSTENTION"
    return None


def groundedness(req: JudgeRequest, user: str) -> str:
    head = "SOURCE: " + join_source(req.case) + "\n\nSTATEMENT: "
    tail = user.rfind(JSON_TAIL)
    if not user.startswith(head) or tail < len(head):
        raise _refuse(req, "groundedness judge", "SOURCE is not the case's joined passages, or no STATEMENT")
    sentence = user[len(head):tail]
    verdict = sentence_verdict(req.case, _sentence_span(req, "groundedness judge", sentence))
    if verdict is None:
        raise _refuse(req, "groundedness judge", "the sentence carries no annotated claim or abstention")
    score, evidence = verdict
    return json.dumps({"criteria": sentence, "supporting_evidence": evidence, "score": score}, ensure_ascii=False)


def abstention(req: JudgeRequest, user: str) -> str:
    m = re.fullmatch(r"STATEMENT: (.*)\n\nABSTENTION:\s*", user, re.S)
    if not m:
        raise _refuse(req, "abstention classifier", "no 'STATEMENT: ... ABSTENTION:'")
    span = _sentence_span(req, "abstention classifier", m.group(1))
    return json.dumps({"score": int(_abstains(req.case, span))})


def answerability(req: JudgeRequest, user: str) -> str:
    if not user.startswith(f"QUESTION: {req.case.question}\n\nSOURCE: ") or not user.rstrip().endswith(
            "ANSWERABILITY:"):
        raise _refuse(req, "answerability classifier", "the QUESTION is not the case's question")
    return json.dumps({"score": int(bool(req.case.annotation.answerable))})


def attribution(case: Case, claim: Claim) -> tuple[bool, str]:
    """Is ``claim`` attributed to the passage it cites? (see the module docstring), with why."""
    cited = claim.cited_context_id
    tag = f"[{cited}] {claim.text!r}"
    if cited not in {c.id for c in case.contexts}:
        return False, f"{tag}: there is no passage {cited}"
    if claim.label == "supported" and claim.evidence:
        where = sorted({e.context_id for e in claim.evidence})
        if where == [cited]:
            return True, f"{tag}: passage {cited} states it"
        return False, f"{tag}: misattributed, its evidence is in passage(s) {', '.join(where)}"
    if claim.label in ("supported", "inference"):
        return True, f"{tag}: follows from the passages (no span states it); counted as attributed"
    return False, f"{tag}: passage {cited} does not support it ({claim.label})"


def citation(req: JudgeRequest, user: str) -> str:
    if f"ANSWER WITH CITATIONS: {req.case.answer}\n\n" not in user:
        raise _refuse(req, "citation attribution", "the ANSWER is not the case's answer")
    cited = [c for c in req.case.judged_claims() if c.cited_context_id]
    if not cited:
        raise _refuse(req, "citation attribution", "no annotated claim carries a cited_context_id")
    checks = [attribution(req.case, c) for c in cited]
    score = int(all(ok for ok, _ in checks))
    if COT_MARKER in user or req.schema_name == "ChainOfThoughtResponse":
        return json.dumps({"criteria": CITATION_CRITERIA, "supporting_evidence": "; ".join(w for _, w in checks),
                           "score": score}, ensure_ascii=False)
    return json.dumps({"score": score})


HANDLERS = {"trivial": trivial, "groundedness": groundedness, "abstention": abstention,
            "answerability": answerability, "citation": citation}
