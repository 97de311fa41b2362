"""``inhouse.span``: span-attributed groundedness, three-way verdicts, checked locally.

Definition: a claim counts as grounded only when the judge says ``supported`` AND returns at least one
evidence quote AND every quote is located in the context it names: verbatim (whitespace and quote
marks normalised), or, by default, near-verbatim (case, punctuation, whitespace and ellipses folded
away, the pieces in order; a quote that keeps the prompt's ``[1] `` prefix, or that names the sentence
instead of quoting it, "Passage 1, sentence 2": :mod:`harness.adapters.inhouse.quotes`). Score = grounded claims / claims. An
answer with no claims is unscored with a reason, never 1.0. Strict mode (``strict = True``, e.g.
:class:`InhouseSpanStrict`) accepts verbatim quotes only, as version 1 did.

At most two judge calls per answer: (1) decompose the answer into atomic claims; (2) verify every
claim in one batched call, each with a verdict (supported / contradicted / not_found), the context
id and the verbatim evidence. An empty answer makes no call. Prompts are versioned files under
``prompts/``; changing one is a new prompt version and a new metric version.

Replies are read the way real models write them: JSON in a code fence or after prose; a passage
named as the prompt shows it or as a model writes it (``"[1]"``, ``1``, ``"Passage 1"``, ``"context
1"``: :mod:`harness.adapters.inhouse.refs`); claims the judge split into fragments (``"2."``) joined again.
A batch reply that lacks some claims' verdicts is followed by one re-ask for just those claims,
recorded in the cell's reason and detail (:mod:`harness.adapters.inhouse.verdicts`). A reply that still
cannot be read makes the cell unscored with the reason: it is never read as "unsupported".
"""
from __future__ import annotations

from harness.adapters.inhouse.ask import (  # noqa: F401 - re-exported: the scorer's steps, as before
    CLAIMS_MARKER,
    CLAIMS_SCHEMA,
    PROMPT_VERSION,
    VERDICTS,
    VERDICTS_SCHEMA,
    ReplyError,
    _ask,
    _json,
    decompose_messages,
    prompt,
    verify_messages,
)
from harness.adapters.inhouse.refs import resolve_context
from harness.adapters.inhouse.verdicts import verify_claims
from harness.core.records import Case, CellResult, Quote, UnitVerdict
from harness.core.spans import join_fragments
from harness.metric import Endpoint, LabelReading, UnrecognisedRequest, register


def parse_claims(content: str) -> list[str]:
    data = _json(content)
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise ReplyError("decompose reply lacks a list of strings under 'claims'")
    return join_fragments([c.strip() for c in claims if c.strip()])


def parse_verdicts(content: str, n: int) -> list[dict]:
    """One verdict per claim, in claim order; ReplyError when any is missing or malformed."""
    data = _json(content)
    items = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ReplyError("verify reply lacks a list under 'verdicts'")
    by_claim: dict[int, dict] = {}
    for pos, v in enumerate(items, start=1):
        if not isinstance(v, dict) or v.get("verdict") not in VERDICTS:
            raise ReplyError(f"verdict {pos} is not one of {', '.join(VERDICTS)}: {str(v)[:80]}")
        idx = v.get("claim", pos)
        if not isinstance(idx, int) or isinstance(idx, bool) or not 1 <= idx <= n or idx in by_claim:
            raise ReplyError(f"verdict {pos} names claim {idx!r}; expected each of 1..{n} once")
        ev = v.get("evidence") or []
        if not isinstance(ev, list) or not all(isinstance(e, dict) for e in ev):
            raise ReplyError(f"verdict {pos}: evidence must be a list of {{context_id, quote}}")
        by_claim[idx] = v
    if len(by_claim) != n:
        missing = [i for i in range(1, n + 1) if i not in by_claim]
        raise ReplyError(f"judge returned {len(by_claim)} verdicts for {n} claims (missing: {missing})")
    return [by_claim[i] for i in range(1, n + 1)]




def check_evidence(case: Case, verdict: dict, strict: bool = False) -> tuple[bool, tuple[Quote, ...], str]:
    """The local span check: (grounded?, quotes with where they were found, check result).

    Each quote is located in the context it names (:func:`harness.adapters.inhouse.quotes.locate_quote`;
    ``strict``: verbatim only). A quote that cannot be located fails the claim, and the check result
    quotes the nearest passage text.
    """
    from harness.adapters.inhouse.quotes import locate_quote, nearest_passage, sentence_ref

    quotes = []
    problem = None
    for e in verdict.get("evidence") or []:
        ref, text = e.get("context_id", ""), str(e.get("quote", ""))
        ref, text, clash = _sentence_named(ref, text, sentence_ref, case)
        ctx = resolve_context(ref, case.contexts)
        if clash is not None and ctx is not None and clash is not ctx:
            quotes.append(Quote(text, ctx.id, verbatim=False))
            problem = problem or f"span not found (the quote names passage {clash.id!r}, the verdict {ctx.id!r})"
            continue
        cid = ctx.id if ctx is not None else str(ref if ref is not None else "")
        if not text.strip():
            quotes.append(Quote(text, cid or None, verbatim=None))
            continue
        hit = locate_quote(text, ctx.text, strict=strict) if ctx is not None else None
        quotes.append(Quote(text, cid, hit.start if hit else None, hit.end if hit else None,
                            hit is not None and hit.match == "exact", hit.match if hit else None))
        if hit is None and problem is None:
            if ctx is None:
                problem = f"span not found (no context {cid!r}; contexts: {', '.join(c.id for c in case.contexts)})"
            else:
                near = nearest_passage(text, ctx.text)
                problem = f"span not found; nearest passage [{cid}]: {near!r}" if near else "span not found"
    real = [q for q in quotes if q.verbatim is not None]
    if verdict["verdict"] != "supported":
        return False, tuple(quotes), verdict["verdict"]
    if not real:
        return False, tuple(quotes), "no span: the judge quoted no evidence"
    if problem:
        return False, tuple(quotes), problem
    if any(q.match == "sentence" for q in real):
        return True, tuple(quotes), "sentence named by number found (the judge named it instead of quoting it)"
    if any(q.match == "near" for q in real):
        return True, tuple(quotes), "near-verbatim span found (case, punctuation, whitespace or ellipses differ)"
    return True, tuple(quotes), "verbatim span found"


