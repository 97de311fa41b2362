"""Per-claim alignment: each metric's units mapped onto rows of the answer by answer span.

The rows are the annotated claims where the case has them (``Case.judged_claims``),
plus the abstention span when the answer abstains; for a case without an annotation they are the
answer's sentences. Every unit's span comes from the answer aligner (:mod:`harness.core.aligner`). A
unit lands on the rows it really overlaps (:func:`lands_on`: at least half of the row, or half of
the unit, lies in the overlap; a TruLens sentence carrying two claims lands on both, marked shared),
never on a row it does not overlap; a unit that lands on no row gets a row of its own for that
stretch of the answer ("not an annotated claim"); a whole-answer unit goes in a "whole answer" row
(kinds in ``WHOLE``: an answer-level verdict, or one judge's rating of the whole answer); a unit the
aligner could not locate goes in the "not located" row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.core.spans import overlaps, sentence_spans
from harness.reports.analysis.data import unit_columns

WHOLE = ("answer", "judge")
"""Unit kinds that judge the whole answer at once."""


@dataclass(frozen=True)
class Unit:
    """A unit verdict as the store keeps it (the fields the alignment needs)."""

    metric: str
    index: int
    text: str
    verdict: str
    raw_verdict: str
    kind: str = "claim"
    span: tuple[int, int] | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Mark:
    """One unit's verdict shown in one row."""

    unit: Unit
    shared: bool = False
    """The unit also lands on other rows (it spans several claims)."""


@dataclass
class Row:
    """One row of the alignment table."""

    kind: str
    """claim | sentence (unannotated case) | abstention | other | answer | unaligned."""
    text: str
    """The stretch of the answer (or the claim text when there is no answer text)."""
    span: tuple[int, int] | None = None
    """Where the row sits in the answer."""
    label: str | None = None
    """The annotation's label (claims), ``abstention``, or None."""
    claim: object = None
    """The annotation's Claim, for claim rows."""
    marks: dict[str, list[Mark]] = field(default_factory=dict)
    """metric -> the marks of its units on this row."""

    def verdicts(self, metric: str) -> set[str]:
        """The normalised verdicts a metric gives on this row."""
        return {m.unit.verdict for m in self.marks.get(metric, [])}

    def raws(self, metric: str) -> set[str]:
        """The raw (vendor) verdicts a metric gives on this row."""
        return {str(m.unit.raw_verdict) for m in self.marks.get(metric, [])}


UNIT_COLUMNS = ("metric", "idx", "text", "verdict", "raw_verdict", "kind", "span_start", "span_end", "reason")
"""The columns of the store's ``units`` table a :class:`Unit` is made from."""


def units_from_frame(df) -> list[Unit]:
    """Units from the store's ``units`` DataFrame rows (any number of cases/metrics)."""
    return units_from_columns({c: df[c].tolist() for c in UNIT_COLUMNS})


def units_from_columns(cols: dict) -> list[Unit]:
    """Units from the ``units`` table's columns (name -> values in row order; NULL as None or NaN).

    >>> units_from_columns({"metric": ["m"], "idx": [0], "text": ["t"], "verdict": ["supported"], "raw_verdict": [1],
    ...                     "kind": ["claim"], "span_start": [2], "span_end": [None], "reason": [float("nan")]})
    [Unit(metric='m', index=0, text='t', verdict='supported', raw_verdict='1', kind='claim', span=None, reason=None)]
    >>> units_from_columns({c: [v] for c, v in zip(UNIT_COLUMNS, ("m", 1, "t", "v", "r", "k", 0, 4, "why"))}) == [
    ...     Unit("m", 1, "t", "v", "r", "k", (0, 4), "why")]
    True
    """
    out = []
    new, put = object.__new__, object.__setattr__   # each Unit made as its __init__ would make it, field by field
    for metric, idx, text, verdict, raw, kind, start, end, reason in zip(*[cols[c] for c in UNIT_COLUMNS]):
        span = None
        if start is not None and end is not None and not _nan(start) and not _nan(end):
            span = (int(start), int(end))
        u = new(Unit)   # the frozen dataclass's own __init__ sets its 8 fields one call at a time: 2x slower here
        put(u, "__dict__", {"metric": metric, "index": int(idx), "text": str(text), "verdict": str(verdict),
                            "raw_verdict": str(raw), "kind": str(kind), "span": span,
                            "reason": reason if isinstance(reason, str) else None})
        out.append(u)
    return out


def units_by_case(data) -> dict[str, list[Unit]]:
    """case id -> the units of the run's table on that case (in table order); read once per loaded run (the
    divergences, the case browser and the agreement all read them), from the table's columns
    (:func:`harness.reports.analysis.data.unit_columns`)."""

    def make(cols) -> dict[str, list[Unit]]:
        by_case: dict[str, list[Unit]] = {}
        for u, cid in zip(units_from_columns(cols), cols["case_id"]):
            by_case.setdefault(cid, []).append(u)
        return by_case

    return _read_once(data, "_units_by_case", make)


def located_units(data) -> dict[str, dict[str, list[tuple[int, int, str]]]]:
    """metric -> case id -> (span start, span end, verdict) of the metric's units that are located in the answer and
    not about the whole answer (kinds in ``WHOLE``), in table order, as :func:`units_by_case` has them: read off the
    table's columns once for every metric (the agreement's claim level and the citation probe read them), rather
    than by filtering the whole units table once per metric and reader."""

    def make(cols) -> dict[str, dict[str, list]]:
        out: dict[str, dict[str, list]] = {}
        for cid, metric, kind, start, end, verdict in zip(*[cols[c] for c in ("case_id", "metric", "kind",
                                                                             "span_start", "span_end", "verdict")]):
            if start is None or end is None or _nan(start) or _nan(end) or str(kind) in WHOLE:
                continue
            out.setdefault(metric, {}).setdefault(cid, []).append((int(start), int(end), str(verdict)))
        return out

    return _read_once(data, "_located_units", make)


