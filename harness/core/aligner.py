"""The answer aligner: where a vendor's unit (a statement, claim or sentence) sits in the answer.

A unit is located by the first of these steps that succeeds, and the step is kept with a score:

1. ``claim``: the unit's text is an annotated claim's text: the claim's annotated span (score 1);
2. ``exact``: the unit occurs verbatim in the answer (score 1);
3. ``normalised``: it occurs once case, punctuation and whitespace are folded away (score 1);
4. ``fuzzy``: the best-matching stretch of the answer, if it scores at least :data:`FUZZY_MIN`.
   Two candidates compete and the higher score wins: the contiguous run of answer words whose
   content words best match the unit's (precision-weighted F over content words, so a reordered
   paraphrase that keeps its terms still lands on them, and not on its neighbours), and rapidfuzz's ``partial_ratio_alignment`` over the folded texts
   (for near-verbatim units with small edits);
5. otherwise ``not_located`` (no span), with the best score seen.

A located unit's span is a stretch of the answer that covers its matching words, never a whole
sentence chosen for sharing a word or two: a unit is then shown only on the rows it really overlaps.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

FUZZY_MIN = 0.5
"""Lowest fuzzy score that still counts as located (0..1)."""
BETA = 0.5
"""The word window's F-beta: precision counts four times as much as recall."""
METHODS = ("claim", "exact", "normalised", "fuzzy", "not_located")
WHOLE_KINDS = ("answer", "judge")
"""Unit kinds that stand for the whole answer: not located word by word."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset("""a an the of to in on at for by with from and or but is are was were be been being it its
this that these those as into than then so such there their they them he she his her you your we our i
do does did has have had will would can could should may might must also which who whom what""".split())


@dataclass(frozen=True)
class Location:
    """Where a unit sits in the answer, and how that was found."""

    span: tuple[int, int] | None
    """``answer[start:end]``; None when not located."""
    method: str
    """claim | exact | normalised | fuzzy | not_located."""
    score: float
    """1.0 for claim/exact/normalised; the fuzzy score otherwise (the best one seen when not located)."""

    def detail(self) -> dict:
        """As stored in a unit's ``detail["location"]``.

        >>> Location((0, 4), "fuzzy", 0.8123).detail()
        {'method': 'fuzzy', 'score': 0.812}
        """
        return {"method": self.method, "score": round(self.score, 3)}


def fold(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Lower-cased words (letters and digits) and each word's span in ``text``.

    >>> fold("Bake at 350\u00b0F, then cool!")[0]
    ['bake', 'at', '350', 'f', 'then', 'cool']
    """
    ws, spans = [], []
    for m in _WORD.finditer(text):
        ws.append(m.group(0).lower())
        spans.append((m.start(), m.end()))
    return ws, spans


def locate(unit: str, answer: str, min_score: float = FUZZY_MIN) -> Location:
    """Locate ``unit`` in ``answer`` (see the module docstring for the steps).

    >>> a = "Bake the cookies at 350 F for 8 to 10 minutes. The recipe makes two dozen cookies."
    >>> locate("Bake the cookies at 350 F", a)
    Location(span=(0, 25), method='exact', score=1.0)
    >>> locate("the recipe MAKES two-dozen cookies", a)
    Location(span=(47, 81), method='normalised', score=1.0)
    >>> loc = locate("The cookies should be baked at 350 F.", a); a[loc.span[0]:loc.span[1]], loc.method
    ('Bake the cookies at 350 F', 'fuzzy')
    >>> locate("Shipping is free.", a).method
    'not_located'
    """
    u = unit.strip()
    if not u or not answer.strip():
        return Location(None, "not_located", 0.0)
    pos = answer.find(u)
    if pos >= 0:
        return Location((pos, pos + len(u)), "exact", 1.0)
    uw, _ = fold(u)
    aw, aspans = fold(answer)
    if not uw or not aw:
        return Location(None, "not_located", 0.0)
    at = find_run(uw, aw)
    if at is not None:
        return Location((aspans[at][0], aspans[at + len(uw) - 1][1]), "normalised", 1.0)
    best = max(_word_window(uw, aw), _char_alignment(uw, aw), key=lambda c: c[0])
    score, i, j = best
    if i is None or score < min_score:
        return Location(None, "not_located", float(score))
    return Location((aspans[i][0], aspans[j][1]), "fuzzy", float(score))


def find_run(needle: list[str], hay: list[str], start: int = 0) -> int | None:
    """Where the word list ``needle`` first occurs as a run in ``hay``, at or after ``start`` (None: nowhere).

    >>> find_run(["to", "350"], ["heat", "to", "350", "f"]), find_run(["to"], ["to", "x", "to"], 1)
    (1, 2)
    """
    n = len(needle)
    for i in range(start, len(hay) - n + 1):
        if hay[i:i + n] == needle:
            return i
    return None


