"""The cost-quality frontier: per metric, agreement with the human labels (with its interval) against the
judge's cost per answer (tokens; money when a price was given; calls) and against latency per answer,
with the Pareto front marked (no other metric is at least as good on both axes and better on one).

Latency is the metric's own time per answer: the median (and p90) over answers of the time in the judge of its
own calls, the run's queue and the pace's waits left out, calls answered from the cache counted apart; a metric
that calls no judge shows its own compute time (:func:`harness.reports.analysis.cost.latency`). A store written before judge
time was kept shows the gateway's time per answer, queue included, and says so.
Under the reference judge, agreement is each definition's ceiling, and the plot says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.reports.analysis.decision import CHANCE, FRONTIER_TITLE, TARGET, agreement_title, standings

TITLE = FRONTIER_TITLE


@dataclass(frozen=True)
class Point:
    """One metric on the plot."""

    metric: str
    label: str
    """Short name."""
    agreement: float | None
    low: float | None
    high: float | None
    calls: float
    tokens: float
    money: float | None
    latency_ms: float
    """Median per answer (:attr:`harness.reports.analysis.cost.Cost.latency_ms`)."""
    latency_p90_ms: float | None = None
    latency_basis: str = "judge"
    """``judge``, ``compute`` or ``gateway`` (:data:`harness.reports.analysis.cost.LATENCY_BASIS`)."""
    cache_hits: int = 0
    """The metric's calls answered from the cache (not timed)."""
    n: int | None = None
    """Labelled answers the agreement rests on (None: not measured)."""


@dataclass
class Frontier:
    """The frontier's model (the renderers draw it)."""

    title: str
    """What the y axis is (by judge kind)."""
    points: list[Point] = field(default_factory=list)
    cost_axis: str = "tokens per answer"
    front_cost: list[str] = field(default_factory=list)
    """Metrics on the Pareto front of agreement vs cost."""
    front_latency: list[str] = field(default_factory=list)
    note: str = ""
    latency: bool = True
    """Drawn against latency too (False on the cards: a reference run's latency is the machine's, not the
    metric's, and the cards are generated deterministically)."""
    chance: float = CHANCE
    """Agreement at chance on the y axis (balanced accuracy 0.5); the plot draws it as a line."""

    def cost(self, p: Point) -> float:
        return p.money if self.cost_axis.startswith("money") and p.money is not None else p.tokens


def pareto(items: list[tuple[str, float, float]]) -> list[str]:
    """Names on the front of (name, cost, quality): lower cost and higher quality are better.

    >>> pareto([("a", 1, 0.5), ("b", 2, 0.9), ("c", 3, 0.8), ("d", 1, 0.4)])
    ['a', 'b']
    """
    out = []
    for n, c, q in items:
        if not any((c2 <= c and q2 >= q) and (c2 < c or q2 > q) for n2, c2, q2 in items if n2 != n):
            out.append(n)
    return out


def compute(rep, latency: bool = True) -> Frontier:
    """The frontier of one report (metrics without a measured agreement are drawn without one and left
    off the front); ``latency`` False: against cost only."""
    agree = standings(rep)
    priced = any(c.money_per_answer is not None for c in rep.costs if c.answers)
    f = Frontier(agreement_title(rep.data.is_reference) if agree else "no human labels: agreement not measured",
                 cost_axis="money per answer" if priced else "tokens per answer", latency=latency)
    for c in rep.costs:
        if not c.answers:
            continue
        a = agree.get(c.metric)
        f.points.append(Point(c.metric, rep.shorts[c.metric], a.value if a else None, a.low if a else None,
                              a.high if a else None, c.calls, c.tokens, c.money_per_answer, c.latency_ms,
                              c.latency_p90_ms, c.latency_basis, c.cache_hits, a.n if a else None))
    rated = [p for p in f.points if p.agreement is not None]
    f.front_cost = pareto([(p.metric, f.cost(p), p.agreement) for p in rated])
    f.front_latency = pareto([(p.metric, p.latency_ms, p.agreement) for p in rated]) if latency else []
    f.note = (f"Agreement: balanced accuracy on the target {TARGET} with its 95% interval. "
              + (latency_note(f.points) if latency else "")
              + "On the front: no other metric is as cheap" + (" (or as fast)" if latency else "")
              + " and agrees at least as well.")
    return f


def latency_note(points) -> str:
    """The note's sentence on what the latency figures measure (by the bases the points have)."""
    bases = {p.latency_basis for p in points}
    out = ("Latency: median time in the judge per answer of the metric's own calls (from sent to answered; the "
           "run's queue and the pace's waits left out), p90 beside it; calls answered from the cache are not "
           "timed and are counted apart. ")
    if "compute" in bases:
        out += "A metric that calls no judge shows its own compute time (the embedded model's, one-time load left out). "
    if "gateway" in bases:
        out = ("Latency: this run's store predates time in the judge, so it is the gateway's time per answer, the "
               "run's queue included (one-time loading left out). ")
    return out


def latency_text(p: Point) -> str:
    """A point's latency cell: median, p90, what it measures when not the judge, and the cache hits apart.

    >>> latency_text(Point("m", "m", None, None, None, 2.0, 10.0, None, 177.4, 240.0, "compute", 3))
    '177 (p90 240; compute) · 3 calls served from cache'
    >>> latency_text(Point("m", "m", None, None, None, 2.0, 10.0, None, 2128.0, None, "gateway"))
    '2,128 (gateway, queue included)'
    """
    tags = [f"p90 {p.latency_p90_ms:,.0f}"] if p.latency_p90_ms is not None else []
    tags += {"compute": ["compute"], "gateway": ["gateway, queue included"]}.get(p.latency_basis, [])
    out = f"{p.latency_ms:,.0f}" + (f" ({'; '.join(tags)})" if tags else "")
    if p.cache_hits:
        out += f" \u00b7 {p.cache_hits:,} call{'' if p.cache_hits == 1 else 's'} served from cache"
    return out