def _read_once(data, attr: str, make):
    """``make(the units' columns)``, kept on ``data`` under ``attr`` for as long as the units it was read from are
    the run's (a table set since is read again; a read-only stand-in is read every time)."""
    source = _source(data)
    kept = getattr(data, attr, None)
    if kept is not None and kept[0] is source:
        return kept[1]
    got = make(unit_columns(data))
    try:
        setattr(data, attr, (source, got))
    except AttributeError:   # a read-only stand-in: read again next time
        pass
    return got


def _source(data):
    """What the run's units are read from: the store's columns :func:`harness.reports.analysis.data.load_run` kept,
    else the units table (the key of what is kept read from them)."""
    kept = getattr(data, "__dict__", {}).get("_units_columns")
    return kept if kept is not None else data.units


def _nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def align(case, units: list[Unit]) -> list[Row]:
    """Rows for one case (``case`` may be None when its text is unknown).

    >>> from harness.core.records import Annotation, Case, Claim, Context
    >>> ans = "Bake at 350 F for 8 minutes. It makes 24."
    >>> claims = (Claim("Bake at 350 F.", (0, 13), "supported"), Claim("Bake 8 min.", (14, 27), "supported"),
    ...           Claim("It makes 24.", (29, 40), "not_found"))
    >>> case = Case("c", "q?", (Context("1", "Bake at 350 F for 8 minutes."),), ans, Annotation(claims, True, False))
    >>> units = [Unit("t", 0, "Bake at 350 F for 8 minutes.", "supported", "3", "sentence", (0, 28)),
    ...          Unit("t", 1, "It makes 24.", "unsupported", "0", "sentence", (29, 41)),
    ...          Unit("d", 0, "The recipe yields 24.", "ambiguous", "borderline", "claim", None)]
    >>> rows = align(case, units)
    >>> [(r.kind, r.label, sorted(r.marks)) for r in rows]
    [('claim', 'supported', ['t']), ('claim', 'supported', ['t']), ('claim', 'not_found', ['t']), ('unaligned', None, ['d'])]
    >>> rows[0].marks["t"][0].shared, rows[2].verdicts("t")
    (True, {'unsupported'})
    """
    answer = case.answer if case is not None else ""
    rows = _backbone(case) if case is not None else []
    backbone = list(rows)
    extra: list[Row] = []
    whole = Row("answer", "the whole answer", (0, len(answer)))
    loose = Row("unaligned", "units the aligner could not locate in the answer")
    for u in sorted(units, key=lambda u: (u.metric, u.index)):
        if u.kind in WHOLE:
            whole.marks.setdefault(u.metric, []).append(Mark(u))
        elif u.span is None:
            loose.marks.setdefault(u.metric, []).append(Mark(u))
        else:
            hits = lands_on(u.span, backbone)
            if not hits:
                hits = [_other_row(extra, u.span, answer, u.text)]
            for r in hits:
                r.marks.setdefault(u.metric, []).append(Mark(u, shared=len(hits) > 1))
    ordered = sorted(rows + extra, key=lambda r: (r.span or (10**9, 0))[0])
    return ordered + [r for r in (whole, loose) if r.marks]


def lands_on(span: tuple[int, int], rows: list[Row]) -> list[Row]:
    """The rows a unit with this span lands on: those where the overlap holds at least half of the row
    or half of the unit; failing any, the one row it overlaps most (a unit never lands on a row it
    does not overlap).

    >>> rows = [Row("claim", "a", (0, 25)), Row("claim", "b", (26, 45)), Row("claim", "c", (47, 75))]
    >>> [r.text for r in lands_on((26, 45), rows)], [r.text for r in lands_on((0, 45), rows)]
    (['b'], ['a', 'b'])
    >>> [r.text for r in lands_on((20, 40), rows)], lands_on((80, 90), rows)
    (['b'], [])
    """
    s0, s1 = span
    size = max(1, s1 - s0)
    cand, hits = [], []   # (overlap, row) of the rows it overlaps (``overlaps``, written out: a hot loop)
    for r in rows:
        rs = r.span
        if rs is None or not (rs[0] < s1 and s0 < rs[1]):
            continue
        inter = min(rs[1], s1) - max(rs[0], s0)
        cand.append((inter, r))
        if inter * 2 >= min(size, max(1, rs[1] - rs[0])):
            hits.append(r)
    if hits or not cand:
        return hits
    return [max(cand, key=lambda c: c[0])[1]]


def _backbone(case) -> list[Row]:
    if not case.annotated:   # no human claims: the answer's own sentences are the rows

        return [Row("sentence", case.answer[s:e], (s, e)) for s, e in sentence_spans(case.answer)]
    rows = [Row("claim", case.answer[s:e] or c.text, (s, e), c.label, c)
            for c in case.judged_claims() for s, e in [c.answer_span]]
    ab = case.abstention_at()
    if ab is not None and ab[1] > ab[0]:
        rows.append(Row("abstention", case.answer[ab[0]:ab[1]], ab, "abstention"))
    return rows


def _other_row(extra: list[Row], span: tuple[int, int], answer: str, text: str) -> Row:
    for r in extra:
        if overlaps(r.span, span):
            r.span = (min(r.span[0], span[0]), max(r.span[1], span[1]))
            r.text = answer[r.span[0]:r.span[1]] or r.text
            return r
    row = Row("other", answer[span[0]:span[1]] or text, span)
    extra.append(row)
    return row