def same_word(a: str, b: str) -> bool:
    """Equal, or the same stem (a shared start of at least four letters, covering most of both).

    >>> same_word("baked", "bake"), same_word("cookies", "cookie"), same_word("bake", "bank")
    (True, True, False)
    """
    if a == b:
        return True
    if a.isdigit() or b.isdigit() or min(len(a), len(b)) < 4:
        return False
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k >= 4 and k >= 0.75 * min(len(a), len(b))


_CLITICS = frozenset("s t d ll re ve m".split())
"""What an apostrophe splits off (X2's, don't): never content."""


def _stop(w: str) -> bool:
    return w in STOPWORDS or w in _CLITICS


def _content(ws: list[str]) -> list[int]:
    return [i for i, w in enumerate(ws) if not _stop(w)] or list(range(len(ws)))


def _word_window(uw: list[str], aw: list[str]) -> tuple[float, int | None, int | None]:
    """(F-score, first word, last word) of the run of answer words best matching the unit's content
    words (precision weighted, :data:`BETA`: a window that adds words the unit does not state, such
    as a neighbouring claim, loses more than one that leaves a unit word out)."""
    ucontent = [uw[i] for i in _content(uw)]
    hits = [k for k, w in enumerate(aw) if not _stop(w) and any(same_word(w, x) for x in ucontent)]
    best: tuple[float, int | None, int | None] = (0.0, None, None)
    limit = 3 * len(uw) + 6
    for a_i, i in enumerate(hits):
        for j in hits[a_i:]:
            if j - i + 1 > limit:
                break
            window = [w for w in aw[i:j + 1] if not _stop(w)]
            used: set[int] = set()
            matched = 0
            for w in window:
                for n, x in enumerate(ucontent):
                    if n not in used and same_word(w, x):
                        used.add(n)
                        matched += 1
                        break
            if not matched:
                continue
            precision, recall = matched / len(window), matched / len(ucontent)
            f = (1 + BETA ** 2) * precision * recall / (BETA ** 2 * precision + recall)
            if f > best[0] + 1e-9:
                best = (f, i, j)
    return best


def _char_alignment(uw: list[str], aw: list[str]) -> tuple[float, int | None, int | None]:
    """(score, first word, last word) of rapidfuzz's partial-ratio alignment of the folded texts."""
    from rapidfuzz import fuzz  # noqa: PLC0415 - lazy: imported once per worker before its threads start

    u, a = " ".join(uw), " ".join(aw)
    r = fuzz.partial_ratio_alignment(u, a)
    if r is None or r.dest_end <= r.dest_start:
        return (0.0, None, None)
    starts, pos = [], 0
    for w in aw:
        starts.append(pos)
        pos += len(w) + 1
    first = max(k for k, s in enumerate(starts) if s <= r.dest_start)
    last = max(k for k, s in enumerate(starts) if s < r.dest_end)
    return (r.score / 100.0 * _coverage(uw, aw[first:last + 1]), first, last)


def _coverage(uw: list[str], window: list[str]) -> float:
    """Share of the unit's content words that the window holds (a char match on stopwords is no match)."""
    content = [uw[i] for i in _content(uw)]
    return sum(any(same_word(w, x) for w in window) for x in content) / len(content)


def locate_unit(case, text: str) -> Location:
    """Locate a unit of ``case``'s answer: an annotated claim with this text gives its own span first."""
    claim = case.claim_for_text(text) if text.strip() else None
    if claim is not None:
        return Location(claim.answer_span, "claim", 1.0)
    return locate(text, case.answer)


def place_units(case, result):
    """The cell result with every unit's span set by the aligner and ``detail["location"]`` recorded.

    A whole-answer unit keeps its span (method ``exact``); a unit whose adapter span is already an
    exact slice equal to its text keeps it (repeated sentences stay where their splitter put them).
    """
    if not result.units:
        return result
    units = []
    for u in result.units:
        if u.kind in WHOLE_KINDS:
            loc = Location(u.span, "exact", 1.0) if u.span is not None else Location(None, "not_located", 0.0)
        elif u.span is not None and u.text.strip() and case.answer[u.span[0]:u.span[1]] == u.text.strip():
            loc = Location(u.span, "exact", 1.0)
        else:
            loc = locate_unit(case, u.text)
        units.append(replace(u, span=loc.span, detail={**u.detail, "location": loc.detail()}))
    return replace(result, units=tuple(units))
