"""The cost-quality frontier as an SVG drawn by matplotlib (text: the same bytes on every run, shown inline in
the HTML report and linked from the Markdown report and the cards).

It draws a finished :class:`harness.reports.analysis.frontier.Frontier` and computes nothing but the layout: one panel
per x axis (cost; latency unless the model leaves it out), stacked so each is as wide as the page, with the
agreement at chance as a dotted line, n in the heading, and each metric's name placed where it meets no
other name and no point (:func:`harness.reports.render.plots.place_labels`).
"""
from __future__ import annotations

from harness.reports.model.blocks import Plot
from harness.reports.render.plots import _figure, place_labels, svg_text

FRONT, OTHER, CHANCE = "#1f5f99", "#9aa5b1", "#b0413e"
WIDTH, PANEL, GAP, HEAD, FOOT = 10.0, 4.2, 0.8, 0.8, 0.55
"""In inches: the figure's width, each panel's height (at least), the gap between panels, the heading and the
foot."""
ROW = 0.26
"""Inches per metric name in a column of names (9 pt text and the gap to the next): a panel is tall enough
for a column of every name, so a crowd of any size fits beside its points."""
LATENCY = "judge latency per answer (ms, one-time loading left out)"


def n_note(fr) -> str:
    """How many labelled answers the agreement rests on.

    >>> from types import SimpleNamespace as S
    >>> n_note(S(points=[S(n=24), S(n=24), S(n=None)])), n_note(S(points=[S(n=21), S(n=24)]))
    ('n = 24 labelled answers per metric', 'n = 21 to 24 labelled answers per metric')
    >>> n_note(S(points=[S(n=None)]))
    'n = 0 labelled answers'
    """
    ns = [p.n for p in fr.points if getattr(p, "n", None) is not None]
    if not ns:
        return "n = 0 labelled answers"
    lo, hi = min(ns), max(ns)
    return f"n = {lo:,} labelled answers per metric" if lo == hi else \
        f"n = {lo:,} to {hi:,} labelled answers per metric"


def heading(fr) -> str:
    """The plot's heading: what the y axis is, n, and the key."""
    return (f"{fr.title}\n{n_note(fr)}; filled and dashed: Pareto front; "
            f"dotted: chance ({fr.chance:g})")


def _panel(ax, fr, xs: dict[str, float], x_label: str, front: list[str]) -> list:
    """One scatter panel: agreement (0 to 1) against ``xs``; returns the metric labels' Text artists."""
    fig = ax.figure
    rated = [p for p in fr.points if p.agreement is not None]
    hi = max([xs[p.metric] for p in fr.points] + [0.0])
    ax.set_xlim(-0.03 * (hi or 1.0), (hi or 1.0) * 1.12)
    ax.set_ylim(-0.04, 1.06)
    ax.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0])
    ax.grid(axis="y", color="#eef1f4", lw=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=9)
    ax.set_xlabel(x_label, fontsize=10)
    ax.set_ylabel("balanced accuracy", fontsize=10)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    ax.axhline(fr.chance, color=CHANCE, lw=1.0, ls=(0, (1.5, 2)), zorder=1)
    r = fig.canvas.get_renderer()
    chance = ax.text(0.995, fr.chance, f"chance {fr.chance:g} ", transform=ax.get_yaxis_transform(),
                     ha="right", va="bottom", fontsize=8.5, color=CHANCE)
    avoid = [tuple(chance.get_window_extent(r).extents)]
    px = ax.transData.transform
    x0, _, x1, _ = ax.get_window_extent(r).extents
    y = px((0, fr.chance))[1]
    soft = [((x0, y), (x1, y))]   # names stay off the chance line (a crowd's column may cross it)
    lines = []                    # ... and off the intervals and the front
    on = sorted((xs[p.metric], p.agreement) for p in rated if p.metric in front)
    if len(on) > 1:
        ax.plot([x for x, _ in on], [y for _, y in on], color=FRONT, lw=1.0, ls=(0, (4, 3)), zorder=2)
        lines += [(tuple(px(a)), tuple(px(b))) for a, b in zip(on, on[1:])]
    for p in rated:
        c = FRONT if p.metric in front else OTHER
        x = xs[p.metric]
        if p.low is not None:
            ax.plot([x, x], [p.low, p.high], color=c, lw=1.0, zorder=2)
            lines.append((tuple(px((x, p.low))), tuple(px((x, p.high)))))
        ax.plot([x], [p.agreement], marker="o", ms=6, mfc=c if p.metric in front else "#fff", mec=c, mew=1.2,
                zorder=3)
    if not rated:
        ax.text(0.5, 0.75, "no labelled answers: agreement not measured", transform=ax.transAxes, ha="center",
                fontsize=10, color="#555")
    order = sorted(rated, key=lambda p: (p.metric not in front, -p.agreement, xs[p.metric], p.label))
    return place_labels(ax, [(xs[p.metric], p.agreement, p.label) for p in order], avoid=avoid, lines=lines, soft=soft)


def figure(fr):
    """The frontier as a matplotlib figure and its metric labels' Text artists (what a test measures)."""
    cost = {p.metric: fr.cost(p) for p in fr.points}
    panels = [(cost, fr.cost_axis, fr.front_cost)]
    if fr.latency:
        panels.append(({p.metric: p.latency_ms for p in fr.points}, LATENCY, fr.front_latency))
    panel = max(PANEL, ROW * sum(p.agreement is not None for p in fr.points) + 0.3)   # room for a column of all
    height = HEAD + panel * len(panels) + GAP * (len(panels) - 1) + FOOT
    fig = _figure(WIDTH, height)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - HEAD / height, bottom=FOOT / height, hspace=GAP / panel)
    fig.text(0.08, 1 - 0.08 / height, heading(fr), ha="left", va="top", fontsize=11, linespacing=1.5)
    labels = []
    for k, (xs, x_label, front) in enumerate(panels):
        labels += _panel(fig.add_subplot(len(panels), 1, k + 1), fr, xs, x_label, front)
    return fig, labels


_last: list = []
"""The last model drawn and its SVG: a report shows the frontier inline and writes it beside the Markdown,
and drawing it (label placement included) is the costly part, so the same finished model is drawn once."""


def render(fr) -> str:
    """The frontier (:func:`figure`) as one SVG document."""
    if _last and _last[0] is fr:
        return _last[1]
    fig, _ = figure(fr)
    text = svg_text(fig, heading(fr).replace("\n", "; "))
    _last[:] = [fr, text]
    return text


def files(blocks) -> dict[str, str]:
    """file name -> SVG text for every plot part of the report's sections (the Markdown links them)."""
    return {p.file: render(p.model) for b in blocks for p in b.parts if isinstance(p, Plot)}
