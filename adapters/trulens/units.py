"""Turn what TruLens returns into harness records: per-sentence verdicts, quotes and the cell result.

No vendor import here: the functions read TruLens's plain return values (floats, dicts, lists).

TruLens's groundedness return value is ``(score, {"reasons": [...]})``, one entry per sentence the
judge saw, in sentence order. An entry is ``{"criteria": sentence, "supporting_evidence":
"Criteria: ...\\nSupporting Evidence: ...", "score": s/3}``, or, in the answerability variant, for a
sentence the abstention classifier flagged, ``{"reason": "Answerable abstention" |
"Unanswerable abstention" | "Answerability score was not parsable"}``. When the trivial filter
leaves nothing, it is ``(0.0, {"reason": "No non-trivial statements to evaluate"})``.
"""
from __future__ import annotations

import re

from harness.core.records import Case, CellResult, Quote, UnitVerdict
from harness.core.spans import find_verbatim

UNPARSABLE = -1.0
"""TruLens's unparsable-score sentinel (``trulens.feedback.UNPARSABLE_SCORE``)."""

EVIDENCE_FIELD = "Supporting Evidence:"
NO_EVIDENCE = ("NOTHING FOUND", "ABSTENTION", "")
LIST_MARKER = re.compile(r"^\s*\d+[\.)]?\s*$")
"""TruLens drops hypotheses that are only a list marker before the filter (same pattern)."""
_QUOTE_SPLIT = re.compile(r"\s*(?:\.\.\.|\u2026|\n)\s*")
_ENCLOSING = "\"'\u201c\u201d\u2018\u2019"
VARIANT_REASONS = {
    "Answerable abstention": (0.0, "unsupported", "answerable_abstention"),
    "Unanswerable abstention": (1.0, "supported", "unanswerable_abstention"),
}


def normalise(raw: int) -> str:
    """TruLens 0-3 -> harness verdict.

    >>> [normalise(r) for r in (0, 1, 2, 3)]
    ['unsupported', 'ambiguous', 'ambiguous', 'supported']
    """
    return {0: "unsupported", 3: "supported"}.get(raw, "ambiguous")


def evidence_text(reason: str) -> str:
    """The text after ``Supporting Evidence:`` in a TruLens reason string.

    >>> evidence_text("Criteria: Bake.\\nSupporting Evidence: Bake at 350 F.")
    'Bake at 350 F.'
    >>> evidence_text("no field")
    ''
    """
    pos = reason.find(EVIDENCE_FIELD)
    return reason[pos + len(EVIDENCE_FIELD):].strip() if pos >= 0 else ""


def quotes(evidence: str, case: Case) -> tuple[Quote, ...]:
    """The judge's evidence as quotes, each checked verbatim against every passage.

    The whole string is tried first; if it is not verbatim, it is split on ellipses and line
    breaks (the ways a judge strings several excerpts together) and each piece is checked.
    ``NOTHING FOUND``, ``ABSTENTION`` and an empty string are no evidence: no quotes.
    """
    evidence = evidence.strip()
    if evidence.upper() in NO_EVIDENCE:
        return ()
    whole = _quote(evidence, case)
    if whole.verbatim:
        return (whole,)
    pieces = [p for p in _QUOTE_SPLIT.split(evidence) if p.strip(_ENCLOSING + " ")]
    if len(pieces) < 2:
        return (whole,)
    return tuple(_quote(p, case) for p in pieces)


def _quote(text: str, case: Case) -> Quote:
    bare = text.strip().strip(_ENCLOSING).strip()
    for ctx in case.contexts:
        hit = find_verbatim(bare, ctx.text)
        if hit is not None:
            return Quote(text, ctx.id, hit[0], hit[1], True)
    return Quote(text, None, None, None, False)


def sequential_spans(answer: str, parts: list[str]) -> list[tuple[int, int] | None]:
    """Spans of ``parts`` found in order in ``answer`` (Punkt sentences are exact slices).

    >>> sequential_spans("Hi. Hi. Bye.", ["Hi.", "Hi.", "Bye."])
    [(0, 3), (4, 7), (8, 12)]
    """
    out, pos = [], 0
    for part in parts:
        at = answer.find(part, pos) if part else -1
        if at < 0:
            out.append(None)
            continue
        out.append((at, at + len(part)))
        pos = at + len(part)
    return out


