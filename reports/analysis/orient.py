"""A metric's score read one way round: higher = better grounded.

Most metrics score groundedness (higher is better); Opik's hallucination score is the other way round
(0 = faithful). Every rule that compares a score with a cut or with another metric's score (agreement,
stability flips, behaviour facts, the divergence spread) reads it through :func:`oriented` or
:func:`unit`, on the range and direction the run recorded for the metric (:class:`harness.metric.facts.MetricFacts`
``scale``); what the report displays stays the score as the vendor returned it.
"""
from __future__ import annotations


def oriented(span: tuple[float, float, bool], score: float) -> float:
    """``score`` on the metric's own range, turned round when lower is better (bottom and top swap); ``span``: the
    metric's (bottom, top, higher_is_better) as the run recorded it (``data.info[metric].scale``).

    >>> oriented((0.0, 1.0, False), 0.25), oriented((1.0, 5.0, True), 2.0)
    (0.75, 2.0)
    """
    lo, hi, higher = span
    return score if higher else lo + hi - score


def unit(span: tuple[float, float, bool], score: float) -> float:
    """``score`` on 0-1, 1 = fully grounded (Azure's 1-5: 5 is 1.0, 3 is 0.5; Opik's 0.25 is 0.75).

    >>> unit((1.0, 5.0, True), 3.0), unit((0.0, 1.0, False), 0.25)
    (0.5, 0.75)
    """
    lo, hi, _ = span
    return (oriented(span, score) - lo) / (hi - lo)
