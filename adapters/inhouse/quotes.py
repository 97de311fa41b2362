"""Locate the judge's evidence quotes in the passage it names: exact first, then near-verbatim.

A judge that changes a comma, adds a final stop or joins two excerpts with an ellipsis has still
pointed at a span. :func:`locate_quote` tries, in order:

1. ``exact``: the quote occurs in the passage once whitespace and quote marks are normalised
   (:func:`harness.core.spans.find_verbatim`, the strict check of metric version 1);
2. ``near``: split at ellipses (``...``, ``\u2026``, ``[...]``), every piece occurs in the passage,
   in order, once case, punctuation and whitespace are folded away (word for word: no word may be
   added, dropped or changed). The match keeps the offsets actually found: from the first piece's
   start to the last piece's end, and each piece's own span;
3. ``near`` again for a quote that keeps the prompt's passage prefix (``"[1] Heat the oven"``,
   ``"Passage 1: Heat the oven"``): the prefix is dropped and the rest must be found by step 1 or 2;
4. ``sentence``: a quote that names a sentence instead of quoting it (``"Passage 1, sentence 2"``,
   ``"sentence 2"``, ``"[1] sentence 2"``) is that sentence of the passage (counted from 1, as
   :func:`harness.core.spans.sentence_spans` splits it); a passage it names must be the one the
   verdict names (:func:`sentence_ref`).

A quote that is neither stays unlocated, so its claim stays ungrounded; :func:`nearest_passage` then
gives the passage text closest to it, for the reason shown in the report.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harness.core.aligner import find_run, fold, locate
from harness.core.spans import find_verbatim, sentence_spans

_ELLIPSIS = re.compile(r"\s*(?:\[\s*(?:\.\.\.|\u2026)\s*\]|\.{3,}|\u2026)\s*")
_PREFIX = re.compile(r"^\s*(?:\[\s*[^\]\s]{1,16}\s*\]|\(?(?:passages?|contexts?|sources?|documents?)\s*"
                     r"\[?\s*[\w.-]{1,16}\s*\]?\)?\s*[:,\u2013\u2014-])\s*", re.I)
"""A passage prefix a judge copies from the prompt in front of its quote: ``[1] `` or ``Passage 1: ``."""
_SENTENCE_REF = re.compile(r"^\W*(?:(?:\[\s*([^\]\s]{1,16})\s*\]|(?:passages?|contexts?|sources?|documents?)\s*"
                           r"\[?\s*([\w.-]{1,16}?)\s*\]?)\s*[,;:\u2013\u2014-]?\s*)?(?:sentences?|sent\.)\s*#?\s*(\d{1,3})\W*$",
                           re.I)
MIN_NEAR_WORDS = 2
"""A near match needs at least this many words in all (a lone word is found almost anywhere)."""


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote was found in its passage."""

    start: int
    """Start offset in the passage text."""
    end: int
    """End offset (exclusive): the end of the last piece."""
    match: str
    """``exact`` | ``near`` | ``sentence`` (the quote named the sentence instead of quoting it)."""
    pieces: tuple[tuple[int, int], ...]
    """Each piece's own span (one piece unless the quote had ellipses)."""


def locate_quote(quote: str, text: str, *, strict: bool = False) -> QuoteMatch | None:
    """Find ``quote`` in ``text`` (``strict``: the exact step only). Empty quotes are never found.

    >>> t = "Heat the oven to 350 F. Bake for 8 to 10 minutes, until golden."
    >>> locate_quote("Heat the oven to 350 F", t).match
    'exact'
    >>> m = locate_quote("heat the oven, to 350 F.", t); (m.match, t[m.start:m.end])
    ('near', 'Heat the oven to 350 F')
    >>> m = locate_quote("Bake for 8 ... until golden", t); (m.match, [t[s:e] for s, e in m.pieces])
    ('near', ['Bake for 8', 'until golden'])
    >>> locate_quote("heat the oven, to 350 F.", t, strict=True) is None
    True
    >>> locate_quote("until golden ... Bake for 8", t) is None    # pieces out of order
    True
    >>> locate_quote("Heat the oven to 400 F", t) is None
    True
    >>> m = locate_quote("[1] Heat the oven to 350 F", t); (m.match, t[m.start:m.end])
    ('near', 'Heat the oven to 350 F')
    >>> m = locate_quote("Passage 1, sentence 2", t); (m.match, t[m.start:m.end])
    ('sentence', 'Bake for 8 to 10 minutes, until golden.')
    >>> locate_quote("sentence 3", t) is None       # the passage has two sentences
    True
    """
    hit = find_verbatim(quote, text)
    if hit is not None:
        return QuoteMatch(hit[0], hit[1], "exact", (hit,))
    if strict:
        return None
    ref = sentence_ref(quote)
    if ref is not None:
        spans = sentence_spans(text)
        if not 1 <= ref[1] <= len(spans):
            return None
        s, e = spans[ref[1] - 1]
        return QuoteMatch(s, e, "sentence", ((s, e),))
    bare_quote = _PREFIX.sub("", quote, count=1)
    if bare_quote != quote and bare_quote.strip():
        hit = locate_quote(bare_quote, text)
        return QuoteMatch(hit.start, hit.end, "near", hit.pieces) if hit is not None else None
    return _near(quote, text)


def sentence_ref(quote: str) -> tuple[str | None, int] | None:
    """(the passage it names or None, the sentence number) when the quote names a sentence instead of
    quoting it; None for a quote of text.

    >>> [sentence_ref(q) for q in ("Passage 1, sentence 2", "sentence 3", "[2] Sentence 1", "Context A: sentence #4",
    ...                            "Bake for 8 minutes")]
    [('1', 2), (None, 3), ('2', 1), ('A', 4), None]
    """
    m = _SENTENCE_REF.match(quote.strip())
    if m is None:
        return None
    return (m.group(1) or m.group(2) or None), int(m.group(3))


def _near(quote: str, text: str) -> QuoteMatch | None:
    pieces = [fold(p)[0] for p in _ELLIPSIS.split(quote)]
    pieces = [p for p in pieces if p]
    if not pieces or sum(len(p) for p in pieces) < MIN_NEAR_WORDS:
        return None
    tw, tspans = fold(text)
    found, pos = [], 0
    for p in pieces:
        at = find_run(p, tw, pos)
        if at is None:
            return None
        found.append((tspans[at][0], tspans[at + len(p) - 1][1]))
        pos = at + len(p)
    return QuoteMatch(found[0][0], found[-1][1], "near", tuple(found))


def nearest_passage(quote: str, text: str, limit: int = 160) -> str:
    """The sentence(s) of ``text`` closest to ``quote``: those holding the aligner's best match, else
    the sentence sharing most words; trimmed to ``limit`` characters; "" for an empty text.

    >>> nearest_passage("Heat the oven to 400 F", "Mix well. Heat the oven to 350 F. Bake it.")
    'Heat the oven to 350 F.'
    """
    if not text.strip():
        return ""
    spans = sentence_spans(text) or [(0, len(text))]
    loc = locate(quote, text, min_score=0.0)
    if loc.span is not None:
        hit = [sp for sp in spans if sp[0] < loc.span[1] and loc.span[0] < sp[1]] or spans[:1]
    else:
        qw = set(fold(quote)[0])
        hit = [max(spans, key=lambda sp: len(qw & set(fold(text[sp[0]:sp[1]])[0])))]
    out = text[hit[0][0]:hit[-1][1]].strip()
    return out if len(out) <= limit else out[: limit - 3] + "..."
