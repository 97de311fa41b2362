"""Text edits that keep annotation offsets right: apply non-overlapping edits to a text and map old
offsets to new ones, and rebuild a case with its answer or a context edited.

A span's start moves past an insertion made exactly at it, and its end stays before one, so a marker
inserted at a claim's end (``" [1]"``) stays outside the claim and a bullet inserted at its start
(``"- "``) too. An offset inside a replaced stretch maps to that stretch's edge.
"""
from __future__ import annotations

from dataclasses import replace

from harness.core.records import Annotation, Case, Claim, Context, Evidence, HallucinationSpan

Edit = tuple[int, int, str]
"""``(start, end, replacement)``: ``text[start:end]`` becomes ``replacement`` (start == end: an insertion)."""


class Edited:
    """A text after edits, with the offset maps.

    >>> e = Edited("Bake it. Cool it.", [(8, 9, "\\n- "), (0, 0, "- ")])
    >>> e.text
    '- Bake it.\\n- Cool it.'
    >>> e.span((0, 8)), e.span((9, 17))
    ((2, 10), (13, 21))
    """

    def __init__(self, text: str, edits: list[Edit]):
        self.edits = sorted(edits, key=lambda x: (x[0], x[1]))
        out, pos = [], 0
        for s, e, new in self.edits:
            if s < pos:
                raise ValueError(f"overlapping edits at {s}")
            out += [text[pos:s], new]
            pos = e
        out.append(text[pos:])
        self.text = "".join(out)

    def _at(self, p: int, start: bool) -> int:
        shift = 0
        for s, e, new in self.edits:
            if s < p < e:                                  # inside a replaced stretch: its edge
                return s + shift + (0 if start else len(new))
            if e < p or (e == p and (s < e or start)):     # wholly before p (an insertion at p: only for a start)
                shift += len(new) - (e - s)
        return p + shift

    def span(self, sp: tuple[int, int]) -> tuple[int, int]:
        """Where ``text[sp[0]:sp[1]]`` is after the edits (an empty span stays empty)."""
        s = self._at(sp[0], True)
        return (s, s) if sp[0] == sp[1] else (s, max(s, self._at(sp[1], False)))


def edit_answer(case: Case, edits: list[Edit], claims=None) -> Case:
    """``case`` with its answer edited and every answer offset (claims, abstention, spans) moved;
    ``claims`` (optional) replaces the claim list before the offsets move."""
    ed = Edited(case.answer, edits)
    ann = case.annotation
    if ann is None:
        return replace(case, answer=ed.text)
    cl = tuple(replace(c, answer_span=ed.span(c.answer_span)) for c in (claims if claims is not None else ann.claims))
    ab = ed.span(ann.abstention_span) if ann.abstention_span else None
    sp = (tuple(HallucinationSpan(*ed.span((s.start, s.end)), s.label) for s in ann.spans)
          if ann.spans is not None else None)
    return replace(case, answer=ed.text, annotation=Annotation(cl, ann.answerable, ann.abstention, ab, sp))


def edit_context(case: Case, context_id: str, edits: list[Edit]) -> Case:
    """``case`` with one context's text edited and the evidence in it moved."""
    ed = Edited(case.context(context_id).text, edits)
    ctxs = tuple(Context(c.id, ed.text) if c.id == context_id else c for c in case.contexts)
    return replace(case, contexts=ctxs, annotation=map_evidence(
        case.annotation, lambda ev: Evidence(ev.context_id, *ed.span((ev.start, ev.end)))
        if ev.context_id == context_id else ev))


def map_evidence(ann: Annotation | None, fn) -> Annotation | None:
    """The annotation with ``fn`` applied to every evidence span."""
    if ann is None:
        return None
    claims = tuple(replace(c, evidence=tuple(fn(ev) for ev in c.evidence)) for c in ann.claims)
    return replace(ann, claims=claims)


def relabel(claim: Claim, label: str, evidence=None, text: str | None = None) -> Claim:
    """The claim with a new label (and evidence, text)."""
    return replace(claim, label=label, evidence=claim.evidence if evidence is None else tuple(evidence),
                   text=claim.text if text is None else text)
