"""The cost-quality frontier as a small, deterministic SVG (text: diffable, the same bytes on every
machine, shown inline in the HTML report and linked from the Markdown report and the cards).

It draws a finished :class:`reports.model.frontier.Frontier` and computes nothing but coordinates.
"""
from __future__ import annotations

import math

from reports.model.blocks import Plot
from reports.render.markup import e

W, H = 380, 280
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 28, 44
FRONT, OTHER = "#1f5f99", "#9aa5b1"


def _ticks(hi: float) -> list[float]:
    """Five round ticks from 0 to at least ``hi``.

    >>> _ticks(0), _ticks(3.2), _ticks(1800)
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 500.0, 1000.0, 1500.0, 2000.0])
    """
    if hi <= 0:
        return [0.0, 0.25, 0.5, 0.75, 1.0]
    mag = 10.0 ** math.floor(math.log10(hi / 4))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag * 4 >= hi)
    return [round(i * step, 10) for i in range(5)]


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:g}"


def panel(fr, xs: dict[str, float], x_label: str, front: list[str], dx: int) -> list[str]:
    """One scatter panel: agreement (0 to 1) against ``xs``."""
    ticks = _ticks(max(xs.values(), default=0.0))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def X(v):
        return dx + LEFT + pw * (v / ticks[-1])

    def Y(v):
        return TOP + ph * (1 - v)

    out = [f'<rect x="{dx + LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#ccd3da"/>']
    for t in ticks:
        out.append(f'<text x="{X(t):.1f}" y="{TOP + ph + 14}" font-size="10" text-anchor="middle">{_fmt(t)}</text>')
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{dx + LEFT}" x2="{dx + LEFT + pw}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" stroke="#eef1f4"/>'
                   f'<text x="{dx + LEFT - 6}" y="{Y(t) + 3:.1f}" font-size="10" text-anchor="end">{t:.2f}</text>')
    out.append(f'<text x="{dx + LEFT + pw / 2:.1f}" y="{H - 10}" font-size="11" text-anchor="middle">{e(x_label)}</text>')
    on = sorted((xs[p.metric], p.agreement) for p in fr.points if p.metric in front and p.agreement is not None)
    if len(on) > 1:
        path = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in on)
        out.append(f'<polyline points="{path}" fill="none" stroke="{FRONT}" stroke-dasharray="4 3"/>')
    for p in fr.points:
        if p.agreement is None:
            continue
        x, y, c = X(xs[p.metric]), Y(p.agreement), FRONT if p.metric in front else OTHER
        if p.low is not None:
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{Y(p.low):.1f}" y2="{Y(p.high):.1f}" stroke="{c}"/>')
        fill = c if p.metric in front else "#fff"
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{fill}" stroke="{c}"><title>{e(p.label)}: '
                   f'{p.agreement:.2f}</title></circle>'
                   f'<text x="{x + 6:.1f}" y="{y - 5:.1f}" font-size="9" fill="#333">{e(p.label)}</text>')
    return out


def render(fr) -> str:
    """The panels (cost; latency unless the model leaves it out) as one SVG document."""
    cost = {p.metric: fr.cost(p) for p in fr.points}
    lat = {p.metric: p.latency_ms for p in fr.points}
    body = panel(fr, cost, fr.cost_axis, fr.front_cost, 0)
    if fr.latency:
        body += panel(fr, lat, "judge latency per answer (ms, one-time loading left out)", fr.front_latency, W)
    width = 2 * W if fr.latency else W
    title = f"{fr.title}; filled and dashed: Pareto front"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H}" viewBox="0 0 {width} {H}" '
            f'font-family="DejaVu Sans, sans-serif" role="img" aria-label="{e(title)}">'
            f'<text x="{LEFT}" y="16" font-size="12">{e(title)}</text>' + "".join(body) + "</svg>\n")


def files(blocks) -> dict[str, str]:
    """file name -> SVG text for every plot part of the report's sections (the Markdown links them)."""
    return {p.file: render(p.model) for b in blocks for p in b.parts if isinstance(p, Plot)}
