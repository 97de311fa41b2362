"""The report's plots are readable: the frontier and the cost chart are as wide as a page, every text on them
(metric names, ticks, headings, the chance label, bar values) stands clear of every other, as matplotlib's
renderer measures the boxes, even for 14 metrics at nearly one point; n and the chance line are on the
frontier; the same model gives the same bytes.

The screenshot of the two plots in the report is taken by tests/browser/test_browser.py.
"""
from __future__ import annotations

import itertools
import random

from harness.reports.analysis.cost import Cost
from harness.reports.analysis.frontier import Frontier, Point, pareto
from harness.reports.render import svgplot
from harness.reports.render.plots import _figure, cost_chart, cost_figure, place_labels

import pytest

TITLE = "definition ceiling (reference judge): balanced accuracy [95% CI], target hallucinated"


def _frontier(points: list[Point], latency: bool = True) -> Frontier:
    fr = Frontier(TITLE, points, latency=latency)
    rated = [p for p in points if p.agreement is not None]
    fr.front_cost = pareto([(p.metric, fr.cost(p), p.agreement) for p in rated])
    fr.front_latency = pareto([(p.metric, p.latency_ms, p.agreement) for p in rated]) if latency else []
    return fr


def crowded(k: int = 14) -> Frontier:
    """``k`` metrics whose points nearly coincide (agreement 0.800 to 0.813, cost and latency within 1.3%),
    with long names of nearly one length."""
    return _frontier([Point(f"vendor{i}.metric_{i}", f"vendor{i}.faithfulness_{i:02d}", 0.80 + 0.001 * i, 0.60,
                            0.95, 1.0, 500.0 + i, None, 1000.0 + i, n=24) for i in range(k)])


def scattered(seed: int, k: int = 20) -> Frontier:
    rng = random.Random(seed)
    return _frontier([Point(f"m{i}", f"metric.{'x' * rng.randint(2, 14)}{i}", rng.uniform(0.45, 1.0), None, None,
                            rng.choice([1.0, 2.0]), rng.uniform(0, 2000), None, rng.uniform(0, 300),
                            n=rng.randint(20, 24)) for i in range(k)])


def boxes(fig, texts) -> list[tuple[float, float, float, float]]:
    r = fig.canvas.get_renderer()
    return [tuple(t.get_window_extent(r).extents) for t in texts]


def overlapping(bs) -> list[tuple[int, int]]:
    """Pairs of boxes (x0, y0, x1, y1) that intersect."""
    return [(i, j) for (i, a), (j, b) in itertools.combinations(enumerate(bs), 2)
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]


def all_texts(fig) -> list:
    """Every visible, non-empty text of the figure (labels, ticks, headings, notes)."""
    from matplotlib.text import Text

    fig.canvas.draw()   # tick labels exist once drawn
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and t.figure is fig]


@pytest.mark.parametrize("fr", [crowded(), crowded(30), scattered(1), scattered(2), scattered(3)],
                         ids=["14-at-one-point", "30-at-one-point", "scattered-1", "scattered-2", "scattered-3"])
def test_no_text_on_the_frontier_meets_another(fr):
    fig, labels = svgplot.figure(fr)
    rated = [p for p in fr.points if p.agreement is not None]
    assert [t.get_text() for t in labels[:len(rated)]] and len(labels) == 2 * len(rated)   # every name, both panels
    assert not overlapping(boxes(fig, labels))
    texts = all_texts(fig)
    assert set(labels) <= set(texts)
    assert not overlapping(boxes(fig, texts)), [(texts[i].get_text(), texts[j].get_text())
                                                for i, j in overlapping(boxes(fig, texts))]
    r = fig.canvas.get_renderer()
    for ax in fig.axes:   # every name inside its panel, and off every point
        frame = ax.get_window_extent(r).extents
        mine = [t for t in labels if t.axes is ax]
        xs = [line.get_xydata()[0] for line in ax.get_lines() if line.get_marker() == "o"]
        points = [tuple(ax.transData.transform(xy)) for xy in xs]
        assert len(points) == len(mine)
        for b in boxes(fig, mine):
            assert frame[0] <= b[0] and b[2] <= frame[2] and frame[1] <= b[1] and b[3] <= frame[3]
            assert not any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for x, y in points)


