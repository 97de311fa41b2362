"""Where the metrics diverge: cases whose scored metrics differ by at least a threshold.

Only scored cells count toward the spread (an unscored or NaN cell is not a 0). Each divergent case
comes with its per-claim alignment and a one-line reason derived from the verdicts
(:mod:`harness.reports.analysis.reasons`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.reports.analysis.alignment import Row, align, units_by_case
from harness.reports.analysis.matrix import build
from harness.reports.analysis.orient import unit
from harness.reports.analysis.reasons import case_reason, explain_row, row_disagrees

DEFAULT_THRESHOLD = 0.2


@dataclass
class Divergence:
    """One case on which the metrics' scores spread by at least the threshold."""

    case_id: str
    spread: float
    """Highest minus lowest score among the scored metrics."""
    low: tuple[str, float]
    """(metric, score) of the lowest-scoring metric."""
    high: tuple[str, float]
    """(metric, score) of the highest-scoring metric."""
    scores: dict[str, float]
    """metric -> score, scored metrics only."""
    reason: str
    """One line, derived from the two metrics' unit verdicts (:mod:`harness.reports.analysis.reasons`)."""
    rule: str
    """The reason's kind: definition | judgement | decomposition | coverage (or unexplained)."""
    rows: list[Row] = field(default_factory=list)
    """The per-claim alignment."""
    row_reasons: Mapping[int, str] = field(default_factory=dict)
    """Row index -> reason, for the rows on which metrics disagree (:class:`RowReasons`: worked out when first
    read, so only the cases a report shows in full pay for them)."""
    summary: str = ""
    """The reason's mechanism without this case's text (divergences are grouped by it)."""

    def line(self, names: dict | None = None) -> str:
        """A one-line summary for the terminal.

        >>> Divergence("cookie-yield", 0.25, ("a", 0.75), ("b", 1.0), {}, "b is lenient", "r").line()
        'cookie-yield  spread 0.25: a 0.75 vs b 1.00 - b is lenient'
        """
        n = names or {}
        return (f"{self.case_id}  spread {self.spread:.2f}: {n.get(self.low[0], self.low[0])} {self.low[1]:.2f} "
                f"vs {n.get(self.high[0], self.high[0])} {self.high[1]:.2f} - {self.reason}")


class RowReasons(Mapping):
    """Row index -> reason for the rows of one divergent case on which metrics disagree, worked out on first
    read (a large run has tens of thousands of divergent cases; a report lays out a few of them in full).

    >>> r = RowReasons([], ["a"], None, {}, {})
    >>> dict(r), r == {}
    ({}, True)
    """

    __slots__ = ("_args", "_got")

    def __init__(self, rows, metrics, case, names, facts):
        self._args, self._got = (rows, metrics, case, names, facts), None

    def _reasons(self) -> dict[int, str]:
        if self._got is None:
            rows, metrics, case, names, facts = self._args
            self._got = {i: explain_row(r, metrics, case, names, facts=facts) or ""
                         for i, r in enumerate(rows) if row_disagrees(r, metrics, facts)}
        return self._got

    def __getitem__(self, i: int) -> str:
        return self._reasons()[i]

    def __iter__(self):
        return iter(self._reasons())

    def __len__(self) -> int:
        return len(self._reasons())

    def __repr__(self) -> str:
        return repr(self._reasons())


def spread(scores: dict[str, float]) -> tuple[float, tuple[str, float], tuple[str, float]] | None:
    """(spread, lowest, highest) over scored metrics, ties broken by metric order; None under two.

    >>> spread({"a": 0.75, "b": 1.0, "c": 0.75})
    (0.25, ('a', 0.75), ('b', 1.0))
    >>> spread({"a": 1.0}) is None
    True
    """
    if len(scores) < 2:
        return None
    items = list(scores.items())
    lo = min(items, key=lambda kv: kv[1])
    hi = max(items, key=lambda kv: kv[1])
    return round(hi[1] - lo[1], 12), lo, hi


def spread_metrics(data) -> list[str]:
    """The run's metrics that count toward the spread: not a stand-in metric the run recorded with
    ``in_divergence = False`` (the similarity baseline and its cascade)."""
    return [m for m in data.metrics if data.info[m].in_divergence]


def find(data, threshold: float = DEFAULT_THRESHOLD) -> list[Divergence]:
    """Every divergent case of a run, largest spread first (then case order)."""

    cells = build(data)
    names = {m: data.info[m].display_name for m in data.metrics}
    by_case = units_by_case(data)
    out = []
    compared = spread_metrics(data)
    scales = {m: data.info[m].scale for m in compared}
    for pos, cid in enumerate(data.case_ids):
        scores = {m: c.score for m in compared if (c := cells[(cid, m)]).status == "scored"}
        s = spread({m: unit(scales[m], v) for m, v in scores.items()})   # on one scale, 1 = grounded
        if s is None or s[0] < threshold - 1e-9:
            continue
        s = (s[0], (s[1][0], scores[s[1][0]]), (s[2][0], scores[s[2][0]]))   # shown as each metric scored it
        case = data.cases.get(cid)
        rows = align(case, by_case.get(cid, []))
        flags = {m: cells[(cid, m)].flags for m in data.metrics}
        why = case_reason(rows, (s[1][0], s[2][0]), scores, names, flags, facts=data.info)
        row_reasons = RowReasons(rows, data.metrics, case, names, data.info)
        out.append((-(s[0]), pos, Divergence(cid, s[0], s[1], s[2], scores, why.text, why.kind, rows, row_reasons,
                                             why.summary)))
    return [d for _, _, d in sorted(out, key=lambda t: (t[0], t[1]))]
