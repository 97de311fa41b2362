"""Passage references as judges write them, matched to the case's context ids.

The verify prompt shows each passage as ``[<id>] text``, and asks for ``"context_id": "<id>"``.
Real models answer with the id as shown (``"[1]"``), bare (``"1"``, ``1``), or named the way a
prompt or a person names a passage (``"Passage 1"``, ``"context 1"``, ``"Context [1]"``,
``"passage_1"``, ``"Source #1"``, ``"Document 1"``). :func:`resolve_context` reads all of these:

1. the reference equals a context id (after trimming): that context;
2. else the reference stripped of brackets, quotes and a leading passage word (passage, context,
   source, document, doc, chunk, ctx, id, the letter p or c) and of ``#``, ``:``, ``_`` and
   ``-`` around it, compared with each id stripped the same way, case-insensitively: the one
   context that matches.

Nothing is guessed beyond that: a reference that matches no id, or more than one, stays
unresolved, and its quote is reported as naming no context. An index is never read as a position
(``"Passage 2"`` is the context whose id is ``2``, not the second context), because the prompt
shows ids, not positions.
"""
from __future__ import annotations

import re

_WORD = r"(?:passages?|contexts?|sources?|documents?|docs?|chunks?|ctx|id|p|c)"
_REF = re.compile(rf"^\W*(?:{_WORD}(?=[\s\W\d_]|$))?[\s_#:\-\[\(]*(.*?)[\s\]\)\.:,;]*$", re.I)


def bare(ref) -> str:
    """A reference without brackets and passage words, lower-cased.

    >>> [bare(r) for r in ("[1]", "1", 1, "Passage 1", "context 1", "Context [1]", "passage_2", "Source #3",
    ...                    "doc-a", "(1)", " [ 12 ] ", "p1", "C2", "Document 4:")]
    ['1', '1', '1', '1', '1', '1', '2', '3', 'a', '1', '12', '1', '2', '4']
    """
    text = str(ref).strip().strip("\"'`")
    m = _REF.match(text)
    core = m.group(1) if m else text
    core = core.strip().strip("[]()").strip()
    return core.lower()


def resolve_context(ref, contexts):
    """The context a judge's reference names (see the module docstring), or None.

    >>> from collections import namedtuple
    >>> C = namedtuple("C", "id text")
    >>> ctxs = [C("1", "a"), C("2", "b")]
    >>> [getattr(resolve_context(r, ctxs), "id", None) for r in ("2", "[1]", "Passage 2", "context 1", 1, "3", "")]
    ['2', '1', '2', '1', '1', None, None]
    >>> resolve_context("Passage A", [C("a", "x"), C("b", "y")]).id
    'a'
    """
    text = str(ref).strip() if ref is not None else ""
    if not text:
        return None
    exact = [c for c in contexts if c.id == text]
    if exact:
        return exact[0]
    want = bare(text)
    if not want:
        return None
    hits = [c for c in contexts if bare(c.id) == want or c.id.strip().lower() == want]
    return hits[0] if len(hits) == 1 else None
