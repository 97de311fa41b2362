"""Plots as PNG bytes, drawn with matplotlib's Agg canvas (no pyplot state, no display, no fonts
fetched). The PNGs carry no timestamp or software stamp, so the same run gives the same bytes."""
from __future__ import annotations

import base64
import io

CMAP = "YlGnBu"


def _figure(w: float, h: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None}, bbox_inches="tight")
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    """A ``data:`` URI for embedding a PNG in HTML."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def heatmap(cells: dict, case_ids: list[str], metrics: list[str], labels: dict[str, str]) -> bytes:
    """Cases x metrics; non-score cells drawn hatched in their own colour, with their label."""
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    from reports.matrix import STYLE

    cmap = colormaps[CMAP]
    nr, nc = len(case_ids), len(metrics)
    fig = _figure(1.6 + 1.15 * nc, 0.9 + 0.3 * nr)
    ax = fig.add_subplot(1, 1, 1)
    for i, cid in enumerate(case_ids):
        for j, m in enumerate(metrics):
            cell = cells[(cid, m)]
            if cell.status == "scored":
                colour = cmap(0.1 + 0.85 * max(0.0, min(1.0, cell.score)))
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white", linewidth=1))
                dark = cell.score > 0.55
                ax.text(j + 0.5, i + 0.5, cell.label, ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")
            else:
                face, hatch = STYLE.get(cell.status, ("#ffffff", ""))
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=face, edgecolor="#888888", hatch=hatch,
                                       linewidth=0.6))
                ax.text(j + 0.5, i + 0.5, cell.label, ha="center", va="center", fontsize=7.5,
                        color="#8b0000" if cell.status == "error" else "#333333", fontstyle="italic",
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.8, alpha=0.85))
    ax.set_xlim(0, nc)
    ax.set_ylim(nr, 0)
    ax.set_xticks([j + 0.5 for j in range(nc)])
    ax.set_xticklabels([labels.get(m, m) for m in metrics], rotation=30, ha="left", fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(nr)])
    ax.set_yticklabels(case_ids, fontsize=8)
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    return _png(fig)


def cost_chart(costs: list, labels: dict[str, str]) -> bytes:
    """Three horizontal bar panels: judge calls, tokens and judge latency per answer."""
    names = [labels.get(c.metric, c.metric) for c in costs][::-1]
    panels = [("judge calls / answer", [c.calls for c in costs][::-1], "{:.1f}"),
              ("tokens / answer", [c.tokens for c in costs][::-1], "{:,.0f}"),
              ("judge latency / answer (ms)", [c.latency_ms for c in costs][::-1], "{:,.0f}")]
    fig = _figure(11, 0.7 + 0.34 * max(1, len(costs)))
    for k, (title, vals, fmt) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.barh(range(len(vals)), vals, color="#3b7dbf")
        top = max(vals) if vals and max(vals) > 0 else 1
        for y, v in enumerate(vals):
            ax.text(v + top * 0.02, y, fmt.format(v), va="center", fontsize=7.5)
        ax.set_xlim(0, top * 1.3)
        ax.set_yticks(range(len(vals)))
        ax.set_yticklabels(names if k == 0 else [""] * len(vals), fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        for s in ("top", "right"):
            ax.spines[s].set_visible(False)
    fig.subplots_adjust(wspace=0.08)
    return _png(fig)