def _same_text(a, b) -> bool:
    """Equal once case, punctuation and whitespace are folded away (a filter echo without its stop).

    >>> _same_text("Bake at 350 F.", "bake at 350 F"), _same_text("Bake at 350 F.", "Bake at 400 F.")
    (True, False)
    """
    from harness.core.aligner import fold

    folded = fold(str(a))[0]
    return bool(folded) and folded == fold(str(b))[0]


def judged_unit(index: int, text: str, entry: dict, span, case: Case) -> UnitVerdict:
    """One sentence the judge saw, from its TruLens reasons entry."""
    if "criteria" not in entry:  # answerability variant: an abstaining sentence
        reason = str(entry.get("reason", ""))
        score, verdict, raw = VARIANT_REASONS.get(reason, (UNPARSABLE, "excluded", "unparsable"))
        return UnitVerdict(index, text, verdict, raw, "sentence", reason, span,
                           detail={"score": score, "abstention": True, "judged": True})
    score = float(entry.get("score", UNPARSABLE))
    full = str(entry.get("supporting_evidence", ""))
    ev = evidence_text(full)
    detail = {"score": score, "abstention": ev.upper() == "ABSTENTION", "judged": True, "trulens_reason": full}
    if score == UNPARSABLE:
        return UnitVerdict(index, text, "excluded", "unparsable", "sentence",
                           "the judge's score could not be parsed; TruLens leaves it out of the mean",
                           span, quotes(ev, case), detail)
    raw = round(score * 3)
    return UnitVerdict(index, text, normalise(raw), f"{raw}/3", "sentence", ev or None, span,
                       quotes(ev, case), detail)


def excluded_unit(index: int, text: str, raw: str, reason: str, span) -> UnitVerdict:
    return UnitVerdict(index, text, "excluded", raw, "sentence", reason, span, detail={"judged": False})


def sentence_units(case: Case, sentences: list[str], kept: list, reasons: list[dict]) -> list[UnitVerdict]:
    """Every sentence of the answer as a unit: judged (aligned with ``reasons``) or excluded.

    ``sentences``: TruLens's split of the answer; ``kept``: what the trivial filter returned
    (``reasons[k]`` belongs to ``kept[k]``). A kept item is matched to its sentence exactly, else once
    case, punctuation and whitespace are folded away (an echo without its final stop is the same
    sentence, not a trivial one plus an extra). A kept item that is still not one of the sentences (a
    judge that rewrote a sentence in the filter) becomes an extra unit, located in the answer if it can be.
    """
    spans = sequential_spans(case.answer, sentences)
    candidates = [i for i, s in enumerate(sentences) if not LIST_MARKER.match(s)]
    assign: dict[int, int] = {}
    extras: list[int] = []
    pos = 0
    for k, item in enumerate(kept[:len(reasons)]):
        hit = next((j for j in range(pos, len(candidates)) if sentences[candidates[j]] == item), None)
        if hit is None:   # a judge that echoed the sentence with its case, punctuation or spacing changed
            hit = next((j for j in range(pos, len(candidates)) if _same_text(sentences[candidates[j]], item)), None)
        if hit is None:
            extras.append(k)
            continue
        assign[candidates[hit]] = k
        pos = hit + 1
    units = []
    for i, s in enumerate(sentences):
        if i in assign:
            units.append(judged_unit(i, s, reasons[assign[i]], spans[i], case))
        elif LIST_MARKER.match(s):
            units.append(excluded_unit(i, s, "list_marker", "a bare list marker: TruLens drops it before judging",
                                       spans[i]))
        else:
            units.append(excluded_unit(i, s, "trivial", "dropped by TruLens's trivial-statement filter: not judged",
                                       spans[i]))
    for n, k in enumerate(extras, start=len(sentences)):
        text = str(kept[k])
        units.append(judged_unit(n, text, reasons[k], case.unit_span(text), case))
    return units


