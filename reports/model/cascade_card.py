"""The calibrated cascade's card as data (``harness calibrate``): every figure of the per-stage report and of
the card, taken once from a :class:`~harness.reports.analysis.cascade_calibration.Calibration` (its intervals and
the least number of kept labels a level needs computed here), so :mod:`harness.reports.render.cascade_card` only
lays them out."""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.reports.analysis.cascade_calibration import Calibration
from harness.run.cascade_file import Cascade


@dataclass
class StageFigures:
    """One stage on the held-out answers."""

    metric: str
    ran: int
    decided: int
    agree: int
    calls: int
    tokens: int
    interval: tuple
    """The exact 95% interval of its agreement ((None, None) when it decided nothing)."""


@dataclass
class CascadeCard:
    cascade: Cascade
    labelled: int
    calibration: int
    held_out: int
    missing: dict[str, int]
    stages: list[StageFigures]
    decided: int
    agree: int
    interval: tuple
    escalated: int
    calls: int
    tokens: int
    strongest_calls: int
    strongest_tokens: int
    naive_agreement: tuple[int, int]
    min_n: int
    """Kept calibration answers (all right) a stage needs before any level can be certified."""


def build(c: Calibration) -> CascadeCard:
    """The card's figures from a calibration."""
    cas = c.cascade
    return CascadeCard(
        cas, c.labelled, c.calibration, c.held_out, dict(c.missing),
        [StageFigures(r.metric, r.ran, r.decided, r.agree, r.calls, r.tokens, tuple(r.interval)) for r in c.stages],
        c.decided, c.agree, tuple(c.interval), c.escalated, c.calls, c.tokens, c.strongest_calls,
        c.strongest_tokens, tuple(c.naive_agreement), min_n(cas.target, cas.delta / len(cas.stages)))


def min_n(target: float, alpha: float) -> int:
    """The least number of kept answers, all right, that certifies ``target`` at level ``alpha``.

    >>> min_n(0.9, 0.05)
    29
    """
    return math.ceil(math.log(alpha) / math.log(target))
