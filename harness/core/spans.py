"""Span helpers: the verbatim check, a plain sentence splitter and span overlap.

Locating a vendor's unit in the answer is :mod:`harness.core.aligner`'s job.

The verbatim check normalises only whitespace and quote characters (curly quotes, primes and
backticks become straight quotes; every run of whitespace becomes one space), and maps a match back
to offsets in the original text.
"""
from __future__ import annotations

import re

_QUOTES = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
})
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def normalise(text: str) -> tuple[str, list[int]]:
    """Normalise whitespace and quotes; return the text and, per output char, its input offset.

    >>> normalise("a \u201cb\u201d\\n  c")
    ('a "b" c', [0, 1, 2, 3, 4, 5, 8])
    """
    out: list[str] = []
    idx: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space and out:
                out.append(" ")
                idx.append(i)
            in_space = True
            continue
        in_space = False
        out.append(ch.translate(_QUOTES))
        idx.append(i)
    if out and out[-1] == " ":
        out.pop()
        idx.pop()
    return "".join(out), idx


def find_verbatim(quote: str, text: str) -> tuple[int, int] | None:
    """Offsets of ``quote`` in ``text`` after normalising whitespace and quotes, or None.

    An empty (or all-whitespace) quote is no evidence: it is never found, although "" occurs in
    every string.

    >>> find_verbatim("350  F", "Bake at 350 F for 8 minutes.")
    (8, 13)
    >>> find_verbatim("\u201cno\u201d", 'say "no" twice')
    (4, 8)
    >>> find_verbatim("", "anything") is None
    True
    >>> find_verbatim("400 F", "Bake at 350 F.") is None
    True
    """
    q, _ = normalise(quote)
    if not q:
        return None
    t, idx = normalise(text)
    pos = t.find(q)
    if pos < 0:
        return None
    return idx[pos], idx[pos + len(q) - 1] + 1


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits, any script).

    >>> words("Bake at 350\u00b0F, then cool!")
    ['bake', 'at', '350', 'f', 'then', 'cool']
    """
    return [w.lower() for w in _WORD.findall(text)]


_SENT_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])[\"'\u201d\u2019)\]]*\s+")
_ABBREV = frozenset(
    "mr mrs ms mx dr prof gen brig col lt capt cmdr sgt maj adm gov sen rep rev fr hon pres supt "
    "e.g i.e vs cf approx ca fig".split())
"""Abbreviations written before the word they belong to (titles, "e.g."): a stop after one never ends a sentence."""
_TAIL = re.compile(r"([^\W\d_][\w.]*)\.$")
_LEAD_MARKER = re.compile(r"(?:^|[:\n]\s*)\(?\d{1,2}\.$")
_MARKER = re.compile(r"\(?(?:\d{1,3}|[a-zA-Z])[.)]")
_INITIAL = re.compile(r"(?:^|\s)[A-Z]\.$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """A plain sentence splitter (end punctuation + whitespace), as spans with trimmed edges.

    Only for locating units and for RAGTruth-style data; vendors split with their own code. It never
    yields a fragment (:func:`join_fragments`): no split after a title or "e.g." (``Gen. Lansdale``)
    or after a list number that opens a line or follows a colon; a bare list number joins the
    sentence after it, a lone word after an initial joins the one before.

    >>> t = "One. Two!  Three?"
    >>> [t[s:e] for s, e in sentence_spans(t)]
    ['One.', 'Two!', 'Three?']
    >>> t = "Steps: 1. Mix the flour. 2. Bake it. The plan came from Gen. Lansdale, e.g. in 1961. By Edward G. Lansdale."
    >>> [t[s:e] for s, e in sentence_spans(t)]
    ['Steps: 1. Mix the flour.', '2. Bake it.', 'The plan came from Gen. Lansdale, e.g. in 1961.', 'By Edward G. Lansdale.']

    A stop after "Jr."/"Sr.", an initial ("R.") or a dotted abbreviation ("U.S.") ends a sentence only
    when a word that opens sentences ("He", "The", "It", ...) follows it (:func:`_name_stop`):

    >>> t = "Martin Luther King Jr. spoke in 1963. George R. R. Martin lives in the U.S. He writes."
    >>> [t[s:e] for s, e in sentence_spans(t)]
    ['Martin Luther King Jr. spoke in 1963.', 'George R. R. Martin lives in the U.S.', 'He writes.']
    >>> t = "The U.S. Senate voted. It was close."
    >>> [t[s:e] for s, e in sentence_spans(t)]
    ['The U.S. Senate voted.', 'It was close.']
    """
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        end = m.start()
        if text[end - 1] == "." and (_abbreviation_at(text, end) or _LEAD_MARKER.search(text, start, end)
                                     or _name_stop(text, end, m.end())):
            continue
        spans.append((start, end + len(m.group(0).rstrip())))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return [(out[g[0]][0], out[g[-1]][1]) for g in _fragment_groups([text[s:e] for s, e in out])]


def join_fragments(pieces: list[str]) -> list[str]:
    """Pieces of text (sentences, claims) with fragments joined to their neighbour by a space: a bare
    list number ("2.", "b)") to the piece after it, a lone word after an initial or a title
    ("G." + "Lansdale.") to the piece before it.

    >>> join_fragments(["1.", "Mix the flour.", "It was Edward G.", "Lansdale.", "Dr.", "Smith agreed."])
    ['1. Mix the flour.', 'It was Edward G. Lansdale.', 'Dr. Smith agreed.']
    """
    return [" ".join(pieces[i] for i in g) for g in _fragment_groups(pieces)]


_NAME_STOP = re.compile(r"(?:(?:^|[\s(\[\"'])(?:(?:[A-Za-z]\.){2,}|[JS]r\.)|(?:^|\s)[A-Z][\w'.-]*\s+[A-Z]\.)$")
_OPENERS = frozenset(
    "the a an this that these those it its he she they we i you his her their our my your there here in on at "
    "after before then but and so however also when while if as for by from to with what which who one some "
    "many most each all no not both during since although though yet today later".split())
"""Words that open sentences: after an ambiguous stop ("Jr.", "U.S.", an initial) only these start a new one."""


def _name_stop(text: str, end: int, next_at: int) -> bool:
    """Is the stop at ``end`` part of a name or an abbreviation ("Jr.", "U.S.", an initial after a
    capitalised word: "George R.") rather than a sentence end? It is unless the next word is a
    capitalised sentence opener. A letter after a number ("350 F.") is a unit, not an initial.

    >>> t = "King Jr. spoke. He moved to the U.S. in 1990."
    >>> _name_stop(t, 8, 9), _name_stop(t, 36, 37)
    (True, True)
    >>> t = "He moved to the U.S. He liked it."
    >>> _name_stop(t, 20, 21)
    False
    """
    if not _NAME_STOP.search(text, 0, end):
        return False
    nxt = re.match(r"[\"'\u201c\u2018(\[]*([^\W_]+)", text[next_at:next_at + 40])
    if nxt is None:
        return False
    word = nxt.group(1)
    return not (word[0].isupper() and word.lower() in _OPENERS)


def _abbreviation_at(text: str, end: int) -> bool:
    m = _TAIL.search(text, 0, end)
    return m is not None and m.end() == end and m.group(1).lower() in _ABBREV


def _fragment_groups(pieces: list[str]) -> list[list[int]]:
    """Indices of ``pieces`` grouped so that no group is a fragment (see :func:`join_fragments`)."""
    groups: list[list[int]] = []
    pending: list[int] = []
    for i, p in enumerate(pieces):
        p = p.strip()
        if _MARKER.fullmatch(p) or (_TAIL.search(p) and _TAIL.search(p).group(0) == p and p[:-1].lower() in _ABBREV):
            pending.append(i)
            continue
        if groups and not pending and len(p.split()) == 1 and _ends_with_initial(pieces[groups[-1][-1]]):
            groups[-1].append(i)
            continue
        groups.append(pending + [i])
        pending = []
    if pending:
        if groups:
            groups[-1].extend(pending)
        else:
            groups.append(pending)
    return groups


def _ends_with_initial(piece: str) -> bool:
    p = piece.strip()
    return bool(_INITIAL.search(p)) or _abbreviation_at(p, len(p))


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Do two half-open spans share at least one character?

    >>> overlaps((0, 5), (4, 9)), overlaps((0, 5), (5, 9))
    (True, False)
    """
    return a[0] < b[1] and b[0] < a[1]