def groundedness_result(case: Case, score: float, out: dict, sentences: list[str],
                        filter_log: list[dict], *, variant: bool, failures: list[str] = (),
                        fallbacks: list[str] = ()) -> CellResult:
    """The cell result for either groundedness function, with TruLens's score kept exactly.

    ``filter_log``: the provider's record of the trivial-filter call (statements, kept, parsed);
    ``failures``: judge calls that raised; ``fallbacks``: abstention checks that failed. A cell that
    still scores after TruLens fell back silently is flagged ``vendor_fallback`` (plus the specific
    flag) and its reason says what TruLens did: the filter reply did not parse, so every sentence was
    judged (``trivial_filter_unparsed_all_kept``); a judge call raised and was swallowed
    (``judge_failure_fallback``); an abstention check failed and was read as "not an abstention"
    (``abstention_check_fallback``); a sentence's score did not parse and was left out of the mean
    (``unparsable_sentence_dropped``).
    """
    last = filter_log[-1] if filter_log else {"kept": list(sentences), "parsed": False}
    kept, filter_parsed = list(last["kept"]), bool(last["parsed"])
    reasons = out.get("reasons") if isinstance(out, dict) else None
    flags: list[str] = []
    if not filter_parsed:
        flags.append("trivial_filter_unparsed_all_kept")
    if failures:
        flags.append("judge_failure_fallback")
    if fallbacks:
        flags.append("abstention_check_fallback")
    detail = {"sentences": len(sentences), "judged": len(reasons or []),
              "filter_kept": len(kept), "filter_parsed": filter_parsed, "failed_calls": list(failures)}
    if reasons is None:  # (0.0, {"reason": "No non-trivial statements to evaluate"})
        reason = str((out or {}).get("reason", "")) if isinstance(out, dict) else ""
        units = sentence_units(case, sentences, [], [])
        return CellResult.scored(score, units, reason=reason or None, flags=("all_trivial_scored_0", *flags),
                                 detail=detail)
    units = sentence_units(case, sentences, kept, reasons)
    judged = [u for u in units if u.detail.get("judged")]
    if not variant and any(u.detail.get("abstention") and u.verdict == "supported" for u in judged):
        flags.append("abstention_scored_grounded")
    if variant:
        flags += [f"{u.raw_verdict}_scored_{int(u.detail['score'])}" for u in judged
                  if u.raw_verdict in ("answerable_abstention", "unanswerable_abstention")]
    dropped = [u for u in judged if u.raw_verdict == "unparsable"]
    flags = list(dict.fromkeys(flags))
    if score == UNPARSABLE:
        return CellResult.vendor_nan("unscored by the vendor: TruLens returned its unparsable sentinel -1.0 "
                                     "(no sentence's judge score could be parsed)", units, flags=flags,
                                     detail=detail)
    if dropped:
        flags.append("unparsable_sentence_dropped")
    said = fallback_reasons(filter_parsed, failures, fallbacks, dropped)
    if said:
        flags.append("vendor_fallback")
    detail["fallbacks"] = said
    return CellResult.scored(score, units, reason=("scored after a silent fallback: " + "; ".join(said)) if said
                             else None, flags=flags, detail=detail)


def fallback_reasons(filter_parsed: bool, failures, fallbacks, dropped) -> list[str]:
    """What TruLens did silently, one phrase each (empty: no fallback).

    >>> fallback_reasons(False, [], ["the abstention check on 'x' failed"], [])
    ["the trivial filter's reply did not parse, so TruLens judged every sentence", "the abstention check on 'x' failed"]
    """
    out = [] if filter_parsed else ["the trivial filter's reply did not parse, so TruLens judged every sentence"]
    out += [f"a judge call failed and TruLens went on without it ({f})" for f in failures
            if not any(f.split(" on: ")[0] in fb for fb in fallbacks)]
    out += list(fallbacks)
    out += [f"TruLens could not parse the judge's score for {u.text[:60]!r} and left it out of the mean"
            for u in dropped]
    return out
