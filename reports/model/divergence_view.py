"""The "where they diverge" section as data (a :class:`~harness.reports.model.blocks.Section`), built once for both
renderers: the divergent cases, grouped by reason, each with its scores, texts and claim-by-claim alignment rows
(plain text; the HTML and Markdown renderers only escape and lay them out). Past :data:`ALL_IN_FULL` divergent
cases only the ones a renderer may show in full get that view; the others are links (:class:`CaseLink`)."""
from __future__ import annotations

from dataclasses import dataclass

from harness.reports.model import sections as S
from harness.reports.model.blocks import Section


@dataclass(frozen=True)
class MarkView:
    """One unit's verdict in an alignment cell."""

    text: str
    """How the verdict reads (:func:`harness.reports.model.sections.mark_text`)."""
    verdict: str
    """The normalised verdict (for the cell's colour)."""
    unit_text: str
    """The unit's own text."""
    unit_reason: str | None
    """The judge's reason for it, if any."""


@dataclass(frozen=True)
class RowView:
    """One alignment row: a claim (or other part of the answer) and each metric's marks on it."""

    kind: str
    """What the row is, in words (``S.ROW_KIND``)."""
    text: str
    label: str | None
    marks: list[list[MarkView]]
    """Per shown metric, in :attr:`CaseView.shown` order (empty: no unit there)."""
    why: str


@dataclass(frozen=True)
class CaseView:
    """One divergent case."""

    anchor: int
    case_id: str
    spread: float
    low: tuple[str, float]
    """(short name, score) of the lowest scored metric."""
    high: tuple[str, float]
    scores: list[tuple[str, float]]
    """(short name, score) of every scored metric."""
    case: object
    """The case (its question, answer and contexts), or None when the run's case file is unavailable."""
    shown: list[tuple[str, str]]
    """(short name, display name) of the metrics with units on this case."""
    silent: list[str]
    """Short names of the metrics without units on this case."""
    rows: list[RowView]
    labelled: bool = True
    """Does the case carry human labels? (False: no annotation column, no claim about labels.)"""


@dataclass(frozen=True)
class CaseLink:
    """A divergent case that no renderer shows in full (past :data:`ALL_IN_FULL` divergent cases, a reason's cases
    past its first :data:`IN_FULL_PER_REASON`): what a link to it and its spread need, no claim-by-claim view."""

    anchor: int
    case_id: str
    spread: float


@dataclass(frozen=True)
class GroupView:
    reason: str
    cases: list
    """The reason's cases in the order of the report's divergences: a :class:`CaseView` for each that a renderer may
    show in full (:func:`in_full`), then a :class:`CaseLink` for each of the rest."""

    @property
    def count(self) -> int:
        return len(self.cases)


EMPTY = "None at this threshold."
ALL_IN_FULL = 60
"""Up to this many divergent cases, each gets its full view (both reports may show it); past it, only the first
:data:`IN_FULL_PER_REASON` of each reason do, the others are links, so a run with tens of thousands of divergent
cases does not lay out every one's claim-by-claim rows."""
IN_FULL_PER_REASON = 5


def in_full(divergent: int) -> int | None:
    """How many cases of each reason get their full view, with ``divergent`` divergent cases in the run (None:
    all of them).

    >>> in_full(ALL_IN_FULL), in_full(ALL_IN_FULL + 1)
    (None, 5)
    """
    return None if divergent <= ALL_IN_FULL else IN_FULL_PER_REASON


def divergence_section(rep) -> Section:
    """The section for a report (see the module docstring): its intro, then one :class:`GroupView` per reason
    (largest first), or the line :data:`EMPTY` when no case diverges."""

    at = {dv.case_id: i for i, dv in enumerate(rep.divergences)}
    shorts, names = rep.shorts, rep.names   # each a dict built on every read: read once here
    k = in_full(len(rep.divergences))
    out = []
    for g in rep.glance:
        full, rest = (g.divergences, []) if k is None else (g.divergences[:k], g.divergences[k:])
        out.append(GroupView(g.reason, [_case(rep, at[dv.case_id], dv, shorts, names) for dv in full]
                             + [CaseLink(at[dv.case_id], dv.case_id, dv.spread) for dv in rest]))
    return Section("divergences", S.TITLES["divergences"],
                   [S.INTRO["divergences"].format(threshold=rep.threshold)] + (out or [EMPTY]))


def _case(rep, anchor: int, dv, shorts: dict, names: dict) -> CaseView:
    metrics = rep.data.metrics
    shown = [m for m in metrics if any(r.marks.get(m) for r in dv.rows)]
    rows = [RowView(S.ROW_KIND.get(row.kind, row.kind), row.text, row.label,
                    [[MarkView(S.mark_text(mk), mk.unit.verdict, mk.unit.text, mk.unit.reason)
                      for mk in row.marks.get(m, [])] for m in shown], dv.row_reasons.get(k) or "")
            for k, row in enumerate(dv.rows)]
    case = rep.data.cases.get(dv.case_id)
    return CaseView(anchor, dv.case_id, dv.spread, (shorts[dv.low[0]], dv.low[1]),
                    (shorts[dv.high[0]], dv.high[1]), [(shorts[m], v) for m, v in dv.scores.items()],
                    case, [(shorts[m], names[m]) for m in shown],
                    [shorts[m] for m in metrics if m not in shown], rows,
                    case is None or case.annotated)