def _sentence_named(ref, text: str, sentence_ref, case: Case):
    """(passage reference, quote, the context the quote itself names or None) for evidence that names a
    sentence (``"Passage 1, sentence 2"``) in its quote or in its ``context_id``: the passage part of a
    ``context_id`` such as ``"Passage 1, sentence 2"`` is the reference, and with no quote the sentence
    is the quote; a passage named in the quote stands in for a missing ``context_id``."""
    named = sentence_ref(str(ref)) if ref is not None else None
    if named is not None and named[0] is not None:
        ref = named[0]
        if not text.strip():
            text = f"sentence {named[1]}"
    in_quote = sentence_ref(text) if text.strip() else None
    clash = None
    if in_quote is not None and in_quote[0] is not None:
        clash = resolve_context(in_quote[0], case.contexts)
        if ref is None or not str(ref).strip():
            ref = in_quote[0]
    return ref, text, clash


@register
class InhouseSpan:
    """Span-attributed groundedness with a local verbatim check (see the module docstring)."""

    name = "inhouse.span"
    version = "3"
    display_name = "In-house span groundedness"
    short_name = "inhouse.span"
    order = 10
    higher_is_better = True
    vendor = "inhouse"
    unit = "claim"
    definition = ("The harness's own scorer: a claim is grounded only if the judge says supported and returns "
                  "a quote that the harness locates in the context it names (verbatim, or near-verbatim: case, "
                  "punctuation, whitespace and ellipses aside, every word in order); verdicts supported / "
                  "contradicted / not_found; the score is grounded claims / claims, and an answer with no claims "
                  "is unscored, never 1.0.")
    label_reading = LabelReading({"supported": "supported", "inference": "supported", "not_found": "not_found",
                                  "contradicted": "contradicted"},
                                 "judge verdict (grounded only with a located span)")
    judge = "harness.adapters.inhouse.judge:reply"
    strict: bool = False
    """True: a quote must occur verbatim (whitespace and quote marks normalised); False (default): a
    near-verbatim quote (case, punctuation, whitespace, ellipses) also locates its span."""

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        if not case.answer.strip():
            return CellResult.unscored("no claims: the answer is empty")

        try:
            claims = parse_claims(await _ask(endpoint, decompose_messages(case), CLAIMS_SCHEMA))
            if not claims:
                return CellResult.unscored("no claims: the answer asserts nothing checkable")
            verified = await verify_claims(endpoint, case, claims)
        except ReplyError as e:
            return CellResult.unscored(f"judge reply unreadable: {e}")
        units = [self._unit(case, i, text, v) for i, (text, v) in enumerate(zip(claims, verified.verdicts))]
        grounded = sum(u.detail["grounded"] for u in units)
        near = sum(u.detail["grounded"] and any(q.match in ("near", "sentence") for q in u.quotes) for u in units)
        detail = {"claims": len(units), "grounded": grounded, "grounded_near": near, "strict": self.strict,
                  "prompt_version": PROMPT_VERSION}
        if verified.reasked:
            detail["reasked_claims"] = list(verified.reasked)
        return CellResult.scored(grounded / len(units), units, reason=verified.note or None, detail=detail)

    def _unit(self, case: Case, i: int, text: str, v: dict) -> UnitVerdict:
        grounded, quotes, check = check_evidence(case, v, strict=self.strict)
        reason = str(v.get("reason") or "").strip()
        raw = v["verdict"]
        if raw == "supported" and not grounded:
            raw = f"supported ({check})"
        return UnitVerdict(
            index=i, text=text, kind="claim", verdict="supported" if grounded else "unsupported",
            raw_verdict=raw, reason=f"{reason} [{check}]" if reason else check,
            span=case.unit_span(text), quotes=quotes,
            detail={"grounded": grounded, "check": check, "strict": self.strict,
                    **({"reasked": True} if v.get("_reasked") else {})})


class InhouseSpanStrict(InhouseSpan):
    """``inhouse.span`` in strict mode: verbatim quotes only (version 1's check). Not registered by
    default; a package that wants it declares it in the ``groundedness_harness.metrics`` entry-point
    group (``"inhouse.span_strict" = "harness.adapters.inhouse.span:InhouseSpanStrict"``)."""

    name = "inhouse.span_strict"
    display_name = "In-house span groundedness (strict quotes)"
    short_name = "inhouse.strict"
    strict = True


__all__ = ["InhouseSpan", "InhouseSpanStrict", "check_evidence", "parse_claims", "parse_verdicts", "UnrecognisedRequest"]
