"""The words of ``harness calibrate``: the per-stage report (terminal) and the calibrated cascade's card
(Markdown, written beside the cascade file), both from one
:class:`~harness.reports.analysis.cascade_calibration.Calibration`. Orchestration only: the figures come from
:mod:`harness.reports.model.cascade_card`, the layout from :mod:`harness.reports.render.cascade_card`."""
from __future__ import annotations

from harness.reports.model.cascade_card import build
from harness.reports.render import cascade_card as layout


def report_lines(c) -> list[str]:
    """Per stage: its threshold, coverage, held-out agreement with its exact 95% interval, calls and tokens;
    then the whole cascade against the strongest stage on every answer, and the share sent to a person."""
    return layout.report_lines(build(c))


def card(c, path: str) -> str:
    """The cascade's card: what it promises, how, under which assumptions, and what it did on held-out labels."""
    return layout.card(build(c), path)