def test_the_overlap_check_catches_names_set_on_their_points():
    """Control: the same crowded names written at their points (no placement) do meet, and the check says so."""
    fr = crowded()
    fig = _figure(10, 4)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xlim(0, 600)
    ax.set_ylim(0, 1)
    naive = [ax.text(fr.cost(p), p.agreement, p.label, fontsize=9) for p in fr.points]
    assert len(overlapping(boxes(fig, naive))) > 40
    placed = place_labels(ax, [(fr.cost(p), p.agreement, p.label) for p in fr.points])
    assert not overlapping(boxes(fig, placed))


def test_the_frontier_states_n_and_draws_the_chance_line():
    fr = crowded()
    fr.points[0] = Point(**{**fr.points[0].__dict__, "n": 21})
    text = svgplot.render(fr)
    assert text.startswith("<svg ") and "<title>" + TITLE + "; n = 21 to 24 labelled answers per metric" in text
    assert "dotted: chance (0.5)" in text and "Pareto front" in text
    fig, _ = svgplot.figure(fr)
    for ax in fig.axes:
        chance = [line for line in ax.get_lines() if list(line.get_ydata()) == [0.5, 0.5]]
        assert len(chance) == 1 and list(chance[0].get_xdata()) == [0, 1]   # across the whole panel
        assert ax.get_ylim()[0] < 0 and ax.get_ylim()[1] > 1 and ax.get_ylabel() == "balanced accuracy"
        assert any(t.get_text().strip() == "chance 0.5" for t in ax.texts)
    heading = [t.get_text() for t in fig.texts]
    assert heading == [f"{TITLE}\nn = 21 to 24 labelled answers per metric; filled and dashed: Pareto front; "
                       "dotted: chance (0.5)"]


def test_a_frontier_without_labels_says_so():
    fr = _frontier([Point("a", "a", None, None, None, 1.0, 100.0, None, 5.0)])
    fr.title = "no human labels: agreement not measured"
    fig, labels = svgplot.figure(fr)
    assert labels == [] and "n = 0 labelled answers" in fig.texts[0].get_text()
    assert any("agreement not measured" in t.get_text() for ax in fig.axes for t in ax.texts)


def test_the_plots_are_page_wide_and_their_text_large_enough():
    """At the report's width (main: 1,320 px, 28 px padding each side) the plots are shown at their own size
    or a little less: the frontier's SVG is 870 to 1,264 CSS px wide; the cost PNG 900 to 1,264 px."""
    import re
    import struct

    text = svgplot.render(crowded())
    width_pt = float(re.match(r'<svg [^>]*width="([\d.]+)pt"', text).group(1))
    assert 870 <= width_pt * 96 / 72 <= 1264
    png = cost_chart(_costs(14), {})
    w, h = struct.unpack(">II", png[16:24])
    assert 900 <= w <= 1264 and h >= 14 * 30   # a row per metric at least 30 px high
    fig, labels = svgplot.figure(crowded())
    assert min(t.get_fontsize() for t in all_texts(fig)) >= 8.5
    assert min(t.get_fontsize() for t in all_texts(cost_figure(_costs(14), {}))) >= 9


def _costs(k: int) -> list[Cost]:
    """``k`` metrics with long names and wide values (millions of tokens, tens of seconds)."""
    return [Cost(f"vendor{i}.faithfulness_{i:02d}", 24 - i % 3, 1.0 + i % 4, 1_234_567.0 * (1 + i % 2), 1000.0,
                 20_000.0 + i, 0, 0, 0, 1, 4) for i in range(k)]


def test_no_text_on_the_cost_chart_meets_another_and_values_stay_in_their_panel():
    fig = cost_figure(_costs(14), {})
    texts = all_texts(fig)
    assert not overlapping(boxes(fig, texts)), [(texts[i].get_text(), texts[j].get_text())
                                                for i, j in overlapping(boxes(fig, texts))]
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        frame = ax.get_window_extent(r).extents
        for t in ax.texts:
            b = t.get_window_extent(r).extents
            assert b[2] <= frame[2], t.get_text()
    assert fig.texts[0].get_text() == "Judge cost per answer, by metric (n = 22 to 24 answers per metric)"


def test_the_same_model_gives_the_same_bytes():
    assert svgplot.render(crowded()) == svgplot.render(crowded())
    assert svgplot.render(scattered(4)) == svgplot.render(scattered(4))
    assert cost_chart(_costs(5), {}) == cost_chart(_costs(5), {})
    text = svgplot.render(crowded())
    assert "<dc:date>" not in text and "Matplotlib v" not in text   # no date, no version stamp
